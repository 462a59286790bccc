"""Privacy profile eps(delta), Gaussian-DP mu bound, gaussian_epsilon, empirical ROC.

Failure probabilities are over the seed, measured on other seeds beforehand.
"""

import json
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from dpaudit.exceptions import ParameterTypeError, ParameterValueError
from dpaudit.stats import profile as profile_module
from dpaudit.stats import (
    DEFAULT_DELTAS,
    GDPBound,
    PrivacyProfile,
    bound_from_scores,
    empirical_roc,
    gaussian_epsilon,
    gdp_mu_lower_bound,
    privacy_profile,
)


def laplace_true_epsilon(delta, epsilon=1.0):
    """Exact eps(delta) of the Laplace mechanism (sensitivity 1, scale 1/epsilon).

    Its hockey-stick divergence is delta(e') = 1 - exp((e' - epsilon) / 2) for
    0 <= e' <= epsilon (Balle et al. 2018, "Privacy amplification by
    subsampling", Laplace example), i.e. eps(delta) = epsilon + 2 ln(1 - delta).
    Checked numerically in test_laplace_profile_reference.
    """
    return max(0.0, epsilon + 2.0 * math.log1p(-delta))


def hockey_stick(p, q, eps, kinks, lo=-60, hi=60):
    """delta(eps) = integral of (p - e^eps q)_+ (numerical, independent of dpaudit).

    ``kinks``: where the integrand is not smooth (densities' kinks and the
    crossing p = e^eps q), so that quad does not miss them.
    """
    return integrate.quad(lambda x: max(0.0, p(x) - math.exp(eps) * q(x)), lo, hi, limit=500,
                          points=kinks, epsabs=1e-13, epsrel=1e-10)[0]


@pytest.fixture(scope="module")
def laplace_scores():
    # 10^6 per side, eps = 1; one fixture for the profile tests (seeded).
    rng = np.random.default_rng(20240531)
    return 1.0 + rng.laplace(size=10**6), rng.laplace(size=10**6)


# --------------------------------------------------------------------------- #
# Privacy profile
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("delta", [0.0, 1e-3, 0.1, 0.3])
def test_laplace_profile_reference(delta):
    # The closed form above against the numerical hockey-stick divergence.
    e = laplace_true_epsilon(delta)
    p = lambda x: 0.5 * math.exp(-abs(x - 1.0))  # noqa: E731
    q = lambda x: 0.5 * math.exp(-abs(x))  # noqa: E731
    # p / q = e^(2x - 1) on [0, 1]: the crossing is at x = (1 + e) / 2.
    assert hockey_stick(p, q, e, [0.0, (1 + e) / 2, 1.0]) == pytest.approx(delta, abs=1e-9)


def test_laplace_profile_is_tight_sound_and_non_increasing(laplace_scores):
    s0, s1 = laplace_scores
    p = privacy_profile(s0, s1)  # simultaneous over the grid, confidence 0.95
    eps = np.array(p.epsilons)
    truth = np.array([laplace_true_epsilon(d) for d in p.deltas])
    assert p.deltas == DEFAULT_DELTAS
    # Non-increasing in delta (by construction when simultaneous).
    assert np.all(np.diff(eps) <= 0)
    # Sound: the whole curve is below the truth with probability >= 95%
    # (measured: the gap to the truth was 0.011-0.017 at every delta on 8 seeds).
    assert np.all(eps <= truth)
    # Tight: within 0.03 of the truth everywhere; the gap is 0.015 +- 0.002,
    # so this fails with probability ~Phi(-7).
    assert np.all(eps >= truth - 0.03)


def test_profile_at_delta_zero_matches_the_split_bound(laplace_scores):
    s0, s1 = laplace_scores
    split = bound_from_scores(s0, s1).epsilon_lower_bound
    # Same split, same selection, one comparison: exactly the split bound.
    alone = privacy_profile(s0, s1, deltas=(0.0,), simultaneous=False)
    assert alone.epsilons[0] == split
    # On the full grid the Bonferroni factor 9 costs a little (0.0035 on 8 seeds).
    simultaneous = privacy_profile(s0, s1)
    assert split - 0.01 <= simultaneous.epsilons[0] <= split


def test_simultaneous_is_more_conservative(laplace_scores):
    s0, s1 = laplace_scores
    deltas = (0.0, 1e-3, 0.05, 0.2)
    sim = np.array(privacy_profile(s0, s1, deltas=deltas).epsilons)
    each = np.array(privacy_profile(s0, s1, deltas=deltas, simultaneous=False).epsilons)
    # The simultaneous curve is the running max (from larger deltas) of bounds
    # each weaker than the pointwise one at the same event, hence below the
    # running max of the pointwise curve, and strictly below at delta = 0.
    each_monotone = np.maximum.accumulate(each[::-1])[::-1]
    assert np.all(sim <= each_monotone)
    assert sim[0] < each[0]


