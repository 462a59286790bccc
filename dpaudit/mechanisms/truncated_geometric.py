"""The truncated geometric mechanism sampled exactly with integers (Balcer and Vadhan's GeoSample).

Balcer and Vadhan ("Differential Privacy on Finite Computers", ITCS 2018,
Algorithm 4.8) release a count ``c`` in ``{0, ..., n}`` as ``z`` with
``P(z) proportional to alpha^|z - c|`` (the tails beyond 0 and n folded onto the
ends), ``alpha = 2^k / (2^k + 1)``, by drawing one uniform integer in
``{1, ..., d}`` and inverting an integer-valued CDF ``F``: no floating point, so
no floating-point leak.  Its privacy is ``ln(1 + 2^-k)`` exactly (the ratio of
consecutive CDF steps); the paper takes ``k = ceil(log2(2 / epsilon))``, so
``ln(1 + 2^-k) <= 2^-k <= epsilon / 2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int
from ..exceptions import ParameterValueError
from .base import BuiltinMechanism, answers_vector, PureLinf, set_epsilon, input_domain

__all__ = ["TruncatedGeometric"]

# Uniform integers up to d are drawn as int64.
_MAX_D = 1 << 62


@dataclass(frozen=True)
class TruncatedGeometric(PureLinf, BuiltinMechanism):
    """Truncated geometric noise on a count in {0..n}, sampled exactly with integers (Balcer and Vadhan 2018).

    Parameters
    ----------
    epsilon : float, default 1
        The claimed budget; > 0.
    n : int, default 5
        The count lies in ``{0, ..., n}``; so does the release.
    k : int, optional
        ``alpha = 2^k / (2^k + 1)``.  Default ``ceil(log2(2 / epsilon))``, the
        paper's choice.  DP-Sniper's code takes the natural logarithm,
        ``k = ceil(ln(2 / epsilon))`` (3 at epsilon 0.1, where the paper's is
        5); with ``k = 3`` the true epsilon is ``ln(1.125) = 0.118`` and the
        0.1 claim is broken, which is what DP-Sniper's table measures
        (``TruncatedGeometric``, 0.116).  ``broken`` is computed, not fixed.

    The dataset is the count itself (a length-1 array); neighbours move it by
    at most 1 (``linf``).  ``true_epsilon()`` is computed exactly from the
    integer CDFs of every pair of adjacent counts.

    Examples
    --------
    >>> m = TruncatedGeometric(epsilon=0.1, n=5)
    >>> m.k, m.broken
    (5, False)
    >>> dps = TruncatedGeometric(epsilon=0.1, n=5, k=3)
    >>> round(dps.true_epsilon(), 4), dps.broken
    (0.1178, True)
    >>> sorted(set(dps([2], size=1000, rng=0).tolist())) == list(range(6))
    True
    """

    epsilon: float = 1.0
    n: int = 5
    k: int | None = None

    name = "truncated_geometric"
    float_safe = True  # exact integer sampling, no floating point
    output_kind = "discrete"

    def __post_init__(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "n", check_int(self.n, "n", low=1))
        if self.k is None:
            object.__setattr__(self, "k", max(0, math.ceil(math.log2(2.0 / self.epsilon))))
        object.__setattr__(self, "k", check_int(self.k, "k", low=0))
        if self.d >= _MAX_D:
            raise ParameterValueError(
                f"n={self.n} and k={self.k} need uniform integers up to {self.d}, beyond 2^62; "
                f"use a smaller n or a larger epsilon")

    @property
    def d(self) -> int:
        """The CDF's denominator: (2^(k+1) + 1) (2^k + 1)^(n-1)."""
        return (2 ** (self.k + 1) + 1) * (2 ** self.k + 1) ** (self.n - 1)

    def cdf_numerators(self, count: int) -> list[int]:
        """``d * P(release <= z)`` for ``z = 0..n`` on count ``count`` (Balcer and Vadhan, Algorithm 4.8, step 2)."""
        n, k, c = self.n, self.k, int(count)
        if not 0 <= c <= n:
            raise ParameterValueError(f"count must be an integer in [0, {n}]; got {count!r}")
        a, b = 2 ** k, 2 ** k + 1
        out = []
        for z in range(n + 1):
            if z < c:
                out.append(a ** (c - z) * b ** (n - (c - z)))
            elif z < n:
                out.append(self.d - a ** (z - c + 1) * b ** (n - 1 - (z - c)))
            else:
                out.append(self.d)
        return out

    def pmf(self, count: int) -> np.ndarray:
        """Exact output probabilities on ``count`` (as floats)."""
        f = self.cdf_numerators(count)
        return np.diff([0] + f) / self.d

    @property
    def broken(self) -> bool:  # type: ignore[override]
        return self.true_epsilon() > self.epsilon + 1e-12

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        if self.n >= 2:
            return np.array([2]), np.array([1])  # DP-Sniper's witness
        return np.array([1]), np.array([0])

    def input_domain(self) -> dict:
        """DP-Sniper's domain: one integer count in [0, n], ``linf``."""
        return input_domain(size=1, low=0, high=self.n, integer=True, relation="linf")

    def _prepare(self, dataset: Any) -> np.ndarray:
        value = answers_vector(dataset, 1, self.name, "count")[0]
        if value != round(value) or not 0 <= value <= self.n:
            raise ParameterValueError(f"{self.name} expects an integer count in [0, {self.n}]; got {value!r}")
        return np.asarray(self.cdf_numerators(int(value)), dtype=np.int64)

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        u = rng.integers(1, self.d, size=n, endpoint=True, dtype=np.int64)
        # The smallest z with F(z) >= u.
        return np.searchsorted(prepared, u, side="left").astype(np.int64)

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact at delta = 0: the largest |ln P(z | c) / P(z | c + 1)| over outputs z and counts c."""
        worst = 0.0
        prev = np.diff([0] + self.cdf_numerators(0)).tolist()
        for c in range(1, self.n + 1):
            cur = np.diff([0] + self.cdf_numerators(c)).tolist()
            for p, q in zip(prev, cur):
                worst = max(worst, abs(math.log(int(p)) - math.log(int(q))))
            prev = cur
        return worst
