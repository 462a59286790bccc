"""Goodness-of-fit helpers shared by the distribution tests.

Every distribution test draws from a fixed seed and rejects at ALPHA = 1e-3:
were the implementation exactly right, a fresh seed would fail with probability
1e-3 per assertion; with the fixed seed the outcome is deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

ALPHA = 1e-3


def chisquare_pvalue(observed_values, support, probabilities) -> float:
    """Chi-square p-value of discrete samples against ``probabilities`` over ``support``.

    Values outside ``support`` go to a tail cell with the leftover probability;
    cells with expected count < 5 are merged into their neighbour.
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


@pytest.fixture
def chisq():
    return chisquare_pvalue
