"""User-style targets with a declared record domain, for the search tests.

Each broken target has a correct twin; the search, run with its defaults on
the stated domain, must flag the broken ones and not the correct ones.
Every target takes ``size`` and ``rng`` (vectorised, seeded).  Noise is
discrete Laplace on integer statistics, so the correct twins are correct as
floating-point programs too (textbook float Laplace noise leaks through the
bit patterns of its releases, and the audit's floating-point attacks rightly
flag it).
"""

import numpy as np

EPSILON = 1.0
#: name -> (size, low, high, integer, relation, broken)
DOMAINS = {
    "unclipped_sum": (10, 0, 100, True, "replace-one", True),
    "clipped_sum": (10, 0, 100, True, "replace-one", False),
    "histogram_scale_1": (10, 0, 4, True, "replace-one", True),
    "histogram_scale_2": (10, 0, 4, True, "replace-one", False),
    "rare_leak": (10, 0, 100, True, "replace-one", True),
    "no_leak": (10, 0, 100, True, "replace-one", False),
    "rr_wrong_p": (5, 0, 1, True, "replace-one", True),
    "rr_right_p": (5, 0, 1, True, "replace-one", False),
}


def discrete_laplace(scale, size, rng):
    """Integers with P(k) proportional to exp(-|k| / scale): the difference of two geometric draws."""
    p = -np.expm1(-1.0 / scale)
    return rng.geometric(p, size=size) - rng.geometric(p, size=size)


def _laplace(value, scale, size, rng):
    return np.asarray(value, dtype=float) + discrete_laplace(scale, size, rng)


def unclipped_sum(dataset, size=None, rng=None):
    """Claims epsilon = 1 for a sum of records in {0, 1}, but never clips: values up to 100 pass."""
    return _laplace(np.sum(dataset), 1.0 / EPSILON, size, rng)


def clipped_sum(dataset, size=None, rng=None):
    """The same sum with every (integer) record clipped to [0, 1]: sensitivity 1, epsilon 1."""
    return _laplace(np.sum(np.clip(np.rint(dataset), 0.0, 1.0)), 1.0 / EPSILON, size, rng)


def _histogram(dataset, scale, size, rng):
    counts = np.bincount(np.asarray(dataset, dtype=int), minlength=5)[:5].astype(float)
    shape = (5,) if size is None else (size, 5)
    return counts + discrete_laplace(scale, shape, rng)


def histogram_scale_1(dataset, size=None, rng=None):
    """Discrete Laplace(1/epsilon) per bin: right for add/remove, but a replaced record moves two bins (epsilon 2)."""
    return _histogram(dataset, 1.0 / EPSILON, size, rng)


def histogram_scale_2(dataset, size=None, rng=None):
    """Discrete Laplace(2/epsilon) per bin: the replace-one sensitivity of a histogram is 2."""
    return _histogram(dataset, 2.0 / EPSILON, size, rng)


def _count_over_50(dataset, size, rng):
    return _laplace(np.count_nonzero(np.asarray(dataset) >= 50), 1.0 / EPSILON, size, rng)


def rare_leak(dataset, size=None, rng=None):
    """A noisy count that, one time in a hundred, releases the largest record instead (a debug path)."""
    out = _count_over_50(dataset, size, rng)
    leak = rng.random(size=size) < 0.01
    return np.where(leak, float(np.max(dataset)), out)


def no_leak(dataset, size=None, rng=None):
    """The noisy count alone (sensitivity 1, epsilon 1); draws the same coin so only the leak differs."""
    out = _count_over_50(dataset, size, rng)
    rng.random(size=size)
    return out


def _rr(dataset, p_truth, size, rng):
    bits = np.asarray(dataset, dtype=int)
    shape = bits.shape if size is None else (size, len(bits))
    keep = rng.random(size=shape) < p_truth
    return np.where(keep, bits, 1 - bits)


def rr_wrong_p(dataset, size=None, rng=None):
    """Randomized response per record claimed at ln 3 (keep w.p. 3/4) but keeping w.p. 0.85 (epsilon 1.73)."""
    return _rr(dataset, 0.85, size, rng)


def rr_right_p(dataset, size=None, rng=None):
    """Randomized response keeping each bit w.p. 3/4: epsilon ln 3 under replace-one."""
    return _rr(dataset, 0.75, size, rng)


#: The claim of each target (rr ones claim ln 3).
CLAIMS = {name: (np.log(3.0) if name.startswith("rr_") else EPSILON) for name in DOMAINS}


def float_clipped_sum(dataset, size=None, rng=None):
    """clipped_sum with numpy's float Laplace noise: right as mathematics, but its bit patterns leak."""
    return float(np.sum(np.clip(np.rint(dataset), 0.0, 1.0))) + rng.laplace(0.0, 1.0 / EPSILON, size=size)
