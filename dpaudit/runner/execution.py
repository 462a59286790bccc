"""Run an experiment's trials serially, with joblib (loky) or on a Dask cluster.

One :class:`~numpy.random.SeedSequence` child per *trial* (child ``i`` of the
experiment seed), never per worker, so every backend and ``--jobs`` gives the
same trial results.  The main process appends each result to
``trials.jsonl`` the moment it arrives; the summary is recomputed from that
file, so an interrupted-and-resumed run ends with the same summary as an
uninterrupted one.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import yaml

from .._executor import Backend, check_backend, dask_client, in_worker
from ..exceptions import DPAuditError, ParameterValueError
from ..results import CONFIG_FILE, SUMMARY_FILE, TRIALS_FILE, TrialLog, atomic_write_text, read_trials
from ._folder import claim_folder, remove_stale_outputs
from .schema import ExperimentConfig, dump_yaml, load_config, resolve_config
from .summary import format_table, summarize, summary_json

__all__ = ["Backend", "RunOutcome", "TrialError", "TrialInternalError", "execute_trial", "run_experiment"]


class TrialError(DPAuditError, RuntimeError):
    """A trial raised a dpaudit error (bad input: the config's values, a data file, a user's target); the message
    names the trial, its sweep point and mechanism.  The command line exits 2.

    Trials finished before it are kept; fix the cause and run with ``--resume``.
    """


class TrialInternalError(RuntimeError):
    """A trial raised an exception that is no dpaudit error: a bug in dpaudit (or in an experiment kind registered
    by the user, which should raise a :class:`~dpaudit.exceptions.DPAuditError` for bad input).

    Not a DPAuditError, so the command line reports an internal error (exit 3) rather than bad input.  The
    message names the trial as :class:`TrialError`'s does; trials finished before it are kept, so ``--resume``
    continues once the cause is fixed.  A plain message, so it pickles from worker processes.
    """


@dataclass(frozen=True)
class RunOutcome:
    """Where a run wrote its results and what it found."""

    directory: Path
    summary: dict
    figures: tuple
    trials_run: int
    trials_skipped: int
    table: str


def execute_trial(task: Mapping[str, Any]) -> dict:
    """Run one trial (in whatever process) and return its JSON record."""
    from .kinds import get_kind

    trial = task["trial"]
    seed = np.random.SeedSequence(task["seed"], spawn_key=(trial["index"],))
    start = time.perf_counter()
    try:
        result = get_kind(task["kind"]).run_trial(task["config"], task["mechanism"], seed)
    except Exception as exc:  # re-raised with the trial named; a plain message pickles across processes
        where = ", ".join(f"{k}={v!r}" for k, v in trial["sweep"].items()) or "no sweep"
        mech = f", mechanism {trial['mechanism']!r}" if trial["mechanism"] is not None else ""
        message = f"trial {trial['index']} ({where}{mech}) failed: {type(exc).__name__}: {exc}"
        if isinstance(exc, DPAuditError):
            raise TrialError(message) from None
        # A bug: chained, so DPAUDIT_DEBUG=1 shows where it happened (a worker's traceback comes as loky's text).
        raise TrialInternalError(message) from exc
    record = dict(trial)
    record["result"] = result
    record["elapsed_seconds"] = round(time.perf_counter() - start, 6)
    return record


def _serial(tasks: list) -> Iterable[dict]:
    for task in tasks:
        yield execute_trial(task)


def _loky(tasks: list, n_jobs: int) -> Iterable[dict]:
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")
    yield from parallel(delayed(in_worker)(execute_trial, t) for t in tasks)


def _dask(tasks: list, n_jobs: int, scheduler: str | None) -> Iterable[dict]:
    from distributed import as_completed

    with dask_client(scheduler, n_jobs) as client:
        futures = client.map(execute_trial, tasks, pure=False)
        for fut in as_completed(futures):
            yield fut.result()


def _progress(total: int, initial: int, enabled: bool | None, desc: str = "trials"):
    """A bar of trials done and the time left on a terminal (or when asked); in a log, :class:`LogLines`."""
    from tqdm.auto import tqdm

    from .._progress import LogLines, bar_size, progress_wanted, round_lines_wanted

    if round_lines_wanted(enabled):
        return LogLines(total, desc=desc, unit="trial", initial=initial)
    return tqdm(total=total, initial=initial, unit="trial", file=sys.stderr, disable=not progress_wanted(enabled),
                desc=desc, **bar_size())


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}.{k}" if path else k)
    return path or "(top level)"


def prepare(config: "ExperimentConfig | str | Path | Mapping", out: "str | Path", resume: bool) -> tuple[ExperimentConfig, Path]:
    """Validate, pick the output folder and reconcile with saved results on ``resume``."""
    source = config
    if not isinstance(config, ExperimentConfig):
        config = load_config(config) if not isinstance(config, Mapping) else resolve_config(config)
    directory = Path(out) / config.name
    saved_file = directory / CONFIG_FILE
    if resume and saved_file.is_file():
        try:
            saved = yaml.safe_load(saved_file.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            problem = " ".join(str(exc).split())[:200]
            raise ParameterValueError(f"--resume: {saved_file} cannot be read ({problem}); run without --resume "
                                      "to start again") from None
        if not config.seed_given and isinstance(saved, dict) and isinstance(saved.get("seed"), int):
            # The first run drew the seed; the resumed run must reuse it.
            if isinstance(source, ExperimentConfig):
                raw = dict(source.resolved, seed=saved["seed"])
                config = resolve_config(raw)
            elif isinstance(source, Mapping):
                config = resolve_config(source, seed=saved["seed"])
            else:
                config = load_config(source, seed=saved["seed"])
        if saved != config.resolved:
            raise ParameterValueError(
                f"--resume: {directory} holds results of a different config "
                f"(first difference at {_first_difference(saved, config.resolved)}); "
                "run without --resume to start again, or change the name"
            )
    return config, directory


def run_experiment(
    config: "ExperimentConfig | str | Path | Mapping",
    *,
    out: "str | Path" = "results",
    n_jobs: int = 1,
    backend: "str | Backend" = "loky",
    scheduler: str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool | None = None,
    draw: bool = True,
    echo: Callable[[str], None] | None = None,
) -> RunOutcome:
    """Run (or resume) an experiment and write its results under ``out/<name>/``.

    Parameters
    ----------
    config : ExperimentConfig, path or mapping
        The experiment (validated here before anything runs).
    out : path
        The parent folder of the results.
    n_jobs : int
        Parallel workers; 1 runs in this process.  Results do not depend on it.
    backend : {"loky", "dask"}
        joblib's loky processes, or a Dask cluster (a 2-worker LocalCluster, or
        ``scheduler``).
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:8786``); implies ``backend="dask"``.
    resume : bool
        Keep finished trials of a previous run of the same config and run the rest (its summary and plots, drawn
        from fewer trials, are removed first and drawn again at the end).
    overwrite : bool
        Start again in a folder that holds an earlier run's results, after moving that folder to
        ``out/<name>.previous`` (replacing an older copy there).  Without ``resume`` or ``overwrite``, such a
        folder is refused (:class:`~dpaudit.exceptions.ParameterValueError`) before anything is written, so
        finished trials are never lost.
    progress : bool, optional
        Show a progress bar on stderr (trials done, time left); by default only when stderr is a terminal, and
        otherwise, once the run is past 10 s, a line every 30 s (``DPAUDIT_PROGRESS_EVERY`` sets both).
    draw : bool
        Draw the plots at the end.
    echo : callable, optional
        Where to send the one-line messages for people (default: stderr).

    Returns
    -------
    RunOutcome

    Examples
    --------
    >>> import tempfile
    >>> cfg = {"name": "doc", "seed": 3, "trials": 2,
    ...        "attack": {"name": "rr_tradeoff", "params": {"epsilon": 1.0, "n": 100, "repetitions": 50}}}
    >>> out = run_experiment(cfg, out=tempfile.mkdtemp(), draw=False, echo=lambda s: None)
    >>> out.summary["trials_finished"], out.summary["complete"]
    (2, True)
    """
    from .._validation import check_int

    echo = echo or (lambda s: print(s, file=sys.stderr))
    n_jobs = check_int(n_jobs, "--jobs", low=1)
    backend = check_backend(backend, scheduler, name="--backend")
    config, directory = prepare(config, out, resume)
    claim_folder(directory, resume=resume, overwrite=overwrite, echo=echo)
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write_text(directory / CONFIG_FILE, dump_yaml(config.resolved))
    summary_file = directory / SUMMARY_FILE
    if summary_file.exists():
        summary_file.unlink()  # never leave a summary that does not match the trials

    trials = config.trials
    done = {t["index"] for t in read_trials(directory / TRIALS_FILE)} if resume else set()
    pending = [t for t in trials if t.index not in done]
    tasks = [config.task(t) for t in pending]
    if resume and done:
        echo(f"resuming: {len(done)} of {len(trials)} trials already finished")
    if resume and tasks:
        remove_stale_outputs(directory, redraw=draw, echo=echo)

    with TrialLog(directory / TRIALS_FILE, fresh=not resume) as log, _progress(len(trials), len(trials) - len(pending), progress, config.name) as bar:
        if not tasks:
            stream: Iterable[dict] = ()
        elif backend is Backend.DASK:
            stream = _dask(tasks, n_jobs, scheduler)
        elif n_jobs == 1 or len(tasks) == 1:
            stream = _serial(tasks)
        else:
            stream = _loky(tasks, n_jobs)
        for record in stream:
            log.append(record)
            bar.update(1)

    finished = read_trials(directory / TRIALS_FILE)
    summary = summarize(config, finished)
    atomic_write_text(summary_file, summary_json(summary))
    figures: tuple = ()
    if draw:
        from ..plots import draw_figures

        figures = tuple(draw_figures(directory))
    table = format_table(summary, config.resolved)
    return RunOutcome(directory, summary, figures, len(pending), len(trials) - len(pending), table)
