"""``dpaudit survey``: argument parsing and printing only (:func:`~dpaudit.survey.driver.run_survey` does the work)."""

from __future__ import annotations

import argparse
import shlex
import sys

__all__ = ["add_survey_parser", "cmd_survey"]

EXAMPLE = """\
examples:
  dpaudit survey experiments/library_survey/catalogue.yaml --library pure-ldp --out survey
  dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.6 --jobs 2
  dpaudit survey experiments/library_survey/catalogue.yaml --out survey --resume   # after an interruption
  dpaudit survey experiments/library_survey/catalogue.yaml --backend dask --scheduler tcp://host:8786

Each library version is installed into an environment of its own (cached under ~/.cache/dpaudit/envs);
rows are appended to DIR/survey.jsonl as they finish, and DIR/summary.md and DIR/survey.png are written
at the end.  Exit status: 0 the survey ran (whatever it found); 2 bad input (one line naming the key
path or argument); 130 interrupted (finished rows are kept: --resume runs the rest).
"""


def add_survey_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``survey`` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "survey", help="audit every entry of a catalogue of libraries, version by version",
        description="Install each library version of CATALOGUE.yaml into an environment of its own, search and "
                    "audit every entry there (ideal and implementation), and write DIR/survey.jsonl, "
                    "DIR/summary.md and a figure.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("catalogue", metavar="CATALOGUE.yaml")
    p.add_argument("--library", action="append", default=[], metavar="NAME[==VERSION]",
                   help="survey only this library (or version); repeatable")
    p.add_argument("--entry", action="append", default=[], metavar="ID",
                   help="survey only this entry (its id, or one case's id as in survey.jsonl); repeatable")
    p.add_argument("--out", metavar="DIR", default="survey", help="where results go (default: survey)")
    p.add_argument("--seed", metavar="S", type=int, default=None,
                   help="the survey's seed (default: the catalogue's, else 0); each row's seed is keyed by its entry")
    p.add_argument("--jobs", metavar="J", type=int, default=1, help="rows run at once (default 1); results do not "
                                                                     "depend on it")
    p.add_argument("--backend", choices=["loky", "dask"], default="loky",
                   help="joblib loky processes (default) or Dask")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="a Dask scheduler address (implies --backend dask); default: a local cluster")
    p.add_argument("--resume", action="store_true", help="keep the finished rows of DIR/survey.jsonl and run the rest")
    p.add_argument("--no-plots", dest="plots", action="store_false", help="skip drawing the figure")
    p.set_defaults(func=cmd_survey)
    return p


def cmd_survey(args) -> int:
    from .driver import run_survey

    try:
        outcome = run_survey(args.catalogue, out=args.out, libraries=args.library, entries=args.entry,
                             seed=args.seed, n_jobs=args.jobs, backend=args.backend, scheduler=args.scheduler,
                             resume=args.resume, draw=args.plots)
    except KeyboardInterrupt:
        parts = [a for a in sys.argv[1:] if a != "--resume"] or ["survey", args.catalogue, "--out", args.out]
        print(f"dpaudit: interrupted; finished rows are kept in {args.out}/survey.jsonl. To continue: dpaudit "
              f"{' '.join(shlex.quote(p) for p in parts)} --resume", file=sys.stderr)
        return 130
    violations = sum(1 for r in outcome.rows if r.get("status") == "done"
                     and "violation" in (r["ideal"]["verdict"], r["implementation"]["verdict"]))
    failed = sum(1 for r in outcome.rows if r.get("status") != "done")
    print(f"survey: {len(outcome.rows)} rows ({len(outcome.ran)} run, {outcome.resumed} resumed), "
          f"{violations} with a violation, {failed} did not run; {outcome.seconds:.0f} s")
    print(f"  rows:    {outcome.directory / 'survey.jsonl'}")
    print(f"  summary: {outcome.directory / 'summary.md'}")
    for path in outcome.figures:
        print(f"  figure:  {path}")
    return 0
