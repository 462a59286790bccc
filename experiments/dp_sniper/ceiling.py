"""What any event could certify on a DP-Sniper row with discrete releases, at a given held-out size.

    python experiments/dp_sniper/ceiling.py                         # every discrete row, 9e6 and 1.9e7 held out
    python experiments/dp_sniper/ceiling.py --rows SVT1 SVT2 --estimate 1e7

For a row whose releases take few distinct values, the probability of each outcome on D and on
D' is computed exactly where the mechanism's law is known (``exact_laws.py``: the sparse-vector
variants' status patterns at any cutoff, an integral over the threshold noise; Algorithm 3's first
above answer and its value in fine cells; the truncated geometric's pmf; report noisy max's index),
for RAPPOR (a product over the bits whose filters differ) and for a scalar release whose mechanism
gives its CDF (report-noisy-max's released value, in 200,000 fine bins).  Every event "outcome among
the k most likely under D relative to D'" (the best events of each size, Neyman-Pearson) is then
scored as the audit scores its held-out counts, at counts equal to their expectations: one-sided
Clopper-Pearson bounds on both rates, each at half the failure probability, ``ln(TPR_lo / FPR_hi)``,
or the Poisson test of the ratio on a Poisson-sized held-out set (whichever certifies more, as the
audit chooses; ``--certificate`` shows one alone).  The best of them is the most an audit that
certifies this way can report at that held-out size, whatever its distinguisher: a ceiling for the
audit's bound, to set beside DP-Sniper's published bound, which used 2 x 10^8 held-out releases.
Where the mechanism gives an exact log likelihood ratio instead (the Laplace rows, SVT34Parallel,
numerical sparse vector), fresh releases are binned by it and only the bins' masses are estimated
(``--estimate`` releases per side), in their exact ratio order.  A discrete row with neither is
estimated from ``--estimate`` releases per side and re-sorted by the estimates, which lifts its
ceiling by their noise (no row of the table is left so).

The held-out sizes default to those of fixed-size audits of 10^7 and 2 x 10^7
releases per side (the calibration pool of 10^6 per side is not counted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the exact laws live beside this script, which runs without a package
    sys.path.insert(0, str(HERE))
from exact_laws import (exact_discrete_probabilities, exact_index_probabilities,  # noqa: E402, F401
                        exact_svt_pattern_probabilities, exact_svt_probabilities, exact_svt_value_probabilities)

# The trapezoid rule under its numpy 2 name, or its numpy 1 name (np.trapz, the same function) on numpy 1.26.
_trapezoid = getattr(np, "trapezoid", None) or np.trapz


#: Most distinct releases for estimated outcome probabilities: SVT6 (no cutoff) has 2^10 status patterns.
MAX_OUTCOMES = 2048


def outcome_probabilities(mech, d, d2, n: int, seed: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(P(outcome | D), P(outcome | D')) over the outcomes seen, or None when releases are not discrete."""
    rng = np.random.default_rng(seed)
    probs = []
    keys = {}
    probe = np.asarray(mech(d, size=100_000, rng=rng)).reshape(100_000, -1)
    if len(np.unique(probe, axis=0)) > MAX_OUTCOMES:
        return None
    for data in (d, d2):
        x = np.asarray(mech(data, size=n, rng=rng)).reshape(n, -1)
        if x.shape[1] == 1:  # one column: a plain sort (rows by axis=0 are ~10x slower)
            values, counts = np.unique(x[:, 0], return_counts=True)
            rows = values.reshape(-1, 1)
        else:
            rows, counts = np.unique(x, axis=0, return_counts=True)
        if len(rows) > MAX_OUTCOMES:
            return None
        probs.append({row.tobytes(): c / n for row, c in zip(rows, counts)})
        keys.update(dict.fromkeys(probs[-1]))
    p0 = np.array([probs[0].get(k, 0.0) for k in keys])
    p1 = np.array([probs[1].get(k, 0.0) for k in keys])
    return p0, p1


