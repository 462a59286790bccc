"""Mixed releases read cell by cell: the log ratio of the cell, plus a fitted log density ratio of its numbers.

A *cell* is the pattern of special values of a release (which queries were
"below", which "above", where the abort came): for the sparse-vector variants
with cutoff 1 it is the position of the first above answer.  The numbers a
cell carries (the noisy value of that answer; the values of a noisy top-k)
have a density that depends on the cell, so the log likelihood ratio of a
release is

    log P_D(cell) / P_D'(cell) + log f_D(numbers | cell) / f_D'(numbers | cell),

the first part from counts, the second fitted per cell and per coordinate
that holds a number there: quantile bins whose number grows as the cube root
of the cell's count (the rate that balances a histogram's bias and variance,
Freedman and Diaconis 1981), tail bins that halve towards both ends, then the
weighted monotone (isotonic) fit when it explains the bins' log ratios within
their noise (Laplace and Gaussian noise give monotone ratios; a fit that
pools adjacent bins steadies the thin ones), and linear interpolation between
the bins' centres so that the score keeps ordering releases inside a bin.
Cells with too few numbers keep their count ratio alone.

Unlike :class:`~.mixed.MixedScore`, the numbers' ratio is fitted per cell
(the same value leaks differently at different positions), and unlike
:class:`~.mixed.PatternCellsScore` it keeps each number's position inside
its cell instead of coarsening it to one of a few bins.
"""

from __future__ import annotations

import numpy as np

from ._features import (KeyIndex, bin_index, coded_columns, columns, dependence_blocks, log_ratio, monotone, row_keys,
                        symbol_codes, tail_edges)

__all__ = ["CellValuesScore"]


