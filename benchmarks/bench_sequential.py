"""Sequential audits: what anytime validity costs in tightness, and what stopping early saves.

Part 1 (tightness).  The ratio "sequential bound / fixed-size bound at the same
number of held-out releases per side", with counts equal to their
expectations, for three ways of making a bound valid at any stopping round:

* ``cp-uniform`` (dpaudit's choice): Clopper-Pearson, the failure probability
  split evenly over the planned rounds (11 for a budget of 10^6);
* ``cp-linear`` / ``cp-geometric``: the same with shares growing like the
  round number or doubling with it (more weight on late rounds);
* ``mixture-*``: a confidence sequence valid at *every* sample size (Robbins'
  beta-binomial mixture martingale, by Ville's inequality), with a uniform
  Beta(1, 1) prior or a prior centred on calibration counts (5 * 10^5
  releases, the fixed audit's calibration share).

Part 2 (stopping).  Simulated audits of one event (binomial counts) under
:class:`dpaudit.stats.SequentialBound` with its default rules: reason, samples
per side at the stop, and the certified bound next to the fixed bound with the
whole budget.

Run: ``python benchmarks/bench_sequential.py`` (about a minute on a quiet core).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from scipy.optimize import brentq
from scipy.special import betaln

from dpaudit.stats import SequentialBound, epsilon_lower_bound, round_schedule
from dpaudit.stats.bounds import epsilon_bounds_array, log_ratio_bound

CONFIDENCE = 0.95
ALPHA = 1 - CONFIDENCE
BUDGET = 10**6
SCHEDULE = round_schedule(BUDGET)
E = math.e
# (name, TPR, FPR) of one event; each ratio equals e^epsilon of the mechanism.
EVENTS = [
    ("Laplace eps 1 (output >= 1)", 0.5, 0.5 / E),
    ("randomized response ln 3", 0.75, 0.25),
    ("rare tail event, ratio e", 0.01, 0.01 / E),
]


def fixed(p, q, n, confidence):
    b, _ = epsilon_bounds_array(p * n, n - p * n, q * n, n - q * n, confidence=confidence)
    return float(b)


def spending(weights):
    w = np.asarray(weights, dtype=float)
    return ALPHA * w / w.sum()


def _log_mixture(p, k, n, a, b):
    return betaln(a + k, b + n - k) - betaln(a, b) - (k * math.log(p) + (n - k) * math.log1p(-p))


def mixture_lower(k, n, a, b, alpha):
    f = lambda p: _log_mixture(p, k, n, a, b) - math.log(1 / alpha)  # noqa: E731
    return 0.0 if k == 0 or f(1e-300) < 0 else brentq(f, 1e-300, k / n, xtol=1e-16, rtol=1e-13)


def mixture_upper(k, n, a, b, alpha):
    f = lambda p: _log_mixture(p, k, n, a, b) - math.log(1 / alpha)  # noqa: E731
    return brentq(f, max(k / n, 1e-300), 1 - 1e-15, xtol=1e-16, rtol=1e-13)


def mixture_bound(p, q, n, prior_p, prior_q):
    # Forward event only: the complement has the same ratio here or less.
    lo = mixture_lower(p * n, n, *prior_p, ALPHA / 2)
    hi = mixture_upper(q * n, n, *prior_q, ALPHA / 2)
    return float(log_ratio_bound(lo, hi, 0.0))


def tightness():
    r = len(SCHEDULE)
    shares = {
        "cp-uniform": spending(np.ones(r)),
        "cp-linear": spending(np.arange(1, r + 1)),
        "cp-geometric": spending(2.0 ** np.arange(r)),
    }
    n_cal = 500_000
    for name, p, q in EVENTS:
        print(f"\n{name}: TPR {p:.4g}, FPR {q:.4g}; ratio sequential / fixed at the same n "
              f"(confidence {CONFIDENCE}, {r} planned rounds)")
        head = f"{'n per side':>10} {'fixed':>7} " + " ".join(f"{k:>12}" for k in shares)
        print(head + f" {'mixture-unif':>12} {'mixture-cal':>12}")
        for i, n in enumerate(SCHEDULE.sizes):
            f = fixed(p, q, n, CONFIDENCE)
            if f <= 0:  # nothing certified at this size: no ratio to show
                print(f"{n:>10} {f:7.4f} " + " ".join(f"{'-':>12}" for _ in range(len(shares) + 2)))
                continue
            cols = [fixed(p, q, n, 1 - a[i]) / f for a in shares.values()]
            cols.append(mixture_bound(p, q, n, (1, 1), (1, 1)) / f)
            cal = ((n_cal * p, n_cal * (1 - p)), (n_cal * q, n_cal * (1 - q)))
            cols.append(mixture_bound(p, q, n, *cal) / f)
            print(f"{n:>10} {f:7.4f} " + " ".join(f"{c:12.4f}" for c in cols))


def stopping(reps=200, tolerance=None):
    cases = [
        ("RR ln 3, claim ln 3 (tight)", 0.75, 0.25, math.log(3)),
        ("Laplace eps 1, claim 1 (tight)", 0.5, 0.5 / E, 1.0),
        ("rare event ratio e, claim 1", 0.01, 0.01 / E, 1.0),
        ("Laplace eps 1, claim 2 (loose)", 0.5, 0.5 / E, 2.0),
        ("RR ln 9, claim 1 (gross)", 0.9, 0.1, 1.0),
        ("Laplace eps 1.2, claim 1 (subtle)", 0.5, 0.5 / math.exp(1.2), 1.0),
        ("Laplace eps 1.05, claim 1 (subtler)", 0.5, 0.5 / math.exp(1.05), 1.0),
        ("Laplace eps 1.01, claim 1 (at the edge)", 0.5, 0.5 / math.exp(1.01), 1.0),
    ]
    sizes = np.asarray(SCHEDULE.sizes)
    added = np.diff(np.concatenate([[0], sizes]))
    kw = {} if tolerance is None else {"tolerance": tolerance}
    rules = "the default rules" if tolerance is None else f"tolerance={tolerance}"
    print(f"\nStopping with {rules}, {reps} simulated audits each (budget {BUDGET:.0e} per side)")
    print(f"{'case':40} {'reasons':36} {'median n':>9} {'certified':>9} {'fixed@budget':>12} "
          f"{'seq/fixed@n mean, min':>21} {'flagged seq, fixed@budget':>25}")
    for name, p, q, claim in cases:
        rng = np.random.default_rng(12)
        tp = np.cumsum(rng.binomial(added, p, size=(reps, len(sizes))), axis=1)
        fp = np.cumsum(rng.binomial(added, q, size=(reps, len(sizes))), axis=1)
        reasons, ns, cert, full, ratio, flag_fixed = Counter(), [], [], [], [], 0
        for i in range(reps):
            seq = SequentialBound(schedule=SCHEDULE, epsilon=claim, **kw)
            for a, b in zip(tp[i], fp[i]):
                seq = seq.update(tp=int(a), fp=int(b))
                if seq.stopping_reason() is not None:
                    break
            reasons[seq.stopping_reason()] += 1
            n = seq.samples
            ns.append(n)
            cert.append(seq.epsilon_lower_bound)
            full.append(epsilon_lower_bound(int(tp[i, -1]), BUDGET - int(tp[i, -1]), int(fp[i, -1]),
                                            BUDGET - int(fp[i, -1])).epsilon_lower_bound)
            flag_fixed += full[-1] > claim
            last = seq.trajectory[-1]
            at_n = epsilon_lower_bound(last.tp, n - last.tp, last.fp, n - last.fp).epsilon_lower_bound
            if at_n > 0:
                ratio.append(seq.epsilon_lower_bound / at_n)
        rs = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
        r_mean, r_min = (np.mean(ratio), np.min(ratio)) if ratio else (math.nan, math.nan)
        print(f"{name:40} {rs:36} {int(np.median(ns)):>9} {np.mean(cert):9.4f} {np.mean(full):12.4f} "
              f"{r_mean:14.4f} {r_min:6.4f} {reasons['violation']:>15} {flag_fixed:>9}")


if __name__ == "__main__":
    tightness()
    stopping()
    stopping(tolerance=0.02)
