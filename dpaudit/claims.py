"""Claims as whole privacy curves: what a mechanism promises at every delta, not at one.

A mechanism's privacy is a curve: for each delta the smallest epsilon with
(epsilon, delta)-DP, its *privacy profile*; equivalently a trade-off curve
f (Dong, Roth and Su 2022): every test of "D or D'" with false-positive rate
alpha has a false-negative rate of at least f(alpha) (Zhu, Dong and Wang 2022
for the translation between the two).  DP-SGD is accounted this way, so
auditing it against one (epsilon, delta) point of its curve throws most of the
promise away.  A claim here is an immutable value object that keeps the spec
it came from and answers ``epsilon(delta)`` (vectorised) and ``tradeoff(alpha)``.

Specs (``parse_claim``):

========================================  ==========================================================
``eps:EPS[,delta=DELTA]``                 the one point (EPS, DELTA), as ``--epsilon/--delta``
``gdp:mu=MU``                             mu-Gaussian DP (Dong, Roth and Su 2022)
``dpsgd:noise=SIGMA,rate=Q,steps=T``      T Poisson-subsampled Gaussian steps, add/remove
                                          neighbours, as dp-accounting's PLD accountant computes it
                                          (T at most :data:`MAX_STEPS`, 10^7)
``profile:FILE.json``                     a JSON list ``[[epsilon, delta], ...]``: (epsilon, delta)-DP
                                          for each pair
========================================  ==========================================================

From Python, a ``dp_accounting`` ``DpEvent`` is a claim too (:class:`AccountantClaim`).
A ``dpsgd:`` curve is computed once per machine and kept on disk (:func:`cache_dir`):
importing dp-accounting alone takes about a second, which every command would
otherwise pay again.

Every claim is tested on a finite grid of ``(delta, epsilon)`` points of its curve
(:meth:`Claim.grid`); a curve test may use any grid, since a certified lower
curve holds at every delta at once (:mod:`dpaudit.stats.curves`).  Curves the
library computes are never below the true one: the accountant's is its
pessimistic estimate, and between grid points ``epsilon(delta)`` is rounded up,
so a claim read here can only make a violation harder to certify.

Examples
--------
>>> c = parse_claim("gdp:mu=1")
>>> c.spec, round(float(c.epsilon(1e-3)), 3)
('gdp:mu=1', 3.139)
>>> parse_claim("eps:1,delta=1e-5").epsilon([0.0, 1e-5]).tolist()
[inf, 1.0]
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import threading
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ._validation import check_delta, check_epsilon, check_int, check_real, number_text, underscore_hint
from .exceptions import ParameterTypeError, ParameterValueError
from .privacy import Neighbouring, PrivacyClaim

__all__ = [
    "CLAIM_KINDS",
    "AccountantClaim",
    "Claim",
    "DPSGDClaim",
    "GaussianDPClaim",
    "PointClaim",
    "ProfileClaim",
    "as_claim",
    "cache_dir",
    "dpsgd_event",
    "parse_claim",
    "register_claim_kind",
]

#: The spec prefixes :func:`parse_claim` reads.
CLAIM_KINDS = ("eps", "gdp", "dpsgd", "profile")
#: Kinds added with :func:`register_claim_kind`: prefix -> ``parse(body, *, spec) -> Claim``.
CLAIM_PARSERS: dict = {}


def register_claim_kind(kind: str, parse) -> None:
    """Make specs ``"KIND:BODY"`` parse as ``parse(BODY, spec=SPEC)``, a :class:`Claim` (every entry point reads it)."""
    if kind in CLAIM_KINDS or not kind.isidentifier():
        raise ParameterValueError(f"register_claim_kind: {kind!r} is built in or not a name")
    CLAIM_PARSERS[kind.lower()] = parse

#: Smallest delta a computed curve is tested at; below it no audit of fewer than 10^10 releases certifies more.
DELTA_FLOOR = 1e-12
#: Points of a computed curve's grid (an epsilon grid, so the claim is exact at each point).
GRID_POINTS = 400
#: Most steps a ``dpsgd:`` claim takes.  DP-SGD runs take up to about a million steps; dp-accounting composes
#: 10^7 steps in under a second at rate 0.01 (10^8 in 1.5 s, 10^9 in 50 s, and at rate 1 10^7 already takes
#: over a minute), and beyond 2^63 it fails with an OverflowError.
MAX_STEPS = 10**7
#: The PLD accountant's discretisation: pessimistic (never below the exact curve); 1e-4 (its default)
#: agrees to 4 decimals on the reference DP-SGD curves at 10x the cost.
PLD_DISCRETIZATION = 1e-3


def _as_deltas(delta) -> np.ndarray:
    d = np.asarray(delta, dtype=float)
    if np.any(~np.isfinite(d)) or np.any((d < 0) | (d >= 1)):
        raise ParameterValueError(f"delta must be in [0, 1); got {delta!r}")
    return d


def _out(values: np.ndarray, delta) -> Any:
    return values if np.ndim(delta) else float(values)


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
        and again, and each read cost 0.1 ms.
        """
        if np.ndim(delta) == 0:
            key = float(delta)
            if key not in self._epsilons_read:
                self._epsilons_read[key] = float(self._epsilon(_as_deltas(key)))
            return self._epsilons_read[key]
        return self._epsilon(_as_deltas(delta))

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
            # log(e^a + w (e^b - e^a)) with a = ge[j] >= b = ge[k], written so that e^epsilon never overflows: a
            # profile's [[800, 1e-5], [700, 1e-3]] read NaN at every delta, even at its own points.
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
        return _out(np.maximum(f.max(axis=-1), 0.0), alpha)

    def power_inverse(self, power):
        """The smallest false-positive rate at which a test can have true-positive rate ``power``: ``1 - f``'s inverse.

        From the grid: each point (epsilon, delta) needs at least ``max(0, (power - delta) e^-epsilon,
        1 - delta - e^epsilon (1 - power))``, and the claim all of them at once, so this is the
        exact inverse of :meth:`tradeoff` (the one-run f-DP test reads the curve this way round).

        >>> round(float(PointClaim(1.0).power_inverse(0.5)), 4)    # epsilon-DP: power 1/2 needs rate e^-1 / 2
        0.1839
        """
        x = np.clip(np.asarray(power, dtype=float), 0.0, 1.0)
        gd, ge = self.grid()
        e = np.exp(np.minimum(ge, 700.0))
        a = np.maximum((x[..., None] - gd) / e, 1.0 - gd - e * (1.0 - x[..., None]))
        return _out(np.maximum(a.max(axis=-1), 0.0), power)

    @property
    def is_curve(self) -> bool:
        """True for a curve of more than one point (a point claim's grid is its one point).

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


@dataclass(frozen=True)
class PointClaim(Claim):
    """(epsilon, delta)-DP: one point, the curve that is ``epsilon`` from ``delta`` on and infinite below.

    >>> PointClaim(1.0, 1e-5).spec
    'eps:1,delta=1e-05'
    """

    point_epsilon: float = 0.0
    point_delta: float = 0.0

    def __post_init__(self):
        eps, delta = check_epsilon(self.point_epsilon, "epsilon"), check_delta(self.point_delta, "delta")
        object.__setattr__(self, "point_epsilon", eps)
        object.__setattr__(self, "point_delta", delta)
        object.__setattr__(self, "spec", self.spec or f"eps:{eps:g}" + (f",delta={delta:g}" if delta else ""))
        object.__setattr__(self, "neighbouring", Neighbouring.parse(self.neighbouring))

    def grid(self):
        return np.array([self.point_delta]), np.array([self.point_epsilon])

    @property
    def reference(self):
        return self.point_epsilon, self.point_delta

    @property
    def privacy_claim(self) -> PrivacyClaim:
        return PrivacyClaim(self.point_epsilon, self.point_delta, self.neighbouring)

    def to_dict(self):
        return {**super().to_dict(), "epsilon": self.point_epsilon, "delta": self.point_delta}


def _epsilon_grid(delta_at, eps_max: float) -> tuple[np.ndarray, np.ndarray]:
    """An epsilon grid on [0, eps_max] and the curve's delta at each point, as (deltas increasing, epsilons)."""
    eps = np.linspace(0.0, eps_max, GRID_POINTS)
    raw = np.asarray(delta_at(eps), dtype=float)
    deltas = np.clip(raw, 0.0, 1.0)
    # Not a number is no delta: beyond epsilon ~709 dp-accounting's e^epsilon overflows to a delta of -inf, which
    # clipped to 0 claimed (720, 0)-DP for DP-SGD (no finite epsilon at delta 0) and put NaN in the curve's chords.
    keep = np.isfinite(raw) & (deltas < 1.0)
    return deltas[keep][::-1].copy(), eps[keep][::-1].copy()


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
        from .stats.gdp import gaussian_epsilon

        return np.vectorize(lambda x: gaussian_epsilon(self.mu, float(x)), otypes=[float])(d)

    def tradeoff(self, alpha):
        from scipy.special import ndtr, ndtri

        a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
        return _out(ndtr(ndtri(1.0 - a) - self.mu), alpha)

    def power_inverse(self, power):
        from scipy.special import ndtr, ndtri

        x = np.clip(np.asarray(power, dtype=float), 0.0, 1.0)
        return _out(ndtr(ndtri(x) - self.mu), power)

    def to_dict(self):
        return {**super().to_dict(), "mu": self.mu}


