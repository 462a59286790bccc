"""Witness: pipeline-dp 0.2.1, pipeline_dp.DPEngine.aggregate (survey entry aggregate.COUNT.gaussian).

Claim: (1, 1e-05)-DP under add-remove; parameters {"metric": "COUNT", "epsilon": 1.0, "delta": 1e-05,
    "noise_kind": "gaussian", "min_value": 0.0, "max_value": 1.0}.
Pair found: D = [0.5, 0.0, 0.0], D' = [0.0, 0.0].
Survey verdicts: ideal no violation found (epsilon >= 0.059); implementation violation (epsilon >= 1.477, attack
    float-binade-lsb; float pass: (binade, lowest set bit exponent) of coordinate 0 in [(-1, -52), (-2, -52)]
    (likelier on D')).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library pipeline-dp==0.2.1 --entry
    aggregate.COUNT.gaussian --seed 2026 --out survey-reproduce

Kind: bug. Cause: PipelineDP adds the noise with python-dp's GaussianMechanism, whose C++ (google/differential-
    privacy at e59bbcf, the commit PyDP's v1.1.4 and v1.1.5.rc4 tags pin; the same lines at its newest snapshot,
    August 2026) computes it in doubles: cc/algorithms/numerical-mechanisms.cc lines 385-389, `double sample =
    standard_gaussian_->Sample(stddev);` then `return RoundToNearestMultiple(result,
    standard_gaussian_->GetGranularity(stddev)) + sample;`, with cc/algorithms/distributions.cc line 102 `return
    GetNextPowerOfTwo(2 * sigma / kBinomialBound);` (line 43: `kBinomialBound = (double)(1LL << 57)`) and line
    93 `return SampleBinomial(sqrt_n) * granularity;`. At sigma 3.73 (epsilon 1, delta 1e-5, sensitivity 1) the
    granularity is 2^-54, finer than the doubles near the noise: the sum result + sample is rounded to the
    doubles near it, which depend on result. On the sum 0 the release is the sample itself, an odd multiple of
    2^-54 whenever |sample| < 0.5 and its count of granules is odd (about 5% of releases); on the sum 1 such a
    release would need 1 + sample in (-0.5, 0.5), where the sample is already a multiple of 2^-53, so it never
    is. A count is the same: near 0 a release keeps the lattice of the sample near minus the count, so with the
    count 2 some releases in [0.25, 1) are odd multiples of 2^-52 (the sample in [-1.75, -1), a multiple of
    2^-52) and with the count 3 none is (the sample in [-2.75, -2), a multiple of 2^-51).
True epsilon: infinite for the code at delta 1e-5: releases with probability about 0.05 (SUM) or 0.03 (COUNT) on
    D' and 0 on D need delta at least that at every epsilon (the mathematics, Gaussian noise of sigma 3.73, is
    (1, 1e-5)-DP)

Source lines responsible (pipeline-dp 0.2.1, as installed):
  pipeline_dp/dp_computations.py (pipeline_dp.dp_computations.GaussianMechanism.create_from_epsilon_delta, from
    line 487):
    490: return GaussianMechanism(dp_mechanisms.GaussianMechanism(
  pipeline_dp/dp_computations.py (pipeline_dp.dp_computations.GaussianMechanism.add_noise, from line 509):
    510: return self._mechanism.add_noise(1.0 * value)

Docs: python-dp's C++ documents the opposite: cc/algorithms/distributions.h lines 31-35 say the binomial sampler
    of Secure_Noise_Generation.pdf "is robust against unintentional privacy leaks due to artifacts of floating
    point arithmetic"; PipelineDP's docs say nothing about floating point. The Laplace path is safe where this
    one is not: its granularity (distributions.cc: diversity / 2^40) is coarse enough that result + sample is
    exact, and the survey finds PipelineDP's Laplace SUM clean.
Later surveyed versions: 0.3.1: not flagged (fixed, or not found); implementation no violation found (0.901).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/d610d1f68905b84b):
    python experiments/library_survey/witness.py --run 'pipeline-dp-0.2.1-aggregate.COUNT.gaussian.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak
from dpaudit.survey.worker import build_target

D = [0.5, 0.0, 0.0]
D_PRIME = [0.0, 0.0]


# 1. The library called once on each side, as a user would.
# The entry calls the library through dpaudit's target 'dpaudit.adapters.pipeline_dp:aggregate': see RELEASE below.

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'pipeline_dp.DPEngine.aggregate', 'call': {'target': 'dpaudit.adapters.pipeline_dp:aggregate'}, 'params': {'metric': 'COUNT', 'epsilon': 1.0, 'delta': 1e-05, 'noise_kind': 'gaussian', 'min_value': 0.0, 'max_value': 1.0}})
rng = np.random.default_rng(1502592535)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-binade-lsb')

# 3. The audit that certifies it (the code as it runs; the survey float pass).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=1e-05, max_samples=2000,
                 confidence=0.99, seed=1502592535, ideal=False, float_pass=True))
