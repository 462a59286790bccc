"""Witness: pure-ldp 1.1.2, pure_ldp.frequency_oracles.unary_encoding.UEClient (survey entry
    UEClient.OUE[epsilon=0.5]).

Claim: (0.5, 0)-DP under replace-one; parameters {"epsilon": 0.5, "d": 4, "use_oue": true}.
Pair found: D = [2.0], D' = [3.0].
Survey verdicts: ideal violation (epsilon >= 1.059); implementation violation (epsilon >= 0.892, attack sign-
    sum).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library pure-ldp==1.1.2 --entry
    'UEClient.OUE[epsilon=0.5]' --seed 2026 --out survey-reproduce

Kind: bug. Cause: The user's own bit starts as a q-coin and is then set to 1 with probability p, so it is 1 with
    probability p' = p + (1 - p) q, not p (1.2.0 zeroes it first).
True epsilon: ln(p'/q) + ln((1 - q)/(1 - p')): 1.369 (SUE, 0.5), 2.408 (SUE, 2), 1.294 (OUE, 0.5), 2.240 (OUE,
    2), 1.680 (SUE, 1)

Source lines responsible (pure-ldp 1.1.2, as installed):
  pure_ldp/frequency_oracles/unary_encoding/ue_client.py
    (pure_ldp.frequency_oracles.unary_encoding.UEClient._perturb, from line 44):
    54: oh_vec = np.random.choice([1, 0], size=self.d, p=[self.q, 1-self.q])  # If entry is 0, flip with prob q
    55: if random.random() < self.p:
    56: oh_vec[index] = 1

Docs: No warning: the client docstring calls epsilon the privacy budget (Arcolezi and Gambs 2024 reported the
    bug).
Later surveyed versions: 1.2.0: not flagged (fixed, or not found); ideal no violation found (0.423).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/aaec40e95588248f):
    python experiments/library_survey/witness.py --run 'pure-ldp-1.1.2-UEClient.OUE_epsilon=0.5.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from pure_ldp.frequency_oracles.unary_encoding import UEClient

D = [2.0]
D_PRIME = [3.0]


# 1. The library called once on each side, as a user would.
np.random.seed(0)
random.seed(0)
show_one('D ', UEClient(epsilon=0.5, d=4, use_oue=True).privatise(int(D[0])))
show_one("D'", UEClient(epsilon=0.5, d=4, use_oue=True).privatise(int(D_PRIME[0])))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'pure_ldp.frequency_oracles.unary_encoding.UEClient', 'call': {'method': 'privatise', 'statistic': 'first', 'seed': 'global'}, 'params': {'epsilon': 0.5, 'd': 4, 'use_oue': True}})
rng = np.random.default_rng(39101344)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, None)

# 3. The audit that certifies it (ideal: floating-point attacks off).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=0.5, delta=0.0, max_samples=10000,
                 confidence=0.99, seed=39101344, ideal=True))
