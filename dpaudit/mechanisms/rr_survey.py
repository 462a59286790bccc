"""Randomized-response surveys: privacy of one answer and error of the debiased estimate.

Each of ``n`` respondents holds a bit ``x``.  With probability ``p`` they answer
truthfully; otherwise they answer with a random coin: a fair one
(``second_coin="fair"``, :class:`~dpaudit.mechanisms.RandomizedResponse`) or a
``flip(p)`` coin (``second_coin="p"``).  With ``c`` the random coin's
probability of 1, ``P[o = 1 | x] = p x + (1 - p) c``, so the debiased estimate
of the fraction of ones is

    pi_hat = (mean(o) - (1 - p) c) / p,

unbiased, with exact standard deviation (respondents fixed, ``n1`` ones)

    sd(pi_hat) = sqrt(n1 q1 (1 - q1) + n0 q0 (1 - q0)) / (n p),   q_x = p x + (1 - p) c,

which is at most ``1 / (2 p sqrt(n))``: the error falls as ``1 / (p sqrt(n))``.
The privacy of one answer is

* fair coin: ``eps = ln((1 + p) / (1 - p))``, so ``p = tanh(eps / 2)``;
* flip(p) coin: ``eps = ln(max((2 - p) / (1 - p), (1 - p + p^2) / (1 - p)^2))``,
  which is ``ln 3`` at ``p = 1/2`` and never below ``ln 2``.

These closed forms serve both the ``rr_tradeoff`` experiment, which simulates
surveys, and its figure, which draws the exact curve from saved parameters.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SECOND_COINS", "epsilon_of_p", "p_of_epsilon", "debiased_std", "debias", "simulate_rr_estimates",
           "respondent_counts"]

SECOND_COINS = ("fair", "p")


def _coin(p: float, second_coin: str) -> float:
    return 0.5 if second_coin == "fair" else p


def epsilon_of_p(p: float, second_coin: str = "fair") -> float:
    """The epsilon of one randomized-response answer with truth probability ``p``.

    >>> round(epsilon_of_p(0.5, "p"), 6) == round(math.log(3), 6)   # flip(p) coin at p = 1/2
    True
    >>> round(epsilon_of_p(0.5, "fair"), 6) == round(math.log(3), 6)
    True
    """
    if p >= 1.0:
        return math.inf
    if second_coin == "fair":
        return math.log((1 + p) / (1 - p))
    return math.log(max((2 - p) / (1 - p), (1 - p + p * p) / (1 - p) ** 2))


def p_of_epsilon(epsilon: float, second_coin: str = "fair") -> float:
    """Invert :func:`epsilon_of_p` (closed forms; see the module docstring).

    >>> p = p_of_epsilon(1.3, "p"); round(epsilon_of_p(p, "p"), 12)
    1.3
    >>> round(p_of_epsilon(math.log(3)), 12)
    0.5
    """
    if epsilon > 700:  # math.exp overflows near 709.8; p rounds to 1.0 long before (at epsilon ~ 38 and ~ 75)
        return 1.0
    e = math.exp(epsilon)
    if second_coin == "fair":
        return (e - 1) / (e + 1)
    if e <= 2:
        raise ValueError(f"randomized response with a flip(p) coin has epsilon > ln 2; got {epsilon!r}")
    if e <= 3:  # p <= 1/2: the ratio (2 - p) / (1 - p) binds
        return (e - 2) / (e - 1)
    return (2 * e - 1 - math.sqrt(4 * e - 3)) / (2 * (e - 1))


def debias(answers_mean, p: float, second_coin: str = "fair"):
    """The unbiased estimate of the fraction of ones from the mean answer.

    >>> debias(0.5, 0.5)   # a fair coin and half ones give back one half
    0.5
    """
    est = (np.asarray(answers_mean, dtype=float) - (1 - p) * _coin(p, second_coin)) / p
    return float(est) if est.ndim == 0 else est


def respondent_counts(n: int, true_fraction: float) -> tuple[int, int]:
    n1 = int(round(n * true_fraction))
    return n1, n - n1


def debiased_std(n: int, p: float, true_fraction: float, second_coin: str = "fair") -> float:
    """Exact standard deviation of the debiased estimate (respondents fixed).

    >>> s = debiased_std(100, 1.0, 0.3); s   # no noise: no error
    0.0
    >>> debiased_std(10_000, 0.5, 0.5) <= 1 / (2 * 0.5 * 100)
    True
    """
    n1, n0 = respondent_counts(n, true_fraction)
    c = _coin(p, second_coin)
    q1, q0 = p + (1 - p) * c, (1 - p) * c
    return math.sqrt(n1 * q1 * (1 - q1) + n0 * q0 * (1 - q0)) / (n * p)


def simulate_rr_estimates(*, n: int, p: float, true_fraction: float, repetitions: int, second_coin: str, rng):
    """``repetitions`` debiased estimates from independent surveys (binomial counts)."""
    n1, n0 = respondent_counts(n, true_fraction)
    c = _coin(p, second_coin)
    ones = rng.binomial(n1, p + (1 - p) * c, size=repetitions) + rng.binomial(n0, (1 - p) * c, size=repetitions)
    return (ones / n - (1 - p) * c) / p
