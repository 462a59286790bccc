"""Noisy histograms: Laplace(1/epsilon) on every bin, and the replace-one misuse (broken).

Float-safe: every bin is released on the grid of
:class:`~dpaudit.mechanisms.additive.LaplaceMechanism` (exact discrete Laplace
noise in units of a power-of-two step about ``1 / (epsilon 2**10)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_int
from ..privacy import PrivacyClaim
from .additive import _discrete_laplace_epsilon, grid_step
from .base import BuiltinMechanism, _as_1d_array, _PureAddRemove, _set_epsilon, counting_queries
from .float_safe import discrete_laplace, exact_scale

__all__ = ["NoisyHistogram", "HistogramReplaceOneBug"]


@dataclass(frozen=True)
class NoisyHistogram(_PureAddRemove, BuiltinMechanism):
    """Histogram of labels 0..n_bins-1 with Laplace(1/epsilon) noise on every bin.

    Adding or removing one record changes one bin by 1 (L1 sensitivity 1), so it
    is epsilon-DP under add/remove.  The dataset is 1-D (labels, rounded;
    labels outside the range fall in no bin).  The noise is exact discrete
    Laplace on a power-of-two grid ``step`` (float-safe, see the module).

    Examples
    --------
    >>> NoisyHistogram(n_bins=3)([0, 1, 1, 2], size=5, rng=0).shape
    (5, 3)
    """

    epsilon: float = 1.0
    n_bins: int = 4

    name = "noisy_histogram"
    output_kind = "vector"
    float_safe = True

    def __post_init__(self) -> None:
        _set_epsilon(self)
        object.__setattr__(self, "n_bins", check_int(self.n_bins, "n_bins", low=1))
        step = grid_step(1.0 / self.epsilon, 1.0, "count")
        units = int(round(1.0 / step))
        object.__setattr__(self, "_step", step)
        object.__setattr__(self, "_units", units)
        object.__setattr__(self, "_noise_scale", exact_scale(Fraction(units) / Fraction(self.epsilon)))

    @property
    def step(self) -> float:
        """The release grid, a power of two."""
        return self._step  # type: ignore[attr-defined]

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        d = np.arange(self.n_bins, dtype=float)
        return d, np.append(d, 0.0)

    def _prepare(self, dataset: Any) -> np.ndarray:
        return counting_queries(_as_1d_array(dataset, self.name, "labels"), self.n_bins)

    def _width(self, prepared: np.ndarray) -> int:
        return self.n_bins

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        z = discrete_laplace(self._noise_scale, size=(n, self.n_bins), rng=rng)  # type: ignore[attr-defined]
        z += (prepared * self._units).astype(np.int64)  # type: ignore[attr-defined]  (whole counts: exact)
        return z.astype(float) * self.step

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact for the grid mechanism (one bin moves by one count), through the discrete Laplace profile."""
        return _discrete_laplace_epsilon(self._noise_scale, self._units, float(delta))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class HistogramReplaceOneBug(NoisyHistogram):
    """BROKEN: a histogram calibrated for add/remove (Laplace(1/epsilon)) but claimed for replace-one neighbours.

    Replacing one record moves one bin down and another up: L1 sensitivity 2,
    so the true epsilon is ``2 * epsilon``.

    Examples
    --------
    >>> HistogramReplaceOneBug(epsilon=1.0).true_epsilon()
    2.0
    """

    name = "histogram_replace_one_bug"
    broken = True

    @property
    def claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.epsilon, 0.0, "replace-one")

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        d = np.arange(self.n_bins, dtype=float)
        d2 = d.copy()
        d2[0] = 1.0 if self.n_bins > 1 else 0.0
        return d, d2

    def true_epsilon(self, delta: float = 0.0) -> float:
        return 2.0 * self.epsilon if self.n_bins > 1 else self.epsilon  # an upper bound (the grid adds noise)
