"""Releases that mix special values with numbers: the pattern of specials, then the numbers.

Sparse-vector variants release, per query, a marker ("below", "aborted") or
a number (the noisy answer of an above query); numerical SVT releases 0,
a number or an abort marker.  The probability of such a row factorises as

    P(pattern of markers) * density(numbers | pattern),

so the log likelihood ratio is the pattern's log ratio (estimated from
counts, like the outcome sets of discrete releases) plus the numbers' log
ratio, estimated per coordinate in quantile bins among the rows where that
coordinate is a number.  For one number per row (SVT with cutoff 1) the
second part is exactly the conditional density ratio; with more numbers it
assumes them independent given the pattern.

Rows of numbers only reduce to naive Bayes with a significance filter;
rows of markers only reduce to the likelihood ratio over whole rows.

When the coordinates with markers fall into independent groups (two
mechanisms run side by side, the bits of a randomised response: see
:func:`~dpaudit.auditor.distinguishers._features.dependence_blocks`), the
pattern's probability is the product of the groups' and each group's log
ratio is estimated on its own: two parts of 56 patterns each cost 112
estimated ratios instead of 3,136, each seen ~28 times more often.
"""

from __future__ import annotations

import numpy as np

from ._features import (KeyIndex, bin_index, coded_columns, column_codes, columns, dependence_blocks, exact_keys, log_ratio, monotone,
                        quantile_edges, row_keys, significant, special_values, symbol_codes, tail_edges)
from .base import as_2d

__all__ = ["MixedScore", "PatternCellsScore"]

#: Most edges :meth:`MixedScore.count_at_least` compares a coordinate with one at a time; past them one sort of the
#: coordinate costs less (docs/decisions/scoring-cost.md).
FEW_EDGES = 12


def pattern_blocks(groups, codes0, codes1, radix, *, z):
    """Per group of coordinates, ``(coordinates, radix, KeyIndex, log ratio per pattern)`` from both sides' codes.

    With several groups, one whose patterns do not differ significantly
    (:func:`~._features.significant` at ``z``) is left out: an independent
    part that does not leak would only blur the others.
    """
    blocks = []
    for cols in groups:
        r = radix[cols]
        index, c0, c1 = KeyIndex.counted(row_keys(codes0[:, cols], r), row_keys(codes1[:, cols], r), r)
        m = len(index.keys)
        if len(groups) > 1 and not significant(c0, c1, z=z):
            continue
        lr = log_ratio(c0, len(codes0), c1, len(codes1)) if m > 1 else np.zeros(m)
        blocks.append((cols, r, index, lr))
    return blocks


def _column_reader(x) -> tuple:
    """(rows, col): ``col(j)`` is coordinate j of ``x`` as :func:`columns` (exact) gives it, copied when first read.

    A score reads only the coordinates its fit kept, so the others are never copied.
    """
    x2 = as_2d(np.asarray(x))
    cache: dict = {}

    def col(j):
        if j not in cache:
            cache[j] = columns(x2[:, j:j + 1], exact=True)[0]
        return cache[j]

    return x2.shape[0], col


