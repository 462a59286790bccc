"""Claims stated rather than computed by an accountant: a point, mu-Gaussian DP, a list of (epsilon, delta) pairs.

:class:`PointClaim` is (epsilon, delta)-DP at one point (``eps:`` specs, ``--epsilon/--delta``);
:class:`GaussianDPClaim` is mu-GDP (Dong, Roth and Su 2022); :class:`ProfileClaim` is a privacy profile
given as pairs (``profile:`` specs).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_delta, check_epsilon, check_int, check_real
from ..exceptions import ParameterValueError
from ..neighbouring import Neighbouring
from .base import DELTA_FLOOR, Claim, epsilon_grid, quiet_numbers, shaped

__all__ = ["MAX_MU", "GaussianDPClaim", "PointClaim", "ProfileClaim"]

#: Largest mu a GDP claim may state: its epsilon at delta 1e-12 is then about 10^12, and beyond about 10^150 the
#: curve's arithmetic overflows (mu^2).  No audit can come near such a claim.
MAX_MU = 1e6


#: Composed deltas are capped just below 1 (a vacuous but valid claim; 1.0 itself is not a delta).
_DELTA_CAP = math.nextafter(1.0, 0.0)


@dataclass(frozen=True)
class PointClaim(Claim):
    """(epsilon, delta)-DP: one point, the curve that is ``epsilon`` from ``delta`` on and infinite below.

    The claim a mechanism carries as ``.claim``; it composes (``+``, :meth:`compose`,
    :meth:`advanced_composition`) under one neighbouring relation.  Its numbers are
    ``point_epsilon`` and ``point_delta``: ``epsilon(delta)`` is the curve, as for every claim.

    >>> c = PointClaim(1.0, 1e-5)
    >>> c.spec, c.point_epsilon, float(c.epsilon(1e-5))
    ('eps:1,delta=1e-05', 1.0, 1.0)
    >>> (c + c).spec, c.compose(3).point_epsilon
    ('eps:2,delta=2e-05', 3.0)
    """

    point_epsilon: float = 0.0
    point_delta: float = 0.0

    def __post_init__(self):
        eps, delta = check_epsilon(self.point_epsilon, "epsilon"), check_delta(self.point_delta, "delta")
        object.__setattr__(self, "point_epsilon", eps)
        object.__setattr__(self, "point_delta", delta)
        object.__setattr__(self, "spec", self.spec or _point_spec(eps, delta))
        object.__setattr__(self, "neighbouring", Neighbouring.parse(self.neighbouring, "neighbouring"))

    def __repr__(self) -> str:
        spec = "" if self.spec == _point_spec(self.point_epsilon, self.point_delta) else f", spec={self.spec!r}"
        return (f"PointClaim(point_epsilon={self.point_epsilon!r}, point_delta={self.point_delta!r}, "
                f"neighbouring={self.neighbouring.value!r}{spec})")

    def grid(self):
        return np.array([self.point_delta]), np.array([self.point_epsilon])

    @property
    def reference(self):
        return self.point_epsilon, self.point_delta

    def __add__(self, other: "PointClaim") -> "PointClaim":
        """Basic sequential composition: the epsilons add and the deltas add (the delta capped below 1)."""
        if not isinstance(other, PointClaim):
            return NotImplemented
        if other.neighbouring is not self.neighbouring:
            raise ParameterValueError(
                f"cannot compose claims under different neighbouring relations; got "
                f"{self.neighbouring.value!r} and {other.neighbouring.value!r}")
        delta = min(_DELTA_CAP, self.point_delta + other.point_delta)
        return PointClaim(self.point_epsilon + other.point_epsilon, delta, neighbouring=self.neighbouring)

    def compose(self, k: int) -> "PointClaim":
        """k-fold basic composition: (k epsilon, k delta), the delta capped below 1."""
        k = check_int(k, "k", low=1)
        return PointClaim(k * self.point_epsilon, min(k * self.point_delta, _DELTA_CAP), neighbouring=self.neighbouring)

    def advanced_composition(self, k: int, delta_prime: float) -> "PointClaim":
        """Advanced composition (Dwork, Rothblum and Vadhan 2010) for k-fold use.

        epsilon' = sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1), delta' + k delta.
        """
        k = check_int(k, "k", low=1)
        delta_prime = check_real(delta_prime, "delta_prime", low=0.0, high=1.0, low_inclusive=False,
                                 high_inclusive=False)
        eps = self.point_epsilon
        eps_total = math.sqrt(2 * k * math.log(1 / delta_prime)) * eps + k * eps * math.expm1(eps)
        return PointClaim(eps_total, min(k * self.point_delta + delta_prime, _DELTA_CAP),
                          neighbouring=self.neighbouring)

    def to_dict(self):
        return {**super().to_dict(), "epsilon": self.point_epsilon, "delta": self.point_delta}

    @classmethod
    def from_dict(cls, d: dict) -> "PointClaim":
        """The claim of :meth:`to_dict`'s dict (``delta`` and ``neighbouring`` optional)."""
        return cls(d["epsilon"], d.get("delta", 0.0), neighbouring=d.get("neighbouring", Neighbouring.ADD_REMOVE),
                   spec=d.get("spec", ""))


