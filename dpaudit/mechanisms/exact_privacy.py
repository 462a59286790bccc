"""Exact rational noise scales, and the exact delta(epsilon) of the integer samplers.

:mod:`dpaudit.mechanisms.float_safe` draws discrete Laplace and Gaussian noise exactly from a rational
scale; the functions here give that scale (:func:`exact_scale`) and the privacy the samplers then have
on an integer query (:func:`discrete_laplace_delta`, :func:`discrete_gaussian_delta`,
:func:`epsilon_from_delta`), so a mechanism's claim is computed from the law it actually draws.
All are importable from :mod:`dpaudit.mechanisms.float_safe` too.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_int, check_real
from ..exceptions import ParameterTypeError, ParameterValueError

__all__ = [
    "MAX_DENOMINATOR",
    "exact_scale",
    "discrete_laplace_delta",
    "discrete_gaussian_delta",
    "epsilon_from_delta",
]

#: Integers in the exact samplers stay below this, so that ``den * K`` fits in int64.
MAX_DENOMINATOR = 1 << 50
# Rationals derived from floats are rounded (in the safe direction) to this denominator.
_ROUNDING_DENOMINATOR = 1 << 20


def _as_fraction(value: Any, name: str, *, round_up: bool) -> Fraction:
    """An exact positive rational; one whose terms reach 2**50 (most floats) is rounded to denominator 2**20.

    ``round_up`` chooses the safe direction (a noise scale rounds up: more noise).
    """
    if isinstance(value, bool):
        raise ParameterTypeError(f"{name} must be a positive number; got {value!r}")
    if isinstance(value, (int, np.integer)):
        frac = Fraction(int(value))
    elif isinstance(value, Fraction):
        frac = value
    else:
        frac = Fraction(check_real(value, name, low=0.0, low_inclusive=False))
    if frac.denominator >= MAX_DENOMINATOR or frac.numerator >= MAX_DENOMINATOR:
        d = _ROUNDING_DENOMINATOR
        frac = Fraction(math.ceil(frac * d) if round_up else math.floor(frac * d), d)
    if frac <= 0:
        raise ParameterValueError(f"{name} must be > 0; got {value!r}")
    if frac.numerator >= MAX_DENOMINATOR or frac.denominator >= MAX_DENOMINATOR:
        raise ParameterValueError(f"{name} must be a rational with numerator and denominator below 2**50; "
                                  f"got {value!r}")
    return frac


def exact_scale(scale: Any) -> Fraction:
    """The rational noise scale the exact samplers use for ``scale``: exact when its numerator and
    denominator are below 2**50, else rounded *up* to a multiple of ``2**-20`` (more noise, never less privacy).

    >>> exact_scale(1.5), exact_scale(Fraction(1, 3))
    (Fraction(3, 2), Fraction(1, 3))
    """
    return _as_fraction(scale, "scale", round_up=True)


@functools.lru_cache(maxsize=64)
def _cdf_table(kind: str, param: Any) -> tuple[int, np.ndarray]:
    """(lowest support point, cumulative probabilities from there) of a discrete Laplace or Gaussian pmf.

    The support reaches 45 scales (40 sigmas) either way: the mass left out is below exp(-40).
    Summing from the left tail keeps the small cumulative probabilities accurate.
    """
    if kind == "laplace":
        rate = 1.0 / float(param)
        half = int(math.ceil(45.0 / rate)) + 1
        y = np.arange(-half, half + 1)
        w = np.exp(-rate * np.abs(y))
    else:
        half = int(math.ceil(40.0 * math.sqrt(param))) + 1
        y = np.arange(-half, half + 1)
        w = np.exp(-(y.astype(float) ** 2) / (2.0 * param))
    return -half, np.cumsum(w) / w.sum()


def _cdf(table: tuple[int, np.ndarray], y: int) -> float:
    low, cum = table
    i = y - low
    return 0.0 if i < 0 else 1.0 if i >= len(cum) else float(cum[i])


def _shift_delta(table: tuple[int, np.ndarray], cut: int, shift: int, epsilon: float) -> float:
    """delta(epsilon) = sum over y <= cut of p(y) - e^epsilon p(y - shift), where ``cut`` is the last y whose
    privacy loss ln(p(y) / p(y - shift)) exceeds epsilon (the loss falls as y grows)."""
    return max(0.0, _cdf(table, cut) - math.exp(epsilon) * _cdf(table, cut - shift))


def discrete_laplace_delta(epsilon: float, scale: Any, sensitivity: int) -> float:
    """Exact delta(epsilon) of discrete Laplace noise (scale as in :func:`discrete_laplace`) on an integer
    query of the given sensitivity (the worst pair: locs ``sensitivity`` apart).

    >>> discrete_laplace_delta(1.0, 1, 1)
    0.0

    With scale 1 and sensitivity 1 the loss is +-1: delta(1/2) = P(Z <= 0) (1 - e^(-1/2)).

    >>> a = math.exp(-1)
    >>> math.isclose(discrete_laplace_delta(0.5, 1, 1), (1 - math.exp(-0.5)) / (1 + a))
    True
    """
    sens = check_int(sensitivity, "sensitivity", low=1)
    scale = exact_scale(scale)
    rate = 1.0 / float(scale)
    if epsilon >= sens * rate:
        return 0.0
    # loss(y) = rate (|y - sens| - |y|): rate * sens for y <= 0, then falling by 2 rate per step.
    cut = math.ceil((sens - epsilon / rate) / 2.0) - 1
    return _shift_delta(_cdf_table("laplace", scale), cut, sens, epsilon)


def discrete_gaussian_delta(epsilon: float, sigma_squared: int, sensitivity: int) -> float:
    """Exact delta(epsilon) of discrete Gaussian noise on an integer query of the given sensitivity.

    Canonne, Kamath and Steinke (2020), Theorem 7: ``P[Y <= c] - e^epsilon P[Y <= c - sensitivity]`` with
    ``c`` the last integer below ``sensitivity / 2 - epsilon sigma**2 / sensitivity``.

    >>> d = discrete_gaussian_delta(1.0, 3731 ** 2, 1000)
    >>> abs(d / 1e-5 - 1) < 0.01
    True
    """
    n2 = check_int(sigma_squared, "sigma_squared", low=1)
    sens = check_int(sensitivity, "sensitivity", low=1)
    cut = math.ceil(sens / 2.0 - epsilon * n2 / sens) - 1
    return _shift_delta(_cdf_table("gaussian", n2), cut, sens, epsilon)


def epsilon_from_delta(delta_of_epsilon, delta: float, *, high: float = 64.0) -> float:
    """The smallest epsilon with ``delta_of_epsilon(epsilon) <= delta`` (a non-increasing curve), by bisection.

    The returned epsilon is the upper end of the last bracket: never below the true one.

    >>> round(epsilon_from_delta(lambda e: max(0.0, 1 - e), 0.25), 6)
    0.75
    """
    if delta_of_epsilon(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, high
    if delta_of_epsilon(hi) > delta:
        return math.inf
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if delta_of_epsilon(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return hi
