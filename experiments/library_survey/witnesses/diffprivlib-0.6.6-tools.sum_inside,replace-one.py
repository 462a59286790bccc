"""Witness: diffprivlib 0.6.6, diffprivlib.tools.sum (survey entry tools.sum[inside,replace-one]).

Claim: (1, 0)-DP under replace-one; parameters {"epsilon": 1.0, "bounds": [0, 1]}.
Pair found: D = [1.0, 1.0, 0.8534222217139762], D' = [0.0, 1.0, 0.8534222217139762].
Survey verdicts: ideal no violation found (epsilon >= 0.831); implementation violation (epsilon >= 1.310, attack
    float-binade-lsb; float pass: (binade, lowest set bit exponent) of coordinate 0 in [(-2, -52), (-1, -53),
    (-1, -52)] (likelier on D')).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.6 --entry
    'tools.sum[inside,replace-one]' --seed 2026 --out survey-reproduce

Kind: bug. Cause: Under replace-one (n public, the truncation range fixed) the sum's noise is added by
    LaplaceTruncated in floating point: its float leak, a one-sided event that the float pass certifies.
True epsilon: infinite for the code; epsilon for the mathematics under replace-one

Source lines responsible (diffprivlib 0.6.6, as installed):
  diffprivlib/tools/utils.py (diffprivlib.tools.utils._sum, from line 713):
    739: mech = mech(epsilon=epsilon, sensitivity=upper - lower, lower=lower * array.size, upper=upper * array.size,
    741: output = mech.randomise(actual_sum)
  diffprivlib/mechanisms/laplace.py (diffprivlib.mechanisms.Laplace.randomise, from line 129):
    149: return value - scale * standard_laplace

Docs: As mechanisms.Laplace.
No later version of this entry was surveyed.

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/daff0819c67196df):
    python experiments/library_survey/witness.py --run 'diffprivlib-0.6.6-tools.sum_inside,replace-one.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from diffprivlib.tools import sum as sum_

D = [1.0, 1.0, 0.8534222217139762]
D_PRIME = [0.0, 1.0, 0.8534222217139762]


# 1. The library called once on each side, as a user would.
show_one('D ', sum_(np.asarray(D, dtype=float), epsilon=1.0, bounds=(0, 1), random_state=np.random.RandomState(0)))
show_one("D'", sum_(np.asarray(D_PRIME, dtype=float), epsilon=1.0, bounds=(0, 1), random_state=np.random.RandomState(0)))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'diffprivlib.tools.sum', 'call': {'seed': 'random_state'}, 'params': {'epsilon': 1.0, 'bounds': [0, 1]}})
rng = np.random.default_rng(3154341692)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-binade-lsb')

# 3. The audit that certifies it (the code as it runs; the survey float pass).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=3154341692, ideal=False, float_pass=True))
