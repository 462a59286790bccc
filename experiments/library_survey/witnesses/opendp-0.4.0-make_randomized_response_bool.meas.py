"""Witness: opendp 0.4.0, opendp.meas.make_randomized_response_bool (survey entry
    make_randomized_response_bool.meas).

Claim: (1, 0)-DP under replace-one; parameters {"epsilon": 1.0}.
Pair found: D = [0.0], D' = [1.0].
Survey verdicts: ideal violation (epsilon >= 2.015); implementation violation (epsilon >= 2.199, attack
    threshold).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library opendp==0.4.0 --entry
    make_randomized_response_bool.meas --seed 2026 --out survey-reproduce

Kind: bug. Cause: The "lie" is a fresh coin that is true with probability prob, not the negated answer, so the
    release is true with probability p + (1 - p) p for a true bit and (1 - p) p for a false one (p = prob); the
    privacy relation charges ln(p / (1 - p)). OpenDP 0.5.0 returns arg ^ !bernoulli(prob) (its changelog: "Fixed
    function in make_randomized_response_bool", from proof-writing by Vicki Xu and Hanwen Zhang).
True epsilon: ln((p + (1 - p)^2) / (1 - p)^2) = 2.408 at p = e / (1 + e), the claim 1 (the release false; the
    release true gives ln((2 - p) / (1 - p)) = 1.551)

Source lines responsible (opendp 0.4.0, as installed):
  opendp/meas.py (opendp.meas.make_randomized_response_bool, from line 168):
    197: function = lib.opendp_meas__make_randomized_response_bool
  rust/opendp/src/meas/randomized_response/mod.rs (opendp/opendp at v0.4.0: compiled into the installed wheel):
    41: let lie = bool::sample_bernoulli(prob, constant_time)?;
    42: Ok(if bool::sample_bernoulli(prob, constant_time)? { *arg } else { lie })
    48: prob.inf_div(&Q::one().neg_inf_sub(&prob)?)?.inf_ln()?),

Docs: No warning: the docstring calls prob the probability of returning the correct answer.
Later surveyed versions: 0.5.0: not flagged (fixed, or not found); ideal no violation found (0.919).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/0aea82c2d416d1c4):
    python experiments/library_survey/witness.py --run 'opendp-0.4.0-make_randomized_response_bool.meas.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak
from dpaudit.survey.worker import build_target

D = [0.0]
D_PRIME = [1.0]


# 1. The library called once on each side, as a user would.
# The entry calls the library through dpaudit's target 'opendp.randomized_response': see RELEASE below.

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'opendp.meas.make_randomized_response_bool', 'call': {'target': 'opendp.randomized_response'}, 'params': {'epsilon': 1.0}})
rng = np.random.default_rng(1195886855)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, None)

# 3. The audit that certifies it (ideal: floating-point attacks off).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=1195886855, ideal=True))
