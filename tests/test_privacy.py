"""The point claim a mechanism carries: an immutable value object with composition rules.

``PointClaim`` (dpaudit.claims) is that claim; ``PrivacyClaim`` is its deprecated name, kept for one release.
"""

import dataclasses
import json
import math

import pytest

import dpaudit
from dpaudit.claims import Claim, PointClaim
from dpaudit.exceptions import ParameterTypeError, ParameterValueError
from dpaudit.privacy import Neighbouring, PrivacyClaim


def test_defaults_and_repr():
    c = PointClaim(1.0)
    assert (c.point_epsilon, c.point_delta, c.neighbouring) == (1.0, 0.0, Neighbouring.ADD_REMOVE)
    assert repr(c) == "PointClaim(point_epsilon=1.0, point_delta=0.0, neighbouring='add-remove')"
    assert isinstance(PointClaim(1).point_epsilon, float)
    # One claim family: the point answers epsilon(delta) as every claim does.
    assert isinstance(c, Claim) and c.epsilon(0.0) == 1.0


def test_frozen():
    c = PointClaim(1.0, 1e-5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.point_epsilon = 2.0
    assert hash(c) == hash(PointClaim(1.0, 1e-5))  # usable as a key


def test_basic_composition_sums_budgets():
    a, b = PointClaim(0.5, 1e-6), PointClaim(0.25, 2e-6)
    c = a + b
    assert c.point_epsilon == 0.75 and c.point_delta == pytest.approx(3e-6)
    assert a.compose(4) == PointClaim(2.0, 4e-6)
    assert PointClaim(1.0).compose(3).point_delta == 0.0
    assert sum([a, a, a], start=PointClaim(0.0)).point_epsilon == 1.5
    assert c.spec == "eps:0.75,delta=3e-06"  # a composed claim's spec is its own point's


def test_composed_delta_is_capped_below_one():
    # Deltas summing past 1 give a vacuous but valid claim, not an error.
    c = PointClaim(1.0, 0.6) + PointClaim(1.0, 0.6)
    assert c.point_epsilon == 2.0 and c.point_delta < 1.0 and c.point_delta == pytest.approx(1.0)
    assert PointClaim(1.0, 0.3).compose(10).point_delta < 1.0


def test_composition_needs_the_same_neighbouring_relation():
    with pytest.raises(ParameterValueError, match="neighbouring"):
        PointClaim(1.0) + PointClaim(1.0, neighbouring="replace-one")
    with pytest.raises(TypeError):
        PointClaim(1.0) + 1


def test_advanced_composition_known_value():
    # Dwork, Rothblum, Vadhan 2010 (Dwork and Roth 2014, Thm 3.20):
    # eps' = sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1), delta' + k delta.
    # By hand for k = 10, eps = 0.1, delta' = 1e-5:
    #   ln(1e5) = 11.5129255; 2 * 10 * 11.5129255 = 230.258509; sqrt = 15.1742713
    #   15.1742713 * 0.1 = 1.51742713;  10 * 0.1 * (e^0.1 - 1) = 0.10517092
    #   eps' = 1.62259805
    c = PointClaim(0.1, 1e-7).advanced_composition(10, 1e-5)
    assert c.point_epsilon == pytest.approx(1.62259805, abs=1e-7)
    assert c.point_delta == pytest.approx(10 * 1e-7 + 1e-5)
    # For many small steps it beats basic composition (k eps = 100 here).
    assert (PointClaim(0.1).advanced_composition(1000, 1e-5).point_epsilon
            < PointClaim(0.1).compose(1000).point_epsilon)


@pytest.mark.parametrize(
    "make,exc,name",
    [
        (lambda: PointClaim(-1.0), ParameterValueError, "epsilon"),
        (lambda: PointClaim(math.inf), ParameterValueError, "epsilon"),
        (lambda: PointClaim(math.nan), ParameterValueError, "epsilon"),
        (lambda: PointClaim("1"), ParameterTypeError, "epsilon"),
        (lambda: PointClaim(1.0, 1.0), ParameterValueError, "delta"),
        (lambda: PointClaim(1.0, -1e-9), ParameterValueError, "delta"),
        (lambda: PointClaim(1.0, neighbouring="sideways"), ParameterValueError, "neighbouring"),
        (lambda: PointClaim(1.0).compose(0), ParameterValueError, "k"),
        (lambda: PointClaim(1.0).compose(2.5), ParameterTypeError, "k"),
        (lambda: PointClaim(1.0).advanced_composition(0, 1e-5), ParameterValueError, "k"),
        (lambda: PointClaim(1.0).advanced_composition(10, 0.0), ParameterValueError, "delta_prime"),
        (lambda: PointClaim(1.0).advanced_composition(10, 1.0), ParameterValueError, "delta_prime"),
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
    assert PointClaim(1.0, neighbouring=text).neighbouring is expected


def test_dict_round_trip():
    c = PointClaim(0.5, 1e-6, neighbouring="replace-one")
    d = json.loads(json.dumps(c.to_dict()))
    assert d == {"spec": "eps:0.5,delta=1e-06", "kind": "eps", "epsilon": 0.5, "delta": 1e-6,
                 "neighbouring": "replace-one"}
    assert PointClaim.from_dict(d) == c
    assert PointClaim.from_dict({"epsilon": 2}) == PointClaim(2.0)
    # The deprecated name's dict ({epsilon, delta, neighbouring}) reads too.
    assert PointClaim.from_dict({"epsilon": 0.5, "delta": 1e-6, "neighbouring": "replace-one"}) == c


def test_a_mechanisms_claim_is_a_point_claim():
    from dpaudit.mechanisms import LaplaceMechanism

    claim = LaplaceMechanism(epsilon=0.5).claim
    assert type(claim) is PointClaim and claim.compose(2).point_epsilon == 1.0


def test_deprecated_name_builds_a_point_claim_and_warns():
    with pytest.warns(DeprecationWarning, match="point_epsilon and point_delta"):
        c = PrivacyClaim(0.5, 1e-6, "replace-one")
    assert type(c) is PointClaim and c == PointClaim(0.5, 1e-6, neighbouring="replace-one")
    # isinstance answers for the type it builds, so user checks keep working.
    assert isinstance(PointClaim(1.0), PrivacyClaim) and issubclass(PointClaim, PrivacyClaim)
    assert not isinstance(1.0, PrivacyClaim) and not issubclass(int, PrivacyClaim)
    with pytest.warns(DeprecationWarning):
        assert PrivacyClaim.from_dict({"epsilon": 2}) == PointClaim(2.0)
    with pytest.warns(DeprecationWarning), pytest.raises(ParameterValueError, match="^epsilon "):
        PrivacyClaim(-1.0)
    assert dpaudit.PrivacyClaim is PrivacyClaim and dpaudit.PointClaim is PointClaim
