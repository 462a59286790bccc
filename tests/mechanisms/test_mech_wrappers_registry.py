"""Wrappers (composition, subsampling, post-processing), the registry, and the contract every built-in keeps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpaudit.mechanisms as mechanisms
from dpaudit.exceptions import ParameterTypeError, ParameterValueError
from dpaudit.mechanisms import (
    REGISTRY,
    LaplaceMechanism,
    Mechanism,
    RandomizedResponse,
    compose,
    get_mechanism,
    list_mechanisms,
    postprocess,
    subsample,
)
from dpaudit.adapters import ADAPTERS

ALPHA = 1e-3  # per-assertion failure probability for a correct sampler (fixed seed: deterministic)
N = 40_000
BUILTINS = [name for name in REGISTRY if name not in ADAPTERS]


# -- composition ---------------------------------------------------------------------------
def test_composition_sums_budgets():
    # Basic composition (Dwork and Roth 2014, section 3.5): k queries of an epsilon-DP mechanism are k*epsilon-DP.
    c = compose(LaplaceMechanism(epsilon=0.5), 4)
    assert c.claim.point_epsilon == 2.0 and c.claim.point_delta == 0.0
    g = compose(get_mechanism("gaussian_analytic", epsilon=1.0, delta=1e-6), 3)
    assert g.claim.point_epsilon == 3.0 and g.claim.point_delta == pytest.approx(3e-6)
    adv = compose(LaplaceMechanism(epsilon=0.1), 100, advanced=True, delta_prime=1e-5)
    expected = math.sqrt(2 * 100 * math.log(1e5)) * 0.1 + 100 * 0.1 * math.expm1(0.1)
    assert adv.claim.point_epsilon == pytest.approx(expected) and adv.claim.point_epsilon < 10.0
    assert c.true_epsilon() == 2.0


def test_composition_law():
    c = compose(LaplaceMechanism(epsilon=1.0), 3)
    x = c([1.0], size=N, rng=1)
    assert x.shape == (N, 3)
    for j in range(3):  # three KS tests at 1e-3: failure probability <= 3e-3
        assert stats.kstest(x[:, j], stats.laplace(loc=1.0).cdf).pvalue > ALPHA
    assert abs(np.corrcoef(x[:, 0], x[:, 1])[0, 1]) < 0.03  # independent draws (sd of r ~ 0.005)


def test_subsampling_claim_and_law():
    s = subsample(LaplaceMechanism(epsilon=1.0), 0.25)
    assert s.claim.point_epsilon == pytest.approx(math.log1p(0.25 * math.expm1(1.0)))
    x = s([1.0], size=N, rng=2)
    # one record of value 1 kept with probability 1/4: a Laplace mixture around 1 and 0
    def mix(v):
        return 0.25 * stats.laplace(loc=1.0).cdf(v) + 0.75 * stats.laplace(loc=0.0).cdf(v)

    assert stats.kstest(x, mix).pvalue > ALPHA
    with pytest.raises(ParameterValueError, match="add/remove"):
        subsample(RandomizedResponse(), 0.5)
    with pytest.raises(ParameterValueError, match="rate"):
        subsample(LaplaceMechanism(), 0.0)


def test_subsampling_many_records_and_vectors():
    s = subsample(get_mechanism("noisy_histogram", n_bins=3), 0.5)
    assert s(np.arange(80) % 3, size=50, rng=3).shape == (50, 3)


def test_postprocess():
    p = postprocess(LaplaceMechanism(), np.round)
    x = p([2.0], size=1000, rng=4)
    assert np.all(x == np.round(x)) and p.claim == LaplaceMechanism().claim
    with pytest.raises(ParameterValueError, match="one result per release"):
        postprocess(LaplaceMechanism(), lambda r: r[:1])([1.0], size=5, rng=0)
    with pytest.raises(ParameterTypeError):
        postprocess(lambda d: 0.0, np.round)


# -- registry ------------------------------------------------------------------------------
def test_get_mechanism_validates():
    assert get_mechanism("laplace", epsilon=2).claim.point_epsilon == 2.0
    with pytest.raises(ParameterValueError, match="unknown mechanism 'nope'"):
        get_mechanism("nope")
    with pytest.raises(ParameterValueError, match="has no parameter 'eps'"):
        get_mechanism("laplace", eps=1)
    with pytest.raises(ParameterValueError, match="epsilon must be > 0"):
        get_mechanism("laplace", epsilon=0)
    with pytest.raises(ParameterValueError, match="query must be one of"):
        get_mechanism("laplace", query="median")
    with pytest.raises(ParameterTypeError, match="n_candidates must be an integer"):
        get_mechanism("exponential", n_candidates="many")
    assert get_mechanism("compose", mechanism="geometric", k=3, params={"epsilon": 0.5}).claim.point_epsilon == 1.5


def test_list_mechanisms_one_line_each_with_claim():
    rows = list_mechanisms()
    names = [r[0] for r in rows]
    expected = {
        "laplace", "gaussian", "gaussian_analytic", "geometric", "randomized_response", "exponential",
        "report_noisy_max_laplace", "report_noisy_max_exponential", "noisy_histogram", "sparse_vector",
        "svt_lyu_alg3", "svt_lyu_alg4", "svt_lyu_alg5", "svt_lyu_alg6", "report_noisy_max_with_value",
        "histogram_replace_one_bug", "unclipped_sum", "float_laplace_mironov",
        "diffprivlib.laplace", "diffprivlib.gaussian", "diffprivlib.gaussian_analytic", "diffprivlib.geometric",
        "diffprivlib.exponential", "diffprivlib.binary", "opendp.laplace", "opendp.gaussian",
        "opendp.randomized_response",
    }
    assert expected <= set(names)
    for name, desc, broken in rows:
        assert "\n" not in desc and desc
        if name in BUILTINS and name not in ("compose", "subsample"):
            assert "claims epsilon=" in desc
            assert broken == get_mechanism(name).broken


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_contract(name):
    m = get_mechanism(name)
    assert isinstance(m, Mechanism)
    assert m.output_kind in mechanisms.OUTPUT_KINDS
    d, d2 = m.neighbouring_pair()
    assert isinstance(d, np.ndarray) and isinstance(d2, np.ndarray)
    one = np.asarray(m(d, rng=0))
    many = m(d, size=7, rng=0)
    assert many.shape == (7,) + one.shape and one.ndim <= 1
    assert (m.output_kind == "vector") == (one.ndim == 1)
    assert np.array_equal(many, m(d, size=7, rng=0))
    assert np.all(np.isfinite(m(d2, size=50, rng=1)))
    true = m.true_epsilon(m.claim.point_delta)
    if m.broken:
        assert true > m.claim.point_epsilon, "a broken mechanism must really exceed its claim"
    else:
        assert true <= m.claim.point_epsilon + 1e-12, "a correct mechanism must keep its claim"
    assert m.__doc__ and m.describe()


def test_all_is_true():
    for name in mechanisms.__all__:
        assert hasattr(mechanisms, name), name
