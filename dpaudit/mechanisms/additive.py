"""Additive-noise mechanisms on a sum or count: Laplace, two-sided geometric, and an unclipped sum (broken).

The statistic is the ``query`` of the dataset: ``"sum"`` adds the records'
values clipped to ``[0, sensitivity]`` (the seed notes' Example 6: values in
``[0, M]`` give a sum of sensitivity ``M`` under add/remove), ``"count"``
counts the records (sensitivity 1).  A 2-D row's value is its row sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_choice, check_int
from ..exceptions import ParameterValueError
from .base import (BuiltinMechanism, _answers_vector, _PureAddRemove, _PureClaim, _set_answers, _set_epsilon,
                   _set_sensitivity, input_domain, record_values)
from .base import _positive_epsilon  # noqa: F401  (re-exported: older imports name it here)

__all__ = ["LaplaceMechanism", "GeometricMechanism", "UnclippedSum", "laplace_epsilon_profile"]

_QUERIES = ("sum", "count")


def _statistic(dataset: Any, query: str, bound: float) -> float:
    values = record_values(dataset)
    if query == "count":
        return float(values.shape[0])
    return float(np.clip(values, 0.0, bound).sum())


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
class LaplaceMechanism(_PureClaim, BuiltinMechanism):
    """Laplace noise of scale sensitivity/epsilon on a clipped sum or a count.

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
    PrivacyClaim(epsilon=1.0, delta=0.0, neighbouring='add/remove')
    >>> m([0.2, 0.5], size=3, rng=0).shape
    (3,)
    """

    epsilon: float = 1.0
    sensitivity: float = 1.0
    query: str = "sum"
    answers: bool = False

    name = "laplace"
    output_kind = "scalar"

    def __post_init__(self) -> None:
        _set_epsilon(self)
        _set_sensitivity(self)
        check_choice(self.query, "query", _QUERIES)
        _set_answers(self)
        if self.answers and self.query != "sum":
            raise ParameterValueError(f"query must be 'sum' when answers=True (the dataset is the answer); "
                                      f"got {self.query!r}")

    @property
    def scale(self) -> float:
        """The Laplace scale b = sensitivity / epsilon."""
        return self.sensitivity / self.epsilon

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        if self.answers:
            return np.array([1.0]), np.array([1.0 + self.sensitivity])  # DP-Sniper's witness pair
        # The added record moves the sum by the full sensitivity (and the count by 1).
        return np.array([0.0]), np.array([0.0, self.sensitivity])

    def input_domain(self) -> dict:
        """DP-Sniper's domain with ``answers=True`` (one float in [-10, 10], ``linf``); else one record, add/remove."""
        if self.answers:
            return input_domain(size=1, low=-10, high=10, integer=False, relation="linf")
        return input_domain(size=1, low=0, high=self.sensitivity, integer=False, relation="add-remove")

    def _prepare(self, dataset: Any) -> float:
        if self.answers:
            return float(_answers_vector(dataset, 1, self.name)[0])
        return _statistic(dataset, self.query, self.sensitivity)

    def _draw(self, prepared: float, n: int, rng: np.random.Generator) -> np.ndarray:
        out = rng.laplace(0.0, self.scale, n)
        out += prepared
        return out

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact: epsilon times (true sensitivity / declared sensitivity), through the Laplace profile."""
        true_sens = 1.0 if self.query == "count" and not self.answers else self.sensitivity
        return laplace_epsilon_profile(true_sens / self.scale, delta)


@dataclass(frozen=True)
class GeometricMechanism(_PureAddRemove, BuiltinMechanism):
    """Two-sided geometric (discrete Laplace) noise on an integer sum or count.

    The noise ``Z`` has ``P(Z = z) = (1 - a) / (1 + a) * a**|z|`` with
    ``a = exp(-epsilon / sensitivity)``; it is drawn as the difference of two
    geometric variables.  Values are clipped to ``[0, sensitivity]`` and rounded.

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

    def __post_init__(self) -> None:
        _set_epsilon(self)
        object.__setattr__(self, "sensitivity", check_int(self.sensitivity, "sensitivity", low=1))
        check_choice(self.query, "query", _QUERIES)

    @property
    def alpha(self) -> float:
        """The ratio a = exp(-epsilon / sensitivity) of consecutive probabilities."""
        return math.exp(-self.epsilon / self.sensitivity)

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
        p = -math.expm1(-self.epsilon / self.sensitivity)
        out = rng.geometric(p, n)
        out -= rng.geometric(p, n)
        out += prepared
        return out

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact at delta = 0 (an upper bound for delta > 0)."""
        return self.epsilon * (1 if self.query == "count" else self.sensitivity) / self.sensitivity


@dataclass(frozen=True)
class UnclippedSum(_PureAddRemove, BuiltinMechanism):
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

    def __post_init__(self) -> None:
        _set_epsilon(self)
        _set_sensitivity(self)

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