#: Largest mu a GDP claim may state: its epsilon at delta 1e-12 is then about 10^12, and beyond about 10^150 the
#: curve's arithmetic overflows (mu^2).  No audit can come near such a claim.
MAX_MU = 1e6


@contextlib.contextmanager
def _quiet_numbers():
    """numpy's and dp_accounting's RuntimeWarnings off: a curve of extreme parameters (gdp:mu=1e300) overflows on
    its way to an answer that is checked (finite, or a one-line error), and a warning would be a second line."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@functools.lru_cache(maxsize=64)
def _gdp_grid(mu: float):
    from scipy.special import log_ndtr, ndtr

    from .stats.gdp import gaussian_epsilon

    def delta_at(eps):
        return ndtr(mu / 2 - eps / mu) - np.exp(eps + log_ndtr(-mu / 2 - eps / mu))

    with _quiet_numbers():
        return _epsilon_grid(delta_at, gaussian_epsilon(mu, DELTA_FLOOR))


def dpsgd_event(noise: float, rate: float, steps: int):
    """The ``dp_accounting`` event of ``steps`` Poisson-subsampled Gaussian steps (DP-SGD's accounting)."""
    from dp_accounting import dp_event

    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(noise)), steps)


class _EventKey:
    """A ``DpEvent`` hashed by its repr: events holding lists (``ComposedDpEvent``) are not hashable themselves."""

    __slots__ = ("event", "text")

    def __init__(self, event):
        self.event, self.text = event, repr(event)

    def __hash__(self):
        return hash(self.text)

    def __eq__(self, other):
        return isinstance(other, _EventKey) and other.text == self.text