def _point_spec(epsilon: float, delta: float) -> str:
    """The ``eps:`` spec of the point (epsilon, delta)."""
    return f"eps:{epsilon:g}" + (f",delta={delta:g}" if delta else "")


@dataclass(frozen=True)
class GaussianDPClaim(Claim):
    """mu-Gaussian DP (Dong, Roth and Su 2022): the trade-off curve of N(0, 1) against N(mu, 1).

    >>> c = GaussianDPClaim(1.0)
    >>> round(float(c.tradeoff(0.05)), 4)   # Phi(Phi^-1(0.95) - 1)
    0.7405
    """

    mu: float = 1.0
    _grid: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "mu", check_real(self.mu, "mu", low=0.0, low_inclusive=False, high=MAX_MU))
        if not self.spec:
            object.__setattr__(self, "spec", f"gdp:mu={self.mu:g}")
        object.__setattr__(self, "_grid", _gdp_grid(self.mu))

    def grid(self):
        return self._grid

    def _epsilon(self, d):
        from ..stats.gdp import gaussian_epsilon

        return np.vectorize(lambda x: gaussian_epsilon(self.mu, float(x)), otypes=[float])(d)

    def tradeoff(self, alpha):
        from scipy.special import ndtr, ndtri

        a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
        return shaped(ndtr(ndtri(1.0 - a) - self.mu), alpha)

    def power_inverse(self, power):
        from scipy.special import ndtr, ndtri

        x = np.clip(np.asarray(power, dtype=float), 0.0, 1.0)
        return shaped(ndtr(ndtri(x) - self.mu), power)

    def to_dict(self):
        return {**super().to_dict(), "mu": self.mu}


@functools.lru_cache(maxsize=64)
def _gdp_grid(mu: float):
    from scipy.special import log_ndtr, ndtr

    from ..stats.gdp import gaussian_epsilon

    def delta_at(eps):
        return ndtr(mu / 2 - eps / mu) - np.exp(eps + log_ndtr(-mu / 2 - eps / mu))

    with quiet_numbers():
        return epsilon_grid(delta_at, gaussian_epsilon(mu, DELTA_FLOOR))


@dataclass(frozen=True)
class ProfileClaim(Claim):
    """(epsilon_i, delta_i)-DP for every listed pair; between them the smallest epsilon whose delta fits.

    >>> c = ProfileClaim(((2.0, 1e-6), (1.0, 1e-3)))
    >>> c.epsilon([1e-7, 1e-6, 1e-3, 0.5]).tolist()
    [inf, 2.0, 1.0, 1.0]
    >>> 1.0 < float(c.epsilon(1e-4)) < 2.0   # on the chord joining the two points
    True
    """

    points: tuple = ()

    def __post_init__(self):
        pts = []
        for i, p in enumerate(self.points):
            if not isinstance(p, (list, tuple)) or len(p) != 2:
                raise ParameterValueError(f"profile entry {i} must be a pair [epsilon, delta]; got {p!r}")
            eps = check_epsilon(p[0], f"profile entry {i} epsilon")
            try:
                delta = check_delta(p[1], f"profile entry {i} delta")
            except ParameterValueError as exc:  # [[1e-5, 2.0]]: a pair written [delta, epsilon]
                raise ParameterValueError(f"{exc} (each pair is [epsilon, delta], epsilon first)") from None
            pts.append((eps, delta))
        if not pts:
            raise ParameterValueError("profile must list at least one [epsilon, delta] pair; got none")
        object.__setattr__(self, "points", tuple(sorted(pts, key=lambda p: (p[1], p[0]))))
        if not self.spec:
            object.__setattr__(self, "spec", "profile:" + json.dumps([list(p) for p in self.points]))

    def grid(self):
        d = np.array([p[1] for p in self.points])
        e = np.array([p[0] for p in self.points])
        # Pareto front: at each delta, the smallest epsilon promised at that delta or any smaller one.
        # Points are sorted by (delta, epsilon), so a delta listed twice keeps its first (smallest) epsilon,
        # and a point is kept only when it lowers every epsilon before it: the grid's deltas stay distinct.
        e = np.minimum.accumulate(e)
        keep = np.r_[True, d[1:] != d[:-1]] & np.r_[True, e[1:] < e[:-1]]
        return d[keep], e[keep]

    @property
    def reference(self):
        d, e = self.grid()
        return float(e[0]), float(d[0])

    def to_dict(self):
        return {**super().to_dict(), "points": [list(p) for p in self.points]}
