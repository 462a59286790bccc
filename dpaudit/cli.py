"""The command line: parses, calls, prints.

Flags come from the option tables of :mod:`dpaudit.params`; the library checks the values and the rules
between them, and a broken rule is said with the flags' names (:func:`dpaudit.cli_common.error_line`).
``search`` lives in :mod:`dpaudit.cli_search`, ``scores`` and ``one-run`` in :mod:`dpaudit.cli_scores`,
what every command shares in :mod:`dpaudit.cli_common`.  Exit status:
0 no violation found, 1 violation found, 2 bad input or usage (one line on
stderr, always starting ``dpaudit: error:``, naming the argument; no
traceback), 3 an internal error (a bug in dpaudit: one line starting
``dpaudit: internal error:``; ``DPAUDIT_DEBUG=1`` shows the traceback).  Warnings and notes for people go to stderr as lines starting
``warning:`` or ``note:``, said once the command has succeeded (an error is the only line); with
``--json`` stdout holds only the JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from ._version import __version__
from .cli_common import (EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION, FORMATTER, Parser, UsageError, emit,
                         error_line, load_target_arg, nothing_certified, one_line, parse_param, pending_notes, run,
                         target_relation)
from .cli_common import second_interrupt_aborts as _second_interrupt_aborts  # noqa: F401  (its old path)
from .cli_scores import add_score_parsers, cmd_one_run, cmd_scores
from .cli_search import add_search_parser, cmd_search
from .params import AUDIT_OPTIONS
from .stats.verdict import Verdict

__all__ = ["main", "cmd_audit", "cmd_list", "pair_warning", "cmd_search", "cmd_scores", "cmd_one_run", "UsageError",
           "pending_notes", "EXIT_OK", "EXIT_VIOLATION", "EXIT_USAGE", "EXIT_INTERNAL", "AUDIT_EXAMPLE"]


AUDIT_EXAMPLE = f"""\
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
Exit status: 0 {Verdict.NO_VIOLATION}, 1 violation found, 2 bad input, 3 internal error
(a bug in dpaudit; DPAUDIT_DEBUG=1 shows the traceback).
Ctrl-C stops a sequential audit and reports the rounds it finished (valid as any
round's bound; exit status by verdict); a second Ctrl-C stops at once.
"""


def _build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="dpaudit", description="Measure, rather than trust, the privacy of DP mechanisms.",
                formatter_class=FORMATTER,
                epilog="examples:\n  dpaudit list\n  dpaudit audit laplace --dataset '[1]' --neighbor '[0]' "
                       "--epsilon 1\n  dpaudit run configs/quickstart.yaml\n  dpaudit plot results/quickstart\n\n"
                       f"exit status: 0 {Verdict.NO_VIOLATION}, 1 violation found, 2 bad input or usage, 3 internal "
                       "error (a bug in dpaudit; DPAUDIT_DEBUG=1 shows the traceback)\n")
    p.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    a = sub.add_parser("audit", help="black-box audit of one mechanism on one neighbouring pair",
                       description="Audit TARGET on a neighbouring pair and certify an epsilon lower bound.",
                       epilog=AUDIT_EXAMPLE, formatter_class=FORMATTER)
    a.add_argument("target", metavar="TARGET")
    AUDIT_OPTIONS.add_arguments(a)
    a.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of a built-in TARGET, e.g. --param epsilon=0.5 (repeatable; "
                        "values are read as JSON, else kept as text)")
    a.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    a.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar with the time left on stderr (default: only when stderr is a terminal; "
                        "otherwise a sequential audit that runs over 10 s prints one line per round)")
    a.set_defaults(func=cmd_audit, options=AUDIT_OPTIONS)

    add_search_parser(sub)
    add_score_parsers(sub)
    from .cli_sampler import add_sampler_parser

    add_sampler_parser(sub)

    ls = sub.add_parser("list", help="list mechanisms, attacks and estimators",
                        description="List the built-in mechanisms (with their claims), attacks and estimators.",
                        epilog="example:\n  dpaudit list\n  dpaudit list --json", formatter_class=FORMATTER)
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
            print(f"dpaudit: error: {nothing_certified(args)}", file=sys.stderr)
            return EXIT_USAGE
    for line in filter(None, said + pending_notes(args)):
        print(line, file=sys.stderr)
    return emit(report, args)


def _audit_inputs(args) -> tuple:
    """(target, dataset, neighbor, audit keywords, lines to say after success) of ``dpaudit audit``'s arguments."""
    kw = AUDIT_OPTIONS.from_args(args)
    dataset, neighbor = kw.pop("dataset", None), kw.pop("neighbor", None)
    from .datasets import align_empty
    from .targets import parse_dataset

    params = dict(parse_param(p) for p in args.param)
    target = load_target_arg(args.target, params)
    said = [_claim_warning(args.target, params, kw), _slow_target_note(target) if args.samples is None else None]
    if args.progress is not None:
        kw["progress"] = args.progress
    from ._progress import RoundLines, round_lines_wanted

    if round_lines_wanted(args.progress):
        kw["progress"] = "lines"  # a log (nohup, CI): lines as a long step's chunks finish, once it is long
        if args.samples is None:
            kw["on_round"] = RoundLines()  # and one line per finished round
    if dataset is None and neighbor is None:
        pair = getattr(target.fn, "neighbouring_pair", None)
        if not callable(pair):
            raise UsageError(f"arguments --dataset/--neighbor: required for target {args.target!r} (only a built-in "
                             "mechanism has its own pair; `dpaudit search` can find one)")
        dataset, neighbor = pair()
    elif dataset is not None and neighbor is not None:
        dataset, neighbor = align_empty(parse_dataset(dataset, name="--dataset"),
                                        parse_dataset(neighbor, name="--neighbor"))
        said.append(pair_warning(target, dataset, neighbor, kw.get("claim")))
    else:  # one of the two: dpaudit.audit's rule says which is missing, in the flags' names
        dataset, neighbor = (None if d is None else parse_dataset(d, name=f"--{n}")
                             for d, n in ((dataset, "dataset"), (neighbor, "neighbor")))
    return target, dataset, neighbor, kw, said


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


def pair_warning(target, dataset, neighbor, claim=None) -> str | None:
    """One ``warning:`` line when the pair is not neighbouring, else None.

    The target's relation decides (:func:`dpaudit.pairs.non_neighbour_note`, the check the report's note
    makes too, named with the flags): records, one replaced, added or removed; ``linf``, every coordinate
    moved by at most 1; unknown, either.  A ``claim`` accounted for add/remove neighbours (``dpsgd:``)
    needs a record added or removed, not replaced.
    """
    from .auditor.pipeline import replaced_record_note
    from .claims import as_claim
    from .pairs import non_neighbour_note

    note = replaced_record_note(as_claim(claim), dataset, neighbor) if claim is not None else None
    if note is not None:
        return f"warning: {note}"

    note = non_neighbour_note(dataset, neighbor, target_relation(target), AUDIT_OPTIONS.front("cli"))
    return None if note is None else f"warning: {note}"


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
    if math.isclose(claim.point_epsilon, epsilon, rel_tol=1e-9, abs_tol=1e-12) and \
            math.isclose(claim.point_delta, delta, rel_tol=1e-9, abs_tol=1e-15):
        return None
    own = f"epsilon={claim.point_epsilon:g}" + (f", delta={claim.point_delta:g}" if claim.point_delta else "")
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
                        ("estimators (--estimator)", estimators), ("experiment kinds (YAML `kind.name`)", kinds)):
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

    from .params import AUDIT_OPTIONS

    parser = _build_parser()
    try:
        args = parser.parse_args(AUDIT_OPTIONS.switch_argv(list(sys.argv[1:] if argv is None else argv)))
        if not getattr(args, "command", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        # A target kept in this process (it cannot be pickled) is a one-line note, said after success only.
        with notes_as_lines() as args.notes:
            status = run(args)
        for line in pending_notes(args):
            print(line, file=sys.stderr)
        return status
    except UsageError as exc:
        print(f"dpaudit: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except DPAuditError as exc:
        # Only dpaudit's own errors are bad input: a plain ValueError/TypeError is a bug (exit 3 below),
        # even though DPAuditError subclasses them (ParameterValueError is a ValueError).
        if os.environ.get("DPAUDIT_DEBUG"):
            raise
        print(f"dpaudit: error: {error_line(exc, locals().get('args'))}", file=sys.stderr)
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
        print(f"dpaudit: internal error: {type(exc).__name__}: {one_line(exc)} "
              "(set DPAUDIT_DEBUG=1 for a traceback)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