def exact_bit_probabilities(mech, d, d2) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact outcome probabilities of RAPPOR's reports over the bits whose probabilities differ.

    Every bit is independent given the filter (``_prepare`` gives each bit's
    probability of a 1); bits with the same probability on both values have
    the same law on both sides and cannot change a likelihood ratio, so the
    outcomes are the 2^k patterns of the k bits that differ.  None for other mechanisms.
    """
    from dpaudit.mechanisms.rappor import Rappor, OneTimeRappor

    if not isinstance(mech, (Rappor, OneTimeRappor)):
        return None
    a, b = np.asarray(mech._prepare(d), float), np.asarray(mech._prepare(d2), float)
    idx = np.flatnonzero(a != b)
    patterns = (np.arange(2 ** len(idx))[:, None] >> np.arange(len(idx))) & 1
    out = []
    for pr in (a[idx], b[idx]):
        out.append(np.prod(np.where(patterns == 1, pr, 1.0 - pr), axis=1))
    return out[0], out[1]


def exact_cdf_probabilities(mech, d, d2, n_bins: int = 200_000) -> tuple[np.ndarray, np.ndarray] | None:
    """Exact probabilities of fine bins of a scalar release whose mechanism gives its CDF (``cdf``).

    The bins span the union of both releases' 10^-12 to 1 - 10^-12 quantiles
    (found on a coarse grid), plus the two tails; the best events of a release
    with a monotone likelihood ratio are thresholds, which these bins resolve
    to a width of 1/200,000 of the span.  None when the mechanism has no ``cdf``.
    """
    cdf = getattr(mech, "cdf", None)
    if cdf is None:
        return None
    coarse = np.linspace(-1e4, 1e4, 2_000_001)
    inside = np.zeros(len(coarse), dtype=bool)
    for data in (d, d2):
        c = cdf(data, coarse)
        inside |= (c > 1e-12) & (c < 1 - 1e-12)
    lo, hi = coarse[np.argmax(inside)] - 0.01, coarse[len(coarse) - 1 - np.argmax(inside[::-1])] + 0.01
    edges = np.linspace(lo, hi, n_bins + 1)
    out = []
    for data in (d, d2):
        c = np.r_[0.0, cdf(data, edges), 1.0]
        out.append(np.maximum(np.diff(c), 0.0))
    return out[0], out[1]


def laplace_log_ratio(mech, d, d2):
    """``x -> log p_D(x) / p_D'(x)`` for releases of independent Laplace noise on each answer (the Laplace
    mechanism, the noisy histograms, Laplace in parallel, prefix sums through their differences), or None.

    The histograms' and the Laplace mechanism's noise is discrete Laplace on a fine grid, whose ratio at a
    grid point is the continuous one's, ``exp((|x - q'| - |x - q|) / b)``.  ``d`` and ``d2`` are query
    answers (``answers=True``, as in DP-Sniper's table).
    """
    names = {"laplace", "noisy_histogram", "histogram_scale_bug", "laplace_parallel", "prefix_sum"}
    if getattr(mech, "name", None) not in names:
        return None
    b = 1.0 / mech.epsilon if mech.name == "prefix_sum" else float(mech.scale)
    q, q2 = (np.atleast_1d(np.asarray(data, float)).ravel() for data in (d, d2))  # DP-Sniper's pairs are answers

    def llr(x):
        x = np.asarray(x, float).reshape(len(x), -1)
        if mech.name == "prefix_sum":
            x = np.diff(x, axis=1, prepend=0.0)
        return ((np.abs(x - q2) - np.abs(x - q)) / b).sum(axis=1)

    return llr


def svt34_log_ratio(mech, d, d2, n_grid: int = 200_001):
    """``x -> log p_D(x) / p_D'(x)`` for SVT34Parallel (Lyu et al.'s Algorithms 3 and 4 side by side), or None.

    Algorithm 3's part: with above answers at positions A (at most c) carrying values v_A and the
    queries before the last one considered below, its density is
    ``prod_A f_nu(v_i - q_i) * G_A(min_A v_i - T)`` with ``G_A(r)`` the integral over rho <= r of
    ``f_rho(rho) prod_below F_nu(T + rho - q_k)`` (tabulated per pattern on one grid of rho);
    Algorithm 4's part is a pattern of statuses whose probability is the same integral with
    ``1 - F_nu`` for the above answers.  The parts' noises are independent, so the ratios multiply.
    """
    if getattr(mech, "name", None) != "svt34_parallel":
        return None
    from itertools import combinations

    from scipy.integrate import cumulative_trapezoid
    from scipy.stats import laplace

    alg3, alg4 = mech._parts()
    m, c, t = mech.n_queries, mech.c, mech.threshold
    patterns = [a for k in range(c + 1) for a in combinations(range(m), k)]
    q_of = [np.asarray(mech._prepare(data), float) for data in (d, d2)]

    def grid(part):
        half = 40 * max(part.rho_scale, part.nu_scale)
        r = np.linspace(-half, half, n_grid)
        return r, laplace.pdf(r, scale=part.rho_scale)

    def below(part, q, r, pattern):
        last = pattern[-1] if len(pattern) == c else m - 1
        rows = [k for k in range(last + 1) if k not in pattern]
        return np.prod(laplace.cdf((t + r[None, :] - q[rows, None]) / part.nu_scale), axis=0) if rows else 1.0

    r3, w3 = grid(alg3)
    tables3 = []  # per side: pattern -> log G_A on r3 (or a constant for no above answer)
    for q in q_of:
        tab = {}
        for a in patterns:
            h = w3 * below(alg3, q, r3, a)
            tab[a] = np.log(np.maximum(cumulative_trapezoid(h, r3, initial=0.0), 1e-300)) if a else \
                float(np.log(_trapezoid(h, r3)))
        tables3.append(tab)
    r4, w4 = grid(alg4)
    logp4 = []
    for q in q_of:
        tab = {}
        for a in patterns:
            above = np.prod(1.0 - laplace.cdf((t + r4[None, :] - q[list(a), None]) / alg4.nu_scale), axis=0) \
                if a else 1.0
            tab[a] = float(np.log(max(_trapezoid(w4 * below(alg4, q, r4, a) * above, r4), 1e-300)))
        logp4.append(tab)

    def key(status):
        return tuple(int(k) for k in np.flatnonzero(status == 1))

    def llr(x):
        x = np.asarray(x, float)
        out = np.zeros(len(x))
        s3, v3, s4 = x[:, :m], x[:, m:2 * m], x[:, 2 * m:]
        keys3 = (s3 == 1) @ (1 << np.arange(m))
        keys4 = (s4 == 1) @ (1 << np.arange(m))
        for code in np.unique(keys3):
            rows = keys3 == code
            a = key(s3[np.argmax(rows)])
            if a:
                vals = v3[rows][:, list(a)]
                lo = vals.min(axis=1) - t
                for side, sign in ((0, 1.0), (1, -1.0)):
                    q = q_of[side]
                    part = np.interp(lo, r3, tables3[side][a]) + laplace.logpdf(
                        (vals - q[list(a)]) / alg3.nu_scale).sum(axis=1)
                    out[rows] += sign * part
            else:
                out[rows] += tables3[0][a] - tables3[1][a]
        for code in np.unique(keys4):
            rows = keys4 == code
            a = key(s4[np.argmax(rows)])
            out[rows] += logp4[0][a] - logp4[1][a]
        return out

    return llr


def numerical_svt_log_ratio(mech, d, d2, n_grid: int = 200_001):
    """``x -> log p_D(x) / p_D'(x)`` for numerical sparse vector (Wang et al. 2019), or None.

    Its statuses (1 above, 0 below, -1 not answered after c above answers) depend on the threshold and
    comparison noises only: P(pattern) is the integral over rho of ``f_rho(rho) prod_answered`` of
    ``1 - F_nu(T + rho - q_k)`` (above) or ``F_nu(T + rho - q_k)`` (below), one number per pattern.  Each above
    answer's value is ``q_k`` plus fresh Laplace noise rounded down to a grid of step g, so its cell
    ``[v, v + g)`` has probability ``F(v + g - q_k) - F(v - q_k)``, in closed form: the answers are whole
    numbers and g a power of two at most 1, so no cell straddles an answer.
    """
    if getattr(mech, "name", None) != "numerical_svt":
        return None
    from itertools import combinations

    from scipy.stats import laplace

    from dpaudit.mechanisms._noise import release_step

    m, c, t = mech.n_queries, mech.c, mech.threshold
    b, g = mech.value_scale, release_step(mech.value_scale)
    half = 40 * max(mech.rho_scale, mech.nu_scale)
    r = np.linspace(-half, half, n_grid)
    w = laplace.pdf(r, scale=mech.rho_scale)
    q_of = [np.asarray(mech._prepare(data), float) for data in (d, d2)]
    patterns = [a for k in range(c + 1) for a in combinations(range(m), k)]
    logp = []
    for q in q_of:
        below = laplace.cdf((t + r[None, :] - q[:, None]) / mech.nu_scale)
        tab = {}
        for a in patterns:
            last = a[-1] if len(a) == c else m - 1
            dens = w * np.prod([(1.0 - below[k]) if k in a else below[k] for k in range(last + 1)], axis=0)
            tab[a] = float(np.log(_trapezoid(dens, r)))
        logp.append(tab)

    def log_cell(v, q):  # log P(value cell [v, v + g) | answer q): v >= q or v + g <= q
        return np.log(0.5) + np.log1p(-np.exp(-g / b)) + np.where(v >= q, -(v - q) / b, (v + g - q) / b)

    def llr(x):
        x = np.asarray(x, float)
        status, values = x[:, :m], x[:, m:]
        out = np.zeros(len(x))
        keys = (status == 1) @ (1 << np.arange(m))
        for code in np.unique(keys):
            rows = keys == code
            a = tuple(int(k) for k in np.flatnonzero((code >> np.arange(m)) & 1))
            out[rows] += logp[0][a] - logp[1][a]
            for k in a:
                out[rows] += log_cell(values[rows, k], q_of[0][k]) - log_cell(values[rows, k], q_of[1][k])
        return out

    return llr


def held_out_ratio_probabilities(mech, d, d2, llr, n: int, seed: int, bins: int = 20_000, chunk: int = 1_000_000):
    """(P(bin | D), P(bin | D')) over bins of the exact log ratio ``llr`` of fresh releases, in ratio order.

    Each release's exact log likelihood ratio is computed and the releases are
    counted in ``bins`` bins of it (quantile edges of a first chunk, atoms kept
    whole): the best events are unions of the top (or bottom) bins, so only the
    probabilities are estimated, not the order (``ordered`` in :func:`best_event_bound`).
    """
    rng = np.random.default_rng(seed)
    probe = np.concatenate([llr(np.asarray(mech(data, size=min(n, chunk), rng=rng))) for data in (d, d2)])
    edges = np.unique(np.quantile(probe, np.linspace(0, 1, bins + 1)[1:-1]))
    own, other = [], []  # per side: counts per bin; sums of the other side's weight per bin
    for side, data in enumerate((d, d2)):
        counts, weights = np.zeros(len(edges) + 1), np.zeros(len(edges) + 1)
        left = n
        while left > 0:
            k = min(chunk, left)
            r = llr(np.asarray(mech(data, size=k, rng=rng)))
            idx = np.searchsorted(edges, r, side="right")
            counts += np.bincount(idx, minlength=len(edges) + 1)
            weights += np.bincount(idx, weights=np.exp(-r if side == 0 else r), minlength=len(edges) + 1)
            left -= k
        own.append(counts / n)
        other.append(weights / n)
    # P_D(bin) = E_D'[exp(llr) 1_bin] and P_D'(bin) = E_D[exp(-llr) 1_bin]: each bin's probability is the
    # mean of its count and the other side's weighted count, so its ratio is the exact one's, not noise.
    return 0.5 * (own[0] + other[1]), 0.5 * (own[1] + other[0])


def best_event_bound(p0: np.ndarray, p1: np.ndarray, n_test: int, confidence: float,
                     certificate: str = "both", ordered: bool = False) -> float:
    """The largest bound of a likelihood-ratio-ordered event, both directions, at expected counts.

    ``ordered``: the outcomes are already in increasing likelihood-ratio order (bins of an exact ratio
    whose probabilities are estimated): events are their top and bottom runs, not re-sorted by the
    estimated probabilities (which would add the estimation noise's optimism).
    ``certificate``: ``"intervals"`` (two one-sided Clopper-Pearson bounds at half
    the failure probability each), ``"poisson"`` (the audit's Poisson test at its
    share of the failure probability, on ``poisson_held_out_mean(n_test)``
    releases per side) or ``"both"`` (the better per event, as the audit chooses).
    """
    from dpaudit.auditor.pipeline import POISSON_SHARE
    from dpaudit.stats.bounds import poisson_held_out_mean, poisson_log_ratio
    from dpaudit.stats.clopper_pearson import cp_lower, cp_upper

    alpha = (1.0 - confidence) / 2.0
    lam = poisson_held_out_mean(n_test)
    best = 0.0
    for a, b in ((p0, p1), (p1, p0)):
        if ordered:
            order = np.arange(len(a))[::-1] if a is p0 else np.arange(len(a))
        else:
            order = np.argsort(-(np.log(a + 1e-300) - np.log(b + 1e-300)))
        ca, cb = np.minimum(np.cumsum(a[order]), 1.0), np.minimum(np.cumsum(b[order]), 1.0)
        vals = []
        if certificate in ("intervals", "both"):
            lo = cp_lower(ca * n_test, n_test, alpha)
            hi = cp_upper(cb * n_test, n_test, alpha)
            with np.errstate(divide="ignore"):
                vals.append(np.log(lo) - np.log(hi))
        if certificate in ("poisson", "both"):
            vals.append(np.atleast_1d(poisson_log_ratio(ca * lam, cb * lam, (1.0 - confidence) * POISSON_SHARE)))
        for val in vals:
            best = max(best, float(np.nanmax(np.where(np.isfinite(val), val, 0.0))))
    return best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="*", help="labels of configs/dp_sniper.yaml (default: all)")
    parser.add_argument("--estimate", type=float, default=1e7, help="releases per side to estimate probabilities")
    parser.add_argument("--held-out", type=float, nargs="+", default=[9e6, 1.9e7])
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--certificate", choices=["both", "intervals", "poisson"], default="both",
                        help="how held-out counts are certified (default: the better per event, as the audit does)")
    args = parser.parse_args(argv)

    from dpaudit.mechanisms import get_mechanism

    config = yaml.safe_load((HERE / "dp_sniper.yaml").read_text())
    head = ["row", "published"] + [f"ceiling at {int(n):,} held out" for n in args.held_out]
    print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for entry in config["mechanisms"]:
        if args.rows and entry["label"] not in args.rows:
            continue
        mech = get_mechanism(entry["mechanism"], **entry["params"])
        d, d2 = mech.neighbouring_pair()
        probs = (exact_discrete_probabilities(mech, d, d2)
                 or exact_bit_probabilities(mech, d, d2)
                 or exact_cdf_probabilities(mech, d, d2))
        ordered = False
        llr = laplace_log_ratio(mech, d, d2) or svt34_log_ratio(mech, d, d2) or numerical_svt_log_ratio(mech, d, d2)
        if probs is None and llr is not None:
            probs, ordered = held_out_ratio_probabilities(mech, d, d2, llr, int(args.estimate), args.seed), True
        if probs is None:
            probs = outcome_probabilities(mech, d, d2, int(args.estimate), args.seed)
        cells = [entry["label"], f"{entry['reference']['published']:.4f}"]
        if probs is None:
            cells += ["(none: no exact ratio, not discrete)"] * len(args.held_out)
        else:
            cells += [f"{best_event_bound(*probs, int(n), args.confidence, args.certificate, ordered):.4f}"
                      for n in args.held_out]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
