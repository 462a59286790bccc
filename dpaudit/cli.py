"""The command line: parses, calls, prints.

Flags of ``audit`` and ``search`` come from :mod:`dpaudit.params`.  Exit status:
0 no violation found, 1 violation found, 2 bad input or usage (one line on
stderr, always starting ``dpaudit: error:``, naming the argument; no
traceback), 3 an internal error (a bug in dpaudit: one line starting
``dpaudit: internal error:``; ``DPAUDIT_DEBUG=1`` shows the traceback).  Warnings and notes for people go to stderr as lines starting
``warning:`` or ``note:``, said once the command has succeeded (an error is the only line); with
``--json`` stdout holds only the JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys

from ._version import __version__
from .params import AUDIT_OPTIONS, ONE_RUN_OPTIONS, SCORES_OPTIONS, SEARCH_OPTIONS

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """Bad command-line usage; becomes one line and exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line (exit 2) instead of usage + message."""

    def error(self, message):
        command = self.prog.removeprefix("dpaudit").strip()
        raise UsageError(f"{command}: {message}" if command else message)


_FORMATTER = argparse.RawDescriptionHelpFormatter

AUDIT_EXAMPLE = """\
examples:
  dpaudit audit mymech.py:release --dataset '[0,1,1]' --neighbor '[0,1]' --epsilon 1
  dpaudit audit laplace --epsilon 1          # a built-in uses its own stress pair
  dpaudit audit mymech.py:release --dataset '[0,1,1]' --neighbor '[0,1]' --epsilon 1 --samples 1e6
  dpaudit audit mymech.py:release --dataset d.csv --neighbor d2.csv --epsilon 1 --max-samples 1e7 --time-budget 60
  dpaudit audit laplace --param epsilon=0.5 --dataset '[1]' --neighbor '[0]' --epsilon 0.5 --json
  dpaudit audit noisy_histogram --param n_bins=10 --dataset '[0,1]' --neighbor '[0]' --epsilon 1
  dpaudit audit mypkg.mechanisms:noisy_mean --dataset data.npy --neighbor data2.npy \\
          --epsilon 1 --delta 1e-5 --seed 7 --jobs 2
  dpaudit audit subsampled_gaussian_steps --claim dpsgd:noise=1,rate=0.1,steps=10
  dpaudit audit gaussian_analytic --claim gdp:mu=0.5

