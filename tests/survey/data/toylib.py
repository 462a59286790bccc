"""A stand-in library for the survey's tests: a correct Laplace mean and one whose noise ignores the bounds.

Its functions take ``random_state`` as diffprivlib's do; they release a value quantised to 1/64, so that the
floating-point attacks see no leak and only the calibration decides.
"""

import numpy as np


def _noise(scale, random_state):
    return random_state.laplace(0.0, scale)


def mean(array, epsilon, bounds, random_state):
    """epsilon-DP mean of n records in bounds (replace-one: the mean moves by (hi - lo) / n)."""
    lo, hi = bounds
    x = np.clip(np.asarray(array, dtype=float), lo, hi)
    value = x.mean() + _noise((hi - lo) / (len(x) * epsilon), random_state)
    return np.round(value * 64) / 64


def mean_buggy(array, epsilon, bounds, random_state):
    """Claims epsilon-DP but calibrates its noise to a tenth of the sensitivity."""
    lo, hi = bounds
    x = np.clip(np.asarray(array, dtype=float), lo, hi)
    value = x.mean() + _noise((hi - lo) / (10 * len(x) * epsilon), random_state)
    return np.round(value * 64) / 64


class Laplace:
    """A mechanism class: ``Laplace(epsilon=..., sensitivity=..., random_state=...).randomise(value)``."""

    def __init__(self, epsilon, sensitivity, random_state):
        self.scale, self.rs = sensitivity / epsilon, random_state

    def randomise(self, value):
        return np.round((value + self.rs.laplace(0.0, self.scale)) * 64) / 64