class MixedScore:
    """Log ratio of the pattern of special values plus per-coordinate binned log ratios of the numbers.

    Parameters
    ----------
    max_bins : int
        Most quantile bins per coordinate for the numbers; fewer when a
        coordinate holds few numbers (about ``per_bin`` fitting releases per bin).
    per_bin : int
        Fitting releases wanted per bin, so that each bin's log ratio is estimated
        to a few hundredths.
    z : float
        A coordinate's numbers enter the score only when their binned counts
        differ between the sides by more than ``z`` standard deviations of a
        chi-square (noise coordinates would only blur the tails); with several
        independent groups of markers, the same filter keeps a group's patterns.
    factorise : bool
        Split the pattern into independent groups of coordinates when a test
        of independence on the fitting releases finds them (one group, the
        whole row, otherwise).

    Examples
    --------
    An SVT-like release: a marker (-1) or a number whose distribution leaks.

    >>> rng = np.random.default_rng(0)
    >>> def draw(shift, n):
    ...     v = rng.laplace(shift, 1.0, size=(n, 2))
    ...     v[rng.random((n, 2)) < 0.5] = -1000.0
    ...     return v
    >>> s = MixedScore().fit(draw(1.0, 20_000), draw(0.0, 20_000))
    >>> hi, lo = s.score(np.array([[3.0, -1000.0], [-3.0, -1000.0]]))
    >>> bool(hi > 0 > lo)
    True
    """

    name = "mixed"

    def __init__(self, *, max_bins: int = 32, per_bin: int = 2000, z: float = 3.0, tails: bool = True,
                 tail_count: int = 400, smooth: bool = True, factorise: bool = True):
        self.smooth = smooth
        self.factorise = factorise
        self.max_bins = max_bins
        self.per_bin = per_bin
        self.z = z
        self.tails = tails
        self.tail_count = tail_count

    def fit(self, x0, x1):
        # Each coordinate contiguous, integers in their own dtype (bits: one byte each, coded by a
        # table lookup); a coordinate's numbers are read as floats, so every value is its float64's.
        a, b, self.specials, self.radix, codes0, codes1 = coded_columns(x0, x1)
        # The pattern's probability, part by part when the coordinates with specials
        # fall into independent groups (see dependence_blocks); one group otherwise.
        groups = dependence_blocks(codes0, codes1, self.radix) if self.factorise else []
        if len(groups) <= 1:
            groups = [np.arange(len(a))]
        self.blocks = pattern_blocks(groups, codes0, codes1, self.radix, z=self.z)
        self.numeric = []  # (coordinate, inner edges, log ratio per bin)
        for j in range(len(a)):
            v0 = a[j][codes0[:, j] == 0].astype(float)
            v1 = b[j][codes1[:, j] == 0].astype(float)
            total = len(v0) + len(v1)
            if min(len(v0), len(v1)) < 100:
                continue
            n_bins = int(np.clip(total // self.per_bin, 2, self.max_bins))
            pooled = np.concatenate([v0, v1])
            edges = (tail_edges(pooled, n_bins, min_count=self.tail_count) if self.tails
                     else quantile_edges(pooled, n_bins))
            if len(edges) == 0:
                continue
            cb0 = np.bincount(bin_index(edges, v0), minlength=len(edges) + 1)
            cb1 = np.bincount(bin_index(edges, v1), minlength=len(edges) + 1)
            if significant(cb0, cb1, z=self.z):
                lr = log_ratio(cb0, len(v0), cb1, len(v1))
                if self.smooth:
                    # Pooling adjacent bins under a monotone fit (weights: inverse variances of the
                    # bins' log ratios) steadies the thin tail bins where leaks sit.
                    lr = monotone(lr, 1.0 / (1.0 / (cb0 + 0.5) + 1.0 / (cb1 + 0.5)))
                self.numeric.append((j, edges, lr))
        return self

    def count_at_least(self, x, thresholds) -> np.ndarray | None:
        """How many rows of ``x`` score >= each threshold, without scoring them: None unless the score is a step
        function of one coordinate (constant patterns, one numeric coordinate without special values).

        Then each threshold's rows are those whose bin scores at least it, runs of bins, each run's count a
        difference of two counts "coordinate >= edge": one comparison pass per edge a run starts or stops at,
        or, when the thresholds need more than :data:`FEW_EDGES` edges, one sort of the coordinate.  The counts
        equal those of :meth:`score`'s values (the bins' scores are summed in the same order).
        """
        plan = self._runs(thresholds)
        if plan is None:
            return None
        runs, needed = plan
        j, edges, _ = self.numeric[0]
        x2 = as_2d(np.asarray(x))
        if len(needed) > FEW_EDGES:
            v = columns(x2[:, j:j + 1], exact=True)[0]  # our own copy: sorted in place
            v.sort()
            numbers = len(v) if v.dtype.kind != "f" else int(np.searchsorted(v, np.inf, side="right"))  # not NaN
            at = dict(zip(needed, (numbers - np.searchsorted(v, edges[np.asarray(needed) - 1], side="left")).tolist()))
        else:
            # One edge: one pass over the coordinate in place costs less than its copy and a pass over that.
            col = x2[:, j] if len(needed) == 1 else columns(x2[:, j:j + 1], exact=True)[0]
            at = {b: int(np.count_nonzero(col >= edges[b - 1])) for b in needed}  # bin b: edges[b - 1] <= value
        at[0], at[len(edges) + 1] = len(x2), 0
        out = [sum(at[a] - at[c] for a, c in r) for r in runs]
        return np.array(out, dtype=np.int64).reshape(np.shape(thresholds))

    def _runs(self, thresholds) -> tuple | None:
        """(per threshold, the runs ``(first bin, bin after the last)`` of bins scoring at least it; the inner bin
        boundaries the runs start or stop at), or None unless the score is a step function of one coordinate.
        Kept per threshold set: a held-out audit asks for the same thresholds in every chunk."""
        if len(self.numeric) != 1 or len(self.specials[self.numeric[0][0]]):
            return None
        if any(len(lr) > 1 for _, _, _, lr in self.blocks):
            return None
        t = np.asarray(thresholds, dtype=float).ravel()
        cache = self.__dict__.setdefault("_run_cache", {})
        key = t.tobytes()
        if key not in cache:
            acc = np.zeros(1)
            for _, _, _, lr_b in self.blocks:
                acc += float(lr_b[0]) if len(lr_b) else 0.0
            scores = acc + self.numeric[0][2]  # bin b's score, as score() adds it up
            runs = []
            for s in t:
                edge = np.diff(np.r_[False, scores >= s, False].astype(np.int8))  # +1 where a run starts, -1 after
                runs.append(list(zip(np.flatnonzero(edge == 1).tolist(), np.flatnonzero(edge == -1).tolist())))
            needed = sorted({b for r in runs for a, c in r for b in (a, c)} - {0, len(scores)})
            cache[key] = (runs, needed)
        return cache[key]

    def _code(self, col: np.ndarray, j: int) -> np.ndarray:
        """One coordinate's code: 0 for a number, i + 1 for its i-th special value."""
        return column_codes(col, self.specials[j])

    def score(self, x):
        # Integers stay integers (bits: an eighth of the copy): every use below compares them with
        # float specials or edges, where an integer compares as its float64 copy.
        n, col = _column_reader(x)
        out = np.zeros(n)
        is_number = {}  # coordinate -> mask of rows where it holds a number (only where it has specials)
        numeric_at = {j for j, _, _ in self.numeric}
        for block, radix, index, lr in self.blocks:
            if len(lr) <= 1:
                # One pattern (numbers only, or one constant marker): no key to look up.
                out += float(lr[0]) if len(lr) else 0.0
                continue
            if exact_keys(radix):
                # One pass per coordinate: its code goes straight into the row's key
                # (the same exact float sum as :func:`row_keys`), no (n, k) code matrix.
                mult = np.cumprod(np.r_[1.0, radix[:-1].astype(float)])
                keys = np.zeros(n)
                for j, mj in zip(block, mult):
                    if len(self.specials[j]) == 0:
                        continue
                    code = self._code(col(j), j)
                    keys += code * mj
                    if j in numeric_at:
                        is_number[j] = code == 0
                keys = keys.astype(np.int64)
            else:
                codes = symbol_codes(np.stack([col(j) for j in block], axis=1), [self.specials[j] for j in block])
                keys = row_keys(codes, radix)
                for i, j in enumerate(block):
                    if j in numeric_at:
                        is_number[j] = codes[:, i] == 0
            ids = index.lookup(keys)
            out += np.where(ids >= 0, lr[np.maximum(ids, 0)], 0.0)
        for j, edges, lr in self.numeric:
            part = lr[bin_index(edges, col(j))]
            if j not in is_number and len(self.specials[j]):
                is_number[j] = self._code(col(j), j) == 0
            if j in is_number:
                part *= is_number[j]
            out += part
        return out


class PatternCellsScore:
    """Special values and numbers as one pattern: each number coarsened to a quantile bin of its coordinate.

    :class:`MixedScore` adds the numbers' log ratio to the pattern's, per
    coordinate, and drops a coordinate whose numbers do not differ overall.
    When the numbers' leak depends on *where* in the row they sit (Lyu et
    al.'s Algorithm 3 releases the first above answer's noisy value: the value
    leaks most when it is low and late in the row, while the same value early
    in the row leaks little), that sum misses it.  Here every number becomes a
    symbol (its coordinate's quantile bin, about ``per_cell`` fitting numbers
    per bin, at most ``max_bins``) and the log ratio of whole patterns is
    estimated from counts, part by part over independent groups of
    coordinates as in :class:`MixedScore`.  On SVT3's witness pair the best
    event over (position, one of 8 value bins) certifies 0.22 at 9 x 10^6
    held-out releases per side, where the position alone certifies 0.14
    (``experiments/dp_sniper/ceiling.py``'s exact probabilities).
    Coordinates without special values (numbers only) are left out.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> def draw(n, late_shift):
    ...     pos = rng.integers(0, 2, size=n)               # which coordinate holds the number
    ...     v = rng.laplace(np.where(pos == 1, late_shift, 0.0), 1.0)
    ...     x = np.full((n, 2), -1.0)
    ...     x[np.arange(n), pos] = v
    ...     return x
    >>> s = PatternCellsScore().fit(draw(40_000, 1.0), draw(40_000, 0.0))
    >>> lo, hi = s.score(np.array([[-1.0, -3.0], [-1.0, 3.0]]))
    >>> bool(hi > lo)
    True
    """

    name = "pattern-cells"

    def __init__(self, *, per_cell: int = 3000, max_bins: int = 16, z: float = 3.0):
        self.per_cell = per_cell
        self.max_bins = max_bins
        self.z = z

    def _codes(self, x: np.ndarray, codes: np.ndarray | None = None) -> np.ndarray:
        """Each coordinate's code: its special value's, or past them its number's bin (into ``codes``,
        the :func:`symbol_codes` of ``x`` when already computed)."""
        codes = symbol_codes(x, self.specials) if codes is None else codes
        for j, edges in self.edges.items():
            number = codes[:, j] == 0
            codes[number, j] = len(self.specials[j]) + 1 + bin_index(edges, x[number, j])
        return codes

    def fit(self, x0, x1):
        a, b = as_2d(np.asarray(x0, float)), as_2d(np.asarray(x1, float))
        self.specials = special_values(np.concatenate([a[:100_000], b[:100_000]]))
        codes0, codes1 = symbol_codes(a, self.specials), symbol_codes(b, self.specials)
        self.edges = {}
        radix = np.ones(a.shape[1], dtype=np.int64)
        for j, vals in enumerate(self.specials):
            if len(vals) == 0:
                continue  # numbers only: left out
            numbers = np.concatenate([a[codes0[:, j] == 0, j], b[codes1[:, j] == 0, j]])
            n_bins = int(np.clip(len(numbers) // self.per_cell, 1, self.max_bins))
            self.edges[j] = quantile_edges(numbers, n_bins)
            radix[j] = len(vals) + 2 + len(self.edges[j])
        codes0, codes1 = self._codes(a, codes0), self._codes(b, codes1)  # the bins added to the special codes
        groups = [g for g in dependence_blocks(codes0, codes1, radix) if len(g)]
        if not groups and np.any(radix > 1):
            groups = [np.flatnonzero(radix > 1)]
        self.blocks = pattern_blocks(groups, codes0, codes1, radix, z=self.z)  # none: no value repeats, score 0
        return self

    def score(self, x):
        x = as_2d(np.asarray(x, float))
        codes = self._codes(x)
        out = np.zeros(len(x))
        for cols, radix, index, lr in self.blocks:
            if len(lr) == 0:
                continue
            ids = index.lookup(row_keys(codes[:, cols], radix))
            out += np.where(ids >= 0, lr[np.maximum(ids, 0)], 0.0)
        return out
