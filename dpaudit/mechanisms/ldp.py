"""Local DP frequency-oracle protocols, each one user's report of one value in ``{0, ..., k-1}``.

Written from their papers with their true epsilon (the replace-one epsilon between any two values):

* generalized randomized response ``grr`` (Kairouz, Oh and Viswanath 2014; Wang et al. 2017);
* subset selection ``ss`` (Wang et al. 2016; Ye and Barg 2018);
* symmetric and optimized unary encoding ``sue``, ``oue`` (Wang et al. 2017; SUE is basic one-time RAPPOR);
* histogram encoding with summation ``she`` and thresholding ``the`` (Wang et al. 2017);
* binary and optimized local hashing ``blh``, ``olh`` (Bassily and Smith 2015; Wang et al. 2017);
* Hadamard response ``hr`` (Acharya, Sun and Zhang 2019).

Local hashing releases the *support* of a report, the k-bit set of values its hash sends to the
reported bucket: the set every local-hashing server computes from (hash seed, bucket), so a
post-processing of the protocol's own report, and an audit of it is a valid lower bound on the
protocol.  Everything is vectorised (``size=``); all but SHE draw only discrete outcomes with
probabilities computed once, and SHE's Laplace noise is snapped to a power-of-two grid, so every
protocol here is float-safe.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import check_int, check_real
from ..exceptions import ParameterValueError
from ..claims import PointClaim
from ._noise import laplace_release
from .base import BuiltinMechanism, answers_vector, input_domain, positive_epsilon

__all__ = ["LDPProtocol", "GRR", "SubsetSelection", "UnaryEncoding", "SUE", "OUE", "SHE", "THE", "LocalHashing", "BLH", "OLH",
           "HadamardResponse", "LDP_PROTOCOLS", "the_threshold", "bernoulli_bits", "uniform_others"]

#: A prime above every domain size: local hashing's universal family ((a v + b) mod P) mod g.
_PRIME = (1 << 31) - 1


@dataclass(frozen=True)
class LDPProtocol(BuiltinMechanism):
    """One user's value in ``{0, ..., k-1}`` through an LDP protocol claiming ``epsilon`` (replace-one)."""

    epsilon: float = 1.0
    k: int = 10

    output_kind: ClassVar[str] = "vector"
    float_safe: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", positive_epsilon(self.epsilon))
        object.__setattr__(self, "k", check_int(self.k, "k", low=2))

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, 0.0, neighbouring="replace-one")

    def true_epsilon(self, delta: float = 0.0) -> float:
        return self.epsilon

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0]), np.array([1])

    def input_domain(self) -> dict:
        return input_domain(size=1, low=0, high=self.k - 1, integer=True, relation="replace-one")

    def _value(self, dataset: Any) -> int:
        v = answers_vector(dataset, 1, self.name, "value (one user's)")[0]
        if not (float(v).is_integer() and 0 <= v < self.k):
            raise ParameterValueError(f"{self.name} takes one value in 0..{self.k - 1}; got {v!r}")
        return int(v)

    def _prepare(self, dataset: Any) -> int:
        return self._value(dataset)

    def _width(self, prepared: Any) -> int:
        return self.k


