"""Scalar releases: the release itself is the score."""

from __future__ import annotations

import numpy as np

from ...exceptions import ParameterValueError

__all__ = ["ThresholdScore"]


class ThresholdScore:
    """Scalar outputs: the release itself is the score (both tails are tried by the selection).

    >>> ThresholdScore().fit(np.zeros(3), np.ones(3)).score(np.array([2.0, 3.0]))
    array([2., 3.])
    """

    name = "threshold"

    def fit(self, x0, x1):
        return self

    def pooled(self, n_pool: int) -> bool:
        """Nothing is fitted, so the whole calibration pool can choose the event (see ``pooled`` in the package)."""
        return True

    def score(self, x):
        x = np.asarray(x)
        if x.ndim != 1:
            raise ParameterValueError(f"attack 'threshold' needs scalar releases; got shape {x.shape[1:]}")
        return x.astype(float, copy=False)

