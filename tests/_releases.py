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


def audits_above(target, d, d2, true_eps: float, *, attack: str, seeds, confidence: float,
                 samples: int = 40_000) -> list:
    """(seed, bound) of the seeded ideal audits of ``target`` with ``attack`` whose bound exceeds ``true_eps``:
    each does so with probability at most ``1 - confidence`` for a sound audit."""
    import dpaudit

    out = []
    for seed in seeds:
        r = dpaudit.audit(target, d, d2, epsilon=true_eps, samples=samples, confidence=confidence, seed=seed,
                          attack=attack, ideal=True)
        if r.epsilon_lower_bound > true_eps:
            out.append((seed, r.epsilon_lower_bound))
    return out
