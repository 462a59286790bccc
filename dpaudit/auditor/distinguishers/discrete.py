"""Discrete releases: outcome sets chosen by estimated likelihood ratio."""

from __future__ import annotations

import numpy as np

from ...exceptions import ParameterValueError

from .base import OutcomeIndex

__all__ = ["LikelihoodRatioScore"]


class LikelihoodRatioScore:
    """Discrete outputs: score an outcome by its estimated log likelihood ratio.

    Thresholding this score chooses the set of outcomes most likely under D
    relative to D' (the best set by estimated likelihood ratio).  Counts are
    smoothed by 1/2 so that outcomes seen on one side only get a large but
    finite score; outcomes never seen when fitting score 0.

    >>> s = LikelihoodRatioScore().fit(np.array([1, 1, 1, 0]), np.array([0, 0, 0, 1]))
    >>> bool(s.score(np.array([1]))[0] > 0 > s.score(np.array([0]))[0])
    True
    """

    name = "likelihood-ratio"

    def fit(self, x0, x1):
        index = OutcomeIndex.from_samples(x0, x1)
        m = len(index.outcomes)
        c0 = np.bincount(index.lookup(x0), minlength=m)
        c1 = np.bincount(index.lookup(x1), minlength=m)
        return self._set(index, c0, c1)

    @classmethod
    def from_counts(cls, outcomes: np.ndarray, count0: np.ndarray, count1: np.ndarray) -> "LikelihoodRatioScore":
        """The score fitted to releases whose distinct ``outcomes`` (sorted) occur ``count0`` / ``count1``
        times on each side: for callers that count faster than a search (small integer features).

        >>> s = LikelihoodRatioScore.from_counts(np.array([0, 1]), np.array([1, 3]), np.array([3, 1]))
        >>> bool(s.score(np.array([1]))[0] > 0 > s.score(np.array([0]))[0])
        True
        """
        outcomes = np.asarray(outcomes)
        return cls()._set(OutcomeIndex(outcomes.reshape(len(outcomes), -1)), np.asarray(count0), np.asarray(count1))

    def _set(self, index: OutcomeIndex, c0: np.ndarray, c1: np.ndarray) -> "LikelihoodRatioScore":
        self.index = index
        m = len(index.outcomes)
        n0, n1 = int(c0.sum()), int(c1.sum())
        self.log_ratio = np.log((c0 + 0.5) / (n0 + 0.5 * m)) - np.log((c1 + 0.5) / (n1 + 0.5 * m))
        return self

    def score(self, x):
        ids = self.index.lookup(x)
        return np.where(ids >= 0, self.log_ratio[np.maximum(ids, 0)], 0.0)

