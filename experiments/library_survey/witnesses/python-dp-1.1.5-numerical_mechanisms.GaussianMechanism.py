"""Witness: python-dp 1.1.5, pydp.algorithms.numerical_mechanisms.GaussianMechanism (survey entry
    numerical_mechanisms.GaussianMechanism).

Claim: (1, 1e-05)-DP under add-remove; parameters {"epsilon": 1.0, "delta": 1e-05, "sensitivity": 1.0}.
Pair found: D = [1.0, 0.0], D' = [0.0].
Survey verdicts: ideal no violation found (epsilon >= 0.131); implementation violation (epsilon >= 2.808, attack
    float-lsb; float pass: lowest set bit exponent of coordinate 0 in [-54] (likelier on D')).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library python-dp==1.1.5 --entry
    numerical_mechanisms.GaussianMechanism --seed 2026 --out survey-reproduce

Kind: bug. Cause: The noise primitive PipelineDP's Gaussian aggregates call (compiled C++, so inspect cannot
    quote it; from google/differential-privacy at e59bbcf, the commit PyDP's v1.1.4 and v1.1.5.rc4 tags pin, the
    same lines at its newest snapshot, August 2026): cc/algorithms/numerical-mechanisms.cc lines 385-389,
    `double sample = standard_gaussian_->Sample(stddev);` then `return RoundToNearestMultiple(result,
    standard_gaussian_->GetGranularity(stddev)) + sample;`; cc/algorithms/distributions.cc line 102 `return
    GetNextPowerOfTwo(2 * sigma / kBinomialBound);` (line 43: `kBinomialBound = (double)(1LL << 57)`) and line
    93 `return SampleBinomial(sqrt_n) * granularity;`. At sigma 3.73 the granularity is 2^-54, finer than the
    doubles near the noise, so result + sample is rounded to doubles that depend on result: add_noise(0.0)
    returns odd multiples of 2^-54 (|sample| < 0.5, an odd count of granules), add_noise(1.0) never does (1 +
    sample near 0 needs a sample in (-1.5, -0.5), already a multiple of 2^-53).
True epsilon: infinite for the code at delta 1e-5: releases with probability about 0.05 on D' and 0 on D (the
    mathematics, Gaussian noise of sigma 3.73 for L2 sensitivity 1, is (1, 1e-5)-DP)

Source lines responsible (python-dp 1.1.5, as installed):
  none that inspect can read (compiled code): the cause above quotes them.

Docs: cc/algorithms/distributions.h lines 31-35 say the binomial sampler of Secure_Noise_Generation.pdf "is
    robust against unintentional privacy leaks due to artifacts of floating point arithmetic": the docs claim
    the protection the code does not give at this granularity. The LaplaceMechanism (granularity diversity /
    2^40, coarse enough that result + sample is exact) is clean in the survey.
No later version of this entry was surveyed.

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/c8d5af00bb601d66):
    python experiments/library_survey/witness.py --run 'python-dp-1.1.5-numerical_mechanisms.GaussianMechanism.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from pydp.algorithms.numerical_mechanisms import GaussianMechanism

D = [1.0, 0.0]
D_PRIME = [0.0]


# 1. The library called once on each side, as a user would.
show_one('D ', GaussianMechanism(epsilon=1.0, delta=1e-05, sensitivity=1.0).add_noise(float(np.sum(D))))
show_one("D'", GaussianMechanism(epsilon=1.0, delta=1e-05, sensitivity=1.0).add_noise(float(np.sum(D_PRIME))))

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'pydp.algorithms.numerical_mechanisms.GaussianMechanism', 'call': {'method': 'add_noise', 'statistic': 'sum', 'data': 'array', 'fresh': True, 'seed': 'none'}, 'params': {'epsilon': 1.0, 'delta': 1e-05, 'sensitivity': 1.0}})
rng = np.random.default_rng(868592243)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, 'float-lsb')

# 3. The audit that certifies it (the code as it runs; the survey float pass).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=1e-05, max_samples=3000,
                 confidence=0.99, seed=868592243, ideal=False, float_pass=True))
