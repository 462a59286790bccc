"""Bins of one coordinate's values: bin indices by comparisons, quantile edges, tail edges, few levels.

Every distinguisher that bins numbers reads its edges and indices here; the edges are quantiles of the
pooled fitting releases, and a bin index is ``searchsorted(edges, value, side="right")``.
"""

from __future__ import annotations

import numpy as np

#: Values per block of :func:`bin_index`: half a MiB of float64, which the comparisons of every edge read from cache.
BIN_BLOCK = 1 << 16


def bin_index(edges: np.ndarray, col: np.ndarray, *, narrow: bool = False) -> np.ndarray:
    """``searchsorted(edges, col, side="right")``, by comparisons when there are few edges.

    Up to 64 edges, one vectorised comparison per edge beats a binary search per value (branches and
    cache misses on unsorted values); the values are taken :data:`BIN_BLOCK` at a time, so every
    comparison of a block reads it from cache (``docs/decisions/scoring-cost.md``).

    ``narrow=True`` may return the indices as bytes (an index array for a lookup needs no wider type).

    >>> bin_index(np.array([0.0, 1.0]), np.array([-1.0, 0.0, 0.5, 1.0, 2.0])).tolist()
    [0, 1, 1, 2, 2]
    """
    if len(edges) > 64:
        return np.searchsorted(edges, col, side="right")
    col = np.asarray(col)
    # Bytes, not machine integers, while counting (at most 64 edges): less memory traffic per edge
    # (docs/decisions/distinguisher-costs.md), widened once at the end.
    idx = np.zeros(len(col), dtype=np.uint8)
    hit = np.empty(min(len(col), BIN_BLOCK), dtype=bool)
    for start in range(0, len(col), BIN_BLOCK):
        part, out = col[start:start + BIN_BLOCK], idx[start:start + BIN_BLOCK]
        h = hit[:len(part)]
        for e in edges:
            np.greater_equal(part, e, out=h)
            out += h.view(np.uint8)
    return idx if narrow else idx.astype(np.intp)


def few_levels(values: np.ndarray, most: int, *, probe: int = 4096) -> np.ndarray | None:
    """``np.unique(values)`` when it has at most ``most`` values, else None.

    The first ``probe`` values are looked at first: more than ``most`` distinct among them settles it
    without sorting all of them (a continuous coordinate of 10^6 releases: a sort saved per fit).

    >>> few_levels(np.array([2.0, 1.0, 2.0]), 2).tolist(), few_levels(np.arange(10.0), 5)
    ([1.0, 2.0], None)
    """
    values = np.asarray(values)
    if len(values) > probe and len(np.unique(values[:probe])) > most:
        return None
    levels = np.unique(values)
    return levels if len(levels) <= most else None


def quantiles(values: np.ndarray, q) -> np.ndarray:
    """``np.quantile(values, q)`` (its linear method) of all of ``values``, computed on a sorted copy.

    The quantiles of the sorted copy are those of the values (the same order statistics, the same
    interpolation); numpy's vectorised sort costs less than its partition at the dozens of quantiles
    a binning asks for (docs/decisions/scoring-cost.md).

    >>> quantiles(np.array([3.0, 1.0, 2.0, 4.0]), [0.0, 0.5, 1.0]).tolist()
    [1.0, 2.5, 4.0]
    """
    return np.quantile(np.sort(values, axis=None), q, overwrite_input=True)


def quantile_edges(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Inner edges of ``n_bins`` pooled quantile bins (bin i is ``[edge_{i-1}, edge_i)``)."""
    if n_bins <= 1 or len(values) == 0:
        return np.empty(0)
    return np.unique(quantiles(values, np.linspace(0, 1, n_bins + 1)[1:-1]))


def tail_edges(values: np.ndarray, n_bins: int, *, min_count: int = 400, factor: float = 2.0) -> np.ndarray:
    """Quantile edges plus edges that halve the bins geometrically into both tails.

    Leaks of the sparse-vector family sit in the last fraction of a percent
    of a coordinate's numbers; plain quantile bins lump that into a bin of
    1/n_bins of the mass.  Tail bins hold at least ``min_count`` values each.

    >>> v = np.arange(100_000.0)
    >>> e = tail_edges(v, 4, min_count=1000)
    >>> bool(len(e) > 3 and e[0] < 2000 and e[-1] > 98_000)
    True
    """
    values = np.asarray(values, float)
    n = len(values)
    if n == 0 or n_bins <= 1:
        return np.empty(0)
    inner = np.linspace(0, 1, n_bins + 1)[1:-1]
    first = 1.0 / n_bins
    ranks = []
    r = first / factor
    while r * n >= min_count:
        ranks.append(r)
        r /= factor
    ranks = np.asarray(ranks)
    levels = np.concatenate([ranks, inner, 1.0 - ranks])
    return np.unique(quantiles(values, np.sort(levels)))
