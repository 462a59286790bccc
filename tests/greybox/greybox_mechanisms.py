"""Mechanisms for the grey-box tests, every draw through ``rng``: correct ones and five broken ones.

Each has its neighbouring pair and, where known in closed form, the pair's true epsilon computed
independently of dpaudit (Balle and Wang 2018 for the Gaussian; the log-ratio of the two
probability vectors for the exponential mechanism; numerical integration for report-noisy-max).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate
from scipy.stats import laplace as scipy_laplace
from scipy.stats import norm

EPSILON = 1.0
DELTA = 1e-5


# ----------------------------------------------------------------------------- correct
def laplace_sum(data, size=None, rng=None):
    """Sum clipped to [0, 1], Laplace noise of scale 1/epsilon: epsilon-DP."""
    return float(np.clip(np.sum(data), 0.0, 1.0)) + rng.laplace(0.0, 1.0 / EPSILON, size=size)


def laplace_in_parts(data, size=None, rng=None):
    """Sum clipped to [0, 1] plus two Laplace draws of scale 1/epsilon: the sum's density (1 + |x|) e^-|x| / 4
    has log ratio below epsilon at a shift of 1, approaching it in the tails, so the pair's epsilon is epsilon."""
    return (float(np.clip(np.sum(data), 0.0, 1.0)) + rng.laplace(0.0, 1.0 / EPSILON, size=size)
            + rng.laplace(0.0, 1.0 / EPSILON, size=size))


def exponential_difference(data, size=None, rng=None):
    """Sum clipped to [0, 1] plus the difference of two exponentials of scale 1/epsilon (a Laplace draw made by
    hand): epsilon-DP, but no privacy loss is priced for a shifted exponential, so no upper bound."""
    return (float(np.clip(np.sum(data), 0.0, 1.0)) + rng.exponential(1.0 / EPSILON, size=size)
            - rng.exponential(1.0 / EPSILON, size=size))


def balle_wang_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """delta(epsilon) of the Gaussian mechanism (Balle and Wang 2018, Theorem 8)."""
    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    return norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b)


def balle_wang_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if balle_wang_delta(mid, sigma, sensitivity) > delta else (lo, mid)
    return hi


def analytic_sigma(epsilon: float, delta: float) -> float:
    """The smallest sigma whose Gaussian mechanism is (epsilon, delta)-DP at sensitivity 1 (bisection)."""
    lo, hi = 1e-3, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if balle_wang_delta(epsilon, mid) <= delta else (mid, hi)
    return hi


SIGMA_ANALYTIC = analytic_sigma(EPSILON, DELTA)


def analytic_gaussian(data, size=None, rng=None):
    return float(np.clip(np.sum(data), 0.0, 1.0)) + rng.normal(0.0, SIGMA_ANALYTIC, size=size)


def two_sided_geometric(data, size=None, rng=None):
    """Integer sum clipped to [0, 1] plus the difference of two geometrics: discrete Laplace, epsilon-DP."""
    p = 1 - math.exp(-EPSILON)
    return int(np.clip(np.sum(data), 0, 1)) + rng.geometric(p, size=size) - rng.geometric(p, size=size)


def counts(data, k=4):
    return np.bincount(np.asarray(data, dtype=int), minlength=k)[:k].astype(float)


def report_noisy_max(data, rng=None):
    """Argmax of counting queries plus Laplace(2/epsilon) noise, the location passed to the primitive."""
    return int(np.argmax(rng.laplace(loc=counts(data), scale=2.0 / EPSILON)))


def report_noisy_max_outside(data, rng=None):
    """The same, the location added outside the primitive (seen as the noise's first addition)."""
    return int(np.argmax(counts(data) + rng.laplace(0.0, 2.0 / EPSILON, size=4)))


def em_probabilities(data):
    w = np.exp(EPSILON * counts(data) / 2.0)
    return w / w.sum()


def exponential_mechanism(data, rng=None):
    return int(rng.choice(4, p=em_probabilities(data)))


def randomized_response(data, rng=None):
    """One respondent's bit kept with probability 3/4 (a coin: a uniform compared with 3/4): epsilon ln 3."""
    bit = int(np.asarray(data).reshape(-1)[0])
    return bit if rng.random() < 0.75 else 1 - bit


def randomized_response_coin(data, rng=None):
    """The same as a coin whose probability depends on the bit, released as is."""
    bit = int(np.asarray(data).reshape(-1)[0])
    return int(rng.random() < (0.75 if bit else 0.25))


