"""Laplace, geometric, Gaussian, unclipped sum and the floating-point Laplace sampler against their defining laws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms.testing import chisquare_pvalue
from dpaudit.exceptions import ParameterValueError
from dpaudit.mechanisms.float_safe import discrete_gaussian_delta
from dpaudit.mechanisms import (
    AnalyticGaussianMechanism,
    FloatLaplaceMironov,
    GaussianMechanism,
    GeometricMechanism,
    LaplaceMechanism,
    UnclippedSum,
    gaussian_delta,
)

ALPHA = 1e-3  # per-assertion failure probability for a correct sampler (fixed seed: deterministic)

N = 50_000


@pytest.mark.parametrize("query, data, truth", [("sum", [0.5, 3.0, -1.0], 1.5), ("count", [0.5, 3.0, -1.0], 3.0)])
def test_laplace_is_laplace(query, data, truth):
    m = LaplaceMechanism(epsilon=0.7, sensitivity=1.0, query=query)
    x = m(data, size=N, rng=1)
    # KS at alpha 1e-3 (failure probability 1e-3 for a correct sampler)
    assert stats.kstest(x, stats.laplace(loc=truth, scale=1 / 0.7).cdf).pvalue > ALPHA


def test_laplace_single_release_and_reproducible():
    m = LaplaceMechanism()
    assert np.ndim(m([1.0], rng=3)) == 0
    assert np.array_equal(m([1.0], size=10, rng=3), m([1.0], size=10, rng=3))
    assert m([1.0], size=0, rng=3).shape == (0,)


def test_laplace_profile():
    m = LaplaceMechanism(epsilon=1.0)
    assert m.true_epsilon() == 1.0
    assert m.true_epsilon(0.1) == pytest.approx(1 + 2 * math.log(0.9))


def test_geometric_pmf():
    m = GeometricMechanism(epsilon=0.8, sensitivity=2)
    x = m([1, 2, 7], size=N, rng=2)  # clipped to [0, 2]: 1 + 2 + 2 = 5
    support = np.arange(-25, 26)
    assert chisquare_pvalue(x - 5, support, m.pmf(support)) > ALPHA
    assert x.dtype == np.int64


def test_unclipped_sum_is_laplace_of_the_raw_sum():
    m = UnclippedSum(epsilon=1.0)
    d, d2 = m.neighbouring_pair()
    x = m(d2, size=N, rng=4)
    assert stats.kstest(x, stats.laplace(loc=101.0, scale=1.0).cdf).pvalue > ALPHA
    assert m.broken and m.true_epsilon() == math.inf


@pytest.mark.parametrize("cls, eps", [(GaussianMechanism, 0.5), (AnalyticGaussianMechanism, 2.0)])
def test_gaussian_is_normal(cls, eps):
    m = cls(epsilon=eps, delta=1e-5)
    x = m([0.25, 0.5], size=N, rng=5)
    assert stats.kstest(x, stats.norm(loc=0.75, scale=m.sigma).cdf).pvalue > ALPHA


def test_gaussian_calibrations():
    classic = GaussianMechanism(epsilon=0.5, delta=1e-5)
    assert classic.sigma == pytest.approx(math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5)
    assert classic.true_epsilon(1e-5) < 0.5  # the classic calibration is conservative
    analytic = AnalyticGaussianMechanism(epsilon=1.0, delta=1e-5)
    # Balle and Wang (2018): sigma ~ 3.73 at (1, 1e-5); the exact delta at that sigma is the target.
    assert analytic.sigma == pytest.approx(3.7306, abs=1e-3)
    assert gaussian_delta(1.0, analytic.sigma) == pytest.approx(1e-5, rel=1e-6)
    assert gaussian_delta(1.0, analytic.sigma * 0.999) > 1e-5
    # The noise is a discrete Gaussian on a grid: its variance is the smallest integer (in grid units) that
    # meets the claim, so the exact epsilon(1e-5) is at most 1 and the next smaller variance fails it.
    assert 1.0 - 1e-6 < analytic.true_epsilon(1e-5) <= 1.0
    units = round(1.0 / analytic.step)
    assert discrete_gaussian_delta(1.0, analytic.grid_variance, units) <= 1e-5
    assert discrete_gaussian_delta(1.0, analytic.grid_variance - 1, units) > 1e-5
    assert analytic.true_epsilon(0.0) == math.inf
    with pytest.raises(ParameterValueError, match="epsilon must be in \\(0, 1\\) for the classic"):
        GaussianMechanism(epsilon=1.0)
    with pytest.raises(ParameterValueError, match="delta"):
        AnalyticGaussianMechanism(delta=0.0)


def test_float_laplace_mironov_is_laplace_in_law_but_has_disjoint_supports():
    m = FloatLaplaceMironov(epsilon=1.0, uniform_bits=16)
    d, d2 = m.neighbouring_pair()
    a = m(d, size=N, rng=6)
    b = m(d2, size=N, rng=7)
    # In law it is Laplace (the grid of 2^16 uniforms is far finer than the KS resolution at N).
    assert stats.kstest(a, stats.laplace(loc=0.0, scale=1.0).cdf).pvalue > ALPHA
    # ... but the attainable doubles differ: a fresh sample from D lands on values already
    # seen under D (~1 - exp(-N/2^16) ~ 53% of the time) and essentially never on values seen under D'.
    a2 = m(d, size=N, rng=8)
    assert np.isin(a2, a).mean() > 0.4
    assert np.isin(a2, b).mean() < 0.001
    assert m.true_epsilon() == math.inf and m.output_kind == "discrete"
