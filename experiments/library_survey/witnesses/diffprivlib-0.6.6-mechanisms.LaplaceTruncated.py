"""Witness: diffprivlib 0.6.6, diffprivlib.mechanisms.LaplaceTruncated (survey entry mechanisms.LaplaceTruncated).

Claim: (1, 0)-DP under add-remove; parameters {"epsilon": 1.0, "delta": 0.0, "sensitivity": 1.0, "lower": 0.0,
    "upper": 2.0}.
Pair found: D = [1.0, 0.0], D' = [0.0].
Survey verdicts: ideal no violation found (epsilon >= 0.731); implementation violation (epsilon >= 3.205, attack
    float-lattice).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.6 --entry
    mechanisms.LaplaceTruncated --seed 2026 --out survey-reproduce

Kind: bug. Cause: value - scale * noise is rounded to a double whose possible values depend on value: some
    releases on one dataset are impossible on its neighbour (Mironov 2012); truncating or folding afterwards
    keeps them.
True epsilon: infinite for the code (the mathematics is epsilon-DP)

Source lines responsible (diffprivlib 0.6.6, as installed):
  diffprivlib/mechanisms/laplace.py (diffprivlib.mechanisms.Laplace.randomise, from line 129):
    149: return value - scale * standard_laplace
  diffprivlib/mechanisms/laplace.py (diffprivlib.mechanisms.LaplaceTruncated.randomise, from line 213):
    217: noisy_value = super().randomise(value)
    218: return self._truncate(noisy_value)

Docs: The Laplace docstring says its four-uniform sampler (Holohan and Braghin 2021) prevents reconstruction
    attacks due to limited floating-point precision; it does not touch the rounding of value - noise, which is
    what leaks. The Snapping mechanism's docstring documents the safe choice (clean in the survey).
No later version of this entry was surveyed.

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/daff0819c67196df):
    python experiments/library_survey/witness.py --run 'diffprivlib-0.6.6-mechanisms.LaplaceTruncated.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from diffprivlib.mechanisms import LaplaceTruncated

D = [1.0, 0.0]
D_PRIME = [0.0]


# 1. The library called once on each side, as a user would.
show_one('D ', LaplaceTruncated(epsilon=1.0, delta=0.0, sensitivity=1.0, lower=0.0, upper=2.0, random_state=np.random.RandomState(0)).randomise(float(np.sum(D))))
show_one("D'", LaplaceTruncated(epsilon=1.0, delta=0.0, sensitivity=1.0, lower=0.0, upper=2.0, random_state=np.random.RandomState(0)).randomise(float(np.sum(D_PRIME))))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'diffprivlib.mechanisms.LaplaceTruncated', 'call': {'seed': 'random_state', 'method': 'randomise', 'statistic': 'sum'}, 'params': {'epsilon': 1.0, 'delta': 0.0, 'sensitivity': 1.0, 'lower': 0.0, 'upper': 2.0}})
rng = np.random.default_rng(1088375508)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-lattice')

# 3. The audit that certifies it (the code as it runs).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=1088375508, ideal=False))
