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
           "round_lines_wanted"]

#: Seconds a sequential audit runs before :class:`RoundLines` says anything (short audits stay quiet).
ROUND_LINES_AFTER = 10.0

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
                             dynamic_ncols=True, mininterval=0.5)

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
    (None for a point claim, whose delta is fixed).
    """

    round: int
    rounds_planned: int
    samples: int
    epsilon_lower_bound: float
    claimed_epsilon: float
    elapsed_seconds: float
    claimed_delta: float | None = None

    def line(self) -> str:
        """One plain line for a log; a curve's line names the delta of the point it compares at.

        >>> RoundProgress(4, 11, 16_000, 0.93, 1.0, 12.3).line()
        'progress: round 4 of 11 finished: 16000 releases per side, epsilon >= 0.93 so far (claimed 1), 12 s'
        >>> RoundProgress(4, 11, 16_000, 0.19, 0.27, 52.0, claimed_delta=0.0862).line().partition(" side, ")[2]
        'epsilon >= 0.19 so far (claimed 0.27 at delta 0.0862), 52 s'
        >>> RoundProgress(40, 0, 400, 0.05, 0.1, 11.0).line().partition(":")[2][:16]
        ' look 40 finishe'
        """
        at = "" if self.claimed_delta is None else f" at delta {self.claimed_delta:.3g}"
        # An anytime audit has no planned rounds (rounds_planned 0): its rounds are looks.
        done = f"look {self.round}" if self.rounds_planned == 0 else f"round {self.round} of {self.rounds_planned}"
        return (f"progress: {done} finished: {self.samples} releases per side, "
                f"epsilon >= {self.epsilon_lower_bound:.4g} so far (claimed {self.claimed_epsilon:g}{at}), "
                f"{self.elapsed_seconds:.0f} s")


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
        self.after = ROUND_LINES_AFTER if after is None else after
        self.file = file

    def __call__(self, progress: RoundProgress) -> None:
        if progress.elapsed_seconds >= self.after:
            print(progress.line(), file=self.file if self.file is not None else sys.stderr, flush=True)
