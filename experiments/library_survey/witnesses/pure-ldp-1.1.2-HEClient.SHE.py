"""Witness: pure-ldp 1.1.2, pure_ldp.frequency_oracles.histogram_encoding.HEClient (survey entry HEClient.SHE).

Claim: (1, 0)-DP under replace-one; parameters {"epsilon": 1.0, "d": 4}.
Pair found: D = [1.0], D' = [3.0].
Survey verdicts: ideal no violation found (epsilon >= 0.766); implementation violation (epsilon >= 4.989, attack
    float-lattice).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library pure-ldp==1.1.2 --entry
    HEClient.SHE --seed 2026 --out survey-reproduce

Kind: bug. Cause: Floating-point Laplace noise added to a one-hot vector: which doubles oh_vec + noise can be
    depends on the one-hot entry, so some releases on one value are impossible on the other (Mironov 2012).
True epsilon: infinite for the code (the mathematics is epsilon-LDP: scale 2/epsilon, L1 sensitivity 2)

Source lines responsible (pure-ldp 1.1.2, as installed):
  pure_ldp/frequency_oracles/histogram_encoding/he_client.py
    (pure_ldp.frequency_oracles.histogram_encoding.HEClient._perturb, from line 18):
    28: noise = np.random.laplace(scale=(2 / self.epsilon), size=self.d)
    29: noisy_vec = oh_vec + noise

Docs: No warning about floating point.
Later surveyed versions: 1.2.0: still flagged; implementation violation (4.99).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/aaec40e95588248f):
    python experiments/library_survey/witness.py --run 'pure-ldp-1.1.2-HEClient.SHE.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from pure_ldp.frequency_oracles.histogram_encoding import HEClient

D = [1.0]
D_PRIME = [3.0]


# 1. The library called once on each side, as a user would.
np.random.seed(0)
random.seed(0)
show_one('D ', HEClient(epsilon=1.0, d=4).privatise(int(D[0])))
show_one("D'", HEClient(epsilon=1.0, d=4).privatise(int(D_PRIME[0])))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'pure_ldp.frequency_oracles.histogram_encoding.HEClient', 'call': {'method': 'privatise', 'statistic': 'first', 'seed': 'global'}, 'params': {'epsilon': 1.0, 'd': 4}})
rng = np.random.default_rng(1137772669)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-lattice')

# 3. The audit that certifies it (the code as it runs).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=10000,
                 confidence=0.99, seed=1137772669, ideal=False))
