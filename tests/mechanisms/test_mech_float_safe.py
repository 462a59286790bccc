"""The exact integer samplers and the float-safe built-ins against their defining laws."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpaudit.exceptions import ParameterValueError
from dpaudit.mechanisms import REGISTRY, GeometricMechanism, LaplaceMechanism, NoisyHistogram
from dpaudit.mechanisms import AnalyticGaussianMechanism, GaussianMechanism
from dpaudit.mechanisms.additive import laplace_epsilon_profile
from dpaudit.mechanisms.float_safe import (
    bernoulli_exp,
    discrete_gaussian,
    discrete_gaussian_delta,
    discrete_laplace,
    discrete_laplace_delta,
    exact_scale,
    granularity,
    lattice_gaussian,
    lattice_laplace,
)
from dpaudit.mechanisms.gaussian import gaussian_delta
from dpaudit.mechanisms.testing import chisquare_pvalue

ALPHA = 1e-3  # per-assertion failure probability of a correct sampler (fixed seeds: deterministic)


@pytest.mark.parametrize("num, den", [(0, 1), (1, 3), (1, 1), (5, 2), (7, 1)])
def test_bernoulli_exp_has_its_probability(num, den):
    b = bernoulli_exp(np.full(100_000, num), den, rng=num * 10 + den)
    p = math.exp(-num / den)
    # z-test at 3.3 sigma: two-sided failure probability 1e-3
    assert abs(b.mean() - p) <= 3.3 * math.sqrt(p * (1 - p) / 100_000) + 1e-12


@pytest.mark.parametrize("scale", [Fraction(1), Fraction(3, 7), Fraction(5, 2), 1024])
def test_discrete_laplace_pmf(scale):
    z = discrete_laplace(scale, size=60_000, rng=1)
    a = math.exp(-1 / float(scale))
    width = int(12 * float(scale)) + 3
    support = np.arange(-width, width + 1)
    pmf = (1 - a) / (1 + a) * a ** np.abs(support)
    if width > 200:  # coarse bins for the wide one: ten quantile-like cells
        edges = np.linspace(-width, width, 21)
        cells = np.digitize(support, edges)
        probs = np.bincount(cells, weights=pmf)
        observed = np.digitize(z, edges)
        assert chisquare_pvalue(observed, np.arange(len(probs)), probs / probs.sum()) > ALPHA
    else:
        assert chisquare_pvalue(z, support, pmf / pmf.sum()) > ALPHA
    assert z.dtype == np.int64


@pytest.mark.parametrize("n2", [1, 2, 10, 100])
def test_discrete_gaussian_pmf(n2):
    z = discrete_gaussian(n2, size=60_000, rng=2)
    support = np.arange(-int(10 * math.sqrt(n2)) - 2, int(10 * math.sqrt(n2)) + 3)
    w = np.exp(-(support ** 2) / (2 * n2))
    assert chisquare_pvalue(z, support, w / w.sum()) > ALPHA


def test_lattice_samplers_release_exact_multiples_of_the_grid():
    g = granularity(1.0)
    for x in (lattice_laplace(0.3, 1.0, size=10_000, rng=3), lattice_gaussian(0.3, 1.0, size=10_000, rng=3)):
        assert np.all(x / g == np.rint(x / g))
    assert isinstance(lattice_laplace(0.0, 1.0, rng=4), float)
    with pytest.raises(ParameterValueError, match="granularity_step must be a power of two"):
        lattice_laplace(0.0, 1.0, granularity_step=0.3)


def test_exact_scale_rounds_up():
    assert exact_scale(0.1) >= Fraction(0.1) and exact_scale(0.1).denominator <= 1 << 20
    assert exact_scale(Fraction(1, 3)) == Fraction(1, 3)
    with pytest.raises(ParameterValueError, match="scale"):
        exact_scale(0.0)


def test_discrete_privacy_curves_match_the_continuous_ones_on_a_fine_grid():
    # Discrete Laplace with 1024 steps per unit: within 1e-3 of the continuous Laplace curve.
    for e in (0.2, 0.5, 0.9):
        assert discrete_laplace_delta(e, 1024, 1024) == pytest.approx(1 - math.exp((e - 1) / 2), rel=1e-3)
    # Discrete Gaussian, sigma 3.73 at 1000 steps per unit: within 1% of Balle and Wang's formula.
    assert discrete_gaussian_delta(1.0, 3731 ** 2, 1000) == pytest.approx(gaussian_delta(1.0, 3.731), rel=1e-2)


def test_builtins_release_on_their_grid_and_keep_their_claims():
    m = LaplaceMechanism(epsilon=0.7, sensitivity=1.0)
    x = m([0.3, 0.9], size=20_000, rng=5)
    assert np.all(x / m.step == np.rint(x / m.step))
    # The grid costs nothing here: sensitivity 1 is a whole number of steps and the noise scale rounds up.
    assert m.true_epsilon() <= 0.7 and m.true_epsilon() == pytest.approx(0.7, rel=1e-5)
    assert m.true_epsilon(0.1) == pytest.approx(laplace_epsilon_profile(0.7, 0.1), rel=1e-3)
    h = NoisyHistogram(epsilon=1.0, n_bins=3)([0, 1, 1], size=1000, rng=6)
    assert np.all(h * 1024 == np.rint(h * 1024))
    for g in (GaussianMechanism(), AnalyticGaussianMechanism(epsilon=1.0, delta=1e-5)):
        y = g([0.25], size=2000, rng=7)
        assert np.all(y / g.step == np.rint(y / g.step))
        assert g.true_epsilon(g.delta) <= g.epsilon
    geo = GeometricMechanism(epsilon=0.8, sensitivity=2)
    assert geo.true_epsilon() <= 0.8 and geo.true_epsilon() == pytest.approx(0.8, rel=1e-5)


def test_every_correct_builtin_is_float_safe():
    """Correct built-ins either are float-safe or say why in their ``float_safe`` flag (none today)."""
    for name, factory in REGISTRY.items():
        if name in ("compose", "subsample") or "." in name:  # wrappers; third-party adapters
            continue
        m = factory()
        if not m.broken:
            assert m.float_safe, name
    assert REGISTRY["float_laplace_mironov"]().float_safe is False


def test_exact_decisions_agree_with_high_precision_arithmetic():
    """The slow exact path (decimal arithmetic, more random bits on demand) decides U < exp(-x) rightly."""
    import decimal

    from dpaudit.mechanisms import float_safe as fs

    gen = np.random.default_rng(8)
    for x in (Fraction(1, 3), Fraction(7, 2), Fraction(1000, 1)):
        with decimal.localcontext() as ctx:
            ctx.prec = 60
            exact = (-decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)).exp() * (1 << 64)
        r = int(exact)  # the 64-bit word that straddles exp(-x): undecided at 64 bits
        for word, truth in ((r - 1, True), (r + 1, False)):
            assert fs._LazyUniform(word, gen).below_exp(x) is truth
        # The straddling word: decided by drawing more bits, true with probability frac(exact).
        hits = np.mean([fs._LazyUniform(r, gen).below_exp(x) for _ in range(400)])
        frac = float(exact - r)
        assert abs(hits - frac) <= 3.3 * math.sqrt(frac * (1 - frac) / 400) + 0.01  # z-test, failure 1e-3


def test_the_slow_exact_path_alone_has_the_right_law(monkeypatch):
    """With the float shortcut disabled (margin 1/2: nearly every draw goes the exact decimal way), the
    discrete Laplace still has its pmf (chi-square, failure probability 1e-3)."""
    from dpaudit.mechanisms import float_safe as fs

    monkeypatch.setattr(fs, "_MARGIN", 0.5)
    z = discrete_laplace(Fraction(3, 2), size=3000, rng=9)
    a = math.exp(-2 / 3)
    support = np.arange(-30, 31)
    pmf = (1 - a) / (1 + a) * a ** np.abs(support)
    assert chisquare_pvalue(z, support, pmf / pmf.sum()) > ALPHA


def test_fast_sampler_agrees_with_the_integer_only_algorithm():
    """The float-shortcut sampler and CKS's integer-only Algorithm 2 have the same law (two-sample chi-square)."""
    from scipy import stats

    from dpaudit.mechanisms import float_safe as fs

    a = discrete_laplace(Fraction(5, 2), size=40_000, rng=10)
    b = fs._discrete_laplace_ts(5, 2, 40_000, np.random.default_rng(11))
    edges = np.arange(-12, 13) - 0.5
    ca, _ = np.histogram(np.clip(a, -12, 12), np.r_[-np.inf, edges[1:], np.inf])
    cb, _ = np.histogram(np.clip(b, -12, 12), np.r_[-np.inf, edges[1:], np.inf])
    assert stats.chi2_contingency(np.vstack([ca, cb]))[1] > ALPHA
