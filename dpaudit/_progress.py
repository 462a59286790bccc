"""A progress bar for long audits: releases drawn, rate, and time left, on stderr.

One small wrapper over tqdm so that every long loop in dpaudit shows the same
thing.  It is on when asked (``enabled=True``), off when told
(``enabled=False``), and by default only when stderr is a terminal, so logs,
pipes, ``--json`` consumers and test runs never see it.  It counts *releases*
(not chunks), so a sequential audit can raise ``total`` between rounds and the
time left stays honest.  A disabled bar costs nothing and writes nothing.

Typical use (the audit pipeline)::

    with progress_bar(total=2 * samples, desc="audit", enabled=progress) as bar:
        for chunk in chunks:
            ...draw and count...
            bar.update(len(chunk))
        bar.set_total(2 * next_round_total)   # sequential audits only

Examples
--------
>>> import io
>>> out = io.StringIO()
>>> with progress_bar(total=1000, desc="audit", enabled=True, file=out) as bar:
...     bar.update(400)
...     bar.update(600)
>>> "/1.00k releases" in out.getvalue() and " left" in out.getvalue(), bar.n
(True, 1000)
>>> with progress_bar(total=10, enabled=False) as quiet:
...     quiet.update(10)
>>> quiet.n
10
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["progress_bar", "ProgressBar", "progress_wanted", "RoundProgress", "RoundLines", "ROUND_LINES_AFTER",
           "round_lines_wanted", "LogLines", "LINES_AFTER", "LINES_EVERY", "lines_every", "bar_size"]

#: Seconds a sequential audit runs before :class:`RoundLines` says anything (short audits stay quiet).
ROUND_LINES_AFTER = 10.0

#: :class:`LogLines`: seconds before the first line (short work writes none), and between lines.
LINES_AFTER, LINES_EVERY = 10.0, 30.0

#: Environment variable: seconds between progress lines in a log, and before the first (default 10, then 30).
EVERY_VARIABLE = "DPAUDIT_PROGRESS_EVERY"

#: tqdm format: what is drawn, out of how many, how fast, elapsed and time left.
BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} releases [{elapsed} elapsed, {remaining} left, {rate_fmt}]"


def progress_wanted(enabled: bool | None, file: IO[str] | None = None) -> bool:
    """Whether to draw: ``enabled`` if given, else ``DPAUDIT_PROGRESS`` (``1``/``0``), else "stderr is a terminal".

    >>> progress_wanted(True), progress_wanted(False)
    (True, False)
    """
    if enabled is not None:
        return bool(enabled)
    env = os.environ.get("DPAUDIT_PROGRESS", "").strip().lower()
    if env in ("1", "true", "yes", "on"):
        return True
    if env in ("0", "false", "no", "off"):
        return False
    stream = file if file is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def lines_every() -> float | None:
    """Seconds set by ``DPAUDIT_PROGRESS_EVERY`` for the quiet start and the spacing of log lines (None: unset).

    >>> import os; os.environ.pop("DPAUDIT_PROGRESS_EVERY", None) and None
    >>> lines_every() is None
    True
    """
    from .exceptions import ParameterValueError

    raw = os.environ.get(EVERY_VARIABLE, "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise ParameterValueError(f"{EVERY_VARIABLE}: expected a number of seconds >= 0, got {raw!r}")
    return seconds


def bar_size(file: IO[str] | None = None) -> dict:
    """tqdm keywords for the bar's size: follow the terminal, or 80 x 24 (``COLUMNS``/``LINES``) when it gives none.

    A pseudo-terminal that reports a size of 0 x 0 (python's ``pty``, some CI runners and containers) would make
    tqdm hide the bar altogether: it reads the height as -1 rows, less than the bar's row 0.
    """
    stream = file if file is not None else sys.stderr
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):  # not a terminal (a file, a pipe, StringIO): tqdm's own defaults
        return {"dynamic_ncols": True}
    if size.columns > 0 and size.lines > 0:
        return {"dynamic_ncols": True}

    def env(name: str, default: int) -> int:
        value = os.environ.get(name, "")
        return int(value) if value.isdigit() and int(value) > 0 else default

    return {"ncols": env("COLUMNS", 80), "nrows": env("LINES", 24)}


class LogLines:
    """Plain progress lines for a log: ``progress: DESC: 40 of 100 trials done, 12 s, about 18 s left``.

    For stderr that is not a terminal, where a bar is a smear of carriage returns: the first line once ``after``
    seconds have passed (work shorter than that writes nothing), then at most one per ``every`` seconds, as
    units finish.  Both default to :data:`LINES_AFTER` and :data:`LINES_EVERY`, or to ``DPAUDIT_PROGRESS_EVERY``
    when it is set.  ``initial`` units were done before (a resumed run); the time left is projected from the
    rate of this run.

    >>> import io
    >>> out = io.StringIO()
    >>> with LogLines(3, desc="trials", unit="trial", after=0, every=0, file=out) as lines:
    ...     lines.update(1)
    >>> out.getvalue().startswith("progress: trials: 1 of 3 trials done, 0 s, about 0 s left")
    True
    """

    def __init__(self, total: int, *, desc: str, unit: str, initial: int = 0, after: float | None = None,
                 every: float | None = None, file: IO[str] | None = None):
        import time

        env = lines_every() if after is None or every is None else None
        self.after = after if after is not None else (min(env, LINES_AFTER) if env is not None else LINES_AFTER)
        self.every = every if every is not None else (env if env is not None else LINES_EVERY)
        self.total, self.desc, self.unit, self.file = int(total), desc, unit, file
        self.initial = self.n = int(initial)
        self.start = time.monotonic()
        self.due = self.start + self.after

    def update(self, n: int = 1) -> None:
        """``n`` more units are done: a line if one is due and work is left."""
        import time

        self.n += int(n)
        now = time.monotonic()
        if now >= self.due and self.n < self.total:
            left = (now - self.start) / max(self.n - self.initial, 1) * (self.total - self.n)
            print(f"progress: {self.desc}: {self.n} of {self.total} {self.unit}s done, {now - self.start:.0f} s, "
                  f"about {left:.0f} s left", file=self.file if self.file is not None else sys.stderr, flush=True)
            self.due = now + self.every

    def close(self) -> None:
        """Nothing to release (the lines are already written); for symmetry with a bar."""

    def __enter__(self) -> "LogLines":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def round_lines_wanted(enabled: bool | None, file: IO[str] | None = None) -> bool:
    """Whether a command prints :class:`RoundLines`: nothing chosen (no ``--progress``/``--no-progress``, no
    ``DPAUDIT_PROGRESS``) and stderr (or ``file``) is not a terminal, where the bar is not drawn.

    >>> import io
    >>> round_lines_wanted(False, io.StringIO()), round_lines_wanted(True, io.StringIO())
    (False, False)
    """
    if enabled is not None or os.environ.get("DPAUDIT_PROGRESS", "").strip():
        return False
    return not progress_wanted(None, file)


class ProgressBar:
    """Counts releases against a total; draws through tqdm only when enabled.

    Parameters
    ----------
    total : int
        Releases expected in all (both sides); may be raised later with :meth:`set_total`.
    desc : str
        The label on the left.
    enabled : bool, optional
        ``None`` (default): only when stderr (or ``file``) is a terminal; see :func:`progress_wanted`.
    file : file-like, optional
        Where to draw; stderr by default (stdout is kept for ``--json``).
    """

    def __init__(self, *, total: int, desc: str = "audit", enabled: bool | None = None,
                 file: IO[str] | None = None):
        self.n = 0
        self.total = int(total)
        self._bar: Any = None
        if progress_wanted(enabled, file):
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=desc, unit="release", unit_scale=True, leave=False,
                             file=file if file is not None else sys.stderr, bar_format=BAR_FORMAT,
                             mininterval=0.5, **bar_size(file))

    @property
    def enabled(self) -> bool:
        return self._bar is not None

    def update(self, n: int) -> None:
        """``n`` more releases are done."""
        self.n += int(n)
        if self._bar is not None:
            self._bar.update(int(n))

    def set_total(self, total: int) -> None:
        """A new total (a sequential audit that goes on to a bigger round)."""
        self.total = int(total)
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    def set_description(self, desc: str) -> None:
        """A new label (e.g. ``"calibration"`` then ``"held-out counts"``)."""
        if self._bar is not None:
            self._bar.set_description_str(desc, refresh=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(*, total: int, desc: str = "audit", enabled: bool | None = None,
                 file: IO[str] | None = None) -> ProgressBar:
    """A :class:`ProgressBar` (use it as a context manager so it is always closed)."""
    return ProgressBar(total=total, desc=desc, enabled=enabled, file=file)


@dataclass(frozen=True)
class RoundProgress:
    """Where a sequential audit stands after a finished round (what ``on_round`` receives).

    ``samples`` is cumulative releases per side; ``epsilon_lower_bound`` the bound certified so far
    against the claim's point ``claimed_epsilon`` (the report may state it at another point of a curve).
    ``claimed_delta`` is that point's delta for a claimed curve, whose point moves from round to round
    (None for a point claim, whose delta is fixed).  ``samples_planned`` is the budget of releases per side (the
    last planned round's), ``time_budget`` the seconds allowed (None: none given).
    """

    round: int
    rounds_planned: int
    samples: int
    epsilon_lower_bound: float
    claimed_epsilon: float
    elapsed_seconds: float
    claimed_delta: float | None = None
    samples_planned: int | None = None
    time_budget: float | None = None

    def line(self) -> str:
        """One plain line for a log; a curve's line names the delta of the point it compares at.

        >>> RoundProgress(4, 11, 16_000, 0.93, 1.0, 12.3).line()
        'progress: round 4 of 11 finished: 16000 releases per side, epsilon >= 0.93 so far (claimed 1), 12 s'
        >>> RoundProgress(4, 11, 16_000, 0.19, 0.27, 52.0, claimed_delta=0.0862).line().partition(" side, ")[2]
        'epsilon >= 0.19 so far (claimed 0.27 at delta 0.0862), 52 s'
        >>> RoundProgress(4, 5, 16_000, 0.93, 1.0, 12.3, samples_planned=20_000, time_budget=60).line()
        'progress: round 4 of 5 finished: 16000 releases per side (budget 20000), epsilon >= 0.93 so far (claimed 1), 12 s of 60 s'
        >>> RoundProgress(40, 0, 400, 0.05, 0.1, 11.0).line().partition(":")[2][:16]
        ' look 40 finishe'
        """
        at = "" if self.claimed_delta is None else f" at delta {self.claimed_delta:.3g}"
        budget = "" if self.samples_planned is None else f" (budget {self.samples_planned})"
        of = "" if self.time_budget is None else f" of {self.time_budget:g} s"
        # An anytime audit has no planned rounds (rounds_planned 0): its rounds are looks.
        done = f"look {self.round}" if self.rounds_planned == 0 else f"round {self.round} of {self.rounds_planned}"
        return (f"progress: {done} finished: {self.samples} releases per side"
                f"{budget}, epsilon >= {self.epsilon_lower_bound:.4g} so far (claimed {self.claimed_epsilon:g}{at}), "
                f"{self.elapsed_seconds:.0f} s{of}")


class RoundLines:
    """An ``on_round`` callback: one :meth:`RoundProgress.line` per finished round, once ``after`` seconds passed.

    For logs (stderr not a terminal, where a bar would be a smear of carriage returns): a long audit
    under nohup or CI shows it is alive and what it has certified, while an audit shorter than
    ``after`` seconds (a test, a quick check) writes nothing, so its stderr keeps only what it had.

    >>> import io
    >>> out = io.StringIO()
    >>> lines = RoundLines(after=5.0, file=out)
    >>> lines(RoundProgress(1, 3, 2000, 0.0, 1.0, 1.0)); lines(RoundProgress(2, 3, 4000, 0.5, 1.0, 6.0))
    >>> out.getvalue().splitlines()
    ['progress: round 2 of 3 finished: 4000 releases per side, epsilon >= 0.5 so far (claimed 1), 6 s']
    """

    def __init__(self, *, after: float | None = None, file: IO[str] | None = None):
        if after is None:
            every = lines_every()  # DPAUDIT_PROGRESS_EVERY shortens the quiet start as for every other line
            after = ROUND_LINES_AFTER if every is None else min(every, ROUND_LINES_AFTER)
        self.after = after
        self.file = file

    def __call__(self, progress: RoundProgress) -> None:
        if progress.elapsed_seconds >= self.after:
            print(progress.line(), file=self.file if self.file is not None else sys.stderr, flush=True)
