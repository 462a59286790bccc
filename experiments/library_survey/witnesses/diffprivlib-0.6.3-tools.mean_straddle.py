"""Witness: diffprivlib 0.6.3, diffprivlib.tools.mean (survey entry tools.mean[straddle]).

Claim: (1, 0)-DP under replace-one; parameters {"epsilon": 1.0, "bounds": [-1, 1]}.
Pair found: D = [-1.0, -1.0, -1.0], D' = [1.0, -1.0, -1.0].
Survey verdicts: ideal no violation found (epsilon >= 0.803); implementation violation (epsilon >= 4.488, attack
    float-lsb).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.3 --entry
    'tools.mean[straddle]' --seed 2026 --out survey-reproduce

Kind: bug. Cause: The mean's noise is added by a Laplace-family mechanism in floating point: its float leak.
True epsilon: infinite for the code

Source lines responsible (diffprivlib 0.6.3, as installed):
  diffprivlib/tools/utils.py (diffprivlib.tools.utils._mean, from line 271):
    295: mech = LaplaceTruncated(epsilon=epsilon, delta=0, sensitivity=(upper - lower) / array.size, lower=lower,
    297: output = mech.randomise(actual_mean)
  diffprivlib/mechanisms/laplace.py (diffprivlib.mechanisms.Laplace.randomise, from line 129):
    149: return value - scale * standard_laplace

Docs: As mechanisms.Laplace.
Later surveyed versions: 0.6.6: still flagged; implementation violation (4.49).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/9f0d9f5ec87c2229):
    python experiments/library_survey/witness.py --run 'diffprivlib-0.6.3-tools.mean_straddle.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from diffprivlib.tools import mean

D = [-1.0, -1.0, -1.0]
D_PRIME = [1.0, -1.0, -1.0]


# 1. The library called once on each side, as a user would.
show_one('D ', mean(np.asarray(D, dtype=float), epsilon=1.0, bounds=(-1, 1), random_state=np.random.RandomState(0)))
show_one("D'", mean(np.asarray(D_PRIME, dtype=float), epsilon=1.0, bounds=(-1, 1), random_state=np.random.RandomState(0)))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'diffprivlib.tools.mean', 'call': {'seed': 'random_state'}, 'params': {'epsilon': 1.0, 'bounds': [-1, 1]}})
rng = np.random.default_rng(1047457256)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-lsb')

# 3. The audit that certifies it (the code as it runs).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=1047457256, ideal=False))