TARGET is package.module:attribute, path/to/file.py:attribute, or a built-in
mechanism name from `dpaudit list`.  --dataset/--neighbor may be left out for
a built-in (its own stress pair is used); when they are not neighbours (more
than one record differs), a `warning:` line on stderr says how they differ.
Not sure which pair to give?  `dpaudit search` finds one.
Exit status: 0 no violation found, 1 violation found, 2 bad input, 3 internal error
(a bug in dpaudit; DPAUDIT_DEBUG=1 shows the traceback).
Ctrl-C stops a sequential audit and reports the rounds it finished (valid as any
round's bound; exit status by verdict); a second Ctrl-C stops at once.
"""

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


def claim_keywords(kw: dict, command: str) -> dict:
    """``kw`` from the option table with exactly one claim form: ``--claim``, or ``--epsilon`` (and ``--delta``).

    Giving both is a usage error: the verdict would answer one of two claims.
    """
    if "claim" in kw:
        if "epsilon" in kw or "delta" in kw:
            flag = "--epsilon" if "epsilon" in kw else "--delta"
            raise UsageError(f"argument --claim: give either --claim or --epsilon/--delta, not both (got {flag} too)")
    elif "epsilon" not in kw:
        raise UsageError(f"{command}: the following arguments are required: --epsilon (or --claim SPEC for a curve)")
    return kw


def _build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dpaudit", description="Measure, rather than trust, the privacy of DP mechanisms.",
                formatter_class=_FORMATTER,
                epilog="examples:\n  dpaudit list\n  dpaudit audit laplace --dataset '[1]' --neighbor '[0]' "
                       "--epsilon 1\n  dpaudit run configs/quickstart.yaml\n  dpaudit plot results/quickstart\n\n"
                       "exit status: 0 no violation found, 1 violation found, 2 bad input or usage, 3 internal "
                       "error (a bug in dpaudit; DPAUDIT_DEBUG=1 shows the traceback)\n")
    p.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    a = sub.add_parser("audit", help="black-box audit of one mechanism on one neighbouring pair",
                       description="Audit TARGET on a neighbouring pair and certify an epsilon lower bound.",
                       epilog=AUDIT_EXAMPLE, formatter_class=_FORMATTER)
    a.add_argument("target", metavar="TARGET")
    a.add_argument("--dataset", default=None, metavar="D",
                   help="JSON array literal or .json/.npy/.csv file (default for a built-in: its stress pair)")
    a.add_argument("--neighbor", "--neighbour", dest="neighbor", default=None, metavar="D2",
                   help="the neighbouring dataset, same forms as --dataset")
    AUDIT_OPTIONS.add_arguments(a)
    a.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of a built-in TARGET, e.g. --param epsilon=0.5 (repeatable; "
                        "values are read as JSON, else kept as text)")
    a.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    a.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar with the time left on stderr (default: only when stderr is a terminal; "
                        "otherwise a sequential audit that runs over 10 s prints one line per round)")
    a.set_defaults(func=cmd_audit)

    _add_search_parser(sub)
    _add_score_parsers(sub)
    from .cli_sampler import add_sampler_parser

    add_sampler_parser(sub)

    ls = sub.add_parser("list", help="list mechanisms, attacks and estimators",
                        description="List the built-in mechanisms (with their claims), attacks and estimators.",
                        epilog="example:\n  dpaudit list\n  dpaudit list --json", formatter_class=_FORMATTER)
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(func=cmd_list)

    from .runner import cli_commands

    cli_commands.add_run_parser(sub)
    cli_commands.add_plot_parser(sub)
    from .survey.cli import add_survey_parser

    add_survey_parser(sub)
    return p


def cmd_audit(args) -> int:
    """``dpaudit audit``: its ``warning:``/``note:`` lines are printed only once the audit has succeeded.

    A command that ends in an error leaves one line on stderr, the error; the lines said before the
    audit (a claim differing from a built-in's, a pair that is not neighbouring, a slow target) would
    otherwise precede it.

    Interrupted (Ctrl-C), a sequential audit reports the rounds it finished, as a budget stop does
    (``interrupted: true`` in the JSON), with the exit status of its verdict: that bound holds as at
    any round.  With no round finished, or a fixed-size audit (whose bound holds only at its planned
    size), nothing is certified: one line and exit 2.
    """
    from .auditor import audit

    said: list = []
    try:
        target, dataset, neighbor, kw, said = _audit_inputs(args)
        report = audit(target, dataset, neighbor, **kw)
    except KeyboardInterrupt as exc:
        report = getattr(exc, "audit_report", None)
        if report is None:
            print(f"dpaudit: error: {_nothing_certified(args)}", file=sys.stderr)
            return EXIT_USAGE
    for line in filter(None, said + pending_notes(args)):
        print(line, file=sys.stderr)
    return _emit(report, args)


def pending_notes(args) -> list[str]:
    """The ``note:`` lines warnings queued during the command and not yet printed (then none are queued)."""
    notes = getattr(args, "notes", None) or []
    out = list(notes)
    notes.clear()
    return out


def _nothing_certified(args, what: str = "audit") -> str:
    """The one line of an audit (``what``: the search's "final audit") interrupted before it certified anything."""
    if args.samples is not None:
        return (f"interrupted before the fixed-size {what} finished, so nothing is certified (a fixed-size bound "
                f"holds only at its planned --samples; a sequential {what}, without --samples, reports the rounds "
                "it finished)")
    first = "the first round" if what == "audit" else f"the {what}'s first round"
    return f"interrupted before {first} finished, so nothing is certified"


def _audit_inputs(args) -> tuple:
    """(target, dataset, neighbor, audit keywords, lines to say after success) of ``dpaudit audit``'s arguments."""
    kw = claim_keywords(AUDIT_OPTIONS.from_args(args), "audit")
    if "samples" in kw and ("max_samples" in kw or "time_budget" in kw):
        raise UsageError("argument --samples: a fixed-size audit takes no --max-samples or --time-budget")
    from .datasets import align_empty
    from .targets import parse_dataset

    params = dict(_parse_param(p) for p in args.param)
    target = _load_target(args.target, params)
    said = [_claim_warning(args.target, params, kw), _slow_target_note(target) if args.samples is None else None]
    if args.progress is not None:
        kw["progress"] = args.progress
    from ._progress import RoundLines, round_lines_wanted

    if round_lines_wanted(args.progress):
        kw["progress"] = "lines"  # a log (nohup, CI): lines as a long step's chunks finish, once it is long
        if args.samples is None:
            kw["on_round"] = RoundLines()  # and one line per finished round
    if (args.dataset is None) != (args.neighbor is None):
        missing = "--neighbor" if args.neighbor is None else "--dataset"
        raise UsageError(f"argument {missing}: give both --dataset and --neighbor, or neither (built-ins only)")
    if args.dataset is None:
        pair = getattr(target.fn, "neighbouring_pair", None)
        if not callable(pair):
            raise UsageError(f"arguments --dataset/--neighbor: required for target {args.target!r} (only a built-in "
                             "mechanism has its own pair; `dpaudit search` can find one)")
        dataset, neighbor = pair()
    else:
        dataset, neighbor = align_empty(parse_dataset(args.dataset, name="--dataset"),
                                        parse_dataset(args.neighbor, name="--neighbor"))
        said.append(pair_warning(target, dataset, neighbor, kw.get("claim")))
    return target, dataset, neighbor, kw, said


def _emit(report, args) -> int:
    """Print a report (the summary for people; with ``--json`` one object for stdout) and return the exit status.

    With ``--json`` the object is queued on ``args.json_out``: :func:`_run` writes it to the real stdout once the
    command is over (while it runs, file descriptor 1 points at stderr).
    """
    if args.json:
        print(report.summary(), file=sys.stderr)
        from .results import json_safe

        args.json_out.append(json.dumps(json_safe(report.to_dict()), allow_nan=False) + "\n")
    else:
        print(report.summary())
    return EXIT_VIOLATION if report.violation else EXIT_OK


@contextlib.contextmanager
def _stdout_to_stderr():
    """While the block runs, file descriptor 1 and ``sys.stdout`` point at stderr; both are restored on exit.

    The redirection is at the file-descriptor level (``os.dup2``), so C-level writes and worker processes
    started inside the block (which inherit fd 1) cannot put a byte on the real stdout: with ``--json`` it
    holds only the JSON object.
    """
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no fd 1 at all: nothing can reach a stdout that is not there
        saved = None
    try:
        if saved is not None:
            os.dup2(sys.stderr.fileno() if _has_fd(sys.stderr) else 2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        for stream in (sys.stdout, sys.__stdout__, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _has_fd(stream) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):  # e.g. pytest's capsys stream
        return False
    return True


@contextlib.contextmanager
def _second_interrupt_aborts():
    """While the block runs, a first Ctrl-C raises ``KeyboardInterrupt`` as usual and a second one aborts at once.

    After the first, a command winds up (an audit reports its finished rounds, worker processes are
    stopped); a second, in the block or after it while the process exits (joining threads and worker
    pools), says one line, kills the loky worker processes (no exit handler would stop them) and ends the
    process by SIGINT, so that a calling shell sees it killed by the signal.  A SIGINT that was ignored when
    dpaudit started (a job started with ``&`` in a script) stays ignored, and outside the main thread nothing
    changes.
    """
    import signal
    import threading

    from ._executor import kill_workers

    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    inside = [True]

    def abort(signum, frame):
        said = b", without a report" if inside[0] else b""  # after the block the command has said its piece
        os.write(2, b"dpaudit: interrupted again: stopped at once" + said + b"\n")
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        kill_workers()  # no exit handler stops them after a signal: idle, they would hold stdout for 300 s
        os.kill(os.getpid(), signal.SIGINT)

    def first(signum, frame):
        signal.signal(signal.SIGINT, abort)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, first)
    try:
        yield
    finally:
        inside[0] = False
        # After a first Ctrl-C the second still aborts while the process winds up (joining fitting threads and
        # worker pools at exit), where Python's own handler printed a traceback.
        if signal.getsignal(signal.SIGINT) is not abort:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _run(args) -> int:
    """Run the command; with ``--json`` its output for people goes to stderr and only the JSON to stdout."""
    with _second_interrupt_aborts():
        return _run_command(args)


def _run_command(args) -> int:
    if not getattr(args, "json", False):
        return int(args.func(args) or 0)
    args.json_out = []
    with _stdout_to_stderr():
        status = int(args.func(args) or 0)
    sys.stdout.write("".join(args.json_out))
    sys.stdout.flush()
    return status


def _slow_target_note(target) -> str | None:
    """A ``note:`` for targets that make one Python-level call per release (slow at the default size)."""
    if not target.vectorised:
        return (f"note: {target.name} takes no size= keyword, so it is called once per release; that is slow "
                "(give it a size= keyword); the sequential audit stops as soon as it knows, within --max-samples "
                "(default 20000). On a terminal a progress bar shows the time left.")
    if target.name.split(".")[0] in ("opendp", "diffprivlib"):
        return (f"note: {target.name} asks {target.name.split('.')[0]} for one release per call (thousands per "
                "second), so an audit that runs to its budget can take minutes; --max-samples 2e4 or --time-budget "
                "bound it. "
                "On a terminal a progress bar shows the time left.")
    return None


def _target_relation(target):
    """The relation a target's pairs must respect: its declared input domain's, else its claim's, else None."""
    fn = getattr(target, "fn", target)
    domain = getattr(fn, "input_domain", None)
    if callable(domain):
        try:
            rel = domain().get("relation")
        except Exception:  # noqa: BLE001 - a domain we cannot read is a domain we do not use
            rel = None
        if rel:
            return rel
    claim = getattr(fn, "claim", None)
    return getattr(getattr(claim, "neighbouring", None), "value", None)


def pair_warning(target, dataset, neighbor, claim=None) -> str | None:
    """One ``warning:`` line when the pair is not neighbouring, else None.

    Records: neighbours differ in one record (replaced, added or removed), as
    the contract of ``dpaudit audit`` words it.  A target whose relation is
    ``linf`` (its dataset is a vector of query answers) needs every coordinate
    to move by at most 1 instead.  A ``claim`` accounted for add/remove
    neighbours (``dpsgd:``) needs a record added or removed, not replaced.
    """
    from .auditor.pipeline import replaced_record_note
    from .claims import as_claim
    from .pairs import Relation, compare_pair

    note = replaced_record_note(as_claim(claim), dataset, neighbor) if claim is not None else None
    if note is not None:
        return f"warning: {note}"

    diff = compare_pair(dataset, neighbor)
    rel = _target_relation(target)
    if rel is not None and Relation.parse(rel) is Relation.LINF:
        if diff.is_neighbouring(Relation.LINF):
            return None
        return ("warning: --dataset and --neighbor are not neighbours under the target's relation linf (every "
                f"query answer moves by at most 1): {diff.describe()}; a bound on this pair may exceed epsilon "
                "without any violation")
    if diff.is_neighbouring(Relation.REPLACE_ONE) or diff.is_neighbouring(Relation.ADD_REMOVE):
        return None
    return (f"warning: --dataset and --neighbor are not neighbours: {diff.describe()}; neighbouring datasets "
            "differ in one record (replaced, added or removed), so a bound on this pair may exceed epsilon "
            "without any violation")


def _add_search_parser(sub) -> None:
    s = sub.add_parser("search", help="find the most revealing neighbouring pair in a domain, then audit it",
                       description="Search a declared input domain for the neighbouring pair that leaks most, "
                                   "then audit it on fresh samples.",
                       epilog=SEARCH_EXAMPLE, formatter_class=_FORMATTER)
    s.add_argument("target", metavar="TARGET")
    SEARCH_OPTIONS.add_arguments(s)
    s.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of a built-in TARGET (repeatable)")
    s.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    s.set_defaults(func=cmd_search)


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


def _add_score_parsers(sub) -> None:
    s = sub.add_parser("scores", help="audit from attack scores someone else computed (IN and OUT runs)",
                       description="Certify an epsilon lower bound from attack scores: part of each side chooses "
                                   "the threshold, the rest certify it, so the bound holds whatever the scores.",
                       epilog=SCORES_EXAMPLE, formatter_class=_FORMATTER)
    s.add_argument("in_scores", metavar="IN", help="scores of runs with the record (.npy, .csv or .json; higher "
                                                   "means more likely IN)")
    s.add_argument("out_scores", metavar="OUT", help="scores of runs without it (same forms)")
    SCORES_OPTIONS.add_arguments(s)
    s.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    s.set_defaults(func=cmd_scores)
    o = sub.add_parser("one-run", help="one-run audit: canary scores and inclusion bits of one training run",
                       description="Certify an epsilon lower bound from one run (Steinke, Nasr and Jagielski "
                                   "2023): each canary included with probability 1/2, guesses on the scores "
                                   "farthest from the median ('included' above it, 'excluded' below).",
                       epilog=ONE_RUN_EXAMPLE, formatter_class=_FORMATTER)
    o.add_argument("scores", metavar="SCORES", help="one score per canary (.npy, .csv or .json)")
    o.add_argument("included", metavar="INCLUDED", help="0/1 per canary: was it in the training data (same forms)")
    ONE_RUN_OPTIONS.add_arguments(o)
    o.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    o.set_defaults(func=cmd_one_run)


def cmd_scores(args) -> int:
    from .auditor import audit_scores
    from .datasets import file_label, load_scores

    kw = claim_keywords(SCORES_OPTIONS.from_args(args), "scores")
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
    return _emit(report, args)


def _interrupted_whole(what: str) -> int:
    """Ctrl-C during an audit certified in one piece (scores, one run): nothing is certified, one line, exit 2 (as
    an audit interrupted before its first round; it was Python's bare "interrupted" and 130)."""
    print(f"dpaudit: error: interrupted before the {what} finished, so nothing is certified", file=sys.stderr)
    return EXIT_USAGE


def cmd_one_run(args) -> int:
    from .auditor import audit_one_run
    from .auditor.one_run import canary_inputs
    from .datasets import file_label

    kw = claim_keywords(ONE_RUN_OPTIONS.from_args(args), "one-run")
    try:
        scores, included = canary_inputs(args.scores, args.included, names=(file_label("SCORES", args.scores),
                                                                             file_label("INCLUDED", args.included)))
        if kw.get("guesses") is not None and kw["guesses"] > len(scores):
            raise UsageError(f"argument --guesses: must be at most the number of canaries in SCORES ({args.scores}),"
                             f" {len(scores)}; got {kw['guesses']}")
        report = audit_one_run(scores, included.astype(int), **kw)
    except KeyboardInterrupt:
        return _interrupted_whole("one-run audit")
    return _emit(report, args)


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
    return _emit(report, args)


def _search_nothing_certified(args, progress: dict | None) -> str:
    """The one line of a search interrupted before its final audit certified anything (``progress``: where)."""
    if progress is None:
        return "interrupted before the search screened a pair, so nothing is certified"
    screened = f"{progress['candidates_screened']} of at most {progress['max_candidates']} candidate pairs screened"
    if progress["stage"] == "screening":
        return (f"interrupted while screening ({screened}), so nothing is certified: the screening only chooses "
                "the pair, and only the final audit of it certifies")
    return (f"{_nothing_certified(args, 'final audit')}; the search had chosen --dataset "
            f"'{json.dumps(progress['dataset'])}' --neighbor '{json.dumps(progress['neighbor'])}' ({screened}), "
            "which `dpaudit audit` can audit on its own")


def _search_inputs(args) -> tuple:
    """(target, search keywords) of ``dpaudit search``'s arguments, the input domain completed from the target's."""
    params = dict(_parse_param(p) for p in args.param)
    target = _load_target(args.target, params)
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
    kw["relation"] = kw.get("relation") or _target_relation(target) or "replace-one"
    if not kw["high"] > kw["low"]:
        raise UsageError(f"argument --high: must be greater than --low ({kw['low']:g}); got {kw['high']:g}")
    if kw["integer"] and math.floor(kw["high"]) < math.ceil(kw["low"]):
        raise UsageError(f"argument --integer: [--low, --high] = [{kw['low']:g}, {kw['high']:g}] holds no integer")
    claim_keywords(kw, "search")
    if "samples" in kw and ("max_samples" in kw or "time_budget" in kw):
        raise UsageError("argument --samples: a fixed-size final audit takes no --max-samples or --time-budget")
    return target, kw


def _claim_warning(name: str, params: dict, kw: dict) -> str | None:
    """A ``warning:`` when the claim under test is not what the built-in ``name`` itself claims, else None.

    For a built-in, ``--param`` sets the mechanism and ``--epsilon`` (or ``--claim eps:...``, the same
    thing) only the claim under test; a mismatch is allowed (it is how one audits a wrong claim) but is
    usually a mistake, so it is said out loud.  Curve claims (``gdp:``, ``dpsgd:``, ...) are not compared.
    """
    from .mechanisms import REGISTRY, get_mechanism

    point = _point_claim(kw)
    if name not in REGISTRY or point is None:
        return None
    epsilon, delta, flags = point
    claim = get_mechanism(name, **params).claim
    if math.isclose(claim.epsilon, epsilon, rel_tol=1e-9, abs_tol=1e-12) and \
            math.isclose(claim.delta, delta, rel_tol=1e-9, abs_tol=1e-15):
        return None
    own = f"epsilon={claim.epsilon:g}" + (f", delta={claim.delta:g}" if claim.delta else "")
    tested = f"epsilon={epsilon:g}" + (f", delta={delta:g}" if delta else "")
    return (f"warning: the claim under test ({tested}) differs from {name}'s own ({own}); {flags} "
            f"only the claim, not the mechanism (to audit {name} built for epsilon {epsilon:g}, "
            f"add --param epsilon={epsilon:g})")


def _point_claim(kw: dict) -> tuple[float, float, str] | None:
    """(epsilon, delta, the flags that gave them) of a one-point claim, ``--epsilon/--delta`` or ``--claim eps:``."""
    if "epsilon" in kw:
        return kw["epsilon"], kw.get("delta", 0.0), "--epsilon/--delta change"
    from .claims import PointClaim, parse_claim

    claim = kw.get("claim")
    claim = parse_claim(claim) if isinstance(claim, str) else claim
    if isinstance(claim, PointClaim):
        return claim.point_epsilon, claim.point_delta, "--claim changes"
    return None


def _load_target(name: str, params: dict):
    """``load_target(name, **params)``; a bad ``--param`` value is reported as ``argument --param KEY: ...``."""
    from .exceptions import ParameterTypeError, ParameterValueError
    from .targets import load_target

    try:
        return load_target(name, **params)
    except (ParameterTypeError, ParameterValueError) as exc:
        text = str(exc)
        key = next((k for k in params if text.startswith(f"{k} ")), None)
        if key is not None:
            raise UsageError(f"argument --param {key}: {text[len(key) + 1:]}") from None
        if any(repr(k) in text for k in params):  # e.g. a parameter the mechanism does not have
            raise UsageError(f"argument --param: {text}") from None
        raise


def _parse_param(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as JSON (numbers, lists, true/false), else as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"argument --param: expected KEY=VALUE; got {text!r}")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


def cmd_list(args) -> int:
    from .attacks import list_attacks
    from .mechanisms import list_mechanisms
    from .stats.estimators import ESTIMATORS

    mechs = [(m[0], m[1]) for m in list_mechanisms()]
    mech_params = {name: _mechanism_parameters(name) for name, _ in mechs}
    estimators = [(name, cls.description) for name, cls in ESTIMATORS.items()]
    from .runner import list_kinds

    kinds = list_kinds()
    if args.json:
        args.json_out.append(json.dumps({"mechanisms": dict(mechs), "mechanism_parameters": mech_params,
                                         "attacks": dict(list_attacks()), "estimators": dict(estimators),
                                         "experiment_kinds": dict(kinds)}, indent=1, default=str) + "\n")
        return EXIT_OK
    for title, rows in (("mechanisms", mechs), ("attacks (for dpaudit audit --attack)", list_attacks()),
                        ("estimators (--estimator)", estimators), ("experiment kinds (YAML `attack.name`)", kinds)):
        print(f"{title}:")
        width = max((len(r[0]) for r in rows), default=0)
        for name, line in rows:
            print(f"  {name:<{width}}  {line}")
            if title == "mechanisms" and mech_params.get(name):
                shown = ", ".join(f"{k}={v!r}" for k, v in mech_params[name].items())
                print(f"  {'':<{width}}    --param {shown}")
    return EXIT_OK


def _mechanism_parameters(name: str) -> dict:
    """``{parameter: default}`` of a registered mechanism's factory (what ``--param`` sets)."""
    import enum
    import inspect

    from .mechanisms import REGISTRY

    try:
        sig = inspect.signature(REGISTRY[name])
    except (TypeError, ValueError):  # pragma: no cover - a factory without a signature
        return {}
    out = {}
    for p in sig.parameters.values():
        if p.name.startswith("_") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        default = None if p.default is p.empty else p.default
        out[p.name] = default.value if isinstance(default, enum.Enum) else default
    return out


def main(argv=None) -> int:
    from .exceptions import DPAuditError, notes_as_lines

    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        # A target kept in this process (it cannot be pickled) is a one-line note, said after success only.
        with notes_as_lines() as args.notes:
            status = _run(args)
        for line in pending_notes(args):
            print(line, file=sys.stderr)
        return status
    except UsageError as exc:
        print(f"dpaudit: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except DPAuditError as exc:
        # Only dpaudit's own errors are bad input: a plain ValueError/TypeError is a bug (exit 3 below),
        # even though DPAuditError subclasses them (ParameterValueError is a ValueError).
        if os.environ.get("DPAUDIT_DEBUG"):
            raise
        print(f"dpaudit: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("dpaudit: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, as Python's docs advise.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
        if os.environ.get("DPAUDIT_DEBUG"):
            raise
        print(f"dpaudit: internal error: {type(exc).__name__}: {_one_line(exc)} "
              "(set DPAUDIT_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_INTERNAL


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
