"""Tracing (Dwork et al. 2015): small noise and d >> n traces; DP noise stops it."""

import numpy as np
import pytest

from dpaudit.attacks.tracing import run_tracing, tracing_curve, tracing_scores
from dpaudit.exceptions import ParameterValueError


def test_score_is_one_matrix_product_for_one_release():
    g = np.random.default_rng(0)
    p, a, z = g.random(50), g.random(50), g.random((7, 50)) < 0.5
    np.testing.assert_allclose(tracing_scores(a, z, p), [(a - p) @ (row - p) for row in z])
    np.testing.assert_allclose(tracing_scores(np.tile(a, (7, 1)), z, p), tracing_scores(a, z, p))


def test_small_noise_and_many_attributes_trace_members():
    # n = 100, d = 3000, sigma = 0.001 per mean. IN and OUT scores are separated by ~4 standard
    # deviations, so TPR at FPR 0.05 is ~0.99; 500 games each put TPR < 0.85 beyond 10 s.e.
    r = run_tracing(n=100, d=3000, noise="gaussian", alpha=0.001, n_targets=500, fpr=0.05, rng=0)
    assert r.tpr > 0.85
    assert r.fpr < 0.1  # calibrated at 0.05 on separate games; s.e. ~0.01
    assert r.theory_fpr <= 0.05 + 0.03  # Hoeffding holds with the true p
    assert r.verdict == "no violation found"  # the claim (thousands) is valid, only useless


def test_dp_noise_stops_tracing():
    # Gaussian noise calibrated to a total claim of ~1: TPR is within a few points of FPR.
    # |TPR - FPR| > 0.08 with 1000 games each is > 4 standard errors (probability < 1e-4).
    r = run_tracing(n=200, d=2000, noise="gaussian", alpha=1.1, n_targets=1000, fpr=0.05, rng=1)
    assert 0.7 < r.claimed.point_epsilon < 1.3
    assert abs(r.tpr - r.fpr) < 0.08
    assert r.verdict == "no violation found"


def test_tpr_grows_with_d_and_falls_with_alpha():
    rs = tracing_curve(parameter="d", values=[20, 400, 4000], n=200, noise="laplace", alpha=0.002,
                       n_targets=400, rng=2)
    tprs = [r.tpr for r in rs]
    assert tprs[0] < tprs[1] < tprs[2]
    assert rs[2].claimed.point_epsilon > rs[0].claimed.point_epsilon  # d means composed: d / (n alpha)
    ra = tracing_curve(parameter="alpha", values=[0.001, 0.3], n=200, d=2000, noise="gaussian",
                       n_targets=400, rng=3)
    assert ra[0].tpr > ra[1].tpr + 0.3


def test_third_party_noise_and_reference_sample():
    def my_noise(true_means, rng):
        return true_means + rng.uniform(-0.002, 0.002, size=true_means.shape)

    r = run_tracing(n=100, d=3000, noise=my_noise, n_targets=300, reference_size=2000, rng=4)
    assert r.mechanism == "my_noise" and r.claimed is None and r.tpr > 0.7


def test_validation():
    with pytest.raises(ParameterValueError, match="alpha"):
        run_tracing(noise="laplace", alpha=0.0)
    with pytest.raises(ParameterValueError, match="subsample"):
        run_tracing(noise="subsample")
    with pytest.raises(ParameterValueError, match="threshold"):
        run_tracing(threshold="best")
