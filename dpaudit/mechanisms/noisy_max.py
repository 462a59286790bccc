"""Noisy max variants that release the noisy maximum *value* instead of its index (broken).

Ding et al. (CCS 2018), Algorithms 7 and 8, as DP-Sniper audits them
(``ReportNoisyMax3`` and ``ReportNoisyMax4``): the scores get Laplace or
exponential noise of the report-noisy-max scale, and the mechanism publishes
``max_i (q_i + noise_i)``.  The index alone would be epsilon-DP; the value is
not.  They share the scores and the ``answers`` switch of
:mod:`~dpaudit.mechanisms.selection`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._noise import exponential_noise, laplace_noise
from .selection import NoisyMaxBase

__all__ = ["NoisyMaxValueLaplace", "NoisyMaxValueExponential"]


@dataclass(frozen=True)
class _NoisyMaxValue(NoisyMaxBase):
    output_kind = "scalar"
    broken = True
    float_safe = False  # releases a float noisy value

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        if self.answers:
            return self._answers_pair()
        # The added record raises every count: the released maximum moves with all of them.
        d = np.zeros((1, self.n_candidates))
        return d, np.vstack([d, np.ones((1, self.n_candidates))])

    def _answers_pair(self) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        noisy = self._noise(rng, (n, self.n_candidates))
        noisy += prepared
        return noisy.max(axis=1)

    def cdf(self, dataset, x) -> np.ndarray:
        """Exact ``P(release <= x)`` on ``dataset``: ``prod_i F(x - q_i)``."""
        q = self._prepare(dataset)
        x = np.asarray(x, dtype=float)
        return np.prod(self._noise_dist().cdf(x[..., None] - q), axis=-1)


@dataclass(frozen=True)
class NoisyMaxValueLaplace(_NoisyMaxValue):
    """BROKEN: noisy max with Laplace noise that releases the noisy maximum value (Ding et al. 2018, Algorithm 7).

    When every score moves by the sensitivity, ``P(max <= x) = prod_i F(x - q_i)``
    has lower tail ``~ prod_i exp((x - q_i) / b) / 2``: the density ratio tends
    to ``exp(k sensitivity / b)``.  The true epsilon is ``k sensitivity / b``
    (the composition of the ``k`` noisy scores bounds it, and the lower tail
    attains it): ``k epsilon`` on records, ``k epsilon / 2`` on answers (DP-Sniper's
    ``ReportNoisyMax3``: 0.25 at k = 5, epsilon = 0.1).

    Examples
    --------
    >>> NoisyMaxValueLaplace(epsilon=0.1, n_candidates=5, answers=True).true_epsilon()
    0.25
    >>> NoisyMaxValueLaplace()([0, 1, 1, 3], size=4, rng=0).shape
    (4,)
    """

    name = "noisy_max_value_laplace"

    def _answers_pair(self) -> tuple[np.ndarray, np.ndarray]:
        k = self.n_candidates
        return np.zeros(k), np.ones(k)  # DP-Sniper's witness: [0]*5 vs [1]*5

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        return laplace_noise(rng, self.scale, shape)

    def _noise_dist(self):
        from scipy import stats  # lazy: keeps `dpaudit` start-up fast for the CLI

        return stats.laplace(scale=self.scale)

    def true_epsilon(self, delta: float = 0.0) -> float:
        return self.n_candidates * self.sensitivity / self.scale


@dataclass(frozen=True)
class NoisyMaxValueExponential(_NoisyMaxValue):
    """BROKEN: noisy max with exponential noise that releases the noisy maximum value (Ding et al. 2018, Algorithm 8).

    Exponential noise is one-sided, so the release is never below ``max_i q_i``:
    when every score rises by 1, the values in ``[max q, max q + 1)`` are
    possible on one dataset and impossible on the other.  The true epsilon is
    infinite (DP-Sniper's ``ReportNoisyMax4``, audited on ``[1]*5`` vs ``[2]*5``;
    the impossible event has probability ``(1 - e^(-1/b))^k``, about 3e-7 there,
    which is why finite samples certify only a finite bound).

    Examples
    --------
    >>> NoisyMaxValueExponential().true_epsilon()
    inf
    """

    name = "noisy_max_value_exponential"

    def _answers_pair(self) -> tuple[np.ndarray, np.ndarray]:
        k = self.n_candidates
        return np.ones(k), np.full(k, 2.0)  # DP-Sniper's witness: [1]*5 vs [2]*5

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        return exponential_noise(rng, self.scale, shape)

    def _noise_dist(self):
        from scipy import stats  # lazy: keeps `dpaudit` start-up fast for the CLI

        return stats.expon(scale=self.scale)

    def true_epsilon(self, delta: float = 0.0) -> float:
        return math.inf
