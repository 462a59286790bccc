"""The published cases of sequential DP auditing, written from their papers and DP-Auditorium's code.

Mean mechanisms (DP-Auditorium, ``python/dp_auditorium/dp_auditorium/mechanisms/mean.py`` and
``mechanisms_utils.py`` in google/differential-privacy): records clipped to [0, 1]; the release is
``sum / count + noise``, with Laplace noise when delta = 0 and Gaussian noise with the factor
``sqrt(2 ln(1.25 / delta))`` otherwise, of scale ``factor * (max - min) / (budget_scale * epsilon * count)``.
"non_private_mean_v1" uses the true count for both the mean and the scale (budget_scale 1): González,
Dulce-Rubio, Ramdas and Ribero (2025) call it NonDPLaplace1 / NonDPGaussian1.  "private_mean" uses a count
noised with Laplace(1 / (epsilon / 2)) for both (budget_scale 1/2): their DPLaplace / DPGaussian.  The pair
is add/remove: D = (0), D' = (0, 1).

DP-Auditorium floors the scale at 1e-12, so when the noisy count is negative its "private" mean releases
``sum / count`` almost exactly, which is not DP (a release of exactly 0 on D).  The correct cases here
release ``(sum + noise) / noisy_count`` instead, the same law whenever the noisy count is positive and a
post-processing of (noisy sum, noisy count), so exactly (epsilon, delta)-DP: Laplace sum and count at
epsilon / 2 each, or the classical Gaussian sum at (epsilon / 2, delta) (valid for epsilon / 2 < 1) with
the Laplace count.

APT (Kutta, Dunsche, Wei and Zikas 2026): the sum of 10 records in [0, 1] plus N(0, 1); neighbours
replace one record, so D = ten zeros and D' = nine zeros and a one release N(0, 1) and N(1, 1): exactly
1-GDP, audited against the claims gdp:mu=0.5 and gdp:mu=0.8 (violations) and gdp:mu=1 (correct).

Every draw function has the signature ``draw(rng, runs, m) -> (x0, x1)``, arrays (runs, m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable


#: The delta of the Gaussian mean mechanisms and of their claims.
GAUSS_DELTA = 1e-5


def _factor(delta: float) -> float:
    return 1.0 if delta == 0 else math.sqrt(2.0 * math.log(1.25 / delta))


def _noise(rng, delta, scale, shape):
    return rng.laplace(0.0, 1.0, shape) * scale if delta == 0 else rng.normal(0.0, 1.0, shape) * scale


def non_dp_mean(epsilon: float, delta: float):
    """NonDP...1: ``sum / n + noise(factor / (epsilon n))`` with the true count n (D: n = 1, D': n = 2)."""
    f = _factor(delta)

    def draw(rng, runs, m):
        x0 = 0.0 + _noise(rng, delta, f / epsilon, (runs, m))
        x1 = 0.5 + _noise(rng, delta, f / (2 * epsilon), (runs, m))
        return x0, x1

    return draw


def dp_mean(epsilon: float, delta: float):
    """DP...: ``(sum + noise(factor / (epsilon / 2))) / (n + Laplace(2 / epsilon))``."""
    f = _factor(delta)

    def one(rng, n, total, runs, m):
        count = n + rng.laplace(0.0, 2.0 / epsilon, (runs, m))
        return (total + _noise(rng, delta, 2.0 * f / epsilon, (runs, m))) / count

    def draw(rng, runs, m):
        return one(rng, 1, 0.0, runs, m), one(rng, 2, 1.0, runs, m)

    return draw


def randomized_response(p: float):
    """One bit kept with probability p (D holds 1, D' holds 0): exactly ln(p / (1 - p))-DP, every event tight."""

    def draw(rng, runs, m):
        return (rng.random((runs, m)) < p).astype(float), (rng.random((runs, m)) >= p).astype(float)

    return draw


def gaussian_sum(mu_true: float = 1.0):
    """APT's sum of 10 records in [0, 1] plus N(0, 1) on the pair that moves the sum by 1: N(0, 1) vs N(1, 1)."""

    def draw(rng, runs, m):
        return rng.normal(0.0, 1.0, (runs, m)), mu_true + rng.normal(0.0, 1.0, (runs, m))

    return draw


@dataclass(frozen=True)
class Case:
    name: str
    draw: Callable
    claim: str
    violation: bool
    #: Releases per side to a violation in the papers: González et al. (mean), APT (mean, or median range).
    gonzalez: str = "-"
    apt: str = "-"
    apt_target: float | None = None  # what the issue asks to match (mean, or median for the Gaussian claims)
    apt_stat: str = "mean"
    dpaudit_today: str = "-"


def cases() -> list[Case]:
    g = f",delta={GAUSS_DELTA:g}"
    return [
        Case("NonDPLaplace1, eps 0.01", non_dp_mean(0.01, 0.0), "eps:0.01", True, "331", "86", 86, "mean", "2,000"),
        Case("NonDPLaplace1, eps 0.1", non_dp_mean(0.1, 0.0), "eps:0.1", True, "920", "114", 114, "mean", "2,000"),
        Case("NonDPGaussian1, eps 0.01", non_dp_mean(0.01, GAUSS_DELTA), "eps:0.01" + g, True, "264", "59", 59,
             "mean", "2,000"),
        Case("NonDPGaussian1, eps 0.1", non_dp_mean(0.1, GAUSS_DELTA), "eps:0.1" + g, True, "562", "68", 68, "mean",
             "2,000"),
        Case("Gaussian mu=1, claim gdp:mu=0.5", gaussian_sum(), "gdp:mu=0.5", True, "-", "median 160-180", 180,
             "median", "2,000"),
        Case("Gaussian mu=1, claim gdp:mu=0.8", gaussian_sum(), "gdp:mu=0.8", True, "-", "median 1,350-1,390", 1390,
             "median", "median 8,000"),
    ]


def correct_cases() -> list[Case]:
    g = f",delta={GAUSS_DELTA:g}"
    return [
        Case("DPLaplace, eps 0.01", dp_mean(0.01, 0.0), "eps:0.01", False),
        Case("DPLaplace, eps 0.1", dp_mean(0.1, 0.0), "eps:0.1", False),
        Case("DPGaussian, eps 0.01", dp_mean(0.01, GAUSS_DELTA), "eps:0.01" + g, False),
        Case("DPGaussian, eps 0.1", dp_mean(0.1, GAUSS_DELTA), "eps:0.1" + g, False),
        Case("Gaussian mu=1, claim gdp:mu=1", gaussian_sum(), "gdp:mu=1", False),
        # Not from the papers: a claim exactly tight on every event, the hardest null for a betting test.
        Case("randomized response ln 3, claim ln 3", randomized_response(0.75), f"eps:{math.log(3)!r}", False),
    ]
