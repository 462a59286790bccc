"""Featurisation shared by the vector distinguishers: special values, row keys, bins, innovations.

Mechanisms of the sparse-vector family release rows that mix *special*
values (an abort marker, "below", a bottom symbol) with numbers; histograms,
prefix sums and RAPPOR release plain numbers or bits.  Everything here turns
such rows into small integer codes quickly (one comparison or one
``searchsorted`` per coordinate), so that scoring stays cheap next to drawing.

None of this can make an audit unsound: a distinguisher only proposes a
score, and the bound counts held-out releases whatever the score is.  A hash
collision or a crude bin only makes a score weaker.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ._bins import BIN_BLOCK, bin_index, few_levels, quantile_edges, quantiles, tail_edges  # noqa: F401
from .base import as_2d

__all__ = ["special_values", "symbol_codes", "position_codes", "row_keys", "KeyIndex", "quantile_edges", "log_ratio",
           "Innovations", "n_distinct_rows", "columns", "coded_columns", "tail_edges", "bin_index", "dependence_blocks"]

#: A value is *special* in a coordinate when this share of the pooled releases or more take it exactly.
SPECIAL_SHARE = 0.002
#: ... and at least this many of them.
SPECIAL_MIN_COUNT = 20
#: At most this many special values per coordinate (the most frequent ones).
MAX_SPECIALS = 64


def special_values(pooled: np.ndarray, *, share: float = SPECIAL_SHARE, min_count: int = SPECIAL_MIN_COUNT,
                   max_specials: int = MAX_SPECIALS, transposed: bool = False) -> list[np.ndarray]:
    """Per coordinate, the sorted values that repeat often (markers, or every level of a discrete coordinate).

    ``transposed``: ``pooled`` is already the (k, n) :func:`columns` of the releases; integer columns
    (``exact=True``) are then counted by ``bincount`` instead of sorted (the same values, as floats;
    a count is cheaper than a sort: docs/decisions/distinguisher-costs.md).

    Examples
    --------
    >>> x = np.array([[-1.0, 0.3], [-1.0, 0.7], [2.5, -1.0]] * 20)
    >>> [v.tolist() for v in special_values(x, min_count=10)]
    [[-1.0, 2.5], [-1.0, 0.3, 0.7]]
    """
    cols = np.asarray(pooled) if transposed else as_2d(np.asarray(pooled, float)).T
    need = max(min_count, int(np.ceil(share * cols.shape[1])))
    out = []
    for col in cols:
        vals, cnt = _value_counts(col)
        keep = cnt >= need
        vals, cnt = vals[keep], cnt[keep]
        if len(vals) > max_specials:
            vals = np.sort(vals[np.argsort(-cnt, kind="stable")[:max_specials]])
        out.append(vals.astype(float))
    return out


def _value_counts(col: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of one coordinate and how often each occurs (a bincount for narrow integers)."""
    if len(col) and (col.dtype.kind == "i" or (col.dtype.kind == "u" and col.dtype.itemsize <= 4)):
        lo, hi = int(col.min()), int(col.max())
        if hi - lo <= 4 * len(col) + 4096:
            idx = col.astype(np.intp)
            if lo:
                idx -= lo
            counts = np.bincount(idx, minlength=hi - lo + 1)
            at = np.flatnonzero(counts)
            return at + lo, counts[at]
    s = np.sort(col)
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    return s[starts], np.diff(np.r_[starts, len(s)])


def distinct_values(col: np.ndarray) -> np.ndarray:
    """``np.unique(col)`` as floats; integer columns by :func:`_value_counts`' bincount (the same values)."""
    if col.dtype.kind in "iu":
        return _value_counts(col)[0].astype(float)
    return np.unique(col)


def symbol_codes(x: np.ndarray, specials: list[np.ndarray], *, transposed: bool = False) -> np.ndarray:
    """(n, k) int codes: 0 for an ordinary number, i + 1 for the i-th special value of that coordinate.

    A few specials are found by direct comparisons (a few ns per value), more
    by one ``searchsorted`` per coordinate.  ``transposed``: ``x`` is already
    the (k, n) :func:`columns` of the releases.
    """
    cols = x if transposed else columns(x)
    codes = np.zeros(cols.shape, dtype=np.int64)  # (k, n): each coordinate contiguous
    for j, vals in enumerate(specials):
        if len(vals):
            column_codes(cols[j], vals, out=codes[j])
    return codes.T


