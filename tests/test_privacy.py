"""The privacy claim: an immutable value object with composition rules."""

import dataclasses
import json
import math

import pytest

from dpaudit.exceptions import ParameterTypeError, ParameterValueError
from dpaudit.privacy import Neighbouring, PrivacyClaim


def test_defaults_and_repr():
    c = PrivacyClaim(1.0)
    assert (c.epsilon, c.delta, c.neighbouring) == (1.0, 0.0, Neighbouring.ADD_REMOVE)
    assert repr(c) == "PrivacyClaim(epsilon=1.0, delta=0.0, neighbouring='add-remove')"
    assert isinstance(PrivacyClaim(1).epsilon, float)


def test_frozen():
    c = PrivacyClaim(1.0, 1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.epsilon = 2.0
    assert hash(c) == hash(PrivacyClaim(1.0, 1e-5))  # usable as a key


def test_basic_composition_sums_budgets():
    a, b = PrivacyClaim(0.5, 1e-6), PrivacyClaim(0.25, 2e-6)
    c = a + b
    assert c.epsilon == 0.75 and c.delta == pytest.approx(3e-6)
    assert a.compose(4) == PrivacyClaim(2.0, 4e-6)
    assert PrivacyClaim(1.0).compose(3).delta == 0.0
    assert sum([a, a, a], start=PrivacyClaim(0.0)).epsilon == 1.5


def test_composed_delta_is_capped_below_one():
    # Deltas summing past 1 give a vacuous but valid claim, not an error.
    c = PrivacyClaim(1.0, 0.6) + PrivacyClaim(1.0, 0.6)
    assert c.epsilon == 2.0 and c.delta < 1.0 and c.delta == pytest.approx(1.0)
    assert PrivacyClaim(1.0, 0.3).compose(10).delta < 1.0


def test_composition_needs_the_same_neighbouring_relation():
    with pytest.raises(ParameterValueError, match="neighbouring"):
        PrivacyClaim(1.0) + PrivacyClaim(1.0, neighbouring="replace-one")
    with pytest.raises(TypeError):
        PrivacyClaim(1.0) + 1


def test_advanced_composition_known_value():
    # Dwork, Rothblum, Vadhan 2010 (Dwork and Roth 2014, Thm 3.20):
    # eps' = sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1), delta' + k delta.
    # By hand for k = 10, eps = 0.1, delta' = 1e-5:
    #   ln(1e5) = 11.5129255; 2 * 10 * 11.5129255 = 230.258509; sqrt = 15.1742713
    #   15.1742713 * 0.1 = 1.51742713;  10 * 0.1 * (e^0.1 - 1) = 0.10517092
    #   eps' = 1.62259805
    c = PrivacyClaim(0.1, 1e-7).advanced_composition(10, 1e-5)
    assert c.epsilon == pytest.approx(1.62259805, abs=1e-7)
    assert c.delta == pytest.approx(10 * 1e-7 + 1e-5)
    # For many small steps it beats basic composition (k eps = 100 here).
    assert PrivacyClaim(0.1).advanced_composition(1000, 1e-5).epsilon < PrivacyClaim(0.1).compose(1000).epsilon


@pytest.mark.parametrize(
    "make,exc,name",
    [
        (lambda: PrivacyClaim(-1.0), ParameterValueError, "epsilon"),
        (lambda: PrivacyClaim(math.inf), ParameterValueError, "epsilon"),
        (lambda: PrivacyClaim(math.nan), ParameterValueError, "epsilon"),
        (lambda: PrivacyClaim("1"), ParameterTypeError, "epsilon"),
        (lambda: PrivacyClaim(1.0, 1.0), ParameterValueError, "delta"),
        (lambda: PrivacyClaim(1.0, -1e-9), ParameterValueError, "delta"),
        (lambda: PrivacyClaim(1.0, neighbouring="sideways"), ParameterValueError, "neighbouring"),
        (lambda: PrivacyClaim(1.0).compose(0), ParameterValueError, "k"),
        (lambda: PrivacyClaim(1.0).compose(2.5), ParameterTypeError, "k"),
        (lambda: PrivacyClaim(1.0).advanced_composition(0, 1e-5), ParameterValueError, "k"),
        (lambda: PrivacyClaim(1.0).advanced_composition(10, 0.0), ParameterValueError, "delta_prime"),
        (lambda: PrivacyClaim(1.0).advanced_composition(10, 1.0), ParameterValueError, "delta_prime"),
    ],
)
def test_bad_values_are_named(make, exc, name):
    with pytest.raises(exc) as info:
        make()
    assert str(info.value).startswith(name + " ")


@pytest.mark.parametrize(
    "text,expected",
    [("add/remove", Neighbouring.ADD_REMOVE), ("unbounded", Neighbouring.ADD_REMOVE),
     ("Replace-One", Neighbouring.REPLACE_ONE), ("bounded", Neighbouring.REPLACE_ONE),
     (Neighbouring.REPLACE_ONE, Neighbouring.REPLACE_ONE)],
)
def test_neighbouring_aliases(text, expected):
    assert Neighbouring.parse(text) is expected
    assert PrivacyClaim(1.0, neighbouring=text).neighbouring is expected


def test_dict_round_trip():
    c = PrivacyClaim(0.5, 1e-6, "replace-one")
    d = json.loads(json.dumps(c.to_dict()))
    assert d == {"epsilon": 0.5, "delta": 1e-6, "neighbouring": "replace-one"}
    assert PrivacyClaim.from_dict(d) == c
    assert PrivacyClaim.from_dict({"epsilon": 2}) == PrivacyClaim(2.0)
