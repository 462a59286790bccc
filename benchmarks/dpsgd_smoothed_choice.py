"""Does choosing on a smoothed objective help the DP-SGD profile at delta 1e-2?  (Measured: no.)

The same final round as ``dpsgd_profile_limit.py`` (250,000 calibration and 622,000 held-out
releases per side of the white-box view, 10 steps, rate 0.1, noise 1): the profile event at delta
1e-2 chosen on the objective averaged over a window of 1 (the audit's rule), 5, 15 or 45
neighbouring candidate thresholds, for ``density-ratio-sum`` fitted on half (first four columns)
and for the exact log-likelihood ratio (last four); each cell is the held-out bound as a share of
the accountant's 0.887.

    python benchmarks/dpsgd_smoothed_choice.py 1 21      # seeds 1-20, about 5 minutes
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.ndimage import uniform_filter1d

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dpsgd_profile_limit as B  # noqa: E402
from dpaudit.auditor.distinguishers.vector import DensityRatioSumScore
from dpaudit.mechanisms.dpsgd import SubsampledGaussianSteps
from dpaudit.stats.selection import calibration_counts, calibration_rates, pick_event

WINDOWS = (1, 5, 15, 45)


def choose(s0, s1, w):
    rates = calibration_rates(calibration_counts(s0, s1), n_test0=len(s0), n_test1=len(s1), confidence=B.CONFIDENCE,
                              nested=True)
    fwd, rev = rates.objective(delta=B.DELTA)
    if w > 1:
        fwd = uniform_filter1d(np.maximum(fwd, 0.0), w, mode="nearest")
        rev = uniform_filter1d(np.maximum(rev, 0.0), w, mode="nearest")
    return pick_event(rates.candidates, fwd, rev)


def main(first: int, last: int) -> None:
    rows = []
    for seed in range(first, last):
        mech = SubsampledGaussianSteps(noise=1.0, rate=0.1, steps=10)
        d, d2 = mech.neighbouring_pair()
        rng = np.random.default_rng(seed)
        n_cal, n_ho = 250_000, 622_000
        c0, c1 = mech(d, size=n_cal, rng=rng), mech(d2, size=n_cal, rng=rng)
        h0, h1 = mech(d, size=n_ho, rng=rng), mech(d2, size=n_ho, rng=rng)
        k = n_cal // 2
        score = DensityRatioSumScore().fit(c0[:k], c1[:k])
        g0, g1 = score.score(h0), score.score(h1)
        s0, s1 = score.score(c0[k:]), score.score(c1[k:])
        e0, e1 = B._exact(h0), B._exact(h1)
        x0, x1 = B._exact(c0[k:]), B._exact(c1[k:])
        row = [B._certify(choose(s0, s1, w), g0, g1) for w in WINDOWS] + [B._certify(choose(x0, x1, w), e0, e1) for w in WINDOWS]
        rows.append(row)
        print(seed, " ".join(f"{x:.3f}" for x in row), flush=True)
    a = np.array(rows)
    print("mean", " ".join(f"{x:.3f}" for x in a.mean(0)))
    print("min ", " ".join(f"{x:.3f}" for x in a.min(0)))
    print(">=.9", " ".join(str(int(x)) for x in (a >= 0.9).sum(0)))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