@functools.lru_cache(maxsize=64)
def _accountant_grid(key: _EventKey):
    """(deltas, epsilons) of ``key.event``'s curve, from one PLD (its pessimistic estimate), cached by the event."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    event, event_repr = key.event, key.text
    acc = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        value_discretization_interval=PLD_DISCRETIZATION)
    if not acc.supports(event):
        replace_one = dp_accounting.NeighboringRelation.REPLACE_ONE
        replace = pld_privacy_accountant.PLDAccountant(neighboring_relation=replace_one)
        why = (" for add/remove neighbours, the relation of every claim here (it computes this event for replace-one "
               "neighbours only)" if replace.supports(event) else "")
        raise ParameterValueError(f"claim: dp_accounting's PLD accountant does not support the event {event_repr}{why}")
    try:
        with _quiet_numbers():
            acc.compose(event)
            eps_max = float(acc.get_epsilon(DELTA_FLOOR))
    except (ArithmeticError, ValueError) as exc:  # dpsgd:noise=1e-300 overflows inside dp_accounting
        if isinstance(exc, ParameterValueError):
            raise
        raise ParameterValueError(f"claim: dp_accounting cannot compute the curve of the event {event_repr} "
                                  f"({type(exc).__name__}: {exc})") from None
    if not np.isfinite(eps_max):  # NonPrivateDpEvent, or a curve without a finite grid to test on
        # Not "promises none": LaplaceDpEvent(0.001) is 1000-DP, past the float range dp_accounting computes in.
        raise ParameterValueError(f"claim: dp_accounting gives no finite epsilon at delta = {DELTA_FLOOR:g} for the "
                                  f"event {event_repr} (its answer is {eps_max}): the event is not private, or its "
                                  "epsilon is beyond what the accountant computes (about 700); there is no curve to "
                                  "audit")
    # The composed PLD answers a whole epsilon grid in one call (0.04 s); the public one-epsilon
    # answer serves when a later dp-accounting keeps it elsewhere (400 calls, about 1 s).
    pld = getattr(acc, "_pld", None)
    with _quiet_numbers():  # beyond epsilon ~709 dp_accounting's e^epsilon overflows: NaN deltas, dropped
        if pld is not None and hasattr(pld, "get_delta_for_epsilon"):
            grid = _epsilon_grid(lambda e: pld.get_delta_for_epsilon(e), max(eps_max, 1e-6))
        else:
            grid = _epsilon_grid(lambda e: np.array([acc.get_delta(float(x)) for x in e]), max(eps_max, 1e-6))
    if len(grid[0]) == 0:  # dpsgd:noise=0.02,rate=1,steps=1: mu = 50, every point overflowed
        raise ParameterValueError(f"claim: dp_accounting computes no point of the curve of the event {event_repr} "
                                  f"with delta < 1 (its epsilon at delta = {DELTA_FLOOR:g} is {eps_max:.4g}, beyond "
                                  "what its arithmetic reaches and far beyond what any audit could certify)")
    return grid


#: Seconds a curve may take before :func:`_note_if_slow` says on stderr that it is being computed.
SLOW_NOTE_AFTER = 3.0


@contextlib.contextmanager
def _note_if_slow(what: str):
    """A ``note:`` line on stderr if the block (dp-accounting computing ``what``'s curve) runs over
    :data:`SLOW_NOTE_AFTER` seconds, so a long wait is not silent; a quick block says nothing.

    Tiny noise is what takes long: ``dpsgd:noise=0.01,rate=0.01,steps=1`` spends about a minute in
    dp-accounting building the Gaussian's privacy loss distribution (12 million privacy-loss inversions,
    one Python call each, at the 1e-3 discretisation of :data:`PLD_DISCRETIZATION`).  A coarser
    discretisation is quicker but is not kept: its epsilons came out below this one's at some deltas
    (noise 0.02: 903 instead of 939 at delta 1e-2), and a claim's curve must not get less conservative.
    The note is a progress line, said while the command runs and only where the progress bar is drawn (a
    terminal, or ``DPAUDIT_PROGRESS=1``): where stderr is a log, an error stays the one line there.  The next
    run reads the disk cache at once.
    """
    def say():
        from ._progress import progress_wanted

        if not progress_wanted(None):  # a log or a captured stream: the error (if any) stays the only line
            return
        print(f"note: computing the accountant's curve for {what}; with tiny noise dp-accounting takes up to "
              "a few minutes (the curve is then cached on disk)", file=sys.stderr, flush=True)

    timer = threading.Timer(SLOW_NOTE_AFTER, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def cache_dir() -> Path | None:
    """Where computed curves are kept between processes: ``$DPAUDIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/dpaudit``,
    else ``~/.cache/dpaudit``; None when ``DPAUDIT_CACHE_DIR`` is ``off`` (or empty)."""
    given = os.environ.get("DPAUDIT_CACHE_DIR")
    if given is not None:
        return None if given.strip().lower() in ("", "off", "0", "no") else Path(given).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = Path.home() / ".cache"
        except (RuntimeError, KeyError):  # no home directory (a container's anonymous user): no cache
            return None
    return Path(base) / "dpaudit"


def _dp_accounting_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dp-accounting")
    except PackageNotFoundError:  # pragma: no cover - a declared dependency
        return "absent"


def _dpsgd_grid_computed(noise: float, rate: float, steps: int, version: str, settings: tuple):
    """The grid of ``dpsgd_event(noise, rate, steps)``; ``version`` and ``settings`` only key the disk cache."""
    return _accountant_grid(_EventKey(dpsgd_event(noise, rate, steps)))


def _grid_code() -> str:
    """A digest of the code that builds a grid from the accountant, for the disk cache's key: a fix in
    :func:`_epsilon_grid` must not be answered by grids stored before it (joblib's key, the cached function's own
    code only, kept serving them)."""
    import hashlib
    import types

    digest = hashlib.sha256()

    def add(code):  # nested code objects (lambdas) by their contents: their repr holds a memory address
        digest.update(code.co_code)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                add(const)
            else:
                digest.update(repr(const).encode())

    for fn in (_epsilon_grid, _accountant_grid.__wrapped__, _dpsgd_grid_computed, dpsgd_event):
        add(fn.__code__)
    return digest.hexdigest()[:16]


#: The folder under :func:`cache_dir` that keeps computed DP-SGD curves, one ``.npz`` file per curve.
CURVE_CACHE = "curves"


@functools.lru_cache(maxsize=64)
def _dpsgd_grid(noise: float, rate: float, steps: int):
    """DP-SGD's accountant grid, from the disk cache when it holds it (keyed by the arguments, dp-accounting's
    version, the grid's settings and the code that builds it), else computed and stored.  A cache that cannot be
    read or written is skipped: the curve is the same, only slower to get.

    One ``.npz`` file per curve rather than ``joblib.Memory``: importing joblib was 46 ms of the 75 ms that a
    ``dpsgd:`` claim added to ``dpaudit one-run`` (0.48 s with a point claim); reading the file takes 1 ms.
    """
    import hashlib

    args = (float(noise), float(rate), int(steps), _dp_accounting_version(),
            (PLD_DISCRETIZATION, GRID_POINTS, DELTA_FLOOR, _grid_code()))
    where = cache_dir()
    path = None if where is None else where / CURVE_CACHE / f"{hashlib.sha256(repr(args).encode()).hexdigest()}.npz"
    if path is not None:
        try:
            with np.load(path) as stored:
                return stored["deltas"], stored["epsilons"]
        except (OSError, KeyError, ValueError, EOFError):  # absent, unreadable or cut short: computed again
            pass
    with _note_if_slow(f"dpsgd:noise={noise:g},rate={rate:g},steps={steps}"):
        grid = _dpsgd_grid_computed(*args)
    if path is not None:
        _store_grid(path, grid)
    return grid


def _store_grid(path: Path, grid) -> None:
    """``grid`` saved whole at ``path`` (:func:`~dpaudit.results.atomic_write_text`: a reader never sees half), or
    nothing."""
    import io

    from .results import atomic_write_text

    buffer = io.BytesIO()
    np.savez(buffer, deltas=np.asarray(grid[0]), epsilons=np.asarray(grid[1]))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, buffer.getvalue())
    except OSError:
        pass


@dataclass(frozen=True)
class DPSGDClaim(Claim):
    """DP-SGD's curve (spec ``dpsgd:noise=SIGMA,rate=Q,steps=T``): ``steps`` Poisson-subsampled Gaussian
    steps with noise multiplier ``noise`` and rate ``rate``, add/remove neighbours, from dp-accounting's
    PLD accountant as :class:`AccountantClaim` computes it; the grid is cached on disk (:func:`cache_dir`),
    so a process that finds it there never imports dp-accounting (about a second).  ``steps`` is at most
    :data:`MAX_STEPS` (10^7).

    >>> c = parse_claim("dpsgd:noise=1,rate=0.1,steps=10")
    >>> [round(float(e), 3) for e in c.epsilon([1e-5, 1e-3, 1e-2])]
    [2.855, 1.572, 0.887]
    """

    accounted_for: ClassVar[Neighbouring | None] = Neighbouring.ADD_REMOVE
    noise: float = 1.0
    rate: float = 0.01
    steps: int = 1
    _grid: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "noise", check_real(self.noise, "noise", low=0.0, low_inclusive=False, finite=True))
        object.__setattr__(self, "rate", check_real(self.rate, "rate", low=0.0, high=1.0, low_inclusive=False))
        object.__setattr__(self, "steps", check_int(self.steps, "steps", low=1, high=MAX_STEPS))
        if not self.spec:
            object.__setattr__(self, "spec", f"dpsgd:noise={self.noise:g},rate={self.rate:g},steps={self.steps}")
        object.__setattr__(self, "_grid", _dpsgd_grid(self.noise, self.rate, self.steps))

    def grid(self):
        return self._grid

    @property
    def event(self):
        """The ``dp_accounting`` event (imports dp-accounting)."""
        return dpsgd_event(self.noise, self.rate, self.steps)

    def to_dict(self):
        return {**super().to_dict(), "noise": self.noise, "rate": self.rate, "steps": self.steps}


@dataclass(frozen=True)
class AccountantClaim(Claim):
    """The curve of a ``dp_accounting`` ``DpEvent``, add/remove neighbours, from its PLD accountant.

    The curve is computed once per event and process (cached) on an epsilon grid of
    :data:`GRID_POINTS` points down to delta :data:`DELTA_FLOOR`.

    >>> c = AccountantClaim(dpsgd_event(1.0, 0.1, 10))
    >>> [round(float(e), 3) for e in c.epsilon([1e-5, 1e-3, 1e-2])]
    [2.855, 1.572, 0.887]
    """

    accounted_for: ClassVar[Neighbouring | None] = Neighbouring.ADD_REMOVE
    event: Any = None
    _grid: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self):
        try:
            from dp_accounting import dp_event
        except ImportError as exc:  # pragma: no cover - a declared dependency
            from .exceptions import MissingExtraError

            raise MissingExtraError("claims from a DpEvent need dp-accounting (pip install dp-accounting)") from exc
        if not isinstance(self.event, dp_event.DpEvent):
            raise ParameterTypeError(f"event must be a dp_accounting DpEvent; got {self.event!r}")
        if not self.spec:
            object.__setattr__(self, "spec", repr(self.event))
        with _note_if_slow(self.spec if len(self.spec) <= 200 else "a DpEvent"):
            object.__setattr__(self, "_grid", _accountant_grid(_EventKey(self.event)))

    def grid(self):
        return self._grid

    def to_dict(self):
        return {**super().to_dict(), "event": repr(self.event)}


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


# ----------------------------------------------------------------------------- parsing
def _fields(spec: str, body: str, allowed: tuple[str, ...], *, first: str | None = None) -> dict[str, str]:
    """``key=value`` pairs of a spec body; a bare first value is ``first`` (``eps:1``)."""
    out: dict[str, str] = {}
    for i, part in enumerate(p.strip() for p in body.split(",")):
        key, sep, value = part.partition("=")
        if not sep and i == 0 and first is not None:
            key, value = first, key
        elif not sep:
            raise ParameterValueError(f"claim {spec!r}: expected KEY=VALUE, got {part!r}")
        key = key.strip().lower()
        if key not in allowed:
            raise ParameterValueError(f"claim {spec!r}: unknown key {key!r}; expected {', '.join(allowed)}")
        if key in out:
            raise ParameterValueError(f"claim {spec!r}: {key} is given twice")
        out[key] = value.strip()
    missing = [k for k in allowed if k not in out and k not in ("delta",)]
    if missing:
        raise ParameterValueError(f"claim {spec!r}: missing {', '.join(missing)}")
    return out


def _number(spec: str, key: str, text: str) -> float:
    """``text`` in decimal or scientific notation (:func:`~dpaudit._validation.number_text`): ``mu=1_0`` is refused,
    not read as 10 the way ``float()`` reads it."""
    try:
        return number_text(text)
    except ValueError:
        raise ParameterValueError(f"claim {spec!r}: {key} must be a number{underscore_hint(text)}; got {text!r}"
                                  ) from None


def _named(text: str, fn, *args, **kw):
    """Run a check and prefix its message with the spec ``text``."""
    try:
        return fn(*args, **kw)
    except (ParameterValueError, ParameterTypeError) as exc:
        # a spec is text: any flaw is a wrong value; a message that names "claim:" itself names the spec instead
        raise ParameterValueError(f"claim {text!r}: {str(exc).removeprefix('claim: ')}") from None


def parse_claim(spec: str) -> Claim:
    """The claim a spec names (see the module docstring).

    Raises :class:`~dpaudit.exceptions.ParameterValueError` naming the part
    of the spec that is wrong.

    Examples
    --------
    >>> parse_claim("dpsgd:noise=1,rate=0.1,steps=10").kind
    'dpsgd'
    >>> parse_claim("dpsgd:noise=1,rate=2,steps=10")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: claim 'dpsgd:noise=1,rate=2,steps=10': rate must be in (0, 1]; got 2.0
    """
    if not isinstance(spec, str):
        raise ParameterTypeError(f"claim must be a spec string, a claim object or a dp_accounting DpEvent; got {spec!r}")
    text = spec.strip()
    kind, sep, body = text.partition(":")
    kind = kind.strip().lower()
    if sep and kind in CLAIM_PARSERS:
        return _named(spec, CLAIM_PARSERS[kind], body.strip(), spec=text)
    if not sep or kind not in CLAIM_KINDS:
        raise ParameterValueError(f"claim {spec!r}: unknown kind {kind!r}; expected one of "
                                  + ", ".join(f"{k}:..." for k in (*CLAIM_KINDS, *CLAIM_PARSERS)))
    if not body.strip():
        raise ParameterValueError(f"claim {spec!r}: nothing after '{kind}:'")
    if kind == "eps":
        f = _fields(spec, body, ("epsilon", "delta"), first="epsilon")
        eps = _named(spec, check_epsilon, _number(spec, "epsilon", f["epsilon"]))
        delta = _named(spec, check_delta, _number(spec, "delta", f.get("delta", "0")))
        return PointClaim(eps, delta, spec=text)
    if kind == "gdp":
        f = _fields(spec, body, ("mu",))
        mu = _named(spec, check_real, _number(spec, "mu", f["mu"]), "mu", low=0.0, low_inclusive=False, high=MAX_MU)
        return GaussianDPClaim(mu, spec=text)
    if kind == "dpsgd":
        f = _fields(spec, body, ("noise", "rate", "steps"))
        noise = _named(spec, check_real, _number(spec, "noise", f["noise"]), "noise", low=0.0, low_inclusive=False,
                       finite=True)
        rate = _named(spec, check_real, _number(spec, "rate", f["rate"]), "rate", low=0.0, high=1.0,
                      low_inclusive=False)
        steps = _named(spec, check_int, _number(spec, "steps", f["steps"]), "steps", low=1, high=MAX_STEPS)
        return _named(spec, DPSGDClaim, noise, rate, steps, spec=text)  # dp_accounting may refuse the event
    from .datasets import expand_user

    path = expand_user(body.strip())  # the shell leaves ~ after 'profile:' alone, as it is not a word's start
    try:
        points = json.loads(path.read_text(encoding="utf-8-sig"))  # a BOM, as score files allow
    except OSError as exc:
        raise ParameterValueError(f"claim {spec!r}: cannot read {str(path)!r} ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ParameterValueError(f"claim {spec!r}: {str(path)!r} is not valid JSON ({exc})") from None
    if not isinstance(points, list):
        raise ParameterValueError(f"claim {spec!r}: {str(path)!r} must hold a list [[epsilon, delta], ...]")
    return _named(spec, ProfileClaim, tuple(points), spec=text)


def as_claim(claim=None, *, epsilon=None, delta=None, neighbouring=None) -> Claim:
    """The claim of an entry point: ``claim`` (a spec, a :class:`Claim`, a ``DpEvent``) or ``epsilon``/``delta``.

    Giving both is an error: a point and a curve would be two claims, and
    which one the verdict answered would be a guess.  ``delta`` alone (with
    ``claim``) counts as given only when it is not ``None`` or 0.

    >>> as_claim(epsilon=1.0).spec
    'eps:1'
    >>> as_claim("gdp:mu=1", epsilon=1.0)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: claim: give either a claim or epsilon/delta, not both; got claim='gdp:mu=1' and epsilon=1.0
    """
    if claim is None:
        if epsilon is None:
            raise ParameterValueError("epsilon is required (or a claim, e.g. claim='gdp:mu=1')")
        kw = {} if neighbouring is None else {"neighbouring": neighbouring}
        return PointClaim(epsilon, 0.0 if delta is None else delta, **kw)
    if epsilon is not None or (delta is not None and delta != 0):
        given = f"epsilon={epsilon!r}" if epsilon is not None else f"delta={delta!r}"
        raise ParameterValueError(f"claim: give either a claim or epsilon/delta, not both; got claim={str(claim)!r} "
                                  f"and {given}")
    if isinstance(claim, Claim):
        return claim
    if isinstance(claim, PrivacyClaim):
        return PointClaim(claim.epsilon, claim.delta, neighbouring=claim.neighbouring)
    if isinstance(claim, str):
        return parse_claim(claim)
    try:
        from dp_accounting import dp_event
    except ImportError:  # pragma: no cover
        dp_event = None
    if dp_event is not None and isinstance(claim, dp_event.DpEvent):
        return AccountantClaim(claim)
    raise ParameterTypeError("claim must be a spec string ('gdp:mu=1', 'dpsgd:noise=1,rate=0.01,steps=100', "
                             f"'profile:FILE.json', 'eps:1'), a Claim or a dp_accounting DpEvent; got {claim!r}")