def _fit_numbers(v0: np.ndarray, v1: np.ndarray, *, per_cube_root: float, max_bins: int, tail_count: int,
                 z: float):
    """(centres, log ratio at each centre) of one cell's numbers in one coordinate, or None when too few.

    ``per_cube_root`` bins per cube root of the pooled count (at most ``max_bins``), tail bins of at
    least ``tail_count`` numbers, the monotone fit when its residual is within ``z`` standard deviations
    of a chi-square.
    """
    pooled = np.concatenate([v0, v1])
    n_bins = int(np.clip(round(per_cube_root * len(pooled) ** (1.0 / 3.0)), 2, max_bins))
    edges = tail_edges(pooled, n_bins, min_count=tail_count)
    if len(edges) == 0:
        return None
    k0 = np.bincount(bin_index(edges, v0), minlength=len(edges) + 1)
    k1 = np.bincount(bin_index(edges, v1), minlength=len(edges) + 1)
    lr = log_ratio(k0, len(v0), k1, len(v1))
    weights = 1.0 / (1.0 / (k0 + 0.5) + 1.0 / (k1 + 0.5))
    fit = monotone(lr, weights)
    df = max(len(lr) - 2, 1)
    if np.sum(weights * (lr - fit) ** 2) <= df + z * np.sqrt(2.0 * df):
        lr = fit
    # Each bin's centre: the median of its pooled numbers (the outer bins' are finite too).
    order = np.sort(pooled)
    bounds = np.searchsorted(order, edges, side="left")
    starts, stops = np.r_[0, bounds], np.r_[bounds, len(order)]
    keep = stops > starts
    centres = order[((starts + stops - 1) // 2)[keep]]
    lr = lr[keep]
    centres, first = np.unique(centres, return_index=True)  # ties in heavy atoms: one centre each
    return centres, lr[first]


def _by_cell(ids: np.ndarray, n_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows sorted by cell id, where each cell's rows start): cell ``c``'s rows are ``order[start[c]:start[c + 1]]``."""
    order = np.argsort(ids, kind="stable")
    return order, np.searchsorted(ids[order], np.arange(n_cells + 1))


class CellValuesScore:
    """Per cell (pattern of special values), its count log ratio plus per-coordinate fitted log density ratios.

    Parameters
    ----------
    per_cube_root : float
        Bins of a cell's numbers per cube root of their pooled count
        (200,000 numbers: 58 bins at 1.0).
    max_bins : int
        Most bins per cell and coordinate.
    min_numbers : int
        Fewest numbers per side for a cell's numbers to be fitted.
    tail_count : int
        Fewest numbers in a tail bin.
    z : float
        The monotone fit is kept when its weighted residual is below
        df + z sqrt(2 df) (the chi-square's noise); otherwise the raw bins.

    Examples
    --------
    A cell (which coordinate holds the number) whose number leaks only in the second cell:

    >>> rng = np.random.default_rng(0)
    >>> def draw(n, shift):
    ...     pos = rng.integers(0, 2, size=n)
    ...     x = np.full((n, 2), -1.0)
    ...     x[np.arange(n), pos] = rng.laplace(np.where(pos == 1, shift, 0.0), 1.0)
    ...     return x
    >>> s = CellValuesScore().fit(draw(40_000, 1.0), draw(40_000, 0.0))
    >>> lo, hi = s.score(np.array([[-1.0, -3.0], [-1.0, 3.0]]))
    >>> bool(hi > lo)
    True
    """

    name = "cell-values"

    def __init__(self, *, per_cube_root: float = 1.0, max_bins: int = 256, min_numbers: int = 200,
                 tail_count: int = 200, z: float = 3.0):
        self.per_cube_root = per_cube_root
        self.max_bins = max_bins
        self.min_numbers = min_numbers
        self.tail_count = tail_count
        self.z = z

    def fit(self, x0, x1):
        a, b, self.specials, radix, codes0, codes1 = coded_columns(x0, x1)
        groups = dependence_blocks(codes0, codes1, radix)
        if len(groups) == 0 and np.any(radix > 1):
            groups = [np.flatnonzero(radix > 1)]
        n0, n1 = a.shape[1], b.shape[1]
        self.blocks = []  # (coordinates, radix, KeyIndex, cell log ratio, {(cell id, coordinate): curve})
        for cols in groups:
            r = radix[cols]
            k0, k1 = row_keys(codes0[:, cols], r), row_keys(codes1[:, cols], r)
            index, c0, c1 = KeyIndex.counted(k0, k1, r)
            lr = log_ratio(c0, n0, c1, n1)
            # Each side's rows sorted by cell once: a cell's rows are one slice (thousands of cells cost one sort).
            (order0, bounds0), (order1, bounds1) = (_by_cell(index.lookup(k), len(index.keys)) for k in (k0, k1))
            curves = {}
            for cell in np.flatnonzero((c0 >= self.min_numbers) & (c1 >= self.min_numbers)):
                in0 = order0[bounds0[cell]:bounds0[cell + 1]]
                in1 = order1[bounds1[cell]:bounds1[cell + 1]]
                for j in cols[codes0[in0[0], cols] == 0]:  # the coordinates holding a number in this cell
                    curve = _fit_numbers(a[j][in0].astype(float), b[j][in1].astype(float),
                                         per_cube_root=self.per_cube_root, max_bins=self.max_bins,
                                         tail_count=self.tail_count, z=self.z)
                    if curve is not None:
                        curves[(int(cell), int(j))] = curve
            self.blocks.append((cols, r, index, lr, curves))
        # Coordinates without special values: one curve each, whatever the cell.
        self.plain = {}
        for j in np.flatnonzero(radix == 1):
            curve = _fit_numbers(a[j].astype(float), b[j].astype(float), per_cube_root=self.per_cube_root,
                                 max_bins=self.max_bins, tail_count=self.tail_count, z=self.z)
            if curve is not None:
                self.plain[int(j)] = curve
        return self

    def score(self, x):
        cols = columns(x, exact=True)
        out = np.zeros(cols.shape[1])
        for block, r, index, lr, curves in self.blocks:
            codes = symbol_codes(cols[block], [self.specials[j] for j in block], transposed=True)
            ids = index.lookup(row_keys(codes, r))
            out += np.where(ids >= 0, lr[np.maximum(ids, 0)], 0.0)
            if not curves:
                continue
            order, start = _by_cell(ids, len(index.keys))
            for (cell, j), (centres, values) in curves.items():
                rows = order[start[cell]:start[cell + 1]]
                out[rows] += np.interp(cols[j][rows].astype(float), centres, values)
        for j, (centres, values) in self.plain.items():
            out += np.interp(cols[j].astype(float), centres, values)
        return out
