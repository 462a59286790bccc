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
"""

from __future__ import annotations

import numpy as np

from ._features import (KeyIndex, columns, log_ratio, quantile_edges, row_keys, significant, special_values,
                        symbol_codes)
from .base import as_2d

__all__ = ["MixedScore"]


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
        chi-square (noise coordinates would only blur the tails).

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

    def __init__(self, *, max_bins: int = 32, per_bin: int = 2000, z: float = 3.0):
        self.max_bins = max_bins
        self.per_bin = per_bin
        self.z = z

    def fit(self, x0, x1):
        a, b = as_2d(np.asarray(x0, float)), as_2d(np.asarray(x1, float))
        probe = np.concatenate([a[:100_000], b[:100_000]])
        self.specials = special_values(probe)
        self.radix = np.array([len(v) + 1 for v in self.specials], dtype=np.int64)
        codes0, codes1 = symbol_codes(a, self.specials), symbol_codes(b, self.specials)
        k0, k1 = row_keys(codes0, self.radix), row_keys(codes1, self.radix)
        self.index = KeyIndex(np.concatenate([k0, k1]))
        m = len(self.index.keys)
        c0 = np.bincount(self.index.lookup(k0), minlength=m)
        c1 = np.bincount(self.index.lookup(k1), minlength=m)
        self.pattern_log_ratio = log_ratio(c0, len(a), c1, len(b)) if m > 1 else np.zeros(m)
        self.numeric = []  # (coordinate, inner edges, log ratio per bin)
        for j in range(a.shape[1]):
            v0, v1 = a[codes0[:, j] == 0, j], b[codes1[:, j] == 0, j]
            total = len(v0) + len(v1)
            if min(len(v0), len(v1)) < 100:
                continue
            n_bins = int(np.clip(total // self.per_bin, 2, self.max_bins))
            edges = quantile_edges(np.concatenate([v0, v1]), n_bins)
            if len(edges) == 0:
                continue
            cb0 = np.bincount(np.searchsorted(edges, v0, side="right"), minlength=len(edges) + 1)
            cb1 = np.bincount(np.searchsorted(edges, v1, side="right"), minlength=len(edges) + 1)
            if significant(cb0, cb1, z=self.z):
                self.numeric.append((j, edges, log_ratio(cb0, len(v0), cb1, len(v1))))
        return self

    def score(self, x):
        cols = columns(x)
        codes = symbol_codes(cols.T, self.specials)
        ids = self.index.lookup(row_keys(codes, self.radix))
        out = np.where(ids >= 0, self.pattern_log_ratio[np.maximum(ids, 0)], 0.0) if len(ids) else np.zeros(0)
        for j, edges, lr in self.numeric:
            part = lr[np.searchsorted(edges, cols[j], side="right")]
            out += np.where(codes[:, j] == 0, part, 0.0)
        return out
