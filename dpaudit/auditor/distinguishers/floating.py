"""Floating-point releases: distinguishers that read the bits of each double, not its value.

A float sampler such as ``loc + scale * log(u)`` (numpy's ``laplace``) rounds
its result to a double, and the lattice the result can land on depends on
``loc``: at ``loc = 1`` about 13% of Laplace(1) releases are odd multiples of
``2**-53``, which no release at ``loc = 2`` is (Mironov 2012).  Values need
not repeat for this to show: the *representation* of a single release tells
the datasets apart.  These distinguishers turn each coordinate of a release
into a small integer feature of its representation,

* ``float-lsb``: the exponent ``e`` of the lowest set bit (the release is an
  odd multiple of ``2**e``);
* ``float-binade-lsb``: that exponent together with the binade
  ``floor(log2 |x|)``, i.e. how many significant bits the release uses where it lies;
* ``float-mantissa``: the lowest 8 bits of the stored significand, with the
  binade (offsets of a lattice ``loc + k * step`` show there);

score each feature value by its estimated likelihood ratio
(:class:`~dpaudit.auditor.distinguishers.discrete.LikelihoodRatioScore`, one per
coordinate, summed over coordinates), and

* ``float-lattice``: lattice membership itself: the score is the
  lowest-set-bit exponent of the most telling coordinate, so a threshold ``t``
  is the event "the release is (is not) a multiple of ``2**t``", which pools
  every finer lattice (a snapping grid ``2**k`` included) into one outcome set.

Every one is post-processing of the release, so the bound it gives is as valid
as any other; :func:`float_choices` says which are worth trying.

Examples
--------
>>> lowest_set_bit_exponent(np.array([1.0, 0.75, 3.0, 2.0 ** -60]))
array([  0,  -2,   0, -60])
>>> rng = np.random.default_rng(0)
>>> x0, x1 = 1.0 + rng.laplace(size=5000), 2.0 + rng.laplace(size=5000)
>>> s = LowestSetBitScore().fit(x0, x1)
>>> bool(s.score(1.0 + rng.laplace(size=2000)).mean() > s.score(2.0 + rng.laplace(size=2000)).mean())
True
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..._validation import check_int
from .base import as_2d
from .discrete import LikelihoodRatioScore

__all__ = [
    "lowest_set_bit_exponent",
    "binade",
    "low_mantissa_bits",
    "LowestSetBitScore",
    "BinadeLowestBitScore",
    "LowMantissaScore",
    "LatticeScore",
    "FLOAT_ATTACKS",
    "float_choices",
]

#: Feature codes of releases with no lowest set bit: +0.0, inf and NaN, and -0.0, which equals +0.0 as a value
#: but not as bits (a target releasing -0.0 on one dataset and +0.0 on the other is told apart by its sign bit).
ZERO_CODE = 4096
NONFINITE_CODE = 4097
NEG_ZERO_CODE = 4098

_LAYOUT = {  # dtype -> (unsigned view, stored significand bits, exponent bias)
    np.dtype(np.float64): (np.uint64, 52, 1023),
    np.dtype(np.float32): (np.uint32, 23, 127),
    np.dtype(np.float16): (np.uint16, 10, 15),
}


def _fields(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(significand with the hidden bit, exponent of its unit bit, special mask, stored bits) per element."""
    x = np.asarray(x)
    if x.dtype not in _LAYOUT:
        x = x.astype(np.float64)
    uint, nmant, bias = _LAYOUT[x.dtype]
    u = np.ascontiguousarray(x).view(uint).astype(np.uint64)
    exp_field = (u >> np.uint64(nmant)).astype(np.int64) & ((1 << (8 * x.itemsize - 1 - nmant)) - 1)
    stored = u & np.uint64((1 << nmant) - 1)
    normal = exp_field > 0
    sig = np.where(normal, stored | np.uint64(1 << nmant), stored)
    unit_exp = np.where(normal, exp_field, 1) - bias - nmant
    special = exp_field == (1 << (8 * x.itemsize - 1 - nmant)) - 1
    return sig, unit_exp, special, nmant


def _bit_exponent(power_of_two: np.ndarray) -> np.ndarray:
    """log2 of a uint64 power of two (exact: float64 holds every power of two below 2**64)."""
    return ((power_of_two.astype(np.float64).view(np.uint64) >> np.uint64(52)).astype(np.int64) - 1023)