def uniform_others(v: int, k: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` values drawn uniformly from ``{0..k-1}`` without ``v``: a randomized response's lie."""
    out = rng.integers(0, k - 1, size=n)
    return out + (out >= v)


@dataclass(frozen=True)
class GRR(LDPProtocol):
    """Generalized randomized response: the true value with probability e^eps/(e^eps+k-1), else another uniformly."""

    name: ClassVar[str] = "grr"
    output_kind: ClassVar[str] = "discrete"

    def _width(self, prepared):
        return 1

    @property
    def keep_probability(self) -> float:
        """The probability of reporting the true value, e^eps/(e^eps+k-1)."""
        return math.exp(self.epsilon) / (math.exp(self.epsilon) + self.k - 1)

    def _draw(self, v: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.where(rng.random(n) < self.keep_probability, v, uniform_others(v, self.k, n, rng))


#: Below this probability of a 1, :func:`bernoulli_bits` places the ones by their gaps, above it draws bit by
#: bit: the crossover of the two costs (docs/decisions/ldp-sampling.md).
SPARSE_BELOW = 0.125


def bernoulli_bits(n: int, k: int, q: float, rng: np.random.Generator, *, batch: int | None = None) -> np.ndarray:
    """(n, k) int8 matrix of independent bits, each 1 with probability ``q``.

    Below :data:`SPARSE_BELOW` the bits, read row by row as one sequence, are drawn by the gaps
    between their ones, which in a Bernoulli(q) sequence are independent Geometric(q): one draw per
    1 instead of one per bit.  ``batch`` caps the gaps drawn per round (tests use it to force several
    rounds).
    """
    total = n * k
    if not 0.0 < q < SPARSE_BELOW or total == 0:
        return (rng.random((n, k)) < q).astype(np.int8)
    out = np.zeros(total, dtype=np.int8)
    last = -1  # where the latest 1 sits
    while True:
        left = total - 1 - last  # bits still to draw
        m = int(left * q + 6.0 * math.sqrt(left * q) + 64)  # enough gaps to pass the end, but 1 time in 10^9
        m = min(m, batch) if batch else m
        at = last + np.cumsum(rng.geometric(q, size=m))
        stop = int(np.searchsorted(at, total))
        out[at[:stop]] = 1
        if stop < m:
            return out.reshape(n, k)
        last = int(at[-1])


def _random_subsets(v: int, k: int, size, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, k) int8 0/1 rows, each ``size`` ones among the k - 1 values other than ``v`` (uniform subsets).

    ``size`` is one integer or one per row, each the largest size or one less (subset selection's
    subsets without and with the true value).  Small subsets (or small complements) come from
    :func:`_floyd_subsets`, O(size) per row; large ones from :func:`_rounded_subsets`, O(k) per row
    but a byte per value: the crossover is at about a quarter of the values
    (docs/decisions/ldp-sampling.md).

    >>> rng = np.random.default_rng(0)
    >>> x = _random_subsets(2, 6, np.array([3, 2, 3]), 3, rng)
    >>> x.sum(axis=1).tolist(), x[:, 2].tolist()
    ([3, 2, 3], [0, 0, 0])
    """
    m = k - 1
    sizes = np.broadcast_to(np.asarray(size, dtype=np.int64), (n,))
    top = int(sizes.max()) if n else 0
    if n and int(sizes.min()) < top - 1:
        raise ValueError(f"sizes must be {top} or {top - 1}; got {int(sizes.min())}")
    if 4 * min(top, m - top + 1) > m + 40:
        return _rounded_subsets(v, k, sizes, top, rng)
    return _floyd_subsets(v, k, sizes, top, rng)


def _floyd_subsets(v: int, k: int, sizes: np.ndarray, top: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`_random_subsets` by Floyd's algorithm (Bentley and Floyd 1987), one pass per element over all rows.

    To draw s of N: for j = N - s, ..., N - 1 take t uniform in 0..j, or j itself when t is taken.
    Subsets larger than half are drawn as the complement of the values left out.  Element e of the
    k - 1 others is column ``e + (e >= v)``, written straight into the output through one flat index
    rather than marked in a (rows, k - 1) array copied around column v (the same draws, fewer passes).
    """
    n, m = len(sizes), k - 1
    complement = top > m - top + 1
    draw = (m - sizes) if complement else sizes  # elements to mark per row
    most = int(draw.max()) if n else 0
    mark = 0 if complement else 1
    out = np.full((n, k), 1 - mark, dtype=np.int8)
    out[:, v] = 0
    flat = out.reshape(-1)
    base = np.arange(n, dtype=np.int64) * k
    for j in range(m - most, m):
        t = rng.integers(0, j + 1, size=n)
        t += t >= v
        t += base
        pick = np.where(flat[t] == mark, base + (j + (j >= v)), t)
        active = draw >= m - j  # a row drawing s elements starts at j = m - s
        flat[pick if active.all() else pick[active]] = mark
    return out


def _rounded_subsets(v: int, k: int, sizes: np.ndarray, top: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`_random_subsets` by a Bernoulli draw rounded to each row's size: for large subsets.

    Each of the k - 1 values is taken independently with probability ``T / 256`` (one random byte,
    ``T / 256`` the nearest to the largest size's share); then, row by row, a value drawn uniformly
    among the k - 1 is dropped if taken (the row holds too many) or added if not (too few), until the
    row holds its size.  Both steps treat the values alike, so the subset's law is invariant under
    permuting them: uniform among the subsets of that size.  About one standard deviation of
    Binomial(k - 1, T / 256) corrections per row, each accepted with probability near T / 256.
    """
    n, m = len(sizes), k - 1
    taken = np.frombuffer(rng.bytes(n * k), dtype=np.uint8).reshape(n, k) < int(round(256 * top / m))
    taken[:, v] = False
    excess = np.count_nonzero(taken, axis=1) - sizes
    flat = taken.reshape(-1)
    rows = np.flatnonzero(excess)
    while rows.size:
        e = rng.integers(0, m, size=rows.size)
        at = rows * k + e + (e >= v)
        cur = flat[at]
        over = excess[rows] > 0
        hit = over == cur  # a taken value where the row holds too many, a free one where too few
        flat[at[hit]] = ~cur[hit]
        excess[rows[hit]] -= np.where(over[hit], 1, -1)
        rows = rows[excess[rows] != 0]
    return taken.view(np.int8)


@dataclass(frozen=True)
class SubsetSelection(LDPProtocol):
    """Subset selection: a set of omega values, holding the true one with probability omega e^eps/(omega e^eps + k - omega)."""

    name: ClassVar[str] = "ss"

    @property
    def omega(self) -> int:
        """Subset size: k/(e^eps + 1) rounded, at least 1 (Ye and Barg 2018)."""
        return max(1, int(round(self.k / (math.exp(self.epsilon) + 1))))

    def _draw(self, v: int, n: int, rng: np.random.Generator) -> np.ndarray:
        w, e = self.omega, math.exp(self.epsilon)
        p = w * e / (w * e + self.k - w)
        keep = rng.random(n) < p
        out = _random_subsets(v, self.k, w - keep, n, rng)  # with v: w - 1 others; without: w others
        out[keep, v] = 1
        return out


@dataclass(frozen=True)
class UnaryEncoding(LDPProtocol):
    """Unary encoding: the one-hot vector, bit by bit 1 with probability p (the value's bit) or q (the others)."""

    def _probabilities(self) -> tuple[float, float]:  # (P[bit 1 | its value], P[bit 1 | another value])
        raise NotImplementedError

    def _draw(self, v: int, n: int, rng: np.random.Generator) -> np.ndarray:
        p, q = self._probabilities()
        out = bernoulli_bits(n, self.k, q, rng)
        out[:, v] = rng.random(n) < p
        return out


@dataclass(frozen=True)
class SUE(UnaryEncoding):
    """Symmetric unary encoding: each bit of the one-hot vector kept with probability e^(eps/2)/(e^(eps/2)+1)."""

    name: ClassVar[str] = "sue"

    def _probabilities(self):
        p = math.exp(self.epsilon / 2) / (math.exp(self.epsilon / 2) + 1)
        return p, 1.0 - p


@dataclass(frozen=True)
class OUE(UnaryEncoding):
    """Optimized unary encoding: the value's bit is 1 with probability 1/2, every other bit with 1/(e^eps+1)."""

    name: ClassVar[str] = "oue"

    def _probabilities(self):
        return 0.5, 1.0 / (math.exp(self.epsilon) + 1)


@dataclass(frozen=True)
class SHE(LDPProtocol):
    """Histogram encoding with summation: the one-hot vector plus Laplace(2/eps) noise per coordinate."""

    name: ClassVar[str] = "she"

    def _draw(self, v: int, n: int, rng: np.random.Generator) -> np.ndarray:
        # Snapped to a power-of-two grid (float-safe: the double carries the bin only).
        loc = np.zeros(self.k)
        loc[v] = 1.0
        return laplace_release(rng, loc, 2.0 / self.epsilon, (n, self.k))


def the_threshold(epsilon: float) -> float:
    """THE's threshold in (1/2, 1) minimising the estimator's variance (Wang et al. 2017, Section 4.3)."""
    theta = np.linspace(0.5, 1.0, 2001)[1:-1]
    p = 1 - 0.5 * np.exp(epsilon * (theta - 1) / 2)
    q = 0.5 * np.exp(-epsilon * theta / 2)
    return float(theta[np.argmin(q * (1 - q) / (p - q) ** 2)])


@dataclass(frozen=True)
class THE(UnaryEncoding):
    """Histogram encoding with thresholding: the coordinates of SHE's noisy vector above theta, as bits.

    Each bit is 1 with probability ``p = 1 - e^(eps (theta - 1)/2) / 2`` for the value's coordinate
    and ``q = e^(-eps theta/2) / 2`` for the others, drawn exactly; the true epsilon is
    ``ln(p/q) + ln((1-q)/(1-p))``, below the claimed eps (thresholding is post-processing).
    """

    theta: float | None = None
    name: ClassVar[str] = "the"

    def __post_init__(self) -> None:
        super().__post_init__()
        theta = the_threshold(self.epsilon) if self.theta is None else check_real(self.theta, "theta", low=0.0,
                                                                                   high=1.0)
        object.__setattr__(self, "theta", theta)

    def _probabilities(self):
        e = self.epsilon
        return 1 - 0.5 * math.exp(e * (self.theta - 1) / 2), 0.5 * math.exp(-e * self.theta / 2)

    def true_epsilon(self, delta: float = 0.0) -> float:
        p, q = self._probabilities()
        return math.log(p / q) + math.log((1 - q) / (1 - p))


@dataclass(frozen=True)
class LocalHashing(LDPProtocol):
    """Hash the value with a fresh universal hash into g buckets, report the bucket by GRR over g; release its support."""

    def _buckets(self) -> int:
        raise NotImplementedError

    def _keep(self, g: int) -> float:
        """GRR's probability of reporting the value's own bucket among ``g``."""
        return math.exp(self.epsilon) / (math.exp(self.epsilon) + g - 1)

    def _draw(self, v: int, n: int, rng: np.random.Generator) -> np.ndarray:
        g = self._buckets()
        a = rng.integers(1, _PRIME, size=(n, 1))
        b = rng.integers(0, _PRIME, size=(n, 1))
        hashed = ((a * np.arange(self.k) + b) % _PRIME) % g  # (n, k): every value's bucket under each hash
        own = hashed[:, v]
        report = np.where(rng.random(n) < self._keep(g), own, _others_per_row(own, g, rng))
        return (hashed == report[:, None]).astype(np.int64)


def _others_per_row(own: np.ndarray, g: int, rng: np.random.Generator) -> np.ndarray:
    out = rng.integers(0, g - 1, size=len(own))
    return out + (out >= own)


@dataclass(frozen=True)
class BLH(LocalHashing):
    """Binary local hashing: a hash into 2 buckets, the bucket by randomized response (released as its support)."""

    name: ClassVar[str] = "blh"

    def _buckets(self) -> int:
        return 2


@dataclass(frozen=True)
class OLH(LocalHashing):
    """Optimized local hashing: a hash into round(e^eps) + 1 buckets, the bucket by GRR (released as its support)."""

    name: ClassVar[str] = "olh"

    def _buckets(self) -> int:
        return max(2, int(round(math.exp(self.epsilon))) + 1)


@dataclass(frozen=True)
class HadamardResponse(LDPProtocol):
    """Hadamard response: an index j of a K x K Hadamard matrix (K > k a power of 2), from the value's row's +1
    columns with probability e^eps/(e^eps+1), else from its -1 columns."""

    name: ClassVar[str] = "hr"
    output_kind: ClassVar[str] = "discrete"

    @property
    def order(self) -> int:
        return 1 << int(math.ceil(math.log2(self.k + 1)))

    def _width(self, prepared):
        return 1

    def _draw(self, v: int, n: int, rng: np.random.Generator) -> np.ndarray:
        K, row = self.order, v + 1  # row 0 is all ones: values use rows 1..k
        j = rng.integers(0, K, size=n)
        plus = np.array([bin(row & c).count("1") % 2 == 0 for c in range(K)])  # H[row, c] = +1
        cols_plus, cols_minus = np.flatnonzero(plus), np.flatnonzero(~plus)
        take_plus = rng.random(n) < math.exp(self.epsilon) / (math.exp(self.epsilon) + 1)
        j = np.where(take_plus, cols_plus[j % len(cols_plus)], cols_minus[j % len(cols_minus)])
        return j


#: The protocols by name, in the order of LDP-Auditor's table (Arcolezi and Gambs 2024).
LDP_PROTOCOLS = (GRR, SubsetSelection, SUE, OUE, THE, SHE, BLH, OLH, HadamardResponse)
