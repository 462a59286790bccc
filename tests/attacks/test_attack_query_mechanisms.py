"""Query mechanisms: exact answers, claims of known mechanisms, third-party adapters."""

import math

import numpy as np
import pytest

from dpaudit.attacks import query_mechanisms as qm
from dpaudit.claims import PointClaim
from dpaudit.exceptions import ParameterTypeError, ParameterValueError, TargetError

Q = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
X = np.array([1.0, 0.0, 1.0])


def test_exact_answers_are_queries_times_data():
    np.testing.assert_array_equal(qm.ExactAnswers()(Q, X, rng=0), [1.0, 1.0, 2.0])


def test_laplace_claim_is_sensitivity_over_scale_and_composes():
    # Dwork-Roth Thm 3.6: Laplace(s/eps) is eps-DP; basic composition adds.
    m = qm.LaplaceNoise(scale=4.0, sensitivity=2.0)
    assert m.claim.point_epsilon == 0.5
    assert qm.claimed_budget(m, 6).point_epsilon == 3.0


def test_gaussian_claim_matches_analytic_gaussian_and_is_tighter_than_basic():
    # sigma = 1, sensitivity 1, delta 1e-5: Balle-Wang epsilon ~ 4.38 (checked by the defining identity,
    # Balle and Wang 2018, Thm 8: delta = Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D)).
    eps = qm.GaussianNoise(sigma=1.0).claim.point_epsilon
    a, b = 0.5, eps
    from scipy.stats import norm

    assert norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b) == pytest.approx(1e-5, rel=1e-6)
    m = qm.GaussianNoise(sigma=5.0)
    assert m.claim_for(10).point_epsilon < 10 * m.claim.point_epsilon


@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2, 0.3])
def test_gaussian_claim_is_the_stats_gaussian_epsilon_of_mu(delta):
    # The claim of k answers is eps(delta) of the Gaussian mechanism with mu = sqrt(k) sensitivity / sigma,
    # the function dpaudit.stats.gaussian_epsilon computes (it returns inf past eps = 1e4, mu > ~140).
    from dpaudit.stats import gaussian_epsilon

    for sigma, sensitivity, k in [(1000.0, 1.0, 1), (10.0, 1.0, 4), (1.0, 1.0, 1), (0.5, 2.0, 9), (0.01, 0.005, 2000)]:
        mu = math.sqrt(k) * sensitivity / sigma
        claim = qm.GaussianNoise(sigma=sigma, sensitivity=sensitivity, delta=delta).claim_for(k)
        assert claim.point_epsilon == pytest.approx(gaussian_epsilon(mu, delta), rel=1e-9, abs=1e-12), (sigma, k)
    # mu ~ 224 (the tracing curve's n = 200, d = 2000, alpha = 0.001): still a finite claim, ~2.5e4
    claim = qm.GaussianNoise(sigma=0.001, sensitivity=1 / 200, delta=delta).claim_for(2000)
    assert 2e4 < claim.point_epsilon < 3e4


def test_bounded_noise_claim_is_total_variation():
    assert qm.BoundedNoise(2.0).claim == PointClaim(0.0, 0.25, neighbouring="replace-one")
    assert qm.BoundedNoise(0.25).claim is None  # delta would be >= 1
    assert qm.claimed_budget(qm.BoundedNoise(10.0), 30) is None


def test_noise_shapes_and_rounding():
    g = np.random.default_rng(0)
    a = qm.RoundedGaussianNoise(sigma=3.0)(Q, X, rng=g)
    assert a.shape == (3,) and np.all(a == np.rint(a))
    b = qm.BoundedNoise(0.5)(Q, X, rng=g)
    assert np.all(np.abs(b - Q @ X) <= 0.5)


def test_subsample_is_unbiased():
    # E[answer] = exact answer; 4000 releases, standard error of the mean ~ 0.01.
    g = np.random.default_rng(1)
    m = qm.SubsampleAnswers(5)
    x = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    q = np.ones((1, 10))
    mean = np.mean([m(q, x, rng=g)[0] for _ in range(4000)])
    assert mean == pytest.approx(5.0, abs=0.1)  # 10 standard errors


def test_third_party_noise_function_and_full_protocol():
    def add_noise(true_answers, rng):
        return true_answers + rng.normal(0, 1e-9, size=true_answers.shape)

    def curator(queries, x):
        return queries @ x + 1

    m1 = qm.as_query_mechanism(add_noise)
    assert isinstance(m1, qm.NoisyAnswers) and m1.name == "add_noise"
    np.testing.assert_allclose(m1(Q, X, rng=0), Q @ X, atol=1e-6)
    m2 = qm.as_query_mechanism(curator, claim=PointClaim(0.5))
    np.testing.assert_array_equal(m2(Q, X, rng=0), Q @ X + 1)
    assert qm.claimed_budget(m2, 4).point_epsilon == 2.0


def test_third_party_misbehaviour_is_a_target_error():
    with pytest.raises(TargetError, match="shape"):
        qm.as_query_mechanism(lambda a: a[:1])(Q, X, rng=0)
    with pytest.raises(TargetError, match="NaN"):
        qm.as_query_mechanism(lambda a: a * np.nan)(Q, X, rng=0)


def test_errors_name_the_parameter():
    with pytest.raises(ParameterValueError, match="noise must be one of"):
        qm.as_query_mechanism("lapalce", name="noise")
    with pytest.raises(ParameterValueError, match="exactly one of scale and epsilon"):
        qm.as_query_mechanism("laplace")
    with pytest.raises(ParameterTypeError, match="mechanism must be"):
        qm.as_query_mechanism(3)
    with pytest.raises(ParameterValueError, match="sigma must be"):
        qm.GaussianNoise(sigma=-1.0)
