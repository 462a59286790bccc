"""Additive-noise mechanisms on a sum or count: Laplace, two-sided geometric, and an unclipped sum (broken).

The statistic is the ``query`` of the dataset: ``"sum"`` adds the records'
values clipped to ``[0, sensitivity]`` (values in ``[0, M]`` give a sum of
sensitivity ``M`` under add/remove), ``"count"``
counts the records (sensitivity 1).  A 2-D row's value is its row sum.

The Laplace and geometric mechanisms are float-safe
(:mod:`~dpaudit.mechanisms.float_safe`): they draw exact integers, and the
Laplace mechanism releases them on a power-of-two grid ``g`` about
``scale / 2**10`` fine, computing its statistic in grid units (each clipped
value rounded down to the grid, then an integer sum), so its releases are
exactly as private as the mathematics says.  The broken ``unclipped_sum``
keeps numpy's float sampler (``float_safe = False``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_choice, check_int
from ..exceptions import ParameterValueError
from .base import (BuiltinMechanism, answers_vector, PureAddRemove, PureClaim, set_answers, set_epsilon,
                   set_sensitivity, input_domain, record_values)
from .base import positive_epsilon  # noqa: F401  (re-exported: older imports name it here)
from .float_safe import discrete_laplace, discrete_laplace_delta, epsilon_from_delta, exact_scale, granularity

__all__ = ["LaplaceMechanism", "GeometricMechanism", "UnclippedSum", "laplace_epsilon_profile", "grid_step",
           "grid_statistic"]

QUERIES = ("sum", "count")


def query_statistic(dataset: Any, query: str, bound: float) -> float:
    values = record_values(dataset)
    if query == "count":
        return float(values.shape[0])
    return float(np.clip(values, 0.0, bound).sum())


def _power_of_two_at_most(x: float) -> float:
    return math.ldexp(1.0, math.frexp(x)[1] - 1)


def grid_step(scale: float, sensitivity: float, query: str) -> float:
    """The release grid of a float-safe additive mechanism: :func:`~dpaudit.mechanisms.float_safe.granularity`
    of the noise scale, at most the sensitivity (so that a record is at least one step) and at most 1 for a
    count (so that a count is a whole number of steps).

    >>> grid_step(1.0, 1.0, "sum"), grid_step(1e6, 1.0, "count")
    (0.0009765625, 1.0)
    """
    g = min(granularity(scale), _power_of_two_at_most(sensitivity))
    return min(g, 1.0) if query == "count" else g


def grid_statistic(dataset: Any, query: str, bound: float, step: float) -> int:
    """The statistic in grid units, an exact integer: the count times ``1 / step``, or the sum of the values
    clipped to ``[0, bound]`` and each rounded down to the grid (so one record moves it by at most
    ``floor(bound / step)`` units).

    >>> grid_statistic([0.3, 5.0], "sum", 1.0, 0.25), grid_statistic([0.3, 5.0], "count", 1.0, 0.25)
    (5, 8)
    """
    values = record_values(dataset)
    if query == "count":
        return int(values.shape[0]) * int(round(1.0 / step))
    units = np.floor(np.clip(values, 0.0, bound) / step).astype(np.int64)
    return int(units.sum())


def _float_up(x: Fraction) -> float:
    """The nearest float at or above the rational ``x`` (a true epsilon is never rounded down)."""
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


@functools.lru_cache(maxsize=256)
def discrete_laplace_epsilon(scale: Fraction, shift: int, delta: float) -> float:
    pure = _float_up(Fraction(shift) / scale)
    if delta <= 0:
        return pure
    return epsilon_from_delta(lambda e: discrete_laplace_delta(e, scale, shift), delta, high=pure)


def laplace_epsilon_profile(epsilon: float, delta: float) -> float:
    """Smallest epsilon' for which a pure ``epsilon`` Laplace mechanism is (epsilon', delta)-DP.

    The Laplace privacy profile is ``delta(e') = 1 - exp((e' - epsilon) / 2)``
    for ``0 <= e' <= epsilon``, so ``e'(delta) = max(0, epsilon + 2 ln(1 - delta))``.

    >>> laplace_epsilon_profile(1.0, 0.0)
    1.0
    >>> round(laplace_epsilon_profile(1.0, 0.1), 4)
    0.7893
    """
    if delta <= 0:
        return epsilon
    return max(0.0, epsilon + 2.0 * math.log1p(-delta))


@dataclass(frozen=True)
class LaplaceMechanism(PureClaim, BuiltinMechanism):
    """Laplace noise of scale sensitivity/epsilon on a clipped sum or a count.

    Float-safe: the release is ``g * (K + Z)`` with ``K`` the statistic in
    units of the grid ``g`` (:func:`grid_step`, about ``scale / 2**10``) and
    ``Z`` exact discrete Laplace noise of scale ``floor(sensitivity / g) /
    epsilon`` grid units (rounded up to a multiple of ``2**-20``).  Every
    release is an exact multiple of ``g``, so its bits say nothing the integer
    does not, and the mechanism is epsilon-DP exactly, not only on paper.
    In law it is the Laplace mechanism rounded to ``g``.

    Parameters
    ----------
    epsilon : float, default 1
        The budget; > 0.
    sensitivity : float, default 1
        The clipping bound of each value (``query="sum"``) and the noise scale's numerator.
    query : {"sum", "count"}, default "sum"
    answers : bool, default False
        The dataset is one query answer (a length-1 array) whose neighbours
        move it by at most ``sensitivity`` (``linf``): DP-Sniper's
        ``LaplaceMechanism``, audited on ``[1]`` vs ``[1 + sensitivity]``.
        ``query`` must then stay ``"sum"`` (it is not used).

    Examples
    --------
    >>> m = LaplaceMechanism(epsilon=1.0)
    >>> m.claim
    PointClaim(point_epsilon=1.0, point_delta=0.0, neighbouring='add-remove')
    >>> x = m([0.2, 0.5], size=3, rng=0)
    >>> x.shape, bool(np.all(x / m.step == np.round(x / m.step)))
    ((3,), True)
    """

    epsilon: float = 1.0
    sensitivity: float = 1.0
    query: str = "sum"
    answers: bool = False

    name = "laplace"
    output_kind = "scalar"
    float_safe = True

    def __post_init__(self) -> None:
        set_epsilon(self)
        set_sensitivity(self)
        check_choice(self.query, "query", QUERIES)
        set_answers(self)
        if self.answers and self.query != "sum":
            raise ParameterValueError(f"query must be 'sum' when answers=True (the dataset is the answer); "
                                      f"got {self.query!r}")
        step = grid_step(self.scale, self.sensitivity, self.query)
        # An answer is rounded down to the grid, so answers ``sensitivity`` apart may end up
        # ceil(sensitivity / step) units apart; records are clipped first and move it by the floor.
        units = int(math.ceil(self.sensitivity / step) if self.answers else math.floor(self.sensitivity / step))
        object.__setattr__(self, "_step", step)
        object.__setattr__(self, "_units", units)
        object.__setattr__(self, "_noise_scale", exact_scale(Fraction(units) / Fraction(self.epsilon)))

    @property
    def scale(self) -> float:
        """The Laplace scale b = sensitivity / epsilon."""
        return self.sensitivity / self.epsilon

    @property
    def step(self) -> float:
        """The release grid g, a power of two."""
        return self._step  # type: ignore[attr-defined]

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        if self.answers:
            return np.array([1.0]), np.array([1.0 + self.sensitivity])  # DP-Sniper's witness pair
        # The added record moves the sum by the full sensitivity (and the count by 1).
        return np.array([0.0]), np.array([0.0, self.sensitivity])

    def input_domain(self) -> dict:
        """DP-Sniper's domain with ``answers=True`` (one float in [-10, 10], ``linf``); else two records, one of
        which add/remove takes away (the stress pair's shape: a size of 1 left the smaller dataset empty)."""
        if self.answers:
            return input_domain(size=1, low=-10, high=10, integer=False, relation="linf")
        return input_domain(size=2, low=0, high=self.sensitivity, integer=False, relation="add-remove")

    def _prepare(self, dataset: Any) -> int:
        if self.answers:
            # The answer in grid units, rounded down (exact for answers on the grid, e.g. integers).
            return int(math.floor(answers_vector(dataset, 1, self.name)[0] / self.step))
        return grid_statistic(dataset, self.query, self.sensitivity, self.step)

    def _draw(self, prepared: int, n: int, rng: np.random.Generator) -> np.ndarray:
        z = discrete_laplace(self._noise_scale, size=n, rng=rng)  # type: ignore[attr-defined]
        z += prepared
        return z.astype(float) * self.step

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact for the grid mechanism: a record moves the statistic by at most ``floor(sensitivity / g)``
        grid units (``1 / g`` for a count), through the discrete Laplace privacy profile; within about
        ``2**-10`` of the continuous Laplace's ``epsilon + 2 ln(1 - delta)``."""
        count = self.query == "count" and not self.answers
        shift = int(round(1.0 / self.step)) if count else self._units  # type: ignore[attr-defined]
        return discrete_laplace_epsilon(self._noise_scale, shift, float(delta))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class GeometricMechanism(PureAddRemove, BuiltinMechanism):
    """Two-sided geometric (discrete Laplace) noise on an integer sum or count.

    The noise ``Z`` has ``P(Z = z) = (1 - a) / (1 + a) * a**|z|`` with
    ``a = exp(-1 / scale)`` and ``scale = sensitivity / epsilon`` (rounded up to
    a multiple of ``2**-20``); it is drawn exactly, with integer arithmetic
    only (Canonne, Kamath and Steinke 2020).  Values are clipped to ``[0, sensitivity]`` and rounded.

    Examples
    --------
    >>> m = GeometricMechanism(epsilon=1.0)
    >>> m([1, 0, 1], size=4, rng=0).dtype
    dtype('int64')
    """

    epsilon: float = 1.0
    sensitivity: int = 1
    query: str = "sum"

    name = "geometric"
    output_kind = "discrete"
    float_safe = True

    def __post_init__(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "sensitivity", check_int(self.sensitivity, "sensitivity", low=1))
        check_choice(self.query, "query", QUERIES)
        object.__setattr__(self, "_noise_scale", exact_scale(Fraction(self.sensitivity) / Fraction(self.epsilon)))

    @property
    def alpha(self) -> float:
        """The ratio a = exp(-1 / scale) of consecutive probabilities (about exp(-epsilon / sensitivity))."""
        return math.exp(-1.0 / float(self._noise_scale))  # type: ignore[attr-defined]

    def pmf(self, k: Any) -> np.ndarray:
        """Probability of noise value(s) ``k``."""
        a = self.alpha
        return (1 - a) / (1 + a) * a ** np.abs(np.asarray(k, dtype=float))

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0]), np.array([0, self.sensitivity])

    def _prepare(self, dataset: Any) -> int:
        values = record_values(dataset)
        if self.query == "count":
            return int(values.shape[0])
        return int(np.rint(np.clip(values, 0, self.sensitivity)).sum())

    def _draw(self, prepared: int, n: int, rng: np.random.Generator) -> np.ndarray:
        out = discrete_laplace(self._noise_scale, size=n, rng=rng)  # type: ignore[attr-defined]
        out += prepared
        return out

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact at delta = 0 (an upper bound for delta > 0): the largest shift over the noise scale."""
        shift = 1 if self.query == "count" else self.sensitivity
        return discrete_laplace_epsilon(self._noise_scale, shift, 0.0)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class UnclippedSum(PureAddRemove, BuiltinMechanism):
    """BROKEN: Laplace noise for sensitivity 1 on a sum that is never clipped.

    It claims epsilon-DP (scale ``sensitivity/epsilon``) but adds the raw values:
    one record of value 100 moves the sum by 100, so the privacy loss on that
    pair is ``100 * epsilon`` and no finite epsilon holds over all datasets
    (true epsilon = inf).

    Examples
    --------
    >>> UnclippedSum().true_epsilon()
    inf
    """

    epsilon: float = 1.0
    sensitivity: float = 1.0

    name = "unclipped_sum"
    output_kind = "scalar"
    broken = True
    float_safe = False  # numpy's float Laplace: its broken clipping is the point, not its bits

    def __post_init__(self) -> None:
        set_epsilon(self)
        set_sensitivity(self)

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        # A record of value 100 costs 100 * epsilon on this pair.
        return np.array([0.0, 1.0]), np.array([0.0, 1.0, 100.0])

    def _prepare(self, dataset: Any) -> float:
        return float(record_values(dataset).sum())

    def _draw(self, prepared: float, n: int, rng: np.random.Generator) -> np.ndarray:
        out = rng.laplace(0.0, self.sensitivity / self.epsilon, n)
        out += prepared
        return out

    def true_epsilon(self, delta: float = 0.0) -> float:
        return math.inf
