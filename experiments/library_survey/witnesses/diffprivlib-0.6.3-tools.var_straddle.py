"""Witness: diffprivlib 0.6.3, diffprivlib.tools.var (survey entry tools.var[straddle]).

Claim: (1, 0)-DP under replace-one; parameters {"epsilon": 1.0, "bounds": [-1, 1]}.
Pair found: D = [-1.0, -1.0, -1.0], D' = [1.0, -1.0, -1.0].
Survey verdicts: ideal no violation found (epsilon >= 0.400); implementation violation (epsilon >= 4.040, attack
    float-lattice).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.3 --entry
    'tools.var[straddle]' --seed 2026 --out survey-reproduce

Kind: bug. Cause: The variance's noise is added by LaplaceBoundedDomain in floating point: its float leak.
True epsilon: infinite for the code

Source lines responsible (diffprivlib 0.6.3, as installed):
  diffprivlib/tools/utils.py (diffprivlib.tools.utils._var, from line 427):
    452: dp_mech = LaplaceBoundedDomain(epsilon=epsilon, delta=0,
    455: output = dp_mech.randomise(actual_var)
  diffprivlib/mechanisms/laplace.py (diffprivlib.mechanisms.LaplaceBoundedDomain.randomise, from line 397):
    415: noisy = value + self._scale * self._laplace_sampler(*np.array(unif).reshape(4, -1))

Docs: As mechanisms.Laplace.
Later surveyed versions: 0.6.6: still flagged; implementation violation (4.04).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/9f0d9f5ec87c2229):
    python experiments/library_survey/witness.py --run 'diffprivlib-0.6.3-tools.var_straddle.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from diffprivlib.tools import var

D = [-1.0, -1.0, -1.0]
D_PRIME = [1.0, -1.0, -1.0]


# 1. The library called once on each side, as a user would.
show_one('D ', var(np.asarray(D, dtype=float), epsilon=1.0, bounds=(-1, 1), random_state=np.random.RandomState(0)))
show_one("D'", var(np.asarray(D_PRIME, dtype=float), epsilon=1.0, bounds=(-1, 1), random_state=np.random.RandomState(0)))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'diffprivlib.tools.var', 'call': {'seed': 'random_state'}, 'params': {'epsilon': 1.0, 'bounds': [-1, 1]}})
rng = np.random.default_rng(3143740881)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-lattice')

# 3. The audit that certifies it (the code as it runs).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=3143740881, ideal=False))
