"""Gaussian-DP ``mu`` from error rates: the one formula both event selection and the profile need.

It sits in its own module so that :mod:`dpaudit.stats.selection` (which scores
candidate events by the ``mu`` they would certify) and
:mod:`dpaudit.stats.profile` (which reports the certified ``mu``) share it
without importing each other.
"""

from __future__ import annotations

import numpy as np

__all__ = ["mu_from_rates"]


def mu_from_rates(fpr_hi, fnr_hi):
    """The ``mu`` of the Gaussian trade-off curve through ``(fpr_hi, fnr_hi)``, floored at 0.

    ``mu = Phi^-1(1 - FPR) - Phi^-1(FNR)`` (Dong, Roth and Su's Gaussian DP);
    rates are clipped away from 0 so that a zero count gives a finite value.

    Examples
    --------
    >>> round(float(mu_from_rates(0.5, 0.5)), 12)
    0.0
    >>> round(float(mu_from_rates(0.15865525393145707, 0.5)), 6)  # Phi(-1): one standard deviation
    1.0
    >>> float(mu_from_rates(0.9, 0.9))  # worse than guessing certifies nothing
    0.0
    """
    from scipy.special import ndtri

    fpr_hi = np.clip(np.asarray(fpr_hi, float), 1e-300, 1.0)
    fnr_hi = np.clip(np.asarray(fnr_hi, float), 1e-300, 1.0)
    with np.errstate(invalid="ignore"):
        mu = ndtri(1.0 - fpr_hi) - ndtri(fnr_hi)
    return np.maximum(np.nan_to_num(mu, nan=0.0, posinf=0.0, neginf=0.0), 0.0)
