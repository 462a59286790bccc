"""Approximate (epsilon, delta)-LDP protocols, as LDP-Auditor defines them (Arcolezi and Gambs, PETS 2024).

One user's value in ``0..k-1`` (pair ``[0]`` / ``[1]``, as the pure protocols of
:mod:`dpaudit.mechanisms.ldp`); each claims ``(eps, delta)`` for replace-one neighbours:

* ``agrr``: GRR keeping the value with probability ``p = (e^eps + (k-1) delta) / (e^eps + k - 1)``, every
  other value ``q = (1 - p) / (k - 1)``, so that ``p = e^eps q + delta`` exactly (Wang et al. 2017's GRR
  given a delta).
* ``asue``: symmetric unary encoding with ``p = (e^eps - sqrt(e^eps (1 - delta) + delta)) / (e^eps - 1)``,
  ``q = 1 - p``: the two bits that differ give ``p^2 - e^eps q^2 = delta`` exactly.
* ``ablh`` / ``aolh``: local hashing with AGRR on the ``g`` buckets (``g = 2``, or LDP-Auditor's
  (eps, delta)-optimal ``g``), released as its support like ``blh`` / ``olh``.
* ``agm``: the one-hot vector plus Gaussian noise, sigma by the analytic calibration of Balle and Wang (2018)
  at L2 sensitivity sqrt(2) (two one-hot vectors); ``gm``: the classic ``sigma = sqrt(2 ln(1.25/delta))
  sqrt(2) / eps`` (Dwork and Roth 2014), which LDP-Auditor uses at every epsilon (its proof needs eps < 1).
  The Gaussian releases are snapped to a power-of-two grid
  (:func:`~dpaudit.mechanisms._noise.gaussian_release`): post-processing of the continuous release.

``true_epsilon(delta)``: exact for AGRR and ASUE (their one likelihood ratio above 1) and for the
Gaussians (Balle and Wang's curve at sensitivity sqrt(2)); for local hashing, the claim at the claimed
delta (the pair's cells are AGRR's, on the hashes that separate the two values) and ``inf`` below it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..claims import PointClaim
from ._noise import gaussian_release
from .base import check_gaussian_delta
from .gaussian import analytic_gaussian_sigma, gaussian_epsilon
from .ldp import GRR, LDPProtocol, LocalHashing, UnaryEncoding

__all__ = ["AGRR", "ASUE", "ABLH", "AOLH", "AGM", "GM", "APPROXIMATE_LDP_PROTOCOLS", "aolh_buckets"]


def aolh_buckets(epsilon: float, delta: float) -> int:
    """LDP-Auditor's hash range for AOLH (``approximate_ldp.ALH_Client``), at least 2.

    >>> aolh_buckets(1.0, 1e-5), aolh_buckets(4.0, 1e-5)
    (4, 56)
    """
    e = math.exp(epsilon)
    inner = (1 - delta) * (e + delta - 9 * e * delta - 1)
    if inner < 0:
        return 2
    g = (-3 * e * delta - math.sqrt(e - 1) * math.sqrt(inner) + e + 3 * delta - 1) / (2 * delta)
    return max(2, int(np.round(g)))


class ApproximateLDP:
    """Mixin (before the protocol's class): the ``delta`` field in (0, 1) and the (eps, delta) replace-one claim."""

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        super().__post_init__()  # type: ignore[misc]
        object.__setattr__(self, "delta", check_gaussian_delta(self.delta))

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, self.delta, neighbouring="replace-one")

    def true_epsilon(self, delta: float = 0.0) -> float:
        """The claim at its delta and above (an upper bound), ``inf`` below (no pure epsilon holds)."""
        return self.epsilon if delta >= self.delta else math.inf


def ratio_epsilon(top: float, bottom: float, delta: float) -> float:
    """The epsilon at ``delta`` of a pair whose one outcome above ratio 1 has probabilities ``top`` / ``bottom``."""
    return math.log((top - delta) / bottom) if delta < top - bottom else 0.0


