"""Curves an accountant computes: DP-SGD (``dpsgd:`` specs) and any ``dp_accounting`` ``DpEvent``.

Every such curve comes from one PLD accountant (:func:`pld_accountant`, add/remove neighbours, one
discretisation: :data:`PLD_DISCRETIZATION`), read on an epsilon grid; the accountant's estimate is
pessimistic, so a claim read here is never below the exact curve.  A ``dpsgd:`` curve is computed once
per machine and kept on disk (:func:`cache_dir`), so a command that finds it there never imports
dp-accounting, whose import is slow.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .._validation import check_int, check_real
from ..exceptions import ParameterTypeError, ParameterValueError
from ..neighbouring import Neighbouring
from .base import DELTA_FLOOR, GRID_POINTS, Claim, epsilon_grid, quiet_numbers

__all__ = ["CURVE_CACHE", "MAX_STEPS", "PLD_DISCRETIZATION", "SLOW_NOTE_AFTER", "AccountantClaim", "DPSGDClaim",
           "cache_dir", "dpsgd_event", "pld_accountant"]

#: Most steps a ``dpsgd:`` claim takes: DP-SGD runs take up to about a million steps, and beyond this
#: dp-accounting's composition takes minutes (docs/decisions/accountant-discretisation.md).
MAX_STEPS = 10**7
#: The PLD accountant's value discretisation: pessimistic (never below the exact curve) and agreeing with
#: dp-accounting's default 1e-4 to 4 decimals on the reference DP-SGD curves at an eighth of the time
#: (docs/decisions/accountant-discretisation.md).
PLD_DISCRETIZATION = 1e-3


def dpsgd_event(noise: float, rate: float, steps: int):
    """The ``dp_accounting`` event of ``steps`` Poisson-subsampled Gaussian steps (DP-SGD's accounting)."""
    from dp_accounting import dp_event

    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(noise)), steps)


def pld_accountant():
    """dp-accounting's PLD accountant for add/remove neighbours at :data:`PLD_DISCRETIZATION`, empty.

    The one place the accountant behind every DP-SGD and ``DpEvent`` curve is configured: claims and the
    training lab (:mod:`dpaudit.training.accounting`) read their curves through it.
    """
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    return pld_privacy_accountant.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        value_discretization_interval=PLD_DISCRETIZATION)


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
    acc = pld_accountant()
    if not acc.supports(event):
        replace_one = dp_accounting.NeighboringRelation.REPLACE_ONE
        replace = pld_privacy_accountant.PLDAccountant(neighboring_relation=replace_one)
        why = (" for add/remove neighbours, the relation of every claim here (it computes this event for replace-one "
               "neighbours only)" if replace.supports(event) else "")
        raise ParameterValueError(f"claim: dp_accounting's PLD accountant does not support the event {event_repr}{why}")
    try:
        with quiet_numbers():
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
    # The composed PLD answers a whole epsilon grid in one call; the public one-epsilon answer serves
    # when a later dp-accounting keeps it elsewhere (one call per grid point: slower, the same curve).
    pld = getattr(acc, "_pld", None)
    with quiet_numbers():  # beyond epsilon ~709 dp_accounting's e^epsilon overflows: NaN deltas, dropped
        if pld is not None and hasattr(pld, "get_delta_for_epsilon"):
            grid = epsilon_grid(lambda e: pld.get_delta_for_epsilon(e), max(eps_max, 1e-6))
        else:
            grid = epsilon_grid(lambda e: np.array([acc.get_delta(float(x)) for x in e]), max(eps_max, 1e-6))
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

    Tiny noise is what takes long (docs/decisions/accountant-discretisation.md).  The note is a progress
    line, said while the command runs and only where the progress bar is drawn (a terminal, or
    ``DPAUDIT_PROGRESS=1``): where stderr is a log, an error stays the one line there.  The next run reads
    the disk cache at once.
    """
    def say():
        from .._progress import progress_wanted

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
    :func:`~dpaudit.claims.base.epsilon_grid` must not be answered by grids stored before it."""
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

    for fn in (epsilon_grid, _accountant_grid.__wrapped__, _dpsgd_grid_computed, dpsgd_event, pld_accountant):
        add(fn.__code__)
    return digest.hexdigest()[:16]


#: The folder under :func:`cache_dir` that keeps computed DP-SGD curves, one ``.npz`` file per curve.
CURVE_CACHE = "curves"


@functools.lru_cache(maxsize=64)
def _dpsgd_grid(noise: float, rate: float, steps: int):
    """DP-SGD's accountant grid, from the disk cache when it holds it (keyed by the arguments, dp-accounting's
    version, the grid's settings and the code that builds it), else computed and stored.  A cache that cannot be
    read or written is skipped: the curve is the same, only slower to get.

    One ``.npz`` file per curve rather than ``joblib.Memory``, whose import would cost every command more than
    reading the file (docs/decisions/claims.md).
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

    from ..results import atomic_write_text

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
    so a process that finds it there never imports dp-accounting.  ``steps`` is at most :data:`MAX_STEPS`.

    >>> c = DPSGDClaim(1.0, 0.1, 10)
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
            from ..exceptions import MissingExtraError

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
