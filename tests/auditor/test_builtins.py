"""Tightness, detection and soundness of the auditor on the built-in mechanisms (issue 4).

Failure probabilities: the tightness floors sit 3-6 standard deviations of
the bound's sampling distribution below its mean (measured over 40 seeds when
written: Laplace 0.990 +- 0.004, randomized response 1.091 +- 0.003, Gaussian
GDP 4.32 +- 0.03, histogram 0.985 +- 0.006), so each fails with probability
< 1e-4.  Soundness: each audit exceeds the true epsilon with probability at
most 1 - confidence = 0.05 by construction.
"""

import math

import numpy as np
import pytest

import dpaudit
from dpaudit.mechanisms import get_mechanism, list_mechanisms
from dpaudit.stats import gaussian_epsilon


def gaussian_sigma_1(dataset, size=None, rng=None):
    # numpy's float Gaussian: its low-order bits betray the sum (the float family certifies ~10 here), so
    # the tests below, which are about the Gaussian *distribution*, audit it ideally.
    return float(np.sum(dataset)) + rng.normal(0.0, 1.0, size=size)


def test_laplace_is_tight():
    r = dpaudit.audit("laplace", [1], [0], epsilon=1.0, samples=1_000_000, seed=101)
    assert 0.97 <= r.epsilon_lower_bound <= 1.0
    assert r.verdict == "no violation found"


def test_randomized_response_is_tight():
    m = get_mechanism("randomized_response", p=0.5)
    d, d2 = m.neighbouring_pair()
    r = dpaudit.audit(m, d, d2, epsilon=math.log(3), samples=1_000_000, seed=102)
    assert 1.08 <= r.epsilon_lower_bound <= math.log(3)


def test_gaussian_gdp_reaches_90_percent_of_true_epsilon():
    true = gaussian_epsilon(1.0, 1e-5)  # 4.377 for sigma = sensitivity = 1
    r = dpaudit.audit(gaussian_sigma_1, [1], [0], epsilon=true, delta=1e-5, samples=1_000_000, seed=103,
                      estimator="gdp", ideal=True)
    assert 0.9 * true <= r.epsilon_lower_bound <= true
    assert any("Gaussian" in n for n in r.notes)


def test_gaussian_clopper_pearson_is_sound_but_looser():
    # The estimator valid for any mechanism cannot reach the tails at 10^6
    # samples (about 3.0-3.3 of 4.38); it must never exceed the truth.
    true = gaussian_epsilon(1.0, 1e-5)
    r = dpaudit.audit(gaussian_sigma_1, [1], [0], epsilon=true, delta=1e-5, samples=1_000_000, seed=104, ideal=True)
    assert 2.5 <= r.epsilon_lower_bound <= true


def test_noisy_histogram_ten_bins_is_tight():
    m = get_mechanism("noisy_histogram", epsilon=1.0, n_bins=10)
    d, d2 = m.neighbouring_pair()
    r = dpaudit.audit(m, d, d2, epsilon=1.0, samples=1_000_000, seed=105)
    assert 0.9 <= r.epsilon_lower_bound <= 1.0


BROKEN = [name for name, _desc, *rest in list_mechanisms() if "." not in name and get_mechanism(name).broken]


# The two slowest (vector releases of sparse vector at 10^6 samples) run in `make soundness`;
# the other SVT variants keep the family covered in `make test`.
_SLOW_BROKEN = {"svt34_parallel", "svt_lyu_alg3"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_BROKEN else n
                                  for n in BROKEN])
def test_every_broken_builtin_is_flagged_with_defaults(name):
    m = get_mechanism(name)
    d, d2 = m.neighbouring_pair()
    r = dpaudit.audit(m, d, d2, epsilon=m.claim.point_epsilon, delta=m.claim.point_delta, seed=7)
    assert r.verdict == "violation", (name, r.epsilon_lower_bound, r.attack, r.event)
    assert r.epsilon_lower_bound > m.claim.point_epsilon
    assert r.epsilon_lower_bound <= m.true_epsilon(m.claim.point_delta)