@dataclass(frozen=True)
class AGRR(ApproximateLDP, GRR):
    """Approximate GRR (LDP-Auditor): the value w.p. (e^eps + (k-1) delta)/(e^eps + k - 1), else another uniformly."""

    delta: float = 1e-5
    name: ClassVar[str] = "agrr"

    @property
    def keep_probability(self) -> float:
        e = math.exp(self.epsilon)
        return (e + (self.k - 1) * self.delta) / (e + self.k - 1)

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact: the value itself, ``p`` against ``q``."""
        p = self.keep_probability
        return ratio_epsilon(p, (1 - p) / (self.k - 1), delta)


@dataclass(frozen=True)
class ASUE(ApproximateLDP, UnaryEncoding):
    """Approximate SUE (LDP-Auditor): bits kept w.p. (e^eps - sqrt(e^eps (1 - delta) + delta))/(e^eps - 1)."""

    delta: float = 1e-5
    name: ClassVar[str] = "asue"

    def _probabilities(self):
        e = math.exp(self.epsilon)
        p = (e - math.sqrt(e * (1 - self.delta) + self.delta)) / (e - 1)
        return p, 1.0 - p

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Exact: the two bits that differ, pattern (1, 0) at ``p^2`` against ``q^2``."""
        p, q = self._probabilities()
        return ratio_epsilon(p * p, q * q, delta)


@dataclass(frozen=True)
class ABLH(ApproximateLDP, LocalHashing):
    """Approximate binary local hashing (LDP-Auditor): 2 buckets, AGRR on the bucket (released as its support)."""

    delta: float = 1e-5
    name: ClassVar[str] = "ablh"

    def _buckets(self) -> int:
        return 2

    def _keep(self, g: int) -> float:
        e = math.exp(self.epsilon)
        return (e + (g - 1) * self.delta) / (e + g - 1)


@dataclass(frozen=True)
class AOLH(ABLH):
    """Approximate optimal local hashing (LDP-Auditor): its (eps, delta)-optimal g buckets, AGRR on the bucket."""

    name: ClassVar[str] = "aolh"

    def _buckets(self) -> int:
        return aolh_buckets(self.epsilon, self.delta)


@dataclass(frozen=True)
class AGM(ApproximateLDP, LDPProtocol):
    """Analytic Gaussian mechanism (Balle and Wang 2018) on the one-hot vector, L2 sensitivity sqrt(2)."""

    delta: float = 1e-5
    name: ClassVar[str] = "agm"

    @property
    def sigma(self) -> float:
        return analytic_gaussian_sigma(self.epsilon, self.delta, math.sqrt(2.0))

    @property
    def curve_claim(self) -> str:
        """The release's whole curve as a claim: mu-GDP with mu = sqrt(2) / sigma (Dong, Roth and Su 2022).

        The (epsilon, delta) point is one point of it; auditing against the curve tests every delta.
        """
        return f"gdp:mu={math.sqrt(2.0) / self.sigma:.12g}"

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Balle and Wang's exact curve at sensitivity sqrt(2) (``inf`` at delta = 0)."""
        return gaussian_epsilon(self.sigma, delta, math.sqrt(2.0)) if delta > 0 else math.inf

    def _prepare(self, dataset) -> tuple[int, float]:
        return self._value(dataset), self.sigma  # sigma once per call, not per chunk

    def _draw(self, prepared: tuple[int, float], n: int, rng: np.random.Generator) -> np.ndarray:
        v, sigma = prepared
        loc = np.zeros(self.k)
        loc[v] = 1.0
        return gaussian_release(rng, loc, sigma, (n, self.k))


@dataclass(frozen=True)
class GM(AGM):
    """Gaussian mechanism on the one-hot vector, classic sigma = sqrt(2 ln(1.25/delta)) sqrt(2)/eps (Dwork and Roth 2014)."""

    name: ClassVar[str] = "gm"

    @property
    def sigma(self) -> float:
        return math.sqrt(2.0 * math.log(1.25 / self.delta)) * math.sqrt(2.0) / self.epsilon

    @property
    def broken(self) -> bool:  # type: ignore[override]
        """Where the exact curve exceeds the claim (the classic calibration is proven for eps < 1 only)."""
        return self.true_epsilon(self.delta) > self.epsilon + 1e-9


#: In the order of LDP-Auditor's approximate table (Arcolezi and Gambs 2024).
APPROXIMATE_LDP_PROTOCOLS = (AGRR, ASUE, ABLH, AOLH, GM, AGM)