def test_profile_of_a_null_mechanism_is_zero():
    s = np.random.default_rng(4).normal(size=20_000)
    assert privacy_profile(s, s.copy()).epsilons == (0.0,) * len(DEFAULT_DELTAS)


def test_profile_json_round_trip_and_validation():
    p = PrivacyProfile(deltas=(0.0, 1e-5), epsilons=(0.9, 0.8), confidence=0.95, simultaneous=True)
    d = json.loads(json.dumps(p.to_dict()))
    assert d == {"delta": [0.0, 1e-5], "epsilon": [0.9, 0.8], "confidence": 0.95, "simultaneous": True}
    assert PrivacyProfile.from_dict(d) == p
    s = np.arange(100.0)
    with pytest.raises(ParameterValueError, match="^deltas"):
        privacy_profile(s, s, deltas=(0.0, 1.0))
    with pytest.raises(ParameterTypeError, match="^deltas"):
        privacy_profile(s, s, deltas=("x",))
    with pytest.raises(ParameterValueError, match="^confidence"):
        privacy_profile(s, s, confidence=1.0)


# --------------------------------------------------------------------------- #
# Gaussian DP
# --------------------------------------------------------------------------- #

def test_gdp_mu_bound_for_the_gaussian_mechanism():
    # Gaussian mechanism with mu = 1 (D: 1 + N(0,1), D': N(0,1)), 10^6 per side.
    # Over 30 other seeds: 0.9927 +- 0.0019 (min 0.989).  Lower side fails with
    # probability ~Phi(-22); upper side (soundness) <= 5%, ~Phi(-3.9) = 5e-5 here.
    rng = np.random.default_rng(20240532)
    g = gdp_mu_lower_bound(1.0 + rng.normal(size=10**6), rng.normal(size=10**6))
    assert 0.95 <= g.mu_lower_bound <= 1.0
    # The reported rates reproduce the bound (Nasr et al. 2023).
    assert g.mu_lower_bound == pytest.approx(norm.isf(g.fpr_upper) - norm.ppf(g.fnr_upper), rel=1e-9)
    assert g.to_dict()["confidence"] == 0.95
    assert g.epsilon_at(1e-5) == gaussian_epsilon(g.mu_lower_bound, 1e-5)


def test_gdp_soundness():
    # 200 seeded repetitions at 20k per side: mu_lower_bound > 1 in X ~
    # Bin(200, p), p <= 0.05 if sound.  Assert X <= 20 (fails w.p. 0.0012 for
    # any sound method) and X <= 10 (fair because the two-interval bound is
    # conservative; measured 0 exceedances here).
    exceed = 0
    for seq in np.random.SeedSequence(20240533).spawn(200):
        rng = np.random.default_rng(seq)
        exceed += gdp_mu_lower_bound(1.0 + rng.normal(size=20_000), rng.normal(size=20_000)).mu_lower_bound > 1.0
    assert exceed <= 20
    assert exceed <= 10


def test_gdp_null_and_separated():
    s = np.random.default_rng(6).normal(size=10_000)
    assert gdp_mu_lower_bound(s, s.copy()).mu_lower_bound == 0.0
    g = gdp_mu_lower_bound(np.arange(1000.0) + 1e4, np.arange(1000.0))
    # Perfect separation: FPR_hi = FNR_hi = 1 - 0.025^(1/500), mu = 2 Phi^-1(1 - that).
    x = -math.expm1(math.log(0.025) / 500)
    assert g.mu_lower_bound == pytest.approx(2 * norm.isf(x), rel=1e-6)


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("delta", [1e-6, 1e-5, 1e-3, 0.05])
def test_gaussian_epsilon_plugged_back(mu, delta):
    # Independent reference: the hockey-stick divergence of N(mu, 1) vs N(0, 1)
    # integrated numerically at the returned eps must equal delta.
    # The densities cross where mu x - mu^2 / 2 = eps.
    eps = gaussian_epsilon(mu, delta)
    kinks = [eps / mu + mu / 2]
    if eps == 0.0:
        assert hockey_stick(lambda x: norm.pdf(x, mu), norm.pdf, 0.0, kinks) <= delta
        return
    got = hockey_stick(lambda x: norm.pdf(x, mu), norm.pdf, eps, kinks, lo=-40, hi=40 + mu)
    assert got == pytest.approx(delta, rel=1e-5)