def column_codes(col: np.ndarray, vals: np.ndarray, *, out: np.ndarray | None = None) -> np.ndarray:
    """One coordinate's :func:`symbol_codes`: ``i + 1`` where ``col == vals[i]``, else 0 (into ``out``, zeros)."""
    if out is None:
        out = np.zeros(len(col), dtype=np.int64)
    if col.dtype.itemsize == 1 and col.dtype.kind in "iub":
        # One-byte values (bits, small counts): one gather from a 256-entry table, cheaper than a
        # comparison per special (docs/decisions/distinguisher-costs.md).
        table = np.zeros(256, dtype=out.dtype)
        low, high = (-128, 127) if col.dtype.kind == "i" else (0, 255)
        for i, v in enumerate(np.asarray(vals).tolist()):
            if v == v and low <= v <= high and v == int(v):  # a NaN or a fraction matches no byte
                table[int(v) & 0xFF] = i + 1
        np.take(table, col.view(np.uint8), out=out, mode="clip")  # "clip": no bounds check (a byte is in range)
        return out
    if len(vals) <= 4:
        for i, v in enumerate(vals):
            np.copyto(out, i + 1, where=col == v)  # specials are distinct: at most one matches
        return out
    out[:] = position_codes(vals, col)
    return out


#: Largest span of integer keys looked up through a dense table (8 bytes per entry: 8 MB).
DENSE_SPAN = 1 << 20


