"""Boundary validation: TypeError / ValueError subclasses whose message names the parameter."""

import math

import numpy as np
import pytest

from dpaudit import _validation as v
from dpaudit.exceptions import DPAuditError, ParameterTypeError, ParameterValueError


def test_exception_hierarchy():
    assert issubclass(ParameterTypeError, TypeError) and issubclass(ParameterTypeError, DPAuditError)
    assert issubclass(ParameterValueError, ValueError) and issubclass(ParameterValueError, DPAuditError)


@pytest.mark.parametrize("value", [0.5, 1, np.float64(0.25), np.int32(0)])
def test_check_real_accepts_numbers(value):
    out = v.check_real(value, "x", low=0, high=1)
    assert type(out) is float and out == float(value)


@pytest.mark.parametrize("value", ["0.5", None, [0.5], np.array([0.5]), True, 1j])
def test_check_real_rejects_non_numbers(value):
    with pytest.raises(ParameterTypeError, match=r"^x must be a real number; got "):
        v.check_real(value, "x")


def test_check_real_ranges_and_messages():
    with pytest.raises(ParameterValueError, match=r"^x must not be NaN; got nan$"):
        v.check_real(math.nan, "x")
    with pytest.raises(ParameterValueError, match=r"^x must be in \(0, 1\]; got 0.0$"):
        v.check_real(0.0, "x", low=0, high=1, low_inclusive=False)
    with pytest.raises(ParameterValueError, match=r"^x must be in \[-inf, 2\); got 2.0$"):
        v.check_real(2, "x", high=2, high_inclusive=False)
    assert v.check_real(math.inf, "x") == math.inf  # unbounded unless a range says so
    assert v.check_real(0.0, "x", low=0) == 0.0


def test_confidence_delta_epsilon_probability():
    assert v.check_confidence(0.95) == 0.95
    for bad in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ParameterValueError, match="^confidence must be in"):
            v.check_confidence(bad)
    assert v.check_delta(0.0) == 0.0
    with pytest.raises(ParameterValueError, match=r"^delta must be in \[0, 1\); got 1.0$"):
        v.check_delta(1.0)
    assert v.check_epsilon(0.0) == 0.0
    with pytest.raises(ParameterValueError, match="^epsilon must be finite"):
        v.check_epsilon(math.inf)
    with pytest.raises(ParameterValueError, match="^epsilon"):
        v.check_epsilon(-1)
    assert v.check_probability(1.0, "p") == 1.0
    with pytest.raises(ParameterValueError, match="^p must be in"):
        v.check_probability(1.0, "p", high_inclusive=False)
    # A custom name is used in the message.
    with pytest.raises(ParameterValueError, match="^audit.confidence"):
        v.check_confidence(2, "audit.confidence")


def test_check_int():
    assert v.check_int(3, "n") == 3
    assert v.check_int(np.int64(3), "n") == 3 and type(v.check_int(np.int64(3), "n")) is int
    assert v.check_int(3.0, "n") == 3  # an integral float is accepted
    for bad in (3.5, "3", None, True, math.nan, math.inf):
        with pytest.raises(ParameterTypeError, match="^n must be an integer; got "):
            v.check_int(bad, "n")
    with pytest.raises(ParameterValueError, match=r"^n must be an integer >= 1; got 0$"):
        v.check_int(0, "n", low=1)
    with pytest.raises(ParameterValueError, match=r"^n must be an integer <= 5; got 6$"):
        v.check_int(6, "n", high=5)
    with pytest.raises(ParameterValueError, match=r"^n must be an integer in \[1, 5\]; got 9$"):
        v.check_int(9, "n", low=1, high=5)


def test_check_choice():
    assert v.check_choice("split", "selection", ("split", "bonferroni")) == "split"
    with pytest.raises(ParameterValueError, match=r"^selection must be one of \['split', 'bonferroni'\]; got 'best'$"):
        v.check_choice("best", "selection", ("split", "bonferroni"))


def test_all_is_true():
    for name in v.__all__:
        assert callable(getattr(v, name))


def test_one_check_two_phrasings():
    # The config runner reuses these checks; the error carries the key-path phrasing too.
    from dpaudit.exceptions import ConfigError
    from dpaudit.runner._spec import config_value

    with pytest.raises(ParameterValueError) as info:
        v.check_real(1.5, "estimator.confidence", low=0, high=1, low_inclusive=False, high_inclusive=False)
    assert str(info.value) == "estimator.confidence must be in (0, 1); got 1.5"
    assert info.value.problem == "expected a number in (0, 1), got 1.5"
    with pytest.raises(ConfigError, match=r"^estimator\.confidence: expected a number in \(0, 1\), got 1\.5$"):
        config_value(v.check_real, 1.5, "estimator.confidence", low=0, high=1, low_inclusive=False,
                     high_inclusive=False)
    with pytest.raises(ConfigError, match=r"^plot\.size: expected one of \['one-column', 'two-column'\], "
                                          r"got 'one-colum' \(did you mean 'one-column'\?\)$"):
        config_value(v.check_choice, "one-colum", "plot.size", choices=["one-column", "two-column"])


def test_did_you_mean_only_for_near_misses():
    assert v.did_you_mean("gausian", ["gaussian", "laplace"]) == " (did you mean 'gaussian'?)"
    assert v.did_you_mean("LAPLACE", ["laplace"]) == " (did you mean 'laplace'?)"
    assert v.did_you_mean("tracing", ["laplace", "gaussian"]) == ""
    assert v.did_you_mean(3, ["laplace"]) == ""


def test_str_bool_mapping_plain():
    assert v.check_str("x", "target") == "x"
    with pytest.raises(ParameterTypeError, match="^target must be a non-empty string; got 3$"):
        v.check_str(3, "target")
    assert v.check_bool(False, "resume") is False
    with pytest.raises(ParameterTypeError, match="^resume must be true or false"):
        v.check_bool(1, "resume")
    with pytest.raises(ParameterValueError, match=r"^plot\.sise: unknown key; expected one of \['dpi', 'size'\] "
                                                  r"\(did you mean 'size'\?\)$"):
        v.check_mapping({"sise": 1}, "plot", allowed=["size", "dpi"])
    with pytest.raises(ParameterTypeError, match="^plot must be a mapping"):
        v.check_mapping([1], "plot")
    with pytest.raises(ParameterValueError, match=r"^p\[1\] must be a finite number"):
        v.check_plain([1, math.inf], "p")
    with pytest.raises(ParameterTypeError, match=r"^p\.f must be a number, string"):
        v.check_plain({"f": object()}, "p")
