"""Witness: opendp 0.4.0, opendp.trans.make_bounded_sum (survey entry
    make_bounded_sum.make_base_laplace[straddle]).

Claim: (1, 0)-DP under add-remove; parameters {"epsilon": 1.0, "lower": -1.0, "upper": 1.0}.
Pair found: D = [1.0, -1.0, 1.0], D' = [-1.0, 1.0].
Survey verdicts: ideal no violation found (epsilon >= 0.886); implementation violation (epsilon >= 4.345, attack
    float-lattice).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library opendp==0.4.0 --entry
    'make_bounded_sum.make_base_laplace[straddle]' --seed 2026 --out survey-reproduce

Kind: limitation. Cause: The noise is an exact (MPFR) Laplace deviate, but shift / scale + noise is rounded to a
    53-bit double whose possible values depend on the shift: at scale 1, a release in [0.25, 0.5) is an odd
    multiple of 2^-54 only when the shift is 0, never when it is 1 (Mironov 2012). OpenDP 0.5.0 replaced it by
    discrete Laplace noise on a 2^-1074 grid (its changelog, under Security, citing Haney et al. 2022).
True epsilon: infinite for the code (the mathematics is epsilon-DP: scale sensitivity / epsilon)

Source lines responsible (opendp 0.4.0, as installed):
  opendp/meas.py (opendp.meas.make_base_laplace, from line 18):
    34: assert_features("floating-point", "contrib")
    46: function = lib.opendp_meas__make_base_laplace
  rust/opendp/src/meas/laplace/mod.rs (opendp/opendp at v0.4.0: compiled into the installed wheel):
    24: Function::new_fallible(move |arg: &Self::Carrier| Self::Carrier::sample_laplace(*arg, scale, false))
  rust/opendp/src/samplers.rs (opendp/opendp at v0.4.0: compiled into the installed wheel):
    476: value.div_assign_round(&scale.clone().into_internal(), Round::Zero);
    478: value.add_assign_round(
    479: &noise, if value.is_sign_positive() {Round::Up} else {Round::Down});
    482: let value = T::from_internal(value) * scale;
    563: Ok(perturb(shift, scale, laplace))

Docs: Documented: make_base_laplace needs enable_features("floating-point"), and the 0.4 docs' Limitations page
    says the floating-point mechanisms "have known issues, where the differential privacy property is not
    satisfied" (Mironov 2012). The same docs' Floating-Point section also says that noise at arbitrary scale is
    made "through a combination of preprocessing and postprocessing that preserves the properties of
    differential privacy", which the rounding of shift / scale + noise does not.
Later surveyed versions: 0.5.0: not flagged (fixed, or not found); implementation no violation found (0.318).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/0aea82c2d416d1c4):
    python experiments/library_survey/witness.py --run 'opendp-0.4.0-make_bounded_sum.make_base_laplace_straddle.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak
from dpaudit.survey.worker import build_target

D = [1.0, -1.0, 1.0]
D_PRIME = [-1.0, 1.0]


# 1. The library called once on each side, as a user would.
# The entry calls the library through dpaudit's target 'dpaudit.adapters.opendp_aggregates:sum_laplace': see RELEASE below.

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'opendp.trans.make_bounded_sum', 'call': {'target': 'dpaudit.adapters.opendp_aggregates:sum_laplace'}, 'params': {'epsilon': 1.0, 'lower': -1.0, 'upper': 1.0}})
rng = np.random.default_rng(2592725646)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-lattice')

# 3. The audit that certifies it (the code as it runs).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=2592725646, ideal=False))
