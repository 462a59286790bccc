"""Goodness-of-fit helpers for testing mechanisms against their defining distributions.

Used by dpaudit's own distribution tests; handy for checking a new mechanism too.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["chisquare_pvalue"]

def chisquare_pvalue(observed_values, support, probabilities) -> float:
    """Chi-square p-value of discrete samples against ``probabilities`` over ``support``.

    Values outside ``support`` go to a tail cell with the leftover probability;
    cells with expected count < 5 are merged into their neighbour.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> chisquare_pvalue(rng.integers(0, 2, 1000), [0, 1], [0.5, 0.5]) > 1e-3
    True
    >>> chisquare_pvalue(np.zeros(1000), [0, 1], [0.5, 0.5]) < 1e-3
    True
    """
    values = np.asarray(observed_values)
    support = list(support)
    probs = np.asarray(probabilities, dtype=float)
    n = values.shape[0]
    counts = np.array([np.count_nonzero(values == s) for s in support], dtype=float)
    tail_p = max(0.0, 1.0 - probs.sum())
    tail_count = n - counts.sum()
    counts = np.append(counts, tail_count)
    probs = np.append(probs, tail_p)
    # merge small cells left to right
    merged_c, merged_p, acc_c, acc_p = [], [], 0.0, 0.0
    for c, p in zip(counts, probs):
        acc_c += c
        acc_p += p
        if acc_p * n >= 5:
            merged_c.append(acc_c)
            merged_p.append(acc_p)
            acc_c = acc_p = 0.0
    if acc_p > 0 or acc_c > 0:
        if merged_c:
            merged_c[-1] += acc_c
            merged_p[-1] += acc_p
        else:
            merged_c.append(acc_c)
            merged_p.append(acc_p)
    merged_p = np.asarray(merged_p)
    merged_c = np.asarray(merged_c)
    if len(merged_c) < 2:
        return 1.0
    return float(stats.chisquare(merged_c, merged_p / merged_p.sum() * n).pvalue)
