"""Gaussian differential privacy: the trade-off curve of a Gaussian mechanism and a mu from two rates.

Kept apart from :mod:`~dpaudit.stats.profile` and :mod:`~dpaudit.stats.selection`,
which both need it, so that neither imports the other for it.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["mu_from_rates", "gaussian_delta", "gaussian_epsilon"]


def mu_from_rates(fpr_hi, fnr_hi):
    """The mu that an (FPR, FNR) pair rules out: ``Phi^-1(1 - FPR) - Phi^-1(FNR)``, at least 0.

    mu-GDP means every test has FNR >= Phi(Phi^-1(1 - FPR) - mu) (Dong, Roth and
    Su 2022), so upper confidence bounds on both rates certify that the
    mechanism is not mu-GDP for any smaller mu (Nasr et al. 2023).

    >>> round(float(mu_from_rates(0.05, 0.05)), 4)
    3.2897
    """
    from scipy.special import ndtri

    fpr_hi = np.clip(np.asarray(fpr_hi, float), 1e-300, 1.0)
    fnr_hi = np.clip(np.asarray(fnr_hi, float), 1e-300, 1.0)
    with np.errstate(invalid="ignore"):
        mu = ndtri(1.0 - fpr_hi) - ndtri(fnr_hi)
    return np.maximum(np.nan_to_num(mu, nan=0.0, posinf=0.0, neginf=0.0), 0.0)


def gaussian_delta(epsilon: float, mu: float) -> float:
    """Exact delta(epsilon) of the Gaussian mechanism with mu = sensitivity / sigma (Balle and Wang 2018).

    delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), the second term in log
    space (e^eps alone overflows once eps > 709).

    >>> round(gaussian_delta(1.0, 1 / 3.7306), 7)
    1e-05
    """
    from scipy.special import log_ndtr, ndtr

    a, b = mu / 2.0, epsilon / mu
    return float(ndtr(a - b) - np.exp(epsilon + log_ndtr(-a - b)))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """eps(delta) of the Gaussian mechanism with mu = sensitivity / sigma (Balle and Wang 2018).

    The smallest eps with ``gaussian_delta(eps, mu) <= delta``, to a relative
    1e-13: Newton's method on ``ln delta(eps)`` in a bracket (the slope is exact,
    ``d delta / d eps = -e^eps Phi(-mu/2 - eps/mu)``) to 1e-15, then one step of
    1e-13 up and more until delta fits, so the result is never below the true
    value.  A few evaluations, and no ``scipy.optimize``, whose import every ``gdp:``
    claim on the command line would pay (docs/decisions/import-cost.md).

    >>> round(gaussian_epsilon(1.0, 1e-5), 3)
    4.377
    >>> gaussian_epsilon(1.0, 0.0), gaussian_epsilon(0.0, 1e-5)
    (inf, 0.0)
    """
    if mu <= 0 or delta >= 1:
        return 0.0
    if delta <= 0:
        return float("inf")
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    from scipy.special import log_ndtr

    lo, hi = 0.0, 1.0
    while gaussian_delta(hi, mu) > delta:
        lo, hi = hi, 2.0 * hi
    log_target, eps = math.log(delta), hi
    for _ in range(100):
        d = gaussian_delta(eps, mu)
        if d > delta:
            lo = eps
        else:
            hi = eps
        if d <= 0.0:  # past the float's reach: halve the bracket
            nxt = 0.5 * (lo + hi)
        else:
            slope = -math.exp(eps + float(log_ndtr(-mu / 2.0 - eps / mu))) / d  # d ln delta / d eps
            nxt = eps - (math.log(d) - log_target) / slope if slope < 0.0 else 0.5 * (lo + hi)
            if not lo < nxt < hi:
                nxt = 0.5 * (lo + hi)
        if abs(nxt - eps) <= 1e-15 * max(eps, 1.0):
            eps = nxt
            break
        eps = nxt
    # One step above the estimate, then up until delta fits: where the float delta is flat within a step
    # (tiny deltas), a point of the flat part would be below the curve's own grid epsilon there.
    step = 1e-13 * max(eps, 1.0)
    eps += step
    while gaussian_delta(eps, mu) > delta:
        eps += step
    return float(eps)
