"""Prefix sums of Laplace-noised query answers (Wang et al., PLDI 2019), audited as DP-Sniper does (broken)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int
from ._noise import laplace_noise
from .base import BuiltinMechanism, answers_vector, PureLinf, set_epsilon, input_domain

__all__ = ["PrefixSum"]


@dataclass(frozen=True)
class PrefixSum(PureLinf, BuiltinMechanism):
    """BROKEN for linf neighbours: prefix sums of answers with Laplace(1/epsilon) noise each (Wang et al. 2019).

    Releases ``s_j = sum_{i <= j} (q_i + Lap(1/epsilon))`` for ``j = 1..n_queries``.
    When only one answer may change by 1 (the setting of Wang et al.'s
    proof) it is epsilon-DP.  DP-Sniper audits it with every answer moving by
    at most 1 (``linf``, the relation this built-in claims), where the noisy
    answers are a bijective post-processing of ``n_queries`` Laplace releases
    that each move by 1: the true epsilon is ``n_queries * epsilon`` (the bound
    of composition, attained on ``[1]*10`` vs ``[0]*10`` when every noise sits
    in the same tail).

    Examples
    --------
    >>> m = PrefixSum(epsilon=0.1)
    >>> m.true_epsilon()
    1.0
    >>> m([1.0, 1.0, 1.0] + [0.0] * 7, size=2, rng=0).shape
    (2, 10)
    """

    epsilon: float = 1.0
    n_queries: int = 10

    name = "prefix_sum"
    float_safe = False  # numpy-style float noise through _noise (broken anyway)
    output_kind = "vector"

    def __post_init__(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "n_queries", check_int(self.n_queries, "n_queries", low=1))

    @property
    def broken(self) -> bool:  # type: ignore[override]
        return self.n_queries > 1

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        m = self.n_queries
        return np.ones(m), np.zeros(m)  # DP-Sniper's witness: [1]*10 vs [0]*10

    def input_domain(self) -> dict:
        """DP-Sniper's domain: n_queries floats in [-10, 10], ``linf``."""
        return input_domain(size=self.n_queries, low=-10, high=10, integer=False, relation="linf")

    def _prepare(self, dataset: Any) -> np.ndarray:
        return answers_vector(dataset, self.n_queries, self.name)

    def _width(self, prepared: np.ndarray) -> int:
        return 2 * self.n_queries

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        noisy = laplace_noise(rng, 1.0 / self.epsilon, (n, self.n_queries))
        noisy += prepared
        return np.cumsum(noisy, axis=1, out=noisy)

    def true_epsilon(self, delta: float = 0.0) -> float:
        return self.n_queries * self.epsilon
