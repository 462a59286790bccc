"""RAPPOR (Erlingsson, Pihur and Korolova, CCS 2014): a Bloom filter of one value, randomised twice.

One user's value is hashed into a Bloom filter of ``filter_size`` bits by
``n_hashes`` hash functions.  The *permanent* randomised response keeps each
bit with probability ``1 - f`` and otherwise sets it to 1 or 0 with
probability ``f / 2`` each; the *instantaneous* randomised response then
reports 1 with probability ``q`` where that bit is 1 and ``p`` where it is 0.
:class:`Rappor` releases the instantaneous report (steps 1-3 of the paper);
:class:`OneTimeRappor` releases the permanent one (steps 1-2).

Every bit is independent given the filter, so the release is drawn exactly:
bit ``i`` is 1 with probability ``q*`` if the filter's bit ``i`` is set and ``p*``
otherwise, where ``q* = q (1 - f/2) + p f/2`` and ``p* = p (1 - f/2) + q f/2``
(``q* = 1 - f/2``, ``p* = f/2`` for the one-time report).  Two values whose
filters differ in ``a`` bits set only for the first and ``b`` set only for the
second have privacy loss exactly
``a max(ln(q*/p*), ln((1-q*)/(1-p*))) + b max(ln(p*/q*), ln((1-p*)/(1-q*)))``
(the larger of the two directions); the paper's bound
``2 n_hashes ln(q*(1-p*) / (p*(1-q*)))`` (for ``q* > p*``) holds for any two values.

Hashing: MurmurHash3 (x86, 32-bit; Appleby's public-domain algorithm) of the
value's decimal text with seeds ``0..n_hashes-1``, read as a signed 32-bit
integer and reduced modulo ``filter_size`` (floor modulo, as Python computes
it with the widely used ``mmh3`` package).
Integers are written without a decimal point (``"1"``, not ``"1.0"``).  With
the defaults, value 1 sets bits {3, 10, 13} and value 0 sets {0, 11, 18}
(collisions leave 3 bits each), the filters DP-Sniper audits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int, check_probability
from ..exceptions import ParameterValueError
from ..claims import PointClaim
from .base import BuiltinMechanism, answers_vector, positive_epsilon, input_domain

__all__ = ["Rappor", "OneTimeRappor", "murmur3_32"]

_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit of ``data`` (an unsigned 32-bit integer).

    >>> murmur3_32(b"foo"), murmur3_32(b"hello"), murmur3_32(b"")
    (4138058784, 613153351, 0)
    """
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed & _MASK
    n_blocks = len(data) // 4
    for i in range(n_blocks):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = _rotl((k * c1) & _MASK, 15) * c2 & _MASK
        h = (_rotl(h ^ k, 13) * 5 + 0xE6546B64) & _MASK
    tail = data[4 * n_blocks:]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= _rotl((k * c1) & _MASK, 15) * c2 & _MASK
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def _value_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True)
class Rappor(BuiltinMechanism):
    """RAPPOR: a value's Bloom filter through permanent and instantaneous randomised response (Erlingsson et al. 2014).

    Parameters
    ----------
    epsilon : float, optional
        The claimed budget.  Default: the paper's bound for the mechanism as
        configured (``true_epsilon()``), so the default instance is correct;
        DP-Sniper claims 0.1 for its configuration (true 0.40, 0.30 on its pair),
        which makes the instance ``broken``.
    n_hashes, filter_size : int
        Hash functions and Bloom filter bits (4 and 20 as in DP-Sniper).
    f, p, q : float
        Permanent randomisation probability and the instantaneous report's
        probabilities of 1 for a 0 bit and a 1 bit (0.75, 0.45, 0.55 as in DP-Sniper).

    The dataset is one user's value (a length-1 array); any two values are
    neighbours (``replace-one``, local DP).

    Examples
    --------
    >>> m = Rappor(epsilon=0.1)
    >>> m.bloom_filter(1).nonzero()[0].tolist(), m.bloom_filter(0).nonzero()[0].tolist()
    ([3, 10, 13], [0, 11, 18])
    >>> round(m.pair_epsilon(1, 0), 4), round(m.true_epsilon(), 4), m.broken
    (0.3001, 0.4001, True)
    >>> m([1], size=2, rng=0).shape
    (2, 20)
    """

    epsilon: float | None = None
    n_hashes: int = 4
    filter_size: int = 20
    f: float = 0.75
    p: float = 0.45
    q: float = 0.55

    name = "rappor"
    float_safe = True  # bits drawn with probabilities q* or p*; rounding moves them by ~1e-16 only
    output_kind = "vector"

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_hashes", check_int(self.n_hashes, "n_hashes", low=1))
        object.__setattr__(self, "filter_size", check_int(self.filter_size, "filter_size", low=1))
        for key in ("f", "p", "q"):
            object.__setattr__(self, key, check_probability(getattr(self, key), key))
        lo, hi = sorted(self.bit_probabilities)
        if lo <= 0.0 or hi >= 1.0:
            raise ParameterValueError(
                f"f, p and q must leave every reported bit random (0 < P(1) < 1); got f={self.f}, p={self.p}, "
                f"q={self.q}")
        if lo == hi:
            raise ParameterValueError(f"the report must depend on the value (p* != q*); got f={self.f}, "
                                      f"p={self.p}, q={self.q}")
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", positive_epsilon(self.epsilon))

    @property
    def bit_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)``: probability of reporting 1 for a filter bit 0 and a filter bit 1."""
        half = self.f / 2.0
        return self.p * (1.0 - half) + self.q * half, self.q * (1.0 - half) + self.p * half

    @property
    def claim(self) -> PointClaim:
        eps = self.true_epsilon() if self.epsilon is None else self.epsilon
        return PointClaim(eps, 0.0, neighbouring="replace-one")

    @property
    def broken(self) -> bool:  # type: ignore[override]
        return self.true_epsilon() > self.claim.point_epsilon + 1e-12

    def bloom_filter(self, value: float) -> np.ndarray:
        """The value's Bloom filter (0/1, length ``filter_size``)."""
        text = _value_text(value).encode()
        bits = np.zeros(self.filter_size, dtype=np.int64)
        for seed in range(self.n_hashes):
            h = murmur3_32(text, seed)
            signed = h - (1 << 32) if h & 0x80000000 else h
            bits[signed % self.filter_size] = 1
        return bits

    def _bit_losses(self) -> tuple[float, float]:
        """Worst log-ratio of one bit set only on the first value, and of one set only on the second."""
        ps, qs = self.bit_probabilities
        set_first = max(math.log(qs / ps), math.log((1 - qs) / (1 - ps)))
        set_second = max(math.log(ps / qs), math.log((1 - ps) / (1 - qs)))
        return set_first, set_second

    def pair_epsilon(self, value: float, other: float) -> float:
        """The exact privacy loss between two values (their filters decide it)."""
        a_bits, b_bits = self.bloom_filter(value), self.bloom_filter(other)
        only_a = int(np.sum((a_bits == 1) & (b_bits == 0)))
        only_b = int(np.sum((b_bits == 1) & (a_bits == 0)))
        s1, s2 = self._bit_losses()
        return max(only_a * s1 + only_b * s2, only_b * s1 + only_a * s2)

    def true_epsilon(self, delta: float = 0.0) -> float:
        """The paper's bound: ``n_hashes`` bits set only on each side (attained by values with disjoint filters)."""
        s1, s2 = self._bit_losses()
        return self.n_hashes * (s1 + s2)

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([1]), np.array([0])  # DP-Sniper's witness

    def input_domain(self) -> dict:
        """DP-Sniper's domain: one integer value in [-10, 10]; any two values are neighbours."""
        return input_domain(size=1, low=-10, high=10, integer=True, relation="replace-one")

    def _prepare(self, dataset: Any) -> np.ndarray:
        ps, qs = self.bit_probabilities
        bits = self.bloom_filter(answers_vector(dataset, 1, self.name, "value (one user's)")[0])
        return np.where(bits == 1, qs, ps)

    def _width(self, prepared: np.ndarray) -> int:
        return 2 * self.filter_size

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return (rng.random((n, self.filter_size)) < prepared).astype(np.int64)


@dataclass(frozen=True)
class OneTimeRappor(Rappor):
    """One-time RAPPOR: a value's Bloom filter through permanent randomised response only (Erlingsson et al. 2014).

    Releases the permanent report: bit ``i`` is 1 with probability
    ``1 - f/2`` where the filter's bit is set and ``f/2`` where it is not
    (``p`` and ``q`` are not used).  DP-Sniper's ``OneTimeRappor`` uses
    ``f = 0.95`` and claims 0.1 (true 0.80; 0.60 on its pair).

    Examples
    --------
    >>> m = OneTimeRappor(epsilon=0.1)
    >>> round(m.pair_epsilon(1, 0), 4), round(m.true_epsilon(), 4)
    (0.6005, 0.8007)
    """

    f: float = 0.95

    name = "rappor_one_time"

    @property
    def bit_probabilities(self) -> tuple[float, float]:
        half = self.f / 2.0
        return half, 1.0 - half
