"""Running into a results folder that already holds results: refuse, keep, or move the old ones aside.

The rule (``dpaudit run`` and :func:`~dpaudit.runner.run_experiment` alike):

- a folder holding finished trials, a summary or plots of an earlier run is never written over silently:
  without ``--resume`` or ``--overwrite`` the run stops before writing anything, with one line naming both;
- ``--resume`` keeps every finished trial (the trial log is only appended to) and removes the summary and the
  plots before it adds trials, since they describe fewer trials than the folder will hold (they are drawn again
  at the end);
- ``--overwrite`` moves the whole folder to ``<name>.previous`` beside it (replacing an older copy there) and
  starts afresh, so no plot of the old run is left beside the new data, and a mistaken ``--overwrite`` can be
  undone by moving the folder back.

A folder holding nothing of an earlier run (a run stopped before its first trial finished) is simply reused.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..exceptions import ParameterValueError
from ..results import SUMMARY_FILE, TRIALS_FILE, read_trials

__all__ = ["PREVIOUS_SUFFIX", "Previous", "previous_results", "claim_folder", "remove_stale_outputs"]

#: Where ``--overwrite`` moves the old folder: ``DIR/<name>.previous``.
PREVIOUS_SUFFIX = ".previous"

#: The file types a figure is saved as (:func:`dpaudit.plots.style.save_figure`).
FIGURE_SUFFIXES = (".pdf", ".png")


def figure_files(directory: Path) -> list[Path]:
    """The plots ``dpaudit run``/``dpaudit plot`` drew in ``directory`` (files named after a registered figure).

    Other PDF or PNG files someone put there are left alone.
    """
    candidates = sorted(p for p in directory.glob("*") if p.suffix in FIGURE_SUFFIXES and p.is_file())
    if not candidates:
        return []
    from ..plots import FIGURES  # imports matplotlib: only when there are files to look at

    return [p for p in candidates if p.stem in FIGURES]


@dataclass(frozen=True)
class Previous:
    """What an earlier run left in a results folder: finished trials, and files drawn from them."""

    trials: int
    outputs: tuple

    @property
    def empty(self) -> bool:
        return not self.trials and not self.outputs


def previous_results(directory: "str | Path") -> Previous:
    """The finished trials and the summary/plot files in ``directory`` (nothing if it does not exist).

    >>> import tempfile
    >>> previous_results(Path(tempfile.mkdtemp()) / "none").empty
    True
    """
    directory = Path(directory)
    if not directory.is_dir():
        return Previous(0, ())
    outputs = [directory / SUMMARY_FILE] if (directory / SUMMARY_FILE).is_file() else []
    outputs += figure_files(directory)
    return Previous(len(read_trials(directory / TRIALS_FILE)), tuple(outputs))


def _what(previous: Previous) -> str:
    if previous.trials:
        return f"{previous.trials} finished trial{'s' if previous.trials != 1 else ''}"
    return "the summary or plots of an earlier run"


def claim_folder(directory: Path, *, resume: bool, overwrite: bool, echo: Callable[[str], None]) -> None:
    """Apply the module's rule to ``directory`` before a run writes anything there.

    Raises
    ------
    ParameterValueError
        Both flags given; or the folder holds an earlier run's results and neither flag was given.
    """
    if resume and overwrite:
        raise ParameterValueError("--resume and --overwrite: give one or the other (--resume keeps the finished "
                                  "trials, --overwrite moves them aside)")
    if resume:
        return
    previous = previous_results(directory)
    if previous.empty:
        return
    if not overwrite:
        raise ParameterValueError(
            f"{directory} already holds {_what(previous)}; give --resume to keep them and run the rest, or "
            f"--overwrite to start again (the old folder is moved to {directory.name}{PREVIOUS_SUFFIX}), "
            "or choose another --out")
    aside = directory.with_name(directory.name + PREVIOUS_SUFFIX)
    if aside.is_dir() and not aside.is_symlink():
        shutil.rmtree(aside)
    elif aside.exists() or aside.is_symlink():
        aside.unlink()
    directory.rename(aside)
    echo(f"--overwrite: the earlier results ({_what(previous)}) were moved to {aside}/")


def remove_stale_outputs(directory: Path, *, redraw: bool, echo: Callable[[str], None]) -> None:
    """Remove the summary and plots of ``directory`` before trials are added to it (``--resume``).

    They describe fewer trials than the folder is about to hold; the summary is always written again at the end
    and the plots too when ``redraw``.
    """
    summary = directory / SUMMARY_FILE
    if summary.exists():
        summary.unlink()
    plots = figure_files(directory) if directory.is_dir() else []
    for path in plots:
        path.unlink()
    if plots and not redraw:
        echo(f"removed {len(plots)} plot file{'s' if len(plots) != 1 else ''} drawn from fewer trials; "
             f"`dpaudit plot {directory}` draws them again")
