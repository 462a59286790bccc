"""The one place where the query-answer mechanisms draw continuous noise.

Every Laplace or exponential draw of the mechanisms added for DP-Sniper's
table (noisy max values, the parallel compositions, prefix sums, Lyu et al.'s
Algorithm 2, numerical SVT, the sparse-vector family, and the ``answers=True``
modes of the histogram and report-noisy-max families) goes through these two
functions, so that a floating-point-safe sampler can replace numpy's
textbook inverse-CDF samplers in one edit.  They draw exactly what
``rng.laplace(0, scale, size)`` and ``rng.exponential(scale, size)`` draw, so
seeded results are unchanged by routing through them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["laplace_noise", "exponential_noise"]


def laplace_noise(rng: np.random.Generator, scale: float, size) -> np.ndarray:
    """Centred Laplace noise of scale ``scale`` (density ``exp(-|x| / scale) / (2 scale)``).

    >>> laplace_noise(np.random.default_rng(0), 2.0, (2, 3)).shape
    (2, 3)
    """
    return rng.laplace(0.0, scale, size)


def exponential_noise(rng: np.random.Generator, scale: float, size) -> np.ndarray:
    """Exponential noise of mean ``scale`` (density ``exp(-x / scale) / scale`` on ``x >= 0``).

    >>> bool((exponential_noise(np.random.default_rng(0), 2.0, 5) >= 0).all())
    True
    """
    return rng.exponential(scale, size)
