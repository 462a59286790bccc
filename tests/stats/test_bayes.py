"""The Bayesian reading of (epsilon, delta): where a prior belief can move.

Known answers (Dwork and Roth 2014, section 3.2): with epsilon = ln 3 (randomized
response with p = 1/2) a 50% prior moves to at most 75% and at least 25%,
because the posterior odds are the prior odds times a likelihood ratio in
[e^-eps, e^eps].  No randomness here.
"""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.exceptions import ParameterTypeError, ParameterValueError
from dpaudit.stats import PosteriorInterval, posterior_interval


def test_ln3_takes_half_to_a_quarter_and_three_quarters():
    r = posterior_interval(math.log(3))
    assert r.low == pytest.approx(0.25, abs=1e-15) and r.high == pytest.approx(0.75, abs=1e-15)
    # Equal priors, delta = 0: best guessing accuracy e / (1 + e) = 3/4.
    assert r.max_guess_accuracy == pytest.approx(0.75)


def test_by_hand_from_odds():
    # prior 0.2 (odds 1/4), eps = ln 2: odds in [1/8, 1/2] -> [1/9, 1/3].
    r = posterior_interval(math.log(2), prior=0.2)
    assert (r.low, r.high) == (pytest.approx(1 / 9), pytest.approx(1 / 3))


@pytest.mark.parametrize("prior", [0.0, 0.01, 0.3, 0.5, 0.99, 1.0])
def test_epsilon_zero_leaves_the_prior_unchanged(prior):
    r = posterior_interval(0.0, prior=prior)
    assert r.low == pytest.approx(prior) and r.high == pytest.approx(prior)
    assert r.max_guess_accuracy == 0.5


def test_certain_priors_do_not_move():
    for eps in (0.5, 5.0, 1000.0):
        assert (posterior_interval(eps, prior=0.0).low, posterior_interval(eps, prior=0.0).high) == (0.0, 0.0)
        assert posterior_interval(eps, prior=1.0).low == pytest.approx(1.0)
        assert posterior_interval(eps, prior=1.0).high == 1.0


@settings(max_examples=200, deadline=None)
@given(eps=st.floats(0, 50), step=st.floats(0.01, 5), prior=st.floats(0.001, 0.999))
def test_monotone_in_epsilon(eps, step, prior):
    a, b = posterior_interval(eps, prior=prior), posterior_interval(eps + step, prior=prior)
    assert 0.0 <= b.low <= a.low <= prior + 1e-12
    assert prior - 1e-12 <= a.high <= b.high <= 1.0
    assert a.max_guess_accuracy <= b.max_guess_accuracy


def test_delta_term():
    # Kairouz et al. 2015: TPR <= e^eps FPR + delta and TNR <= e^eps FNR + delta
    # sum to an accuracy of at most (e^eps + delta) / (1 + e^eps) at equal priors.
    r = posterior_interval(math.log(3), delta=0.1)
    assert r.max_guess_accuracy == pytest.approx((3 + 0.1) / 4)
    assert posterior_interval(0.0, delta=0.2).max_guess_accuracy == pytest.approx(0.6)
    assert posterior_interval(1.0, delta=0.99).max_guess_accuracy < 1.0  # delta < 1 keeps it below 1
    # The band itself is the pure-epsilon band; delta is stated beside it.
    assert (r.low, r.high) == (pytest.approx(0.25), pytest.approx(0.75))
    assert "except with probability about delta = 0.1" in r.sentence()
    assert "delta" not in posterior_interval(math.log(3)).sentence()


def test_huge_epsilon_does_not_overflow():
    r = posterior_interval(1e6, prior=0.5)
    # exp is capped at e^700: low is ~1e-304, not an overflow.
    assert r.high == 1.0 and r.low == pytest.approx(0.0, abs=1e-300) and r.max_guess_accuracy == 1.0
    assert ">99.99%" in posterior_interval(20.0).sentence()


def test_result_object():
    r = posterior_interval(1.0, prior=0.3, delta=1e-5)
    assert isinstance(r, PosteriorInterval)
    assert (r.prior, r.epsilon, r.delta) == (0.3, 1.0, 1e-5)
    assert PosteriorInterval(**json.loads(json.dumps(r.to_dict()))) == r
    with pytest.raises(AttributeError):
        r.high = 0.9


@pytest.mark.parametrize(
    "args,kwargs,exc,name",
    [
        ((-1.0,), {}, ParameterValueError, "epsilon"),
        ((math.inf,), {}, ParameterValueError, "epsilon"),
        (("big",), {}, ParameterTypeError, "epsilon"),
        ((1.0,), {"prior": 1.5}, ParameterValueError, "prior"),
        ((1.0,), {"delta": 1.0}, ParameterValueError, "delta"),
    ],
)
def test_validation_names_the_parameter(args, kwargs, exc, name):
    with pytest.raises(exc, match=f"^{name}"):
        posterior_interval(*args, **kwargs)
