"""How far the DP-SGD white box's profile at delta 1e-2 can get at the default budget, whatever the score.

The audit of ``subsampled_gaussian_steps`` (10 steps, rate 0.1, noise 1) against
``dpsgd:noise=1,rate=0.1,steps=10`` reports its ``privacy_profile`` at delta 1e-2 as
a share of the accountant's 0.887.  Its final round has 250,000 calibration and
622,000 held-out releases per side; the profile's event for delta 1e-2 is chosen on
the calibration releases and certified on the held-out ones, at the round's
confidence (1 - 0.05/10) shared among the profile's six distinct events.

This script rebuilds that last step offline, on the same sizes and the same
certificate, with five ways to score and choose (columns):

* ``fit 1/2, choose 1/2``: the audit's split, ``density-ratio-sum`` fitted on half;
* ``choose on all``: the same fit, the event chosen on all calibration releases;
* ``fit 1/4, choose 3/4``: a smaller fit, a larger choosing split;
* ``exact LLR, 1/2`` / ``exact LLR, all``: the exact log-likelihood ratio (the optimal
  test, which an audit cannot know) with the event chosen on half / all of them.

If even the exact score falls short of 0.90 on some seeds, the shortfall is the
budget's, not the distinguisher's.

    python benchmarks/dpsgd_profile_limit.py --seeds 20      # about 7 minutes
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from dpaudit.auditor.distinguishers.vector import DensityRatioSumScore
from dpaudit.mechanisms.dpsgd import SubsampledGaussianSteps
from dpaudit.stats.estimators import ClopperPearsonEstimator, HeldOutCounts
from dpaudit.stats.selection import calibration_counts, calibration_rates

sys.path.insert(0, str(Path(__file__).resolve().parent))
from curve_choice import llr  # noqa: E402

TRUTH = 0.887  # dp-accounting's epsilon at delta 1e-2
DELTA = 1e-2
CONFIDENCE = 1 - 0.05 / 10  # the final round's share of a 10-round audit
EVENTS = 6  # distinct profile events the audit's Bonferroni counts on this view
COLUMNS = ("fit 1/2, choose 1/2", "choose on all", "fit 1/4, choose 3/4", "exact LLR, 1/2", "exact LLR, all")


def _exact(x, rate=0.1, noise=1.0):
    return llr(x, noise, rate)  # the white box's exact log-likelihood ratio (curve_choice.py)


def _choose(s0, s1):
    rates = calibration_rates(calibration_counts(s0, s1), n_test0=len(s0), n_test1=len(s1), confidence=CONFIDENCE,
                              nested=True)
    return rates.choose(delta=DELTA)


def _certify(event, h0, h1):
    counts = HeldOutCounts.from_scores([event.threshold], h0, h1)
    bound = ClopperPearsonEstimator().bound(counts, event, delta=DELTA, confidence=CONFIDENCE, n_comparisons=EVENTS)
    return bound.epsilon_lower_bound / TRUTH


def one_seed(seed: int, n_calibration: int = 250_000, n_held_out: int = 622_000) -> list[float]:
    mech = SubsampledGaussianSteps(noise=1.0, rate=0.1, steps=10)
    d, d2 = mech.neighbouring_pair()
    rng = np.random.default_rng(seed)
    c0, c1 = mech(d, size=n_calibration, rng=rng), mech(d2, size=n_calibration, rng=rng)
    h0, h1 = mech(d, size=n_held_out, rng=rng), mech(d2, size=n_held_out, rng=rng)
    row = []
    for fit_share in (0.5, 0.25):
        k = int(n_calibration * fit_share)
        score = DensityRatioSumScore().fit(c0[:k], c1[:k])
        g0, g1 = score.score(h0), score.score(h1)
        row.append(_certify(_choose(score.score(c0[k:]), score.score(c1[k:])), g0, g1))
        if fit_share == 0.5:
            row.append(_certify(_choose(score.score(c0), score.score(c1)), g0, g1))
    e0, e1 = _exact(h0), _exact(h1)
    half = n_calibration // 2
    row.append(_certify(_choose(_exact(c0[half:]), _exact(c1[half:])), e0, e1))
    row.append(_certify(_choose(_exact(c0), _exact(c1)), e0, e1))
    return row


def print_table(columns, seeds, row_of, width: int = 20) -> None:
    """One line per seed of ``row_of(seed)`` (shares of the accountant's epsilon), then mean, lowest and
    how many seeds reach 0.90, per column."""
    rows = []
    print("seed  " + "  ".join(f"{c:>{width}s}" for c in columns))
    for seed in seeds:
        rows.append(row_of(seed))
        print(f"{seed:4d}  " + "  ".join(f"{x:{width}.3f}" for x in rows[-1]), flush=True)
    a = np.array(rows)
    print("mean  " + "  ".join(f"{x:{width}.3f}" for x in a.mean(axis=0)))
    print("min   " + "  ".join(f"{x:{width}.3f}" for x in a.min(axis=0)))
    print(">=.90 " + "  ".join(f"{int(x):{width - 3}d}/{len(a)}" for x in (a >= 0.9).sum(axis=0)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    args = ap.parse_args(argv)
    print_table(COLUMNS, range(1, args.seeds + 1), one_seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
