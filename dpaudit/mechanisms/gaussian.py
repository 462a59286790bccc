"""Gaussian mechanisms: the classic calibration and the analytic one (Balle and Wang 2018).

Both perturb the same statistic as :class:`~dpaudit.mechanisms.additive.LaplaceMechanism`
(a sum of values clipped to ``[0, sensitivity]``, or a count).  Their exact
privacy curve is the analytic formula of Balle and Wang (2018, Theorem 8):
``N(0, sigma^2)`` noise on a query of sensitivity ``Delta`` is (epsilon, delta)-DP iff

    Phi(Delta/(2 sigma) - epsilon sigma/Delta) - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta) <= delta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from ..stats.profile import gaussian_delta as _stats_gaussian_delta
from ..stats.profile import gaussian_epsilon as _stats_gaussian_epsilon

from .._validation import check_choice
from ..exceptions import ParameterValueError
from ..privacy import PrivacyClaim
from .additive import _QUERIES, _statistic
from .base import BuiltinMechanism, _gaussian_delta, _set_epsilon, _set_sensitivity

__all__ = [
    "GaussianMechanism",
    "AnalyticGaussianMechanism",
    "gaussian_delta",
    "analytic_gaussian_sigma",
    "gaussian_epsilon",
]


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """The exact delta(epsilon) of Gaussian noise ``sigma`` on a query of the given sensitivity.

    :func:`dpaudit.stats.gaussian_delta` with mu = sensitivity / sigma.

    >>> round(gaussian_delta(1.0, 3.7306, 1.0), 7)
    1e-05
    """
    return _stats_gaussian_delta(epsilon, sensitivity / sigma)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest sigma with ``gaussian_delta(epsilon, sigma) <= delta``, by bisection.

    The returned sigma always satisfies the constraint (the upper end of the last bracket).

    >>> round(analytic_gaussian_sigma(1.0, 1e-5), 3)
    3.731
    """
    if not 0 < delta < 1:
        raise ParameterValueError(f"delta must be in (0, 1) for a Gaussian mechanism; got {delta!r}")
    lo, hi = 1e-12 * sensitivity, sensitivity
    while gaussian_delta(epsilon, hi, sensitivity) > delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if gaussian_delta(epsilon, mid, sensitivity) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return hi


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest epsilon for which Gaussian noise ``sigma`` is (epsilon, delta)-DP.

    :func:`dpaudit.stats.gaussian_epsilon` with mu = sensitivity / sigma.

    >>> round(gaussian_epsilon(analytic_gaussian_sigma(1.0, 1e-5), 1e-5), 6)
    1.0
    >>> gaussian_epsilon(1.0, 0.0)
    inf
    """
    return _stats_gaussian_epsilon(sensitivity / sigma, delta)


@dataclass(frozen=True)
class _GaussianBase(BuiltinMechanism):
    epsilon: float = 1.0
    delta: float = 1e-5
    sensitivity: float = 1.0
    query: str = "sum"

    output_kind = "scalar"

    def __post_init__(self) -> None:
        _set_epsilon(self)
        object.__setattr__(self, "delta", _gaussian_delta(self.delta))
        _set_sensitivity(self)
        check_choice(self.query, "query", _QUERIES)
        self._check_range()
        # Computed once: the analytic calibration runs a bisection.
        object.__setattr__(self, "_sigma", self._compute_sigma())

    def _check_range(self) -> None:
        pass

    def _compute_sigma(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def sigma(self) -> float:
        """The standard deviation of the noise."""
        return self._sigma  # type: ignore[attr-defined]

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, self.delta, "add/remove")

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0.0]), np.array([0.0, self.sensitivity])

    def _prepare(self, dataset: Any) -> float:
        return _statistic(dataset, self.query, self.sensitivity)

    def _draw(self, prepared: float, n: int, rng: np.random.Generator) -> np.ndarray:
        out = rng.normal(0.0, self.sigma, n)
        out += prepared
        return out

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact, from the analytic formula (``inf`` at delta = 0: Gaussian noise is never pure DP)."""
        true_sens = 1.0 if self.query == "count" else self.sensitivity
        return gaussian_epsilon(self.sigma, delta, true_sens)


@dataclass(frozen=True)
class GaussianMechanism(_GaussianBase):
    """Gaussian noise with the classic calibration sigma = sqrt(2 ln(1.25/delta)) sensitivity/epsilon.

    Dwork and Roth (2014, Theorem A.1); valid only for epsilon < 1, so the
    default epsilon is 0.5.  The calibration is conservative: ``true_epsilon(delta)``
    is below the claim.

    Examples
    --------
    >>> m = GaussianMechanism()
    >>> round(m.sigma, 3)
    9.69
    >>> m.true_epsilon(m.delta) < m.epsilon
    True
    """

    epsilon: float = 0.5

    name = "gaussian"

    def _check_range(self) -> None:
        if self.epsilon >= 1:
            raise ParameterValueError(
                f"epsilon must be in (0, 1) for the classic Gaussian calibration; got {self.epsilon!r} "
                "(use 'gaussian_analytic' for larger epsilon)"
            )

    def _compute_sigma(self) -> float:
        return math.sqrt(2.0 * math.log(1.25 / self.delta)) * self.sensitivity / self.epsilon


@dataclass(frozen=True)
class AnalyticGaussianMechanism(_GaussianBase):
    """Gaussian noise with the analytic calibration of Balle and Wang (2018), tight for any epsilon.

    sigma is the smallest value satisfying the exact delta(epsilon) formula,
    found by bisection, so ``true_epsilon(delta)`` equals the claim.

    Examples
    --------
    >>> round(AnalyticGaussianMechanism(epsilon=1.0, delta=1e-5).sigma, 3)
    3.731
    """

    name = "gaussian_analytic"

    def _compute_sigma(self) -> float:
        return analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
