"""Mechanisms run side by side on the same query answers, all outputs released (DP-Sniper's parallel rows).

* :class:`LaplaceParallel` -- ``n_parallel`` independent Laplace releases of one
  answer, each with budget ``epsilon / n_parallel``: epsilon-DP by basic
  composition (and exactly epsilon: the ``n`` density ratios multiply).
* :class:`SVT34Parallel` -- Lyu et al.'s broken Algorithms 3 and 4 side by
  side, each given the whole budget, claimed as epsilon: broken twice over.

Both take the query answers themselves (``linf`` neighbours), as DP-Sniper does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int, check_real
from ._noise import laplace_release
from .base import BuiltinMechanism, answers_vector, PureLinf, set_epsilon, input_domain
from .sparse_vector import SVTLyuAlg3, SVTLyuAlg4, halves_pattern

__all__ = ["LaplaceParallel", "SVT34Parallel"]


@dataclass(frozen=True)
class LaplaceParallel(PureLinf, BuiltinMechanism):
    """n_parallel Laplace releases of one answer, each with budget epsilon/n_parallel; epsilon-DP by composition.

    The dataset is one query answer of sensitivity 1 (a length-1 array); each
    release adds independent Laplace noise of scale ``n_parallel / epsilon``.
    DP-Sniper's ``LaplaceParallel`` (20 copies at 0.005 each: ``epsilon = 0.1``,
    ``n_parallel = 20``), audited on ``[1]`` vs ``[0]``.  The true epsilon is
    ``epsilon`` (the sum of the copies' ratios is attained when all noises sit
    in the same tail).  Float-safe: each release is snapped down to a
    power-of-two grid about ``scale / 2**10`` fine (post-processing).

    Examples
    --------
    >>> m = LaplaceParallel(epsilon=0.1, n_parallel=20)
    >>> m.scale
    200.0
    >>> m([1.0], size=3, rng=0).shape
    (3, 20)
    """

    epsilon: float = 1.0
    n_parallel: int = 20

    name = "laplace_parallel"
    output_kind = "vector"
    float_safe = True  # every release snapped to a power-of-two grid (dpaudit.mechanisms._noise.laplace_release)

    def __post_init__(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "n_parallel", check_int(self.n_parallel, "n_parallel", low=1))

    @property
    def scale(self) -> float:
        """Laplace scale of each copy: n_parallel / epsilon."""
        return self.n_parallel / self.epsilon

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([1.0]), np.array([0.0])  # DP-Sniper's witness

    def input_domain(self) -> dict:
        """DP-Sniper's domain: one float answer in [-10, 10], ``linf``."""
        return input_domain(size=1, low=-10, high=10, integer=False, relation="linf")

    def _prepare(self, dataset: Any) -> float:
        return float(answers_vector(dataset, 1, self.name, "query answer")[0])

    def _width(self, prepared: float) -> int:
        return self.n_parallel

    def _draw(self, prepared: float, n: int, rng: np.random.Generator) -> np.ndarray:
        return laplace_release(rng, prepared, self.scale, (n, self.n_parallel))


@dataclass(frozen=True)
class SVT34Parallel(PureLinf, BuiltinMechanism):
    """BROKEN: Lyu et al.'s Algorithms 3 and 4 run side by side on the same answers, each with the whole epsilon.

    The release is Algorithm 3's (statuses, then values of the above answers)
    followed by Algorithm 4's statuses: ``3 n_queries`` numbers.  Each part is
    itself broken, and running both with the full budget would cost twice the
    claim even if they were not.  ``true_epsilon`` is the sum of the two parts'
    bounds (composition).  DP-Sniper's ``SVT34Parallel`` (``c = 2``,
    ``threshold = 1``), audited on ``[1]*10`` vs ``[2]*5 + [0]*5``.

    Examples
    --------
    >>> m = SVT34Parallel(epsilon=0.1)
    >>> round(m.true_epsilon(), 4)
    0.575
    >>> m(m.neighbouring_pair()[0], size=2, rng=0).shape
    (2, 30)
    """

    epsilon: float = 1.0
    threshold: float = 1.0
    c: int = 2
    n_queries: int = 10

    name = "svt34_parallel"
    output_kind = "vector"
    broken = True
    float_safe = False  # Algorithm 3's float values

    def __post_init__(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "threshold", check_real(self.threshold, "threshold"))
        object.__setattr__(self, "c", check_int(self.c, "c", low=1))
        object.__setattr__(self, "n_queries", check_int(self.n_queries, "n_queries", low=1))

    def _parts(self) -> tuple[SVTLyuAlg3, SVTLyuAlg4]:
        kw = dict(epsilon=self.epsilon, threshold=self.threshold, c=self.c, n_queries=self.n_queries, answers=True)
        return SVTLyuAlg3(**kw), SVTLyuAlg4(**kw)

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        m = self.n_queries
        return np.ones(m), halves_pattern(m, 2, 0)  # DP-Sniper's witness: [1]*10 vs [2]*5+[0]*5

    def input_domain(self) -> dict:
        """DP-Sniper's domain: n_queries floats in [-10, 10], ``linf``."""
        return input_domain(size=self.n_queries, low=-10, high=10, integer=False, relation="linf")

    def _prepare(self, dataset: Any) -> np.ndarray:
        return answers_vector(dataset, self.n_queries, self.name)

    def _width(self, prepared: np.ndarray) -> int:
        return 8 * self.n_queries

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        alg3, alg4 = self._parts()
        return np.hstack([alg3._draw(prepared, n, rng), alg4._draw(prepared, n, rng).astype(float)])

    def true_epsilon(self, delta: float = 0.0) -> float:
        alg3, alg4 = self._parts()
        return alg3.true_epsilon() + alg4.true_epsilon()
