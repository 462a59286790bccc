"""Witness: diffprivlib 0.6.3, diffprivlib.tools.quantile (survey entry tools.quantile).

Claim: (1, 0)-DP under replace-one; parameters {"epsilon": 1.0, "bounds": [0, 1], "quant": 0.25}.
Pair found: D = [0.0, 0.0, 0.0], D' = [0.5, 0.0, 0.0].
Survey verdicts: ideal no violation found (epsilon >= 0.091); implementation violation (epsilon >= 4.643, attack
    float-lsb).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.3 --entry
    tools.quantile --seed 2026 --out survey-reproduce

Kind: bug. Cause: A uniform draw inside an interval whose ends are data values, in floating point: the doubles
    it can return depend on the ends.
True epsilon: infinite for the code (the exponential mechanism over intervals is epsilon-DP)

Source lines responsible (diffprivlib 0.6.3, as installed):
  diffprivlib/tools/quantiles.py (diffprivlib.tools.quantiles.quantile, from line 32):
    141: output = random_state.random() * (array[idx+1] - array[idx]) + array[idx]

Docs: No warning about floating point.
Later surveyed versions: 0.6.6: still flagged; implementation violation (4.64).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/9f0d9f5ec87c2229):
    python experiments/library_survey/witness.py --run 'diffprivlib-0.6.3-tools.quantile.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from diffprivlib.tools import quantile

D = [0.0, 0.0, 0.0]
D_PRIME = [0.5, 0.0, 0.0]


# 1. The library called once on each side, as a user would.
show_one('D ', quantile(np.asarray(D, dtype=float), epsilon=1.0, bounds=(0, 1), quant=0.25, random_state=np.random.RandomState(0)))
show_one("D'", quantile(np.asarray(D_PRIME, dtype=float), epsilon=1.0, bounds=(0, 1), quant=0.25, random_state=np.random.RandomState(0)))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'diffprivlib.tools.quantile', 'call': {'seed': 'random_state'}, 'params': {'epsilon': 1.0, 'bounds': [0, 1], 'quant': 0.25}})
rng = np.random.default_rng(3714087792)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-lsb')

# 3. The audit that certifies it (the code as it runs).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=3714087792, ideal=False))
