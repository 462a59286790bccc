"""``dpaudit scores`` and ``dpaudit one-run``: audits of scores someone else computed."""

from __future__ import annotations

import sys

from .cli_common import EXIT_USAGE, FORMATTER, UsageError, emit
from .params import ONE_RUN_OPTIONS, SCORES_OPTIONS

__all__ = ["add_score_parsers", "cmd_scores", "cmd_one_run"]


SCORES_EXAMPLE = """\
examples:
  dpaudit scores in.npy out.npy --epsilon 1 --delta 1e-5
  dpaudit scores in.csv out.csv --claim gdp:mu=1 --json
  dpaudit scores in.json out.json --claim dpsgd:noise=1,rate=0.01,steps=1000 --seed 7
"""


ONE_RUN_EXAMPLE = """\
examples:
  dpaudit one-run scores.npy included.npy --epsilon 4 --delta 1e-5
  dpaudit one-run scores.csv included.csv --epsilon 2 --guesses 200 --json
  dpaudit one-run scores.json included.json --claim dpsgd:noise=1,rate=0.01,steps=1000
"""


def add_score_parsers(sub) -> None:
    s = sub.add_parser("scores", help="audit from attack scores someone else computed (IN and OUT runs)",
                       description="Certify an epsilon lower bound from attack scores: part of each side chooses "
                                   "the threshold, the rest certify it, so the bound holds whatever the scores.",
                       epilog=SCORES_EXAMPLE, formatter_class=FORMATTER)
    s.add_argument("in_scores", metavar="IN", help="scores of runs with the record (.npy, .csv or .json; higher "
                                                   "means more likely IN)")
    s.add_argument("out_scores", metavar="OUT", help="scores of runs without it (same forms)")
    SCORES_OPTIONS.add_arguments(s)
    s.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    s.set_defaults(func=cmd_scores, options=SCORES_OPTIONS)
    o = sub.add_parser("one-run", help="one-run audit: canary scores and inclusion bits of one training run",
                       description="Certify an epsilon lower bound from one run (Steinke, Nasr and Jagielski "
                                   "2023): each canary included with probability 1/2, guesses on the scores "
                                   "farthest from the median ('included' above it, 'excluded' below).",
                       epilog=ONE_RUN_EXAMPLE, formatter_class=FORMATTER)
    o.add_argument("scores", metavar="SCORES", help="one score per canary (.npy, .csv or .json)")
    o.add_argument("included", metavar="INCLUDED", help="0/1 per canary: was it in the training data (same forms)")
    ONE_RUN_OPTIONS.add_arguments(o)
    o.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    o.set_defaults(func=cmd_one_run, options=ONE_RUN_OPTIONS)


def cmd_scores(args) -> int:
    from .auditor import audit_scores
    from .datasets import file_label, load_scores

    kw = SCORES_OPTIONS.from_args(args)
    from .auditor.scores import MIN_SCORES

    try:
        # Loaded (and checked, the count included) here, so that an error names the argument and its file.
        in_scores = load_scores(args.in_scores, name=file_label("IN", args.in_scores), min_count=MIN_SCORES)
        out_scores = load_scores(args.out_scores, name=file_label("OUT", args.out_scores), min_count=MIN_SCORES)
        report = audit_scores(in_scores, out_scores, **kw)
    except KeyboardInterrupt as exc:
        report = getattr(exc, "audit_report", None)  # an anytime score audit reports the looks it finished
        if report is None:
            return _interrupted_whole("score audit")
    return emit(report, args)


def _interrupted_whole(what: str) -> int:
    """Ctrl-C during an audit certified in one piece (scores, one run): nothing is certified, one line, exit 2 (as
    an audit interrupted before its first round; it was Python's bare "interrupted" and 130)."""
    print(f"dpaudit: error: interrupted before the {what} finished, so nothing is certified", file=sys.stderr)
    return EXIT_USAGE


def cmd_one_run(args) -> int:
    from .auditor import audit_one_run
    from .auditor.one_run import canary_inputs
    from .datasets import file_label

    kw = ONE_RUN_OPTIONS.from_args(args)
    try:
        scores, included = canary_inputs(args.scores, args.included, names=(file_label("SCORES", args.scores),
                                                                             file_label("INCLUDED", args.included)))
        if kw.get("guesses") is not None and kw["guesses"] > len(scores):
            raise UsageError(f"argument --guesses: must be at most the number of canaries in SCORES ({args.scores}),"
                             f" {len(scores)}; got {kw['guesses']}")
        report = audit_one_run(scores, included.astype(int), **kw)
    except KeyboardInterrupt:
        return _interrupted_whole("one-run audit")
    return emit(report, args)
