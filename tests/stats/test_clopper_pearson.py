"""Exact Clopper-Pearson bounds against independent references.

References: closed forms at k = 0 and k = n (the bound solves p^n = alpha or
(1 - p)^n = alpha), the defining tail equations checked with the binomial
distribution, and scipy.stats.binomtest(...).proportion_ci(method="exact").
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, binomtest

from dpaudit.stats import clopper_pearson as cp_module
from dpaudit.stats import clopper_pearson_interval, cp_lower, cp_upper

SMALL_CASES = [(k, n) for n in (1, 2, 3, 5, 10, 37, 100) for k in sorted({0, 1, n // 3, n // 2, n - 1, n})]


@pytest.mark.parametrize("alpha", [0.05, 0.025, 0.001])
@pytest.mark.parametrize("n", [1, 2, 10, 1000, 10**6])
def test_closed_forms_at_the_ends(n, alpha):
    # k = 0: P(X = 0 | p) = (1 - p)^n = alpha  =>  upper = 1 - alpha^(1/n).
    # k = n: P(X = n | p) = p^n = alpha        =>  lower = alpha^(1/n).
    root = alpha ** (1.0 / n)
    assert cp_upper(0, n, alpha) == pytest.approx(1.0 - root, rel=1e-9)
    assert cp_lower(n, n, alpha) == pytest.approx(root, rel=1e-12)
    # The trivial sides: no information beyond the data's range.
    assert cp_lower(0, n, alpha) == 0.0
    assert cp_upper(n, n, alpha) == 1.0


def test_textbook_values():
    # Two-sided 95% exact interval for 5/10: R's binom.test(5, 10)$conf.int
    # prints 0.1870860 0.8129140.
    lo, hi = clopper_pearson_interval(5, 10, confidence=0.95)
    assert (round(lo, 6), round(hi, 6)) == (0.187086, 0.812914)
    # "Rule of three": 0 events in n trials, one-sided 95% upper ~ 3/n;
    # exact value 1 - 0.05^(1/100) = 0.029513... for n = 100.
    assert cp_upper(0, 100, 0.05) == pytest.approx(1 - 0.05 ** 0.01, rel=1e-12)
    assert cp_upper(0, 100, 0.05) == pytest.approx(0.0295130, abs=1e-7)


@pytest.mark.parametrize("k,n", SMALL_CASES)
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_against_scipy_binomtest(k, n, alpha):
    # One-sided exact bounds are the ends of binomtest's one-sided intervals.
    lower_ref = binomtest(k, n, alternative="greater").proportion_ci(1 - alpha, method="exact").low
    upper_ref = binomtest(k, n, alternative="less").proportion_ci(1 - alpha, method="exact").high
    assert cp_lower(k, n, alpha) == pytest.approx(lower_ref, rel=1e-9, abs=1e-15)
    assert cp_upper(k, n, alpha) == pytest.approx(upper_ref, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("k,n", [(k, n) for k, n in SMALL_CASES if 0 < k < n])
def test_defining_tail_equations(k, n):
    # The lower bound p_L solves P(X >= k | p_L) = alpha, the upper bound p_U
    # solves P(X <= k | p_U) = alpha (binomial tails, computed independently).
    alpha = 0.05
    assert binom.sf(k - 1, n, cp_lower(k, n, alpha)) == pytest.approx(alpha, rel=1e-8)
    assert binom.cdf(k, n, cp_upper(k, n, alpha)) == pytest.approx(alpha, rel=1e-8)


def test_tiny_upper_bound_is_accurate():
    # At n = 10^9 and k = 0 the bound is ~3.7e-9; computing 1 - quantile on the
    # wrong side would lose all digits.  Closed form: -expm1(log(alpha) / n).
    n, alpha = 10**9, 0.025
    assert cp_upper(0, n, alpha) == pytest.approx(-math.expm1(math.log(alpha) / n), rel=1e-6)


def test_vectorised_equals_scalar():
    rng = np.random.default_rng(20240501)
    n = rng.integers(1, 10_000, size=300)
    k = rng.integers(0, n + 1)
    k[:5], k[5:10] = 0, n[5:10]  # the two ends are in the batch
    for alpha in (0.05, np.full(300, 0.01)):
        lo, hi = cp_lower(k, n, alpha), cp_upper(k, n, alpha)
        assert lo.shape == hi.shape == (300,)
        a = np.broadcast_to(alpha, (300,))
        assert np.array_equal(lo, [cp_lower(int(ki), int(ni), float(ai)) for ki, ni, ai in zip(k, n, a)])
        assert np.array_equal(hi, [cp_upper(int(ki), int(ni), float(ai)) for ki, ni, ai in zip(k, n, a)])
    # Broadcasting: one n, many k.
    assert cp_lower(np.arange(11), 10, 0.05).shape == (11,)
    # Scalars in, Python floats out.
    assert isinstance(cp_lower(3, 10, 0.05), float)


def test_interval_is_two_sided_with_half_in_each_tail():
    lo, hi = clopper_pearson_interval(7, 20, confidence=0.9)
    # (1 - 0.9) / 2 is 0.04999..., hence approx rather than ==.
    assert lo == pytest.approx(cp_lower(7, 20, 0.05), rel=1e-12)
    assert hi == pytest.approx(cp_upper(7, 20, 0.05), rel=1e-12)


@pytest.mark.parametrize(
    "k,n,alpha",
    [(-1, 10, 0.05), (11, 10, 0.05), (0, 0, 0.05), (1, 10, 0.0), (1, 10, 1.0), (1, 10, -0.1)],
)
def test_bad_inputs_raise_value_error(k, n, alpha):
    with pytest.raises(ValueError):
        cp_lower(k, n, alpha)
    with pytest.raises(ValueError):
        cp_upper(k, n, alpha)


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 10**7),
    frac=st.floats(0, 1),
    alpha=st.floats(1e-12, 0.5),
)
def test_bounds_bracket_the_estimate_and_are_monotone(n, frac, alpha):
    k = int(round(frac * n))
    lo, hi = cp_lower(k, n, alpha), cp_upper(k, n, alpha)
    assert 0.0 <= lo <= k / n <= hi <= 1.0
    assert lo < hi
    if k < n:  # one more success moves both bounds up
        assert cp_lower(k + 1, n, alpha) >= lo
        assert cp_upper(k + 1, n, alpha) >= hi
    # A smaller failure probability gives a wider interval.
    assert cp_lower(k, n, alpha / 10) <= lo and cp_upper(k, n, alpha / 10) >= hi


def test_all_is_true():
    for name in cp_module.__all__:
        assert callable(getattr(cp_module, name))
