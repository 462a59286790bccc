"""Numerical sparse vector: the above answers are released as fresh noisy values (correct).

Wang, Ding, Wang, Kifer and Zhang (PLDI 2019, "Proving differential privacy
with shadow execution"), following Dwork and Roth's NumericSparse (2014,
Algorithm 3): a third of the budget for the threshold noise, a third for the
comparisons, a third for the released values, which get *fresh* noise (the
comparison noise is never released, unlike Lyu et al.'s broken Algorithm 3).
DP-Sniper's ``NumericalSVT``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._noise import laplace_noise, laplace_release
from .sparse_vector import SVTBase

__all__ = ["NumericalSVT"]


@dataclass(frozen=True)
class NumericalSVT(SVTBase):
    """Numerical sparse vector: noisy values of up to c above answers (Wang et al. 2019); epsilon-DP.

    rho ~ Lap(3/epsilon) on the threshold, nu_i ~ Lap(6c/epsilon) for the
    comparisons, and each above answer is released as ``q_i + Lap(3c/epsilon)``
    with fresh noise; it stops after ``c`` above answers.  Each third of the
    budget is spent once (threshold), and at most ``c`` times epsilon/(3c)
    (comparisons, values), so the whole is epsilon-DP for sensitivity-1
    queries.  The release has one block of statuses (1 above, 0 below, -1 not
    answered) and one block of values (0 where not above), snapped down to a
    power-of-two grid about ``3c / (epsilon 2**10)`` fine so that their bits
    carry nothing else (float-safe; the snapping is post-processing).  DP-Sniper runs it
    with ``c = 2``, ``threshold = 1`` on ``[2]*10`` vs ``[1]*10``.

    Examples
    --------
    >>> m = NumericalSVT(epsilon=0.1, c=2, threshold=1.0, answers=True)
    >>> d, d2 = m.neighbouring_pair()
    >>> d.tolist()[:3], d2.tolist()[:3]
    ([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    >>> m(d, size=4, rng=0).shape
    (4, 20)
    """

    name = "numerical_svt"
    _eps1_share = 1.0 / 3.0

    @property
    def eps3(self) -> float:
        """Budget of the released values."""
        return self.epsilon / 3.0

    @property
    def eps2(self) -> float:
        return self.epsilon / 3.0

    @property
    def nu_scale(self) -> float:
        return 2.0 * self.c / self.eps2

    @property
    def value_scale(self) -> float:
        """Scale of the fresh noise on released values: c / epsilon3 = 3c / epsilon."""
        return self.c / self.eps3

    def _answers_pair(self) -> tuple[np.ndarray, np.ndarray]:
        m = self.n_queries
        return np.full(m, 2.0), np.ones(m)  # DP-Sniper's witness: [2]*10 vs [1]*10

    def _width(self, prepared: np.ndarray) -> int:
        return 5 * self.n_queries

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        m = self.n_queries
        noisy_threshold = laplace_noise(rng, self.rho_scale, (n, 1))
        noisy_threshold += self.threshold
        noisy = laplace_noise(rng, self.nu_scale, (n, m))
        noisy += prepared
        values = laplace_release(rng, prepared, self.value_scale, (n, m))
        above = noisy >= noisy_threshold
        before = np.cumsum(above, axis=1) - above
        answered = before < self.c
        above &= answered
        status = above.astype(np.int64)
        status[~answered] = -1
        return np.hstack([status.astype(float), np.where(above, values, 0.0)])
