"""Noisy histograms: Laplace(1/epsilon) on every bin, and two broken calibrations.

Float-safe: every bin is released on the grid of
:class:`~dpaudit.mechanisms.additive.LaplaceMechanism` (exact discrete Laplace
noise in units of a power-of-two step about ``1 / (epsilon 2**10)``).

``answers=True`` makes the dataset the histogram itself (DP-Sniper's and
Ding et al.'s ``NoisyHist``): one whole count per bin, and a record added or
removed moves one count by 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_int
from ..exceptions import ParameterValueError
from ..claims import PointClaim
from ._noise import laplace_noise
from .additive import discrete_laplace_epsilon, grid_step
from .base import (BuiltinMechanism, answers_vector, as_1d_array, PureAddRemove, set_answers, set_epsilon,
                   counting_queries, input_domain)
from .float_safe import discrete_laplace, exact_scale

__all__ = ["NoisyHistogram", "HistogramReplaceOneBug", "HistogramScaleBug"]


@dataclass(frozen=True)
class NoisyHistogram(PureAddRemove, BuiltinMechanism):
    """Histogram of labels 0..n_bins-1 with Laplace(1/epsilon) noise on every bin.

    Adding or removing one record changes one bin by 1 (L1 sensitivity 1), so it
    is epsilon-DP under add/remove.  The dataset is 1-D (labels, rounded;
    labels outside the range fall in no bin).  The noise is exact discrete
    Laplace on a power-of-two grid ``step`` (float-safe, see the module).
    With ``answers=True`` the dataset is the histogram (``n_bins`` whole
    counts) and the neighbouring pair is DP-Sniper's ``[0, 1, 1, 1, 1]`` vs
    ``[1, 1, 1, 1, 1]`` (Ding et al. 2018, Algorithm 9, ``NoisyHist1``).

    Examples
    --------
    >>> NoisyHistogram(n_bins=3)([0, 1, 1, 2], size=5, rng=0).shape
    (5, 3)
    >>> NoisyHistogram(n_bins=5, answers=True).neighbouring_pair()
    (array([0., 1., 1., 1., 1.]), array([1., 1., 1., 1., 1.]))
    """

    epsilon: float = 1.0
    n_bins: int = 4
    answers: bool = False

    name = "noisy_histogram"
    output_kind = "vector"
    float_safe = True

    def __post_init__(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "n_bins", check_int(self.n_bins, "n_bins", low=1))
        set_answers(self)
        step = grid_step(1.0 / self.epsilon, 1.0, "count")
        units = int(round(1.0 / step))
        object.__setattr__(self, "_step", step)
        object.__setattr__(self, "_units", units)
        object.__setattr__(self, "_noise_scale", exact_scale(Fraction(units) / Fraction(self.epsilon)))

    @property
    def scale(self) -> float:
        """The Laplace scale of every bin (in counts)."""
        return 1.0 / self.epsilon

    @property
    def step(self) -> float:
        """The release grid, a power of two."""
        return self._step  # type: ignore[attr-defined]

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        if self.answers:
            d = np.ones(self.n_bins)
            d[0] = 0.0
            return d, np.ones(self.n_bins)
        d = np.arange(self.n_bins, dtype=float)
        return d, np.append(d, 0.0)

    def input_domain(self) -> dict:
        """Histograms of ``n_bins`` counts in {0, 1}, one count changed (``answers=True``); else labels, add/remove.

        DP-Sniper draws counts from [0, 10] but changes one count by at most 1.
        None of the three relations says "by at most 1", but replace-one over
        counts in {0, 1} is exactly that relation, and the noise does not depend
        on where the counts sit, so nothing is lost by the narrower range.
        """
        if self.answers:
            return input_domain(size=self.n_bins, low=0, high=1, integer=True, relation="replace-one")
        return input_domain(size=self.n_bins, low=0, high=max(1, self.n_bins - 1), integer=True,
                            relation="add-remove")

    def _prepare(self, dataset: Any) -> np.ndarray:
        if self.answers:
            counts = answers_vector(dataset, self.n_bins, self.name)
            if np.any(counts != np.round(counts)):
                raise ParameterValueError(f"{self.name} expects whole counts with answers=True; got {counts.tolist()}")
            return counts
        return counting_queries(as_1d_array(dataset, self.name, "labels"), self.n_bins)

    def _width(self, prepared: np.ndarray) -> int:
        return self.n_bins

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        z = discrete_laplace(self._noise_scale, size=(n, self.n_bins), rng=rng)  # type: ignore[attr-defined]
        z += (prepared * self._units).astype(np.int64)  # type: ignore[attr-defined]  (whole counts: exact)
        return z.astype(float) * self.step

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact for the grid mechanism (one bin moves by one count), through the discrete Laplace profile."""
        return discrete_laplace_epsilon(self._noise_scale, self._units, float(delta))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class HistogramReplaceOneBug(NoisyHistogram):
    """BROKEN: a histogram calibrated for add/remove (Laplace(1/epsilon)) but claimed for replace-one neighbours.

    Replacing one record moves one bin down and another up: L1 sensitivity 2,
    so the true epsilon is ``2 * epsilon``.  (Records only: ``answers`` must
    stay False.)

    Examples
    --------
    >>> HistogramReplaceOneBug(epsilon=1.0).true_epsilon()
    2.0
    """

    name = "histogram_replace_one_bug"
    broken = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.answers:
            raise ParameterValueError("answers must be False for histogram_replace_one_bug (its bug is about "
                                      "replacing a record); got True")

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, 0.0, neighbouring="replace-one")

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        d = np.arange(self.n_bins, dtype=float)
        d2 = d.copy()
        d2[0] = 1.0 if self.n_bins > 1 else 0.0
        return d, d2

    def input_domain(self) -> dict:
        """Labels 0..n_bins-1, one record replaced."""
        return input_domain(size=self.n_bins, low=0, high=max(1, self.n_bins - 1), integer=True,
                            relation="replace-one")

    def true_epsilon(self, delta: float = 0.0) -> float:
        return 2.0 * self.epsilon if self.n_bins > 1 else self.epsilon  # an upper bound (the grid adds noise)


@dataclass(frozen=True)
class HistogramScaleBug(NoisyHistogram):
    """Histogram with Laplace noise of scale epsilon instead of 1/epsilon (Ding et al. 2018, Algorithm 10).

    DP-Sniper's ``NoisyHist2``.  A count moving by 1 costs ``1 / epsilon``:
    the true epsilon is ``1 / epsilon`` (exact: the Laplace ratio), so the
    mechanism breaks its claim exactly when ``epsilon < 1`` (``broken``);
    the default ``epsilon = 0.1`` is DP-Sniper's setting (true epsilon 10).

    Examples
    --------
    >>> m = HistogramScaleBug()
    >>> m.broken, m.true_epsilon()
    (True, 10.0)
    >>> HistogramScaleBug(epsilon=2.0).broken
    False
    """

    epsilon: float = 0.1

    name = "histogram_scale_bug"
    float_safe = False  # numpy's float Laplace sampler (the mechanism is broken anyway)

    @property
    def scale(self) -> float:
        return self.epsilon

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        # Its own draw, whatever the correct histogram's sampler becomes: the bug is the scale.
        out = laplace_noise(rng, self.epsilon, (n, self.n_bins))
        out += prepared
        return out

    @property
    def broken(self) -> bool:  # type: ignore[override]
        return self.true_epsilon() > self.epsilon

    def true_epsilon(self, delta: float = 0.0) -> float:
        from .additive import laplace_epsilon_profile

        return laplace_epsilon_profile(1.0 / self.epsilon, delta)