CORRECT = ["laplace", "geometric", "randomized_response", "gaussian_analytic", "exponential",
           "report_noisy_max_laplace", "noisy_histogram"]


def test_soundness_seeded_audits_of_correct_builtins_quick():
    """The cheap version of the 210-audit run below, for ``make test``: 3 seeds per mechanism.

    Each audit exceeds the true epsilon with probability <= 0.05, so exceedances
    are at most Binomial(21, 0.05); more than 4 happens with probability 0.0027
    for a method failing at exactly 5% (and < 1e-5 at the measured ~1%).  The
    seeds are fixed, so the outcome is deterministic.
    """
    exceed = 0
    for name in CORRECT:
        m = get_mechanism(name)
        d, d2 = m.neighbouring_pair()
        true = m.true_epsilon(m.claim.point_delta)
        for seed in (1000, 1001, 1002):
            r = dpaudit.audit(m, d, d2, epsilon=m.claim.point_epsilon, delta=m.claim.point_delta, samples=20_000, seed=seed)
            exceed += r.epsilon_lower_bound > true + 1e-9
    assert exceed <= 4


@pytest.mark.soundness
def test_soundness_over_200_seeded_audits_of_correct_builtins():
    """At most 5% of 210 audits may exceed the true epsilon.

    Each audit fails with probability <= 0.05, so exceedances are at most
    Binomial(210, 0.05) (mean 10.5); the issue's allowance of 5% (10 of 210)
    would be missed with probability P(Bin(210, 0.05) > 10) = 0.47 by a
    method failing at exactly 5%; ours is far more conservative (exact
    one-sided intervals, an event that is not the optimum): the statistics
    tests measured 0.4-1% per bound, for which P(Bin(210, 0.01) > 10) < 1e-5.
    `make soundness` prints the full table.
    """
    exceed = total = 0
    for name in CORRECT:
        m = get_mechanism(name)
        d, d2 = m.neighbouring_pair()
        true = m.true_epsilon(m.claim.point_delta)
        for seed in range(30):
            r = dpaudit.audit(m, d, d2, epsilon=m.claim.point_epsilon, delta=m.claim.point_delta, samples=20_000, seed=seed)
            exceed += r.epsilon_lower_bound > true + 1e-9
            total += 1
    assert total == 210
    assert exceed <= 0.05 * total


@pytest.mark.parametrize("name", ["svt_lyu_alg4", "svt_lyu_alg6"])
def test_dp_sniper_svt_violations_are_flagged_at_epsilon_0_1(name):
    """DP-Sniper's setting: claimed epsilon 0.1, the default (sequential, budget 10^6), built-in pair, ``auto``.

    Measured with the fixed 10^6 audit: Algorithm 4 (true 0.175) 0.122 +- 0.015 over seeds 0-9,
    min 0.105; Algorithm 6 (at most 0.5 on its pair) 0.225 +- 0.032 over seeds 0-7, min 0.196.
    The sequential default, seeds 7, 1, 2: Algorithm 4 0.125, 0.120, 0.105 (all at the full
    budget; a fresh seed fails with probability of order 10%); Algorithm 6 0.142, 0.118, 0.102
    (stopping at 2.5-5 x 10^5 as soon as the violation is certified).
    The seed is fixed, so the test is deterministic.  Algorithm 3 is not yet flagged at 10^6
    (about 0.09; its exact best event would certify 0.15).
    """
    m = get_mechanism(name, epsilon=0.1)
    d, d2 = m.neighbouring_pair()
    r = dpaudit.audit(m, d, d2, epsilon=0.1, seed=7)
    assert r.verdict == "violation", (r.epsilon_lower_bound, r.attack, r.event)
    assert 0.1 < r.epsilon_lower_bound <= m.true_epsilon()
