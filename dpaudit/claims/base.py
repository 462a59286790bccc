"""The claim as a curve: :class:`Claim`, the base of every claim kind, and the grid a computed curve is read from.

A claim answers ``epsilon(delta)`` (vectorised), ``tradeoff(alpha)`` and ``power_inverse(power)`` from a finite
grid of ``(delta, epsilon)`` points of its curve (:meth:`Claim.grid`); between grid points it is rounded up,
so a claim read here can only make a violation harder to certify.
"""

from __future__ import annotations

import contextlib
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..exceptions import ParameterValueError
from ..neighbouring import Neighbouring

__all__ = ["DELTA_FLOOR", "GRID_POINTS", "Claim", "as_deltas", "epsilon_grid", "quiet_numbers", "shaped"]

#: Smallest delta a computed curve is tested at; below it no audit of fewer than 10^10 releases certifies more.
DELTA_FLOOR = 1e-12
#: Points of a computed curve's grid (an epsilon grid, so the claim is exact at each point).
GRID_POINTS = 400


def as_deltas(delta) -> np.ndarray:
    """``delta`` as a float array, each in [0, 1) (a ParameterValueError otherwise)."""
    d = np.asarray(delta, dtype=float)
    if np.any(~np.isfinite(d)) or np.any((d < 0) | (d >= 1)):
        raise ParameterValueError(f"delta must be in [0, 1); got {delta!r}")
    return d


def shaped(values: np.ndarray, like) -> Any:
    """``values`` as an array when ``like`` is one, else as a float."""
    return values if np.ndim(like) else float(values)


