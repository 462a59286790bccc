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


def gauss_sum(array, epsilon, delta, random_state):
    """A Gaussian sum as python-dp's ``GaussianMechanism`` computes it in doubles (sensitivity 1, the analytic
    scale 3.7324 of (1, 1e-5)): the noise is a multiple of 2**-54, finer than the doubles near the sum, so the
    rounding of ``sum + noise`` depends on the sum.  Correct as mathematics; as code, releases that are odd
    multiples of 2**-54 occur when the sum is 0 and never when it is 1."""
    grain = 2.0 ** -54
    noise = np.round(random_state.normal(0.0, 3.732421875) / grain) * grain
    return float(np.sum(array)) + noise


def grid_sum(array, epsilon, random_state):
    """An epsilon-DP sum (sensitivity 1) whose arithmetic is exact: the data and the discrete Laplace noise on
    the grid 2**-10, so every release is a double the other dataset's releases can be too."""
    step = 2.0 ** -10
    p = np.exp(-epsilon * step)
    noise = (random_state.geometric(1 - p) - random_state.geometric(1 - p)) * step
    return np.round(float(np.sum(array)) / step) * step + noise
