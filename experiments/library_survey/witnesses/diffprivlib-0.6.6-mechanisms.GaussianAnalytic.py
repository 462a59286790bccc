"""Witness: diffprivlib 0.6.6, diffprivlib.mechanisms.GaussianAnalytic (survey entry mechanisms.GaussianAnalytic).

Claim: (1, 1e-05)-DP under add-remove; parameters {"epsilon": 1.0, "delta": 1e-05, "sensitivity": 1.0}.
Pair found: D = [1.0, 0.0], D' = [0.0].
Survey verdicts: ideal no violation found (epsilon >= 0.083); implementation violation (epsilon >= 2.558, attack
    float-lattice).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.6 --entry
    mechanisms.GaussianAnalytic --seed 2026 --out survey-reproduce

Kind: bug. Cause: value + noise rounded to a double (GaussianAnalytic inherits Gaussian.randomise).
True epsilon: infinite for the code at any delta below the mass of the one-sided outcomes

Source lines responsible (diffprivlib 0.6.6, as installed):
  diffprivlib/mechanisms/gaussian.py (diffprivlib.mechanisms.Gaussian.randomise, from line 108):
    117: return value + standard_normal * self._scale

Docs: No warning about floating point.
No later version of this entry was surveyed.

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/daff0819c67196df):
    python experiments/library_survey/witness.py --run 'diffprivlib-0.6.6-mechanisms.GaussianAnalytic.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from diffprivlib.mechanisms import GaussianAnalytic

D = [1.0, 0.0]
D_PRIME = [0.0]


# 1. The library called once on each side, as a user would.
show_one('D ', GaussianAnalytic(epsilon=1.0, delta=1e-05, sensitivity=1.0, random_state=np.random.RandomState(0)).randomise(float(np.sum(D))))
show_one("D'", GaussianAnalytic(epsilon=1.0, delta=1e-05, sensitivity=1.0, random_state=np.random.RandomState(0)).randomise(float(np.sum(D_PRIME))))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'diffprivlib.mechanisms.GaussianAnalytic', 'call': {'seed': 'random_state', 'method': 'randomise', 'statistic': 'sum'}, 'params': {'epsilon': 1.0, 'delta': 1e-05, 'sensitivity': 1.0}})
rng = np.random.default_rng(392951429)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-lattice')

# 3. The audit that certifies it (the code as it runs).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=1e-05, max_samples=3000,
                 confidence=0.99, seed=392951429, ideal=False))