# ----------------------------------------------------------------------------- broken
def laplace_sum_105(data, size=None, rng=None):
    """BROKEN: clipped to [0, 1.05], noise for sensitivity 1 (true epsilon 1.05 against 1)."""
    return float(np.clip(np.sum(data), 0.0, 1.05)) + rng.laplace(0.0, 1.0 / EPSILON, size=size)


SIGMA_CLASSIC_10 = math.sqrt(2 * math.log(1.25 / DELTA)) / 10.0


def classic_gaussian_10(data, size=None, rng=None):
    """BROKEN: the classic calibration sqrt(2 ln(1.25/delta))/epsilon used at epsilon 10 (valid for epsilon < 1)."""
    return float(np.clip(np.sum(data), 0.0, 1.0)) + rng.normal(0.0, SIGMA_CLASSIC_10, size=size)


def histogram_skips_empty(data, rng=None):
    """BROKEN: noise only on non-empty bins, so an empty bin is released as an exact 0."""
    c = counts(data)
    out = np.zeros(4)
    for j in range(4):
        if c[j] > 0:
            out[j] = c[j] + rng.laplace(0.0, 1.0 / EPSILON)
    return out


def scale_from_data(data, size=None, rng=None):
    """BROKEN: the sensitivity (hence the scale) read off the data as max - min."""
    scale = (np.max(data) - np.min(data)) / EPSILON
    return float(np.sum(data)) + rng.laplace(0.0, scale, size=size)


def count_beside_sum(data, rng=None):
    """BROKEN: a noisy clipped sum released with the exact count of records."""
    return np.array([float(np.clip(np.sum(data), 0.0, 1.0)) + rng.laplace(0.0, 1.0 / EPSILON), float(len(data))])


# ----------------------------------------------------------------------------- true pair epsilons
def rnm_probabilities(q, scale):
    """P(argmax of q + Laplace(scale) noise = i), by numerical integration."""
    out = []
    for i in range(len(q)):
        def f(x, i=i):
            others = np.prod([scipy_laplace.cdf(x, q[j], scale) for j in range(len(q)) if j != i])
            return scipy_laplace.pdf(x, q[i], scale) * others
        lo, hi = min(q) - 40 * scale, max(q) + 40 * scale
        out.append(integrate.quad(f, lo, hi, points=sorted(set(q)), limit=200, epsabs=1e-13)[0])
    return np.array(out)


def log_ratio_epsilon(p1, p2) -> float:
    r = np.log(np.asarray(p1)) - np.log(np.asarray(p2))
    return float(max(r.max(), (-r).max()))


#: name -> (mechanism, D, D', delta, true pair epsilon, exact expected)
PAIR_D, PAIR_D2 = np.array([0, 0, 1, 2]), np.array([0, 0, 1])
CORRECT = {
    "laplace": (laplace_sum, np.array([1.0]), np.array([0.0]), 0.0, EPSILON, True),
    "analytic_gaussian": (analytic_gaussian, np.array([1.0]), np.array([0.0]), DELTA,
                          balle_wang_epsilon(SIGMA_ANALYTIC, DELTA), True),
    "two_sided_geometric": (two_sided_geometric, np.array([1]), np.array([0]), 0.0, EPSILON, True),
    "report_noisy_max": (report_noisy_max, PAIR_D, PAIR_D2, 0.0,
                         log_ratio_epsilon(rnm_probabilities(counts(PAIR_D), 2 / EPSILON),
                                           rnm_probabilities(counts(PAIR_D2), 2 / EPSILON)), False),
    "report_noisy_max_outside": (report_noisy_max_outside, PAIR_D, PAIR_D2, 0.0,
                                 log_ratio_epsilon(rnm_probabilities(counts(PAIR_D), 2 / EPSILON),
                                                   rnm_probabilities(counts(PAIR_D2), 2 / EPSILON)), False),
    # Noise added in two parts: moving one part aligns the coordinate (it was read as a leak outside the noise).
    "laplace_in_parts": (laplace_in_parts, np.array([1.0]), np.array([0.0]), 0.0, EPSILON, False),
    "randomized_response": (randomized_response, np.array([1]), np.array([0]), 0.0, math.log(3), True),
    "randomized_response_coin": (randomized_response_coin, np.array([1]), np.array([0]), 0.0, math.log(3), True),
    "exponential_mechanism": (exponential_mechanism, PAIR_D, PAIR_D2, 0.0,
                              log_ratio_epsilon(em_probabilities(PAIR_D), em_probabilities(PAIR_D2)), True),
}
