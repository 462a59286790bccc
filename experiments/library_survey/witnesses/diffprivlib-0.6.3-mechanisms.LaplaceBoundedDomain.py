"""Witness: diffprivlib 0.6.3, diffprivlib.mechanisms.LaplaceBoundedDomain (survey entry
    mechanisms.LaplaceBoundedDomain).

Claim: (1, 0)-DP under add-remove; parameters {"epsilon": 1.0, "delta": 0.0, "sensitivity": 1.0, "lower": 0.0,
    "upper": 2.0}.
Pair found: D = [1.0, 0.5], D' = [0.5].
Survey verdicts: ideal no violation found (epsilon >= 0.415); implementation violation (epsilon >= 3.654, attack
    float-binade-lsb).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.3 --entry
    mechanisms.LaplaceBoundedDomain --seed 2026 --out survey-reproduce

Kind: bug. Cause: value + scale * noise rounded to a double: the float leak of Laplace, inside the rejection
    loop.
True epsilon: infinite for the code

Source lines responsible (diffprivlib 0.6.3, as installed):
  diffprivlib/mechanisms/laplace.py (diffprivlib.mechanisms.LaplaceBoundedDomain.randomise, from line 397):
    415: noisy = value + self._scale * self._laplace_sampler(*np.array(unif).reshape(4, -1))

Docs: As mechanisms.Laplace: the sampler's docstring claims protection against floating-point attacks.
Later surveyed versions: 0.6.6: still flagged; implementation violation (3.65).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/9f0d9f5ec87c2229):
    python experiments/library_survey/witness.py --run 'diffprivlib-0.6.3-mechanisms.LaplaceBoundedDomain.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from diffprivlib.mechanisms import LaplaceBoundedDomain

D = [1.0, 0.5]
D_PRIME = [0.5]


# 1. The library called once on each side, as a user would.
show_one('D ', LaplaceBoundedDomain(epsilon=1.0, delta=0.0, sensitivity=1.0, lower=0.0, upper=2.0, random_state=np.random.RandomState(0)).randomise(float(np.sum(D))))
show_one("D'", LaplaceBoundedDomain(epsilon=1.0, delta=0.0, sensitivity=1.0, lower=0.0, upper=2.0, random_state=np.random.RandomState(0)).randomise(float(np.sum(D_PRIME))))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'diffprivlib.mechanisms.LaplaceBoundedDomain', 'call': {'seed': 'random_state', 'method': 'randomise', 'statistic': 'sum'}, 'params': {'epsilon': 1.0, 'delta': 0.0, 'sensitivity': 1.0, 'lower': 0.0, 'upper': 2.0}})
rng = np.random.default_rng(3356638264)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-binade-lsb')

# 3. The audit that certifies it (the code as it runs).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=3356638264, ideal=False))
