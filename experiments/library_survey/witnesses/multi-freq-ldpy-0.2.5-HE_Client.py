"""Witness: multi-freq-ldpy 0.2.5, multi_freq_ldpy.pure_frequency_oracles.HE.HE_Client (survey entry HE_Client).

Claim: (1, 0)-DP under replace-one; parameters {"k": 4, "epsilon": 1.0}.
Pair found: D = [0.0], D' = [2.0].
Survey verdicts: ideal no violation found (epsilon >= 0.735); implementation violation (epsilon >= 4.814, attack
    float-lattice).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library multi-freq-ldpy==0.2.5
    --entry HE_Client --seed 2026 --out survey-reproduce

Kind: bug. Cause: Floating-point Laplace noise added to a one-hot vector (the same construction as pure-ldp's
    HEClient).
True epsilon: infinite for the code (the mathematics is epsilon-LDP)

Source lines responsible (multi-freq-ldpy 0.2.5, as installed):
  multi_freq_ldpy/pure_frequency_oracles/HE.py (multi_freq_ldpy.pure_frequency_oracles.HE.HE_Client, from line
    11):
    32: return input_ue_data + np.random.laplace(loc=0.0, scale=2 / epsilon, size=k)

Docs: No warning about floating point.
No later version of this entry was surveyed.

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/39676878acbcf113):
    python experiments/library_survey/witness.py --run 'multi-freq-ldpy-0.2.5-HE_Client.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Client

D = [0.0]
D_PRIME = [2.0]


# 1. The library called once on each side, as a user would.
np.random.seed(0)
random.seed(0)
show_one('D ', HE_Client(int(D[0]), k=4, epsilon=1.0))
show_one("D'", HE_Client(int(D_PRIME[0]), k=4, epsilon=1.0))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'multi_freq_ldpy.pure_frequency_oracles.HE.HE_Client', 'call': {'data': 'value', 'seed': 'numba'}, 'params': {'k': 4, 'epsilon': 1.0}})
rng = np.random.default_rng(4200008892)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-lattice')

# 3. The audit that certifies it (the code as it runs).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=10000,
                 confidence=0.99, seed=4200008892, ideal=False))