@dataclass(frozen=True)
class Claim(ABC):
    """A privacy promise as a curve ``epsilon(delta)``; subclasses say how it is computed.

    ``spec`` is the text the claim was given as (echoed in reports);
    ``neighbouring`` the relation it is made for.
    """

    spec: str = field(default="", kw_only=True)
    neighbouring: Neighbouring = field(default=Neighbouring.ADD_REMOVE, kw_only=True)
    _epsilons_read: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    #: The relation the curve was computed for when the claim itself fixes one (an accountant's: add/remove),
    #: else None (a point, a GDP curve or a profile promises it for whatever neighbours its author means).
    accounted_for: ClassVar[Neighbouring | None] = None

    @abstractmethod
    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """``(deltas, epsilons)``: points of the curve, deltas increasing, epsilons finite and exact there."""

    def epsilon(self, delta):
        """The claimed epsilon at each ``delta`` (``inf`` where the claim promises nothing finite).

        Between two grid points the curve is read off the chord joining them in
        the (e^epsilon, delta) plane: every mechanism's delta(epsilon) is convex
        in e^epsilon (an integral of ``(p - e^epsilon q)_+``), so a mechanism
        meeting both points meets the chord, and the claim is never understated.
        Beyond the largest grid delta the last epsilon holds.  One delta's answer
        is kept (a claim is immutable): an audit asks for the same few deltas again
        and again.
        """
        if np.ndim(delta) == 0:
            key = float(delta)
            if key not in self._epsilons_read:
                self._epsilons_read[key] = float(self._epsilon(as_deltas(key)))
            return self._epsilons_read[key]
        return self._epsilon(as_deltas(delta))

    def _epsilon(self, d: np.ndarray) -> np.ndarray:
        """:meth:`epsilon` at checked deltas ``d`` (an array of any shape), from the grid's chords."""
        gd, ge = self.grid()
        if len(ge) == 0:  # no point with a finite epsilon: nothing promised (finite_point then says so)
            return np.full(np.shape(d), np.inf)
        i = np.searchsorted(gd, d, side="right") - 1
        j = np.clip(i, 0, len(ge) - 1)
        k = np.clip(i + 1, 0, len(ge) - 1)
        out = np.where(i >= 0, ge[j], np.inf)
        inner = (i >= 0) & (i + 1 < len(ge))
        if np.any(inner):
            span = np.where(gd[k] > gd[j], gd[k] - gd[j], 1.0)
            w = np.clip((d - gd[j]) / span, 0.0, 1.0)
            # log(e^a + w (e^b - e^a)) with a = ge[j] >= b = ge[k], written so that e^epsilon never overflows (a
            # profile may state epsilons of several hundred).
            out = np.where(inner, ge[j] + np.log1p(w * np.expm1(ge[k] - ge[j])), out)
        return out

    def tradeoff(self, alpha):
        """The trade-off curve: the smallest false-negative rate a test with false-positive rate ``alpha`` can have.

        Each point (epsilon, delta) of the curve allows ``max(0, 1 - delta - e^epsilon alpha,
        e^-epsilon (1 - delta - alpha))``; the claim is all of them at once (Dong, Roth and Su 2022, Prop. 2.12).
        """
        a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
        gd, ge = self.grid()
        e = np.exp(np.minimum(ge, 700.0))
        f = np.maximum(1.0 - gd - e * a[..., None], (1.0 - gd - a[..., None]) / e)
        return shaped(np.maximum(f.max(axis=-1), 0.0), alpha)

    def power_inverse(self, power):
        """The smallest false-positive rate at which a test can have true-positive rate ``power``: ``1 - f``'s inverse.

        From the grid: each point (epsilon, delta) needs at least ``max(0, (power - delta) e^-epsilon,
        1 - delta - e^epsilon (1 - power))``, and the claim all of them at once, so this is the
        exact inverse of :meth:`tradeoff` (the one-run f-DP test reads the curve this way round).

        >>> from dpaudit.claims import PointClaim
        >>> round(float(PointClaim(1.0).power_inverse(0.5)), 4)    # epsilon-DP: power 1/2 needs rate e^-1 / 2
        0.1839
        """
        x = np.clip(np.asarray(power, dtype=float), 0.0, 1.0)
        gd, ge = self.grid()
        e = np.exp(np.minimum(ge, 700.0))
        a = np.maximum((x[..., None] - gd) / e, 1.0 - gd - e * (1.0 - x[..., None]))
        return shaped(np.maximum(a.max(axis=-1), 0.0), power)

    @property
    def is_curve(self) -> bool:
        """True for a curve of more than one point (a point claim's grid is its one point).

        >>> from dpaudit.claims import parse_claim
        >>> parse_claim("gdp:mu=1").is_curve, parse_claim("eps:1,delta=1e-5").is_curve
        (True, False)
        """
        return len(self.grid()[0]) > 1

    @property
    def reference(self) -> tuple[float, float]:
        """``(epsilon, delta)`` shown when nothing is certified: the point itself, else the curve at 1e-5."""
        d = 1e-5
        return float(self.epsilon(d)), d

    @property
    def finite_point(self) -> tuple[float, float]:
        """A point of the curve with finite epsilon: :attr:`reference`, else the first grid point.

        Per-delta extras (a GDP event, sequential planning, a search's screening) start from it.
        """
        eps, delta = self.reference
        if not np.isfinite(eps):
            gd, ge = self.grid()
            if len(ge) == 0:  # gdp:mu=1e300: no delta the grid reaches has a finite epsilon
                raise ParameterValueError(f"claim {self.spec!r} promises no finite epsilon at any delta >= "
                                          f"{DELTA_FLOOR:g}; there is no curve to audit against")
            eps, delta = ge[0], gd[0]
        return float(eps), float(delta)

    @property
    def kind(self) -> str:
        return self.spec.split(":", 1)[0] if ":" in self.spec else type(self).__name__

    def to_dict(self) -> dict:
        return {"spec": self.spec, "kind": self.kind, "neighbouring": self.neighbouring.value}

    def __str__(self) -> str:
        return self.spec


def epsilon_grid(delta_at, eps_max: float) -> tuple[np.ndarray, np.ndarray]:
    """An epsilon grid on [0, eps_max] and the curve's delta at each point, as (deltas increasing, epsilons)."""
    eps = np.linspace(0.0, eps_max, GRID_POINTS)
    raw = np.asarray(delta_at(eps), dtype=float)
    deltas = np.clip(raw, 0.0, 1.0)
    # Not a number is no delta: beyond epsilon ~709 dp-accounting's e^epsilon overflows to a delta of -inf, which
    # clipped to 0 would claim a finite epsilon at delta 0 (docs/decisions/claims.md).
    keep = np.isfinite(raw) & (deltas < 1.0)
    return deltas[keep][::-1].copy(), eps[keep][::-1].copy()


@contextlib.contextmanager
def quiet_numbers():
    """numpy's and dp_accounting's RuntimeWarnings off: a curve of extreme parameters (gdp:mu=1e300) overflows on
    its way to an answer that is checked (finite, or a one-line error), and a warning would be a second line."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