def position_codes(vals: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``i + 1`` where ``x == vals[i]``, else 0, for sorted distinct ``vals``.

    Integer ``vals`` within ``DENSE_SPAN`` of each other (counts, discrete
    noise, row keys) are looked up in a dense table (when the span is also
    small next to ``len(x)``, so that building the table costs little): a few vectorised passes,
    cheaper than a binary search per value.  Anything else uses
    ``searchsorted``.  Both give the same codes, NaN and infinities included.

    >>> position_codes(np.array([-2.0, 0.0, 3.0]), np.array([3.0, 0.5, -2.0, 7.0, np.nan, -np.inf])).tolist()
    [3, 0, 1, 0, 0, 0]
    """
    vals = np.asarray(vals)
    if len(vals) == 0:
        return np.zeros(len(x), dtype=np.int64)
    lo, hi = vals[0], vals[-1]
    dense = (vals.dtype.kind in "iu" or bool(np.all(vals == np.round(vals)))) and np.isfinite(lo) and \
        np.isfinite(hi) and float(hi) - float(lo) < min(DENSE_SPAN, 4 * len(x) + 4096)
    if not dense:
        pos = np.minimum(np.searchsorted(vals, x), len(vals) - 1)
        return np.where(vals[pos] == x, pos + 1, 0)
    span = int(hi - lo)
    table = np.zeros(span + 2, dtype=np.int64)  # the last entry answers every value outside [lo, hi]
    table[(vals - lo).astype(np.int64)] = np.arange(1, len(vals) + 1)
    if x.dtype.kind == "i":
        t = x.astype(np.int64) - np.int64(lo)
        return table[np.where((t >= 0) & (t <= span), t, span + 1)]
    with np.errstate(invalid="ignore"):
        t = x - float(lo)
        ti = np.clip(t, -1.0, span + 1.0)
        ti = np.where(np.isnan(ti), -1.0, ti).astype(np.int64)
    ti[ti < 0] = span + 1
    out = table[ti]
    out[t != ti] = 0  # fractions, values outside the table and NaN
    return out


def columns(x: np.ndarray, *, exact: bool = False) -> np.ndarray:
    """(k, n) float copy with each coordinate contiguous: one pass, then every column read is fast.

    ``exact=True`` keeps integers (and bools, as bytes) in their own dtype, for callers that only
    compare values with float edges, where an integer compares as its float64 copy: releases of bits
    then copy an eighth of the bytes (density-ratio-sum's scores on 100,000 rows of 200 bits: 0.12 s
    -> 0.05 s).  Inside :func:`shared_columns` the copy of an array of up to :data:`SHARED_BYTES` is made
    once and read-only.
    """
    x = as_2d(np.asarray(x))
    exact = exact and (x.dtype == bool or np.issubdtype(x.dtype, np.integer))
    key = None
    if _SHARED and x.shape[1] > 1 and x.nbytes <= SHARED_BYTES:
        key = (x.__array_interface__["data"][0], x.shape, x.strides, x.dtype.str, exact)
        hit = _SHARED[-1].get(key)
        if hit is not None:
            return hit[1]
    if exact:
        out = (x.view(np.uint8) if x.dtype == bool else x).T.copy(order="C")
    else:
        out = x.T.astype(float, order="C")  # one strided pass, also from bytes (not a float copy, then its transpose)
    if key is not None:
        out.flags.writeable = False
        _SHARED[-1][key] = (x, out)  # x keeps its memory, so no other array takes its address while cached
    return out


#: The open :func:`shared_columns` caches, innermost last.
_SHARED: list[dict] = []
#: Largest array whose columns are kept for sharing: a pool of wide releases is not held twice.
SHARED_BYTES = 1 << 26


@contextmanager
def shared_columns():
    """Within the block, :func:`columns` of one and the same array (its memory, shape, strides and type) is
    copied once and shared, read-only: the calibration's candidates each read the pool's halves by column."""
    _SHARED.append({})
    try:
        yield
    finally:
        _SHARED.pop()


def coded_columns(x0: np.ndarray, x1: np.ndarray) -> tuple:
    """Both sides as exact columns, each coordinate's special values, their radices and symbol codes.

    Returns ``(a, b, specials, radix, codes0, codes1)``: the prologue every fit on mixed releases (a
    few exact values, the rest numbers) starts from; the specials are read on at most 100,000 rows a side.
    """
    a, b = columns(x0, exact=True), columns(x1, exact=True)
    specials = special_values(np.concatenate([a[:, :100_000], b[:, :100_000]], axis=1), transposed=True)
    radix = np.array([len(v) + 1 for v in specials], dtype=np.int64)
    return (a, b, specials, radix, symbol_codes(a, specials, transposed=True),
            symbol_codes(b, specials, transposed=True))

def _log2_keys(radix) -> float:
    """log2 of the number of possible keys (the product of the radices), without a product that overflows:
    17 bins in each of 256 coordinates is 10^315, beyond float64, and numpy warned of the overflow."""
    return float(np.sum(np.log2(np.maximum(np.asarray(radix, dtype=float), 1.0))))


def exact_keys(radix) -> bool:
    """Whether every mixed-radix key of ``radix`` is exact in float64 (a product below 2^52)."""
    return _log2_keys(radix) < 52.0


def row_keys(codes: np.ndarray, radix: np.ndarray) -> np.ndarray:
    """One int64 key per row of small codes: exact mixed radix when it fits, else a 64-bit hash.

    A hash collision merges two patterns in a distinguisher's estimate; it can
    weaken the score but never the validity of the bound (counts are held out).
    """
    codes = as_2d(codes)
    radix = np.asarray(radix, dtype=np.int64)
    if codes.shape[1] == 1:  # one column: its codes are the keys (the product's value, without its passes)
        return codes[:, 0].astype(np.int64)
    if exact_keys(radix):
        # Exact in float64, and a BLAS product is much faster than numpy's integer matmul.
        mult = np.cumprod(np.r_[1.0, radix[:-1].astype(float)])
        return (codes.astype(float) @ mult).astype(np.int64)
    mult = np.random.default_rng(0x5EED).integers(1, 2 ** 63 - 1, size=codes.shape[1], dtype=np.int64) | 1
    keys = np.zeros(len(codes), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(codes.shape[1]):
            keys += codes[:, j].astype(np.uint64) * np.uint64(mult[j])
    return keys.view(np.int64)


#: Most possible keys (product of radices) that :meth:`KeyIndex.counted` counts in a dense table.
DENSE_KEYS = 1 << 16


class KeyIndex:
    """Sorted distinct keys and a vectorised lookup (-1 for keys never seen)."""

    def __init__(self, keys: np.ndarray):
        self.keys = np.unique(keys)

    @classmethod
    def counted(cls, k0: np.ndarray, k1: np.ndarray, radix: np.ndarray) -> tuple["KeyIndex", np.ndarray, np.ndarray]:
        """The index of both sides' :func:`row_keys` and each side's count per indexed key.

        When the radices allow at most ``DENSE_KEYS`` keys, the keys are counted straight into a
        table and those seen are kept: the same sorted keys and counts, without a hash of the keys
        and two look-ups (docs/decisions/distinguisher-costs.md).
        """
        span = int(np.prod(np.asarray(radix, dtype=np.int64))) if _log2_keys(radix) < 62.0 else None  # exact
        if span is not None and span <= DENSE_KEYS:
            full0 = np.bincount(k0, minlength=span)
            full1 = np.bincount(k1, minlength=len(full0))
            index = cls.__new__(cls)
            index.keys = np.flatnonzero(full0 + full1)
            return index, full0[index.keys], full1[index.keys]
        index = cls(np.concatenate([k0, k1]))
        m = len(index.keys)
        return index, np.bincount(index.lookup(k0), minlength=m), np.bincount(index.lookup(k1), minlength=m)

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        if len(self.keys) == 0:
            return np.full(len(keys), -1, dtype=np.int64)
        return position_codes(self.keys, np.asarray(keys)) - 1


def isotonic(values: np.ndarray, weights: np.ndarray, *, increasing: bool = True) -> np.ndarray:
    """Weighted least-squares monotone fit (pool adjacent violators), for a few dozen bins.

    >>> isotonic(np.array([1.0, 3.0, 2.0, 4.0]), np.ones(4)).tolist()
    [1.0, 2.5, 2.5, 4.0]
    """
    v = np.asarray(values, float)
    if not increasing:
        return -isotonic(-v, weights)
    means, ws, sizes = [], [], []
    for y, w in zip(v, np.asarray(weights, float)):
        means.append(y)
        ws.append(w)
        sizes.append(1)
        while len(means) > 1 and means[-2] > means[-1]:
            w2 = ws[-2] + ws[-1]
            m2 = (means[-2] * ws[-2] + means[-1] * ws[-1]) / w2 if w2 > 0 else 0.5 * (means[-2] + means[-1])
            means[-2:], ws[-2:], sizes[-2:] = [m2], [w2], [sizes[-2] + sizes[-1]]
    return np.repeat(means, sizes)


def monotone(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The better (weighted squared error) of the increasing and the decreasing isotonic fits."""
    up, down = isotonic(values, weights), isotonic(values, weights, increasing=False)
    w = np.asarray(weights, float)
    return up if np.sum(w * (values - up) ** 2) <= np.sum(w * (values - down) ** 2) else down


def log_ratio(c0: np.ndarray, n0: float, c1: np.ndarray, n1: float, *, pseudo: float = 0.5) -> np.ndarray:
    """Smoothed log(P0 / P1) per cell from counts (cells seen on one side only stay finite)."""
    m = len(c0)
    return (np.log((c0 + pseudo) / (n0 + pseudo * m)) - np.log((c1 + pseudo) / (n1 + pseudo * m)))


def significant(c0: np.ndarray, c1: np.ndarray, *, z: float = 3.0) -> bool:
    """Whether two count vectors differ beyond noise: a chi-square above df + z sqrt(2 df)."""
    n0, n1 = c0.sum(), c1.sum()
    if n0 == 0 or n1 == 0 or len(c0) < 2:
        return False
    tot = c0 + c1
    keep = tot > 0
    e0 = tot[keep] * n0 / (n0 + n1)
    e1 = tot[keep] * n1 / (n0 + n1)
    chi2 = float(np.sum((c0[keep] - e0) ** 2 / e0 + (c1[keep] - e1) ** 2 / e1))
    df = max(int(keep.sum()) - 1, 1)
    return chi2 > df + z * np.sqrt(2.0 * df)


def dependence_blocks(codes0: np.ndarray, codes1: np.ndarray, radix: np.ndarray, *, alpha: float = 1e-6,
                      probe: int = 50_000, max_levels: int = 1500) -> list[np.ndarray]:
    """Groups of coordinates whose codes depend on one another, on either side (one group per component).

    Two coordinates are joined when a G-test of independence of their codes
    rejects at level ``alpha`` on the first ``probe`` rows of D's releases or
    of D''s (each side on its own: a mixture of two independent laws is not
    independent when both coordinates leak); the groups are the connected
    components.  Coordinates without special values (``radix`` 1) are left
    out.  Releases made of independent parts (two mechanisms side by side,
    the bits of a randomised response) split into those parts, so that the
    probability of a row's pattern is estimated part by part instead of over
    the product of every part's patterns.  With more than ``max_levels``
    codes in all, one group of every coordinate with specials (no test).

    A wrong split only weakens a score built on it; it never affects a bound.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, size=(5000, 3)); a[:, 1] = a[:, 0]  # 0 and 1 equal, 2 independent
    >>> [g.tolist() for g in dependence_blocks(a, a, np.array([2, 2, 2]))]
    [[0, 1], [2]]
    """
    from scipy.special import chdtri

    radix = np.asarray(radix, dtype=np.int64)
    with_specials = np.flatnonzero(radix > 1)
    if len(with_specials) == 0:
        return []
    if int(radix[with_specials].sum()) > max_levels or len(with_specials) == 1:
        return [with_specials]
    parent = {int(j): int(j) for j in with_specials}

    def find(j):
        while parent[j] != j:
            parent[j] = parent[parent[j]]
            j = parent[j]
        return j

    for codes in (codes0, codes1):
        rows = np.ascontiguousarray(as_2d(np.asarray(codes))[:probe][:, with_specials], dtype=np.int64)
        n, k = rows.shape
        if n < 2:
            continue
        # Each coordinate's codes renumbered over the levels these rows hold: a level no row takes
        # is an empty row of every table, which changes no G statistic and no degree of freedom,
        # and a coordinate coded 0..3 that only shows two of them (the bits of a unary encoding
        # beside binned numbers) then fits the one-product path (docs/decisions/distinguisher-costs.md).
        r_max = int(radix[with_specials].max())
        present = np.bincount((rows + np.arange(k) * r_max).ravel(), minlength=k * r_max).reshape(k, r_max) > 0
        lo, held = present.argmax(axis=1), present.sum(axis=1)
        if np.array_equal(present, (np.arange(r_max) >= lo[:, None]) & (np.arange(r_max) < (lo + held)[:, None])):
            rows = rows - lo  # each coordinate's levels are a run lo, lo + 1, ...: the same renumbering, one pass
        else:
            rows = (np.cumsum(present, axis=1) - 1)[np.arange(k), rows]
        r_max = int(held.max())
        if k * r_max <= ONE_HOT_WIDTH:
            for a, b in _dependent_pairs(rows, r_max, alpha):
                parent[find(int(with_specials[a]))] = find(int(with_specials[b]))
            continue
        for a in range(k - 1):
            # Every later coordinate's contingency table with coordinate a from one bincount.
            ra = int(radix[with_specials[a]])
            keys = rows[:, a:a + 1] * r_max + rows[:, a + 1:] + np.arange(k - a - 1) * (ra * r_max)
            tables = np.bincount(keys.ravel(), minlength=(k - a - 1) * ra * r_max).reshape(k - a - 1, ra, r_max)
            t = tables.astype(float)
            rs, cs = t.sum(axis=2), t.sum(axis=1)
            expected = rs[:, :, None] * cs[:, None, :] / n
            with np.errstate(divide="ignore", invalid="ignore"):
                g = 2.0 * np.where(t > 0, t * np.log(t / expected), 0.0).sum(axis=(1, 2))
            df = (np.count_nonzero(rs, axis=1) - 1) * (np.count_nonzero(cs, axis=1) - 1)
            dependent = (df > 0) & (g > chdtri(np.maximum(df, 1), alpha))
            for i in np.flatnonzero(dependent):
                parent[find(int(with_specials[a]))] = find(int(with_specials[a + 1 + i]))
    groups: dict[int, list[int]] = {}
    for j in with_specials:
        groups.setdefault(find(int(j)), []).append(int(j))
    return [np.array(sorted(g), dtype=np.int64) for g in sorted(groups.values(), key=min)]


#: Widest one-hot coding (coordinates x levels) for which dependence_blocks tests all pairs in one product.
ONE_HOT_WIDTH = 512


def _dependent_pairs(rows: np.ndarray, r_max: int, alpha: float) -> list[tuple[int, int]]:
    """Pairs (a < b) of columns of ``rows`` (codes below ``r_max``) whose G-test of independence rejects at ``alpha``.

    Every pair's contingency table comes from one product (:func:`_pair_tables`);
    the tests are the ones :func:`dependence_blocks` runs pair by pair, at a
    twentieth of the time on 25 binary coordinates.
    """
    from scipy.special import chdtri

    n = len(rows)
    t = _pair_tables(rows, r_max)
    rs, cs = t.sum(axis=3), t.sum(axis=2)
    expected = rs[..., :, None] * cs[..., None, :] / n
    with np.errstate(divide="ignore", invalid="ignore"):
        g = 2.0 * np.where(t > 0, t * np.log(t / expected), 0.0).sum(axis=(2, 3))
    df = (np.count_nonzero(rs, axis=2) - 1) * (np.count_nonzero(cs, axis=2) - 1)
    dependent = (df > 0) & (g > chdtri(np.maximum(df, 1), alpha))
    a, b = np.nonzero(np.triu(dependent, 1))
    return list(zip(a.tolist(), b.tolist()))


def _pair_tables(rows: np.ndarray, r_max: int) -> np.ndarray:
    """(k, k, r_max, r_max) float counts: ``t[a, b, i, j]`` rows with column a at level i and column b at level j.

    One product of the rows' one-hot coding of levels 1 .. r_max - 1 with itself (exact: counts below
    2^24 in float32); the level-0 cells follow from the margins, exact integers too.  The product is
    ((r_max - 1) / r_max)^2 of the full one-hot's: a quarter for bits.
    """
    n, k = rows.shape
    # Column a * w + i - 1 holds "coordinate a is at level i": one comparison per level (cheaper than a
    # scattered write of every row's ones; docs/decisions/distinguisher-costs.md).
    w = r_max - 1
    onehot = np.empty((n, k, w), dtype=np.float32)
    for i in range(1, r_max):
        np.equal(rows, i, out=onehot[:, :, i - 1], casting="unsafe")
    onehot = onehot.reshape(n, k * w)
    inner = (onehot.T @ onehot).astype(float).reshape(k, w, k, w).transpose(0, 2, 1, 3)  # (a, b, i >= 1, j >= 1)
    margin = np.empty((k, r_max))
    margin[:, 1:] = np.diagonal(np.diagonal(inner, axis1=0, axis2=1), axis1=0, axis2=1)  # a at level i: t[a, a, i, i]
    margin[:, 0] = n - margin[:, 1:].sum(axis=1)
    t = np.empty((k, k, r_max, r_max))
    t[:, :, 1:, 1:] = inner
    t[:, :, 0, 1:] = margin[None, :, 1:] - inner.sum(axis=2)
    t[:, :, 1:, 0] = margin[:, None, 1:] - inner.sum(axis=3)
    t[:, :, 0, 0] = n - inner.sum(axis=(2, 3)) - t[:, :, 0, 1:].sum(axis=2) - t[:, :, 1:, 0].sum(axis=2)
    return t


class Innovations:
    """Sequential decorrelation: each coordinate minus its best linear prediction from the earlier ones.

    With the pooled within-side covariance ``S = L L^T`` (Cholesky), the
    innovations are ``L^{-1} (x - mean)``.  Prefix sums become the increments
    they were built from, so a leak spread over every increment shows again
    coordinate by coordinate; independent coordinates are only rescaled.

    >>> rng = np.random.default_rng(0)
    >>> x = np.cumsum(rng.laplace(size=(4000, 3)), axis=1)
    >>> z = Innovations().fit(x, x).transform(x)
    >>> bool(np.abs(np.corrcoef(z.T) - np.eye(3)).max() < 0.1)
    True
    """

    def fit(self, a: np.ndarray, b: np.ndarray) -> "Innovations":
        a, b = as_2d(np.asarray(a, float)), as_2d(np.asarray(b, float))
        cov = 0.5 * (np.atleast_2d(np.cov(a, rowvar=False)) + np.atleast_2d(np.cov(b, rowvar=False)))
        k = cov.shape[0]
        cov = cov + np.eye(k) * 1e-9 * max(float(np.trace(cov)) / k, 1e-300)
        self.center = 0.5 * (a.mean(axis=0) + b.mean(axis=0))
        self.inverse = np.linalg.inv(np.linalg.cholesky(cov)).T  # z = (x - c) @ inv(L).T
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        return (as_2d(np.asarray(x, float)) - self.center) @ self.inverse


def max_abs_correlation(x: np.ndarray) -> float:
    """Largest off-diagonal |correlation| between coordinates (0 for constant or single columns)."""
    rows = as_2d(np.asarray(x, float))
    if rows.shape[1] < 2 or len(rows) < 3:
        return 0.0
    sd = rows.std(axis=0)
    rows = rows[:, sd > 0]
    if rows.shape[1] < 2:
        return 0.0
    c = np.corrcoef(rows, rowvar=False)
    np.fill_diagonal(c, 0.0)
    return float(np.nanmax(np.abs(c)))


def n_distinct_rows(rows: np.ndarray) -> int:
    """Distinct rows, counted through one random projection per row (exact for one column).

    Two different rows collide only if their projections round to the same
    float; this count only decides how releases are treated, never a bound.
    """
    rows = as_2d(np.asarray(rows))
    if rows.shape[1] == 1:
        s = np.sort(rows[:, 0])
    else:
        w = np.random.default_rng(12345).normal(size=rows.shape[1])
        s = np.sort(rows.astype(float, copy=False) @ w)
    return int(len(s) > 0) + int(np.count_nonzero(s[1:] != s[:-1]))
