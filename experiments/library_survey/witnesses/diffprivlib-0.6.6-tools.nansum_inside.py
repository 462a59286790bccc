"""Witness: diffprivlib 0.6.6, diffprivlib.tools.nansum (survey entry tools.nansum[inside]).

Claim: (1, 0)-DP under add-remove; parameters {"epsilon": 1.0, "bounds": [0, 1]}.
Pair found: D = [1.0, 1.0, 1.0], D' = [1.0, 1.0].
Survey verdicts: ideal violation (epsilon >= 5.028); implementation violation (epsilon >= 5.170, attack float-
    lsb).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.6 --entry
    'tools.nansum[inside]' --seed 2026 --out survey-reproduce

Kind: relation. Cause: The noisy sum is truncated to [lower * n, upper * n]: adding a record moves the range
    itself, so some outputs are impossible without it. The calibration (sensitivity upper - lower, n public) is
    replace-one's, where the survey finds it clean; count_nonzero calls sum with bounds (0, 1).
True epsilon: infinite under add-remove; epsilon under replace-one

Source lines responsible (diffprivlib 0.6.6, as installed):
  diffprivlib/tools/utils.py (diffprivlib.tools.utils._sum, from line 713):
    739: mech = mech(epsilon=epsilon, sensitivity=upper - lower, lower=lower * array.size, upper=upper * array.size,
    741: output = mech.randomise(actual_sum)

Docs: The docs state no neighbouring relation, so this is a relation the docs leave open, not a bug in the code.
No later version of this entry was surveyed.

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/daff0819c67196df):
    python experiments/library_survey/witness.py --run 'diffprivlib-0.6.6-tools.nansum_inside.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from diffprivlib.tools import nansum

D = [1.0, 1.0, 1.0]
D_PRIME = [1.0, 1.0]


# 1. The library called once on each side, as a user would.
show_one('D ', nansum(np.asarray(D, dtype=float), epsilon=1.0, bounds=(0, 1), random_state=np.random.RandomState(0)))
show_one("D'", nansum(np.asarray(D_PRIME, dtype=float), epsilon=1.0, bounds=(0, 1), random_state=np.random.RandomState(0)))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'diffprivlib.tools.nansum', 'call': {'seed': 'random_state'}, 'params': {'epsilon': 1.0, 'bounds': [0, 1]}})
rng = np.random.default_rng(420757086)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, None)

# 3. The audit that certifies it (ideal: floating-point attacks off).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=420757086, ideal=True))
