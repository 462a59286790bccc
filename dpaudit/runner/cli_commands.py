"""``dpaudit run`` and ``dpaudit plot``: argument parsing and printing only.

:mod:`dpaudit.cli` calls :func:`add_run_parser` /
:func:`add_plot_parser` on its subparsers; the parsed namespace carries
``func`` (:func:`cmd_run` / :func:`cmd_plot`), which returns the exit status.
Bad input raises a :class:`~dpaudit.exceptions.DPAuditError`, which the CLI
turns into one line on stderr and exit status 2; a trial's bug is a
:class:`~dpaudit.runner.execution.TrialInternalError`, no DPAuditError, so exit status 3.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_run_parser", "add_plot_parser", "cmd_run", "cmd_plot", "resume_command"]

RUN_EXAMPLE = """\
example:
  dpaudit run configs/quickstart.yaml --out results --jobs 2
  dpaudit run configs/quickstart.yaml --resume          # after an interruption
  dpaudit run configs/quickstart.yaml --overwrite       # start again; the old results go to results/quickstart.previous
  dpaudit run configs/rr_tradeoff.yaml --backend dask   # a local 2-worker Dask cluster

Exit status: 0 done; 2 bad input (the config, a data file, a target that raises: one line, naming the
trial when one failed); 3 internal error (a bug in dpaudit; DPAUDIT_DEBUG=1 shows the traceback);
130 interrupted.  Trials finished before an error or Ctrl-C are kept: --resume runs the rest.
A results folder that already holds trials is refused unless --resume or --overwrite is given.
Progress: on a terminal a bar (trials done, time left); in a log, a line every 30 s once the run is past
10 s (DPAUDIT_PROGRESS_EVERY=SECONDS sets the interval).
"""

PLOT_EXAMPLE = """\
example:
  dpaudit plot results/quickstart
  dpaudit plot results/quickstart --size two-column
  dpaudit plot results/quickstart --point 1 --figure roc   # the ROC of the first sweep point
"""


def add_run_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``run`` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "run",
        help="run a YAML experiment (results, summary and plots under --out)",
        description="Run a YAML experiment: validate it, run its trials (resumable), "
        "write DIR/<name>/{config.resolved.yaml, trials.jsonl, summary.json} and its plots.",
        epilog=RUN_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("config", metavar="CONFIG.yaml", help="the experiment file")
    p.add_argument("--out", metavar="DIR", default="results", help="parent folder of the results (default: results)")
    p.add_argument("--jobs", metavar="J", type=int, default=1, help="parallel workers (default 1); results do not depend on it")
    p.add_argument("--backend", choices=["loky", "dask"], default="loky", help="joblib loky processes (default) or Dask")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="a Dask scheduler address (implies --backend dask); default: a local cluster")
    p.add_argument("--resume", action="store_true", help="keep finished trials of an earlier run and run the rest")
    p.add_argument("--overwrite", action="store_true",
                   help="start again in a folder holding an earlier run; it is moved to DIR/<name>.previous first")
    p.add_argument("--no-plots", dest="plots", action="store_false", help="skip drawing the plots")
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="force the progress bar (default: only when stderr is a terminal; in a log, a line every 30 s)")
    p.set_defaults(func=cmd_run)
    return p


def add_plot_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``plot`` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "plot",
        help="redraw an experiment's plots from its saved results",
        description="Redraw the PDF and PNG plots of DIR/<name> from its saved results alone (nothing is recomputed).",
        epilog=PLOT_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("results", metavar="DIR/NAME", help="a results folder written by dpaudit run")
    p.add_argument("--size", choices=["one-column", "two-column"], default=None, help="figure width (3.3 in or 6.9 in)")
    p.add_argument("--figure", dest="figures", action="append", default=None, metavar="NAME",
                   help="draw only this figure (repeatable)")
    p.add_argument("--point", metavar="N", type=int, default=None,
                   help="the sweep point (from 1) drawn by the roc, privacy_profile and trajectory figures "
                        "(default: the last; the trajectory: every point)")
    p.set_defaults(func=cmd_plot)
    return p


def cmd_run(args) -> int:
    """Run the experiment named by ``args.config``; print the table and where results went."""
    from .execution import run_experiment

    try:
        outcome = run_experiment(
            args.config,
            out=args.out,
            n_jobs=args.jobs,
            backend=args.backend,
            scheduler=args.scheduler,
            resume=args.resume,
            overwrite=getattr(args, "overwrite", False),
            progress=getattr(args, "progress", None),
            draw=getattr(args, "plots", True),
        )
    except KeyboardInterrupt:
        print(f"dpaudit: interrupted; every finished trial is kept under {args.out}/. To continue where it "
              f"stopped: {resume_command(args)}", file=sys.stderr)
        return 130
    print(outcome.table)
    print()
    print(f"results: {outcome.directory}/")
    print(f"  summary: {outcome.directory / 'summary.json'} (every statistic of every metric; the table shows "
          "means over each row's trials)")
    print(f"  trials:  {outcome.directory / 'trials.jsonl'} ({outcome.trials_run} run, {outcome.trials_skipped} resumed)")
    for path in outcome.figures:
        print(f"  plot:    {path}")
    return 0


def resume_command(args) -> str:
    """The ``dpaudit run`` command line that resumes the interrupted run ``args``.

    >>> ns = argparse.Namespace(config="c.yaml", out="results", jobs=2, backend="loky", scheduler=None)
    >>> resume_command(ns)
    'dpaudit run c.yaml --out results --jobs 2 --resume'
    """
    import shlex

    parts = ["dpaudit", "run", args.config, "--out", args.out]
    if args.jobs != 1:
        parts += ["--jobs", str(args.jobs)]
    if args.scheduler:
        parts += ["--scheduler", args.scheduler]
    elif args.backend != "loky":
        parts += ["--backend", args.backend]
    return " ".join(shlex.quote(str(p)) for p in parts) + " --resume"


def cmd_plot(args) -> int:
    """Redraw the plots of ``args.results``."""
    from ..plots import draw_figures

    written = draw_figures(args.results, size=args.size, figures=args.figures, point=getattr(args, "point", None))
    if not written:
        print(f"{args.results}: nothing to draw", file=sys.stderr)
    for path in written:
        print(path)
    return 0