def test_gaussian_epsilon_known_value():
    # mu = 1, delta = 1e-5: 4.377 (module doctest), and by the closed form
    # delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle and Wang 2018).
    eps = gaussian_epsilon(1.0, 1e-5)
    assert round(eps, 3) == 4.377
    assert norm.cdf(-eps + 0.5) - math.exp(eps) * norm.cdf(-eps - 0.5) == pytest.approx(1e-5, rel=1e-9)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("delta", [1e-5, 1e-3])
def test_classic_calibration_is_conservative(epsilon, delta):
    # Dwork and Roth 2014, Thm A.1: sigma = sqrt(2 ln(1.25/delta)) / eps gives
    # (eps, delta)-DP for eps < 1, so the exact eps at that sigma is at most eps.
    mu = 1.0 / (math.sqrt(2 * math.log(1.25 / delta)) / epsilon)
    assert gaussian_epsilon(mu, delta) <= epsilon


def test_gaussian_epsilon_edges_and_monotonicity():
    assert gaussian_epsilon(0.0, 1e-5) == 0.0
    assert gaussian_epsilon(1.0, 0.0) == math.inf
    assert gaussian_epsilon(0.01, 0.5) == 0.0  # delta(0) = 2 Phi(mu/2) - 1 < 0.5
    e = [gaussian_epsilon(1.0, d) for d in (1e-8, 1e-6, 1e-4, 1e-2)]
    assert all(a > b for a, b in zip(e, e[1:]))
    m = [gaussian_epsilon(mu, 1e-5) for mu in (0.5, 1, 2, 10, 50)]
    assert all(a < b for a, b in zip(m, m[1:]))
    # Large mu does not overflow (eps ~ mu^2 / 2 + mu Phi^-1(1 - delta)).
    assert gaussian_epsilon(50.0, 1e-5) == pytest.approx(1250 + 50 * norm.isf(1e-5), rel=0.01)



def test_gaussian_epsilon_is_the_smallest_epsilon_to_1e13_never_below_it():
    # 2,000 random (mu, delta): delta(eps) <= delta at the answer (never below the true epsilon) and > delta at
    # 2e-13 (relative) under it (the smallest such epsilon, to the stated tolerance).
    from dpaudit.stats.gdp import gaussian_delta

    rng = np.random.default_rng(2)
    for _ in range(2000):
        mu, delta = float(10 ** rng.uniform(-2, 1.7)), float(10 ** rng.uniform(-12, -0.01))
        eps = gaussian_epsilon(mu, delta)
        if eps > 0:
            assert gaussian_delta(eps, mu) <= delta < gaussian_delta(eps - 2e-13 * max(eps, 1.0), mu), (mu, delta)

# --------------------------------------------------------------------------- #
# Empirical ROC
# --------------------------------------------------------------------------- #

def test_empirical_roc_monotone_and_close_to_the_truth():
    rng = np.random.default_rng(20240534)
    s0, s1 = 1.0 + rng.normal(size=100_000), rng.normal(size=100_000)
    fpr, tpr = empirical_roc(s0, s1)
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    assert np.all((0 <= fpr) & (fpr <= 1) & (0 <= tpr) & (tpr <= 1))
    assert fpr[0] == pytest.approx(1e-5) and fpr[-1] == 1.0
    # Gaussian ROC: TPR = Phi(Phi^-1(FPR) + 1).  Each point has sd <= 0.0016
    # (binomial at 10^5) plus the threshold's own noise; 0.02 is > 8 sd.
    mid = (fpr > 1e-3) & (fpr < 0.999)
    assert np.max(np.abs(tpr[mid] - norm.cdf(norm.ppf(fpr[mid]) + 1.0))) < 0.02


def test_empirical_roc_with_ties():
    s0 = np.repeat([0.0, 1.0], [250, 750])
    s1 = np.repeat([0.0, 1.0], [750, 250])
    fpr, tpr = empirical_roc(s0, s1, n_points=50)
    assert set(zip(fpr.tolist(), tpr.tolist())) == {(0.25, 0.75), (1.0, 1.0)}


def test_all_is_true():
    for name in profile_module.__all__:
        assert hasattr(profile_module, name)
    assert isinstance(GDPBound(0.5, 0.95, 0.1, 0.2, 0.0).to_dict(), dict)


@pytest.mark.soundness
def test_simultaneous_profile_soundness_over_200_seeds():
    """The whole profile holds at once: over 200 seeded pairs of Gaussian scores (mu = 1, 20,000 per
    side) at most 10 exceed the true eps(delta) at any delta of the grid (5%; expected well below,
    since the Bonferroni share is per distinct event and the intervals are conservative)."""
    alarms = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        p = privacy_profile(1.0 + rng.normal(size=20_000), rng.normal(size=20_000))
        alarms += any(d > 0 and e > gaussian_epsilon(1.0, d) for d, e in zip(p.deltas, p.epsilons))
    assert alarms <= 10
