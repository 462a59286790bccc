"""Exact Clopper-Pearson bounds on a binomial proportion, vectorised.

One-sided bounds from beta quantiles (Clopper and Pearson 1934): for ``k``
successes in ``n`` trials, the lower bound at failure probability ``alpha``
is the ``alpha`` quantile of Beta(k, n - k + 1) (0 when k = 0) and the upper
bound the ``1 - alpha`` quantile of Beta(k + 1, n - k) (1 when k = n).
``scipy.special.betaincinv`` computes the quantile without importing
``scipy.stats``, whose import the command line would pay at every start
(docs/decisions/import-cost.md).
"""

from __future__ import annotations

import numpy as np

__all__ = ["cp_lower", "cp_upper", "clopper_pearson_interval"]


def _prepare(k, n, alpha):
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError("Clopper-Pearson needs 0 <= k <= n and n >= 1")
    if np.any(alpha <= 0) or np.any(alpha >= 1):
        raise ValueError("alpha must be in (0, 1)")
    return np.broadcast_arrays(k, n, alpha)


def cp_lower(k, n, alpha):
    """One-sided lower bound: P(p >= bound) >= 1 - alpha.

    Parameters
    ----------
    k, n : array_like
        Successes and trials (broadcast together).
    alpha : float or array_like
        Failure probability of the bound.

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> float(cp_lower(0, 10, 0.05))
    0.0
    >>> round(float(cp_lower(10, 10, 0.05)), 6)   # alpha ** (1 / n)
    0.741134
    """
    from scipy.special import betaincinv

    k, n, alpha = _prepare(k, n, alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = betaincinv(np.maximum(k, 1e-300), n - k + 1.0, alpha)
    out = np.where(k == 0, 0.0, out)
    return out if out.ndim else float(out)


def cp_upper(k, n, alpha):
    """One-sided upper bound: P(p <= bound) >= 1 - alpha.

    Examples
    --------
    >>> float(cp_upper(10, 10, 0.05))
    1.0
    >>> round(float(cp_upper(0, 10, 0.05)), 6)    # 1 - alpha ** (1 / n)
    0.258866
    """
    from scipy.special import betaincinv

    k, n, alpha = _prepare(k, n, alpha)
    with np.errstate(invalid="ignore", divide="ignore"):
        # 1 - I^{-1}(n-k, k+1; alpha) is the upper quantile, computed from the
        # complementary side for accuracy when the bound is tiny.
        out = 1.0 - betaincinv(np.maximum(n - k, 1e-300), k + 1.0, alpha)
    out = np.where(k == n, 1.0, out)
    return out if out.ndim else float(out)


def clopper_pearson_interval(k, n, confidence=0.95):
    """Two-sided exact interval with ``(1 - confidence) / 2`` in each tail.

    Examples
    --------
    >>> lo, hi = clopper_pearson_interval(5, 10)
    >>> round(lo, 4), round(hi, 4)
    (0.1871, 0.8129)
    """
    alpha = (1.0 - confidence) / 2.0
    return cp_lower(k, n, alpha), cp_upper(k, n, alpha)
