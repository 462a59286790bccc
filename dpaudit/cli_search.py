"""``dpaudit search``: find the most revealing pair of a declared domain, then audit it."""

from __future__ import annotations

import json
import sys

from .cli_common import (EXIT_USAGE, FORMATTER, UsageError, emit, load_target_arg, nothing_certified, parse_param,
                         target_relation)
from .params import SEARCH_OPTIONS

__all__ = ["SEARCH_EXAMPLE", "add_search_parser", "cmd_search"]


SEARCH_EXAMPLE = """\
examples:
  dpaudit search mymech.py:noisy_sum --epsilon 1 --size 10 --low 0 --high 100
  dpaudit search mymech.py:noisy_max --epsilon 0.1 --size 5 --low 0 --high 10 \\
          --integer --relation linf --budget 60 --json
  dpaudit search noisy_histogram --epsilon 1 --size 5 --low 0 --high 3 --integer \\
          --relation add-remove --seed 7
  dpaudit search unclipped_sum --claim gdp:mu=1 --size 3 --low 0 --high 10

The domain is 1-D datasets of N records (--size), each in [LO, HI] (--low,
--high; integers with --integer).  --relation: replace-one (default; one record
changed), add-remove (one record added or removed; the smaller dataset has N-1
records) or linf (every coordinate moves by at most 1: query answers of
sensitivity 1).  Candidate pairs (StatDP/DP-Sniper patterns, records at the
ends of the range, random pairs, then a local search) are screened on small
samples; the most promising is audited on fresh samples the search never saw,
so the bound holds at --confidence whatever the search did.  --budget bounds
the screening time in seconds (by default the screening draws about as many
releases as the final audit).  Exit status as for `dpaudit audit`.
Ctrl-C during the final audit reports the rounds it finished, as `dpaudit audit`
does; while screening (which only chooses the pair) nothing is certified: one
line, exit status 2.  A second Ctrl-C stops at once.
"""


def add_search_parser(sub) -> None:
    s = sub.add_parser("search", help="find the most revealing neighbouring pair in a domain, then audit it",
                       description="Search a declared input domain for the neighbouring pair that leaks most, "
                                   "then audit it on fresh samples.",
                       epilog=SEARCH_EXAMPLE, formatter_class=FORMATTER)
    s.add_argument("target", metavar="TARGET")
    SEARCH_OPTIONS.add_arguments(s)
    s.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of a built-in TARGET (repeatable)")
    s.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    s.set_defaults(func=cmd_search, options=SEARCH_OPTIONS)


def cmd_search(args) -> int:
    """``dpaudit search``; Ctrl-C is handled as by ``dpaudit audit`` (:func:`cmd_audit`).

    Interrupted during the final audit, the search reports what that audit finished (its sequential
    rounds, ``interrupted: true``) with the pair and the screening, exit status by verdict.  Interrupted
    while screening, or before the final audit certified anything, it says so in one line naming what was
    done, exit 2: the screening only chooses the pair; only the audit of it certifies.
    """
    from .pair_search import search

    try:
        target, kw = _search_inputs(args)
        report = search(target, progress=True, **kw)
    except KeyboardInterrupt as exc:
        report = getattr(exc, "audit_report", None)
        if report is None:
            print(f"dpaudit: error: {_search_nothing_certified(args, getattr(exc, 'search_progress', None))}",
                  file=sys.stderr)
            return EXIT_USAGE
    return emit(report, args)


def _search_nothing_certified(args, progress: dict | None) -> str:
    """The one line of a search interrupted before its final audit certified anything (``progress``: where)."""
    if progress is None:
        return "interrupted before the search screened a pair, so nothing is certified"
    screened = f"{progress['candidates_screened']} of at most {progress['max_candidates']} candidate pairs screened"
    if progress["stage"] == "screening":
        return (f"interrupted while screening ({screened}), so nothing is certified: the screening only chooses "
                "the pair, and only the final audit of it certifies")
    return (f"{nothing_certified(args, 'final audit')}; the search had chosen --dataset "
            f"'{json.dumps(progress['dataset'])}' --neighbor '{json.dumps(progress['neighbor'])}' ({screened}), "
            "which `dpaudit audit` can audit on its own")


def _search_inputs(args) -> tuple:
    """(target, search keywords) of ``dpaudit search``'s arguments, the input domain completed from the target's."""
    params = dict(parse_param(p) for p in args.param)
    target = load_target_arg(args.target, params)
    declared = {}
    domain_fn = getattr(target.fn, "input_domain", None)
    if callable(domain_fn):
        declared = dict(domain_fn())
    kw = SEARCH_OPTIONS.from_args(args)
    for key in ("size", "low", "high"):
        if key not in kw and key in declared:
            kw[key] = SEARCH_OPTIONS[key].check(declared[key])
        elif key not in kw:
            raise UsageError(f"argument --{key}: required (the input domain: --size N --low LO --high HI)")
    kw["integer"] = bool(kw.get("integer") or declared.get("integer", False))
    kw["relation"] = kw.get("relation") or target_relation(target) or "replace-one"
    return target, kw
