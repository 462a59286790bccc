"""The seam every distinguisher implements, and helpers they share."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Distinguisher", "OutcomeIndex", "as_2d"]


@runtime_checkable
class Distinguisher(Protocol):
    """Anything with ``fit(x0, x1)`` and ``score(x)``; x is (n,) or (n, k)."""

    name: str

    def fit(self, x0: np.ndarray, x1: np.ndarray) -> "Distinguisher": ...

    def score(self, x: np.ndarray) -> np.ndarray: ...


def as_2d(x: np.ndarray) -> np.ndarray:
    if x.size == 0:  # no releases: -1 cannot be inferred from size 0
        return x.reshape(len(x), int(np.prod(x.shape[1:], dtype=np.int64)))
    return x.reshape(len(x), -1)


class OutcomeIndex:
    """Maps discrete releases (scalars or rows) to stable integer outcome ids."""

    def __init__(self, outcomes: np.ndarray):
        self.outcomes = outcomes  # sorted unique rows (2-D) or values (1-D)

    @classmethod
    def from_samples(cls, *xs: np.ndarray) -> "OutcomeIndex":
        stacked = np.concatenate([as_2d(np.asarray(x)) for x in xs])
        if stacked.shape[1] == 1:
            # One column: a plain sort (``np.unique(axis=0)`` sorts rows as records, much slower).
            return cls(np.unique(stacked[:, 0]).reshape(-1, 1))
        return cls(np.unique(stacked, axis=0))

    def lookup(self, x: np.ndarray) -> np.ndarray:
        """Outcome id of each release; -1 for outcomes never seen when fitting."""
        rows = as_2d(np.asarray(x))
        if self.outcomes.shape[1] == 1:
            keys, vals = self.outcomes[:, 0], rows[:, 0]
        else:
            # A structured view turns each row into one comparable item.
            dt = np.dtype([(f"f{i}", rows.dtype) for i in range(rows.shape[1])])
            keys = np.ascontiguousarray(self.outcomes.astype(rows.dtype)).view(dt).ravel()
            vals = np.ascontiguousarray(rows).view(dt).ravel()
        pos = np.searchsorted(keys, vals)
        pos = np.minimum(pos, len(keys) - 1)
        return np.where(keys[pos] == vals, pos, -1)