def lowest_set_bit_exponent(x: np.ndarray) -> np.ndarray:
    """The exponent ``e`` with ``|x|`` an odd multiple of ``2**e``, element-wise (``ZERO_CODE`` for +0.0,
    ``NEG_ZERO_CODE`` for -0.0, ``NONFINITE_CODE`` for inf and NaN).  Integers and other dtypes are read as float64.

    >>> lowest_set_bit_exponent(np.array([0.5, 6.0, 0.0, -0.0], dtype=np.float32))
    array([  -1,    1, 4096, 4098])
    """
    fast = _fast64(x)
    if fast is not None:
        u, e, plain = fast
        return _patch(_lsb_normal(u, e), plain, x, _lowest_set_bit_general)
    return _lowest_set_bit_general(x)


def _lsb_normal(u: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Lowest-set-bit exponents of normal float64s from their bits and exponent fields."""
    low = ~u
    low += np.uint64(1)
    low &= u  # the lowest set bit of the word (in the exponent field when the stored significand is 0)
    # Its position: the exponent field of the (exact) float value of that power of two.
    pos = _top16(low.view(np.int64).astype(np.float64)) >> np.uint16(4)  # 1023 + position
    np.minimum(pos, np.uint16(1023 + 52), out=pos)  # stored == 0: the hidden bit
    out = e.astype(np.int64)
    out += pos
    out -= 1075 + 1023
    return out


def _top16(v: np.ndarray) -> np.ndarray:
    """The top 16 bits (sign and exponent field) of each float64, as uint16."""
    if np.little_endian:
        return np.ascontiguousarray(v).view(np.uint16)[..., 3::4]
    return np.ascontiguousarray(v).view(np.uint16)[..., 0::4]  # pragma: no cover - big-endian hosts


def _fast64(x: np.ndarray):
    """(bits, exponent field as uint16, mask of normal numbers) of a float64 array, else None (other dtypes)."""
    x = np.asarray(x)
    if x.dtype != np.float64:
        return None
    x = np.ascontiguousarray(x).reshape(-1)  # flat: strided 2-D views are several times slower
    u = x.view(np.uint64)
    e = _top16(x) & np.uint16(0x7FFF)
    e >>= np.uint16(4)
    plain = (e != 0) & (e != 0x7FF)
    return u, e, plain


def _patch(out: np.ndarray, plain: np.ndarray, x: np.ndarray, general) -> np.ndarray:
    """Zeros, subnormals, inf and NaN (rare) go the general way; the result takes the shape of ``x``."""
    if not plain.all():
        odd = ~plain
        out[odd] = general(np.asarray(x).reshape(-1)[odd])
    return out.reshape(np.shape(x))


def _lowest_set_bit_general(x: np.ndarray) -> np.ndarray:
    sig, unit_exp, special, _ = _fields(x)
    low = sig & (~sig + np.uint64(1))
    zero = sig == 0
    e = unit_exp + _bit_exponent(np.where(zero, np.uint64(1), low))
    e = np.where(zero, np.where(np.signbit(x), NEG_ZERO_CODE, ZERO_CODE), e)
    return np.where(special, NONFINITE_CODE, e)


def binade(x: np.ndarray) -> np.ndarray:
    """``floor(log2 |x|)`` element-wise, from the bits (``ZERO_CODE`` for 0, ``NONFINITE_CODE`` for inf, NaN).

    >>> binade(np.array([1.0, 0.75, 3.0, -5e-324]))
    array([    0,    -1,     1, -1074])
    """
    fast = _fast64(x)
    if fast is not None:
        _, e, plain = fast
        return _patch(e.astype(np.int64) - 1023, plain, x, _binade_general)
    return _binade_general(x)


def _binade_general(x: np.ndarray) -> np.ndarray:
    sig, unit_exp, special, _ = _fields(x)
    zero = sig == 0
    e = unit_exp + _bit_exponent(_top_bit(np.where(zero, np.uint64(1), sig)))
    e = np.where(zero, ZERO_CODE, e)
    return np.where(special, NONFINITE_CODE, e)


def _top_bit(v: np.ndarray) -> np.ndarray:
    """The highest set bit of each (non-zero) uint64, as a power of two."""
    f = v.astype(np.float64)  # rounding may carry into the next power: undo it below
    top = np.uint64(1) << ((f.view(np.uint64) >> np.uint64(52)).astype(np.uint64) - np.uint64(1023))
    return np.where(top > v, top >> np.uint64(1), top)


def low_mantissa_bits(x: np.ndarray, bits: int = 8) -> np.ndarray:
    """The lowest ``bits`` bits of the stored significand, as an integer (``NONFINITE_CODE`` for inf, NaN).

    >>> low_mantissa_bits(np.array([1.0, 1.0 + 2.0 ** -52, 1.0 + 3 * 2.0 ** -52]), 2)
    array([0, 1, 3])
    """
    fast = _fast64(x)
    if fast is not None and bits <= 52:
        u, _, plain = fast
        out = (u & np.uint64((1 << bits) - 1)).astype(np.int64)
        return _patch(out, plain, x, lambda v: _low_mantissa_bits_general(v, bits))
    return _low_mantissa_bits_general(x, bits)


def _low_mantissa_bits_general(x: np.ndarray, bits: int = 8) -> np.ndarray:
    sig, _, special, _ = _fields(x)
    out = (sig & np.uint64((1 << bits) - 1)).astype(np.int64)
    return np.where(special, NONFINITE_CODE, out)


def _binade_lsb(x: np.ndarray) -> np.ndarray:
    """One integer per element coding (binade, lowest set bit exponent): ``64 * binade + bits used``.

    A finite non-zero double uses 0..52 bits below its leading one; zeros and
    non-finite values get a binade just outside the finite range, so that the
    codes stay in one compact range.
    """
    fast = _fast64(x)
    if fast is not None:
        u, e, plain = fast
        code = e.astype(np.int64)
        code -= 1023
        code *= 65
        code -= _lsb_normal(u, e)  # 64 b + (b - lsb)
        return _patch(code, plain, x, _binade_lsb_general)
    return _binade_lsb_general(x)


def _binade_lsb_general(x: np.ndarray) -> np.ndarray:
    b, low = binade(x), lowest_set_bit_exponent(x)
    code = b * 64 + (b - low)
    zero = -1100 * 64 + (low == NEG_ZERO_CODE)  # the sign of a zero is the only thing its bits say
    return np.where(b == ZERO_CODE, zero, np.where(b == NONFINITE_CODE, 1100 * 64, code))


def _binade_low_bits(x: np.ndarray, bits: int) -> np.ndarray:
    """One integer per element coding (binade, lowest ``bits`` significand bits): ``2**bits binade + bits``."""
    fast = _fast64(x)
    if fast is not None:
        u, e, plain = fast
        code = e.astype(np.int64)
        code -= 1023
        code <<= bits
        code |= (u & np.uint64((1 << bits) - 1)).view(np.int64)
        return _patch(code, plain, x, lambda v: _binade_low_bits_general(v, bits))
    return _binade_low_bits_general(x, bits)


def _binade_low_bits_general(x: np.ndarray, bits: int) -> np.ndarray:
    b = binade(x)
    b = np.where(b == ZERO_CODE, -1100, np.where(b == NONFINITE_CODE, 1100, b))
    low = np.where(b == -1100, np.signbit(x), low_mantissa_bits(x, bits))  # a zero's low bits: its sign
    return b * (1 << bits) + np.where(b == 1100, 0, low)


class _PerCoordinateFeatureScore:
    """A discrete feature of each coordinate, scored by its estimated likelihood ratio, summed over coordinates.

    Each coordinate gets its own :class:`LikelihoodRatioScore`.  Feature values
    seen fewer than ``min_count`` times in the fitting releases of both sides
    together score 0: their ratio is mostly noise, and on vectors the noise of
    every quiet coordinate would otherwise blur the one that leaks.
    """

    name = "float-feature"
    feature: Callable[[np.ndarray], np.ndarray]

    def __init__(self, *, min_count: int = 4):
        self.min_count = min_count

    def _feature(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    def fit(self, x0, x1):
        f0, f1 = self._feature(as_2d(np.asarray(x0))), self._feature(as_2d(np.asarray(x1)))
        # One range of codes for every coordinate: the codes seen, with one more at each end for codes outside it.
        low = int(min(f0.min(initial=0), f1.min(initial=0))) - 1
        span = int(max(f0.max(initial=0), f1.max(initial=0))) - low + 2
        self.low = low
        self.scorers, seen_codes = [], []
        for j in range(f0.shape[1]):
            # Counted over every value of the range at once (the features are small integers), then scored
            # by LikelihoodRatioScore's estimate on the values seen.
            c0 = np.bincount(f0[:, j] - low, minlength=span)
            c1 = np.bincount(f1[:, j] - low, minlength=span)
            seen = np.flatnonzero(c0 + c1)
            s = LikelihoodRatioScore.from_counts(seen + low, c0[seen], c1[seen])
            s.log_ratio[(c0[seen] + c1[seen]) < self.min_count] = 0.0
            self.scorers.append(s)
            seen_codes.append(seen)
        # The same scores as s.score (0 for values never seen), laid out over the range: scoring is then one
        # subtraction, one clip (codes outside the range land on its 0 ends) and one gather per coordinate.
        # Tables over every possible code cost too much memory and time on wide releases
        # (docs/decisions/distinguisher-costs.md); when even the
        # range seen is too wide for all coordinates' tables (zeros beside finite codes), each coordinate
        # looks its codes up (LikelihoodRatioScore.score) instead.
        self.tables = None
        if span * f0.shape[1] <= _TABLE_CELLS:
            self.tables = []
            for s, seen in zip(self.scorers, seen_codes):
                table = np.zeros(span)
                table[seen] = s.log_ratio
                self.tables.append(table)
        return self

    def score(self, x):
        f = self._feature(as_2d(np.asarray(x)))
        if self.tables is None:
            out = np.zeros(len(f))
            for j, s in enumerate(self.scorers):
                out += s.score(f[:, j])
            return out
        f -= self.low
        np.clip(f, 0, len(self.tables[0]) - 1, out=f)
        out = self.tables[0][f[:, 0]]
        for j in range(1, f.shape[1]):
            out += self.tables[j][f[:, j]]
        return out


#: Most table entries (8 bytes each) a float feature score lays out over all its coordinates: 64 MB.
_TABLE_CELLS = 1 << 23


class LowestSetBitScore(_PerCoordinateFeatureScore):
    """Score each coordinate's lowest-set-bit exponent by its estimated likelihood ratio.

    >>> s = LowestSetBitScore().fit(np.full(50, 0.5), np.full(50, 0.25))
    >>> bool(s.score(np.array([1.5]))[0] > 0 > s.score(np.array([0.75]))[0])
    True
    """

    name = "float-lsb"

    def _feature(self, x):
        return lowest_set_bit_exponent(x)


class BinadeLowestBitScore(_PerCoordinateFeatureScore):
    """Score each coordinate's (binade, lowest-set-bit exponent) pair by its estimated likelihood ratio.

    >>> x0 = 1 + np.arange(1, 200) * 2.0 ** -10
    >>> s = BinadeLowestBitScore().fit(x0, x0 + 2.0 ** -40)
    >>> bool(s.score(x0[:5]).min() > 0)
    True
    """

    name = "float-binade-lsb"

    def _feature(self, x):
        return _binade_lsb(x)


class LowMantissaScore(_PerCoordinateFeatureScore):
    """Score each coordinate's (binade, lowest ``bits`` significand bits) by their estimated likelihood ratio.

    >>> rng = np.random.default_rng(0)
    >>> k = rng.integers(-1000, 1000, 4000) * 2.0 ** -12
    >>> s = LowMantissaScore().fit(k[:2000] + 0.3, k[2000:] + 0.7)
    >>> bool(s.score(k[:100] + 0.3).mean() > 0 > s.score(k[:100] + 0.7).mean())
    True
    """

    name = "float-mantissa"

    def __init__(self, *, bits: int = 8, min_count: int = 4):
        super().__init__(min_count=min_count)
        self.bits = check_int(bits, "bits", low=1, high=16)

    def _feature(self, x):
        # Keyed by binade: the same lattice offset shows as different bits in different binades.
        return _binade_low_bits(x, self.bits)


class LatticeScore:
    """Lattice membership: the lowest-set-bit exponent of the most telling coordinate.

    A threshold ``t`` on this score is the event "the release is a multiple of
    ``2**t``" (or, in the other orientation, "it is not"), the selection split
    chooses ``t`` and the orientation.  On vectors the coordinate is the one
    whose exponent distributions differ most on the fitting releases (largest
    Kolmogorov-Smirnov distance).  Zeros count as multiples of every lattice.

    >>> x0 = np.arange(1, 400) * 2.0 ** -10
    >>> s = LatticeScore().fit(x0, x0 + 2.0 ** -30)
    >>> bool(s.score(x0[:3]).min() > s.score(x0[:3] + 2.0 ** -30).max())
    True
    """

    name = "float-lattice"

    def fit(self, x0, x1):
        f0 = self._feature(as_2d(np.asarray(x0)))
        f1 = self._feature(as_2d(np.asarray(x1)))
        best, self.column = -1.0, 0
        for j in range(f0.shape[1]):
            # Distribution functions of the exponent (codes in [-2000, 2000]) by counting, then their distance.
            a = np.cumsum(np.bincount(f0[:, j] + 2000, minlength=4001)) / max(1, len(f0))
            b = np.cumsum(np.bincount(f1[:, j] + 2000, minlength=4001)) / max(1, len(f1))
            d = float(np.max(np.abs(a - b)))
            if d > best:
                best, self.column = d, j
        return self

    @staticmethod
    def _feature(x):
        e = lowest_set_bit_exponent(x)
        # Zero is on every lattice: rank it above all; non-finite values on none.
        special = e >= ZERO_CODE
        if special.any():
            e = np.where(e == NONFINITE_CODE, -2000, np.where(e >= ZERO_CODE, 2000, e))
        return e

    def score(self, x):
        return self._feature(as_2d(np.asarray(x))[:, self.column : self.column + 1])[:, 0].astype(float)


#: The float family: registered name -> (factory, one line).
FLOAT_ATTACKS: dict[str, tuple[Callable[[], object], str]] = {
    "float-lsb": (LowestSetBitScore,
                  "exponent of each coordinate's lowest set bit, outcome sets by estimated likelihood ratio"),
    "float-binade-lsb": (BinadeLowestBitScore,
                         "(binade, lowest set bit) of each coordinate: significant bits used, by likelihood ratio"),
    "float-mantissa": (LowMantissaScore,
                       "(binade, lowest 8 significand bits) of each coordinate (lattice offsets), by likelihood ratio"),
    "float-lattice": (LatticeScore,
                      "lattice membership: is the release a multiple of 2^t (t chosen on the selection split)"),
}


def float_choices(x: np.ndarray, *others, probe: int = 20_000, max_outcomes: int = 1000) -> tuple[str, ...]:
    """The float attacks worth trying on releases ``x``: all of :data:`FLOAT_ATTACKS`, or none.

    None when the releases are not floating point, when every probed value is
    an integer (the bits then say no more than the value), or when they take
    few distinct values (at most ``max_outcomes``, each seen about 20 times or
    more: the likelihood-ratio attack on the values themselves already uses
    everything a release carries) -- unless a probed release of ``x`` or of
    ``others`` (the other dataset's) holds -0.0: values compare it equal to
    +0.0, so only the bits can see its sign.

    >>> float_choices(np.arange(10)), float_choices(np.arange(10.0))
    ((), ())
    >>> float_choices(np.random.default_rng(0).laplace(size=100))
    ('float-lsb', 'float-binade-lsb', 'float-mantissa', 'float-lattice')
    >>> float_choices(np.zeros(100), np.full(100, -0.0))
    ('float-lsb', 'float-binade-lsb', 'float-mantissa', 'float-lattice')
    """
    x = np.asarray(x)
    if x.dtype.kind != "f" or x.size == 0:
        return ()
    if any(_has_negative_zero(np.asarray(y)[:probe]) for y in (x, *others)):
        return tuple(FLOAT_ATTACKS)
    rows = as_2d(x[:probe])
    finite = rows[np.isfinite(rows)]
    if finite.size == 0 or np.all(finite == np.rint(finite)):
        return ()
    if rows.shape[1] == 1:
        s = np.sort(rows[:, 0])
        n_distinct = int(np.count_nonzero(s[1:] != s[:-1])) + 1
    else:
        n_distinct = len(np.unique(rows, axis=0))
    if n_distinct <= max_outcomes and n_distinct * 20 <= len(rows):
        return ()
    return tuple(FLOAT_ATTACKS)


def _has_negative_zero(x: np.ndarray) -> bool:
    """Whether a float array holds -0.0 (one pass: the sign bit where the value is 0)."""
    return x.dtype.kind == "f" and bool(np.any(np.signbit(x) & (x == 0)))
