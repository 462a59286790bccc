"""Boundary validation helpers: every message names the parameter and the value."""

from __future__ import annotations

import math
import numbers
from typing import Any

from .exceptions import ParameterTypeError, ParameterValueError

__all__ = [
    "check_probability",
    "check_confidence",
    "check_delta",
    "check_epsilon",
    "check_int",
    "check_real",
    "check_choice",
]


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_real(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> float:
    """Return ``value`` as a finite float inside the given range or raise.

    Examples
    --------
    >>> check_real(0.5, "confidence", low=0, high=1)
    0.5
    >>> check_real("x", "epsilon")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterTypeError: epsilon must be a real number; got 'x'
    """
    if not _is_real(value):
        raise ParameterTypeError(f"{name} must be a real number; got {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ParameterValueError(f"{name} must not be NaN; got {value!r}")
    too_low = low is not None and (value < low if low_inclusive else value <= low)
    too_high = high is not None and (value > high if high_inclusive else value >= high)
    if too_low or too_high:
        left = "[" if low_inclusive else "("
        right = "]" if high_inclusive else ")"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise ParameterValueError(f"{name} must be in {left}{lo}, {hi}{right}; got {value!r}")
    return value


def check_probability(value: Any, name: str, *, open_low: bool = False, open_high: bool = False) -> float:
    """A probability in [0, 1] (ends optionally open)."""
    return check_real(value, name, low=0.0, high=1.0, low_inclusive=not open_low, high_inclusive=not open_high)


def check_confidence(value: Any, name: str = "confidence") -> float:
    """A confidence level in the open interval (0, 1).

    >>> check_confidence(1.5)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: confidence must be in (0, 1); got 1.5
    """
    return check_probability(value, name, open_low=True, open_high=True)


def check_delta(value: Any, name: str = "delta") -> float:
    """A delta in [0, 1)."""
    return check_real(value, name, low=0.0, high=1.0, high_inclusive=False)


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """A non-negative finite epsilon."""
    value = check_real(value, name, low=0.0)
    if math.isinf(value):
        raise ParameterValueError(f"{name} must be finite; got {value!r}")
    return value


def check_int(value: Any, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (not a bool) in [low, high].

    >>> check_int(3, "samples", low=1)
    3
    >>> check_int(0, "samples", low=1)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: samples must be an integer >= 1; got 0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if _is_real(value) and float(value).is_integer():
            value = int(value)
        else:
            raise ParameterTypeError(f"{name} must be an integer; got {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        if high is None:
            rng_txt = f">= {low}"
        elif low is None:
            rng_txt = f"<= {high}"
        else:
            rng_txt = f"in [{low}, {high}]"
        raise ParameterValueError(f"{name} must be an integer {rng_txt}; got {value!r}")
    return value


def check_choice(value: Any, name: str, choices) -> Any:
    """One of a fixed set of choices.

    >>> check_choice("split", "selection", ["split", "bonferroni"])
    'split'
    """
    choices = list(choices)
    if value not in choices:
        raise ParameterValueError(f"{name} must be one of {choices}; got {value!r}")
    return value
