"""Synthetic releases shared by the distinguisher tests."""

from __future__ import annotations

import numpy as np


def two_cell_releases(rng: np.random.Generator, n: int, late_shift: float) -> np.ndarray:
    """``n`` rows of two coordinates: one, at a uniform position, holds Laplace(1) noise (shifted by
    ``late_shift`` in the second position); the other holds the marker -1, as a sparse vector's answers do."""
    pos = rng.integers(0, 2, size=n)
    x = np.full((n, 2), -1.0)
    x[np.arange(n), pos] = rng.laplace(np.where(pos == 1, late_shift, 0.0), 1.0)
    return x
