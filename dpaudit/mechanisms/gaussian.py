"""Gaussian mechanisms: the classic calibration and the analytic one (Balle and Wang 2018).

Both perturb the same statistic as :class:`~dpaudit.mechanisms.additive.LaplaceMechanism`
(a sum of values clipped to ``[0, sensitivity]``, or a count).  Their exact
privacy curve is the analytic formula of Balle and Wang (2018, Theorem 8):
``N(0, sigma^2)`` noise on a query of sensitivity ``Delta`` is (epsilon, delta)-DP iff

    Phi(Delta/(2 sigma) - epsilon sigma/Delta) - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta) <= delta.

Both are float-safe: ``rng.normal`` plus the statistic would leave the
statistic's trace in the low-order bits of every release, so the noise is an
exact *discrete* Gaussian (Canonne, Kamath and Steinke 2020) on a power-of-two
grid ``step`` about ``sigma / 2**10`` fine, added to the statistic in grid
units, and the release is an exact multiple of ``step``.  The discrete
Gaussian's privacy is computed exactly (CKS Theorem 7, summed term by term):
the analytic mechanism takes the smallest grid variance that meets the claim
for the *discrete* noise, and ``true_epsilon`` is the discrete curve's.  At
this grid both agree with the continuous formula to about 1e-6.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from ..stats.profile import gaussian_delta as _stats_gaussian_delta
from ..stats.profile import gaussian_epsilon as _stats_gaussian_epsilon

from .._validation import check_choice
from ..exceptions import ParameterValueError
from ..claims import PointClaim
from .additive import QUERIES, grid_statistic, grid_step
from .base import BuiltinMechanism, check_gaussian_delta, set_epsilon, set_sensitivity
from .float_safe import discrete_gaussian, discrete_gaussian_delta, epsilon_from_delta

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


@functools.lru_cache(maxsize=256)
def _discrete_gaussian_epsilon(sigma_squared: int, shift: int, delta: float) -> float:
    if delta <= 0:
        return math.inf
    return epsilon_from_delta(lambda e: discrete_gaussian_delta(e, sigma_squared, shift), delta)


@functools.lru_cache(maxsize=256)
def _smallest_variance(epsilon: float, delta: float, units: int, start: int) -> int:
    """The smallest integer grid variance whose discrete Gaussian meets (epsilon, delta) at sensitivity ``units``.

    ``start`` is the continuous calibration's, which at these grids is within a few units of the answer:
    gallop away from it, then bisect (a handful of exact evaluations).
    """
    def ok(n2: int) -> bool:
        return discrete_gaussian_delta(epsilon, n2, units) <= delta

    step = 1
    if ok(start):
        hi = start
        while hi - step >= 1 and ok(hi - step):
            hi -= step
            step *= 2
        lo = max(0, hi - step)  # fails the claim (0: no variance at all)
    else:
        lo = start
        while not ok(lo + step):
            lo += step
            step *= 2
        hi = lo + step
    while hi - lo > 1:  # ok(hi), and lo fails
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class _GaussianBase(BuiltinMechanism):
    epsilon: float = 1.0
    delta: float = 1e-5
    sensitivity: float = 1.0
    query: str = "sum"

    output_kind = "scalar"
    float_safe = True

    def __post_init__(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "delta", check_gaussian_delta(self.delta))
        set_sensitivity(self)
        check_choice(self.query, "query", QUERIES)
        self._check_range()
        # Computed once: the calibrations run bisections.
        sigma = self._compute_sigma()
        step = grid_step(sigma, self.sensitivity, self.query)
        units = int(math.floor(self.sensitivity / step))
        object.__setattr__(self, "_step", step)
        object.__setattr__(self, "_units", units)
        object.__setattr__(self, "_grid_variance", self._grid_variance_for(sigma / step, units))

    def _grid_variance_for(self, sigma_units: float, units: int) -> int:
        """The discrete Gaussian's variance in grid units (an integer, never below ``sigma_units**2``)."""
        return math.ceil(sigma_units ** 2)

    def _check_range(self) -> None:
        pass

    def _compute_sigma(self) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def sigma(self) -> float:
        """The noise's scale parameter: ``step * sqrt(grid variance)`` (the discrete Gaussian's sigma)."""
        return self.step * math.sqrt(self._grid_variance)  # type: ignore[attr-defined]

    @property
    def step(self) -> float:
        """The release grid, a power of two."""
        return self._step  # type: ignore[attr-defined]

    @property
    def grid_variance(self) -> int:
        """The variance parameter of the integer noise, in grid units squared."""
        return self._grid_variance  # type: ignore[attr-defined]

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, self.delta, neighbouring="add/remove")

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0.0]), np.array([0.0, self.sensitivity])

    def _prepare(self, dataset: Any) -> int:
        return grid_statistic(dataset, self.query, self.sensitivity, self.step)

    def _draw(self, prepared: int, n: int, rng: np.random.Generator) -> np.ndarray:
        z = discrete_gaussian(self._grid_variance, size=n, rng=rng)  # type: ignore[attr-defined]
        z += prepared
        return z.astype(float) * self.step

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact for the discrete Gaussian on the grid (``inf`` at delta = 0: it is never pure DP).

        A record moves the statistic by at most ``floor(sensitivity / step)``
        grid units (``1 / step`` for a count); the curve is CKS Theorem 7, inverted by bisection.
        """
        shift = int(round(1.0 / self.step)) if self.query == "count" else self._units  # type: ignore[attr-defined]
        return _discrete_gaussian_epsilon(self._grid_variance, shift, float(delta))  # type: ignore[attr-defined]


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
    found by bisection, so ``true_epsilon(delta)`` equals the claim (for the
    discrete Gaussian on the grid: the smallest integer grid variance that
    meets it, so equal up to about 1e-6).

    Examples
    --------
    >>> round(AnalyticGaussianMechanism(epsilon=1.0, delta=1e-5).sigma, 3)
    3.731
    """

    name = "gaussian_analytic"

    def _compute_sigma(self) -> float:
        return analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)

    def _grid_variance_for(self, sigma_units: float, units: int) -> int:
        # The smallest integer variance whose *discrete* Gaussian meets the claim (within about 1e-6 of the
        # continuous calibration at this grid).
        return _smallest_variance(self.epsilon, self.delta, units, math.ceil(sigma_units ** 2))
