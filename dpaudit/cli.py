"""The command line: parses, calls, prints.  No logic of its own.

Exit status (INTERFACE.md): 0 no violation found, 1 violation found, 2 bad
input or usage (one line on stderr naming the argument, no traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from ._version import __version__

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """Bad command-line usage; becomes one line and exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line (exit 2) instead of usage + message."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


_FORMATTER = argparse.RawDescriptionHelpFormatter

AUDIT_EXAMPLE = """\
examples:
  dpaudit audit mymech.py:release --dataset '[0,1,1]' --neighbor '[0,1]' --epsilon 1
  dpaudit audit mymech.py:release --dataset '[0,1,1]' --neighbor '[0,1]' --epsilon 1 --samples 1e6
  dpaudit audit mymech.py:release --dataset d.csv --neighbor d2.csv --epsilon 1 --max-samples 1e7 --time-budget 60
  dpaudit audit laplace --param epsilon=0.5 --dataset '[1]' --neighbor '[0]' --epsilon 0.5 --json
  dpaudit audit noisy_histogram --param n_bins=10 --dataset '[0,1]' --neighbor '[0]' --epsilon 1
  dpaudit audit mypkg.mechanisms:noisy_mean --dataset data.npy --neighbor data2.npy \\
          --epsilon 1 --delta 1e-5 --seed 7 --jobs 2

TARGET is package.module:attribute, path/to/file.py:attribute, or a built-in
mechanism name from `dpaudit list`.  Exit status: 0 no violation found,
1 violation found, 2 bad input.
"""


def _float_arg(text, flag):
    try:
        return float(text)
    except ValueError:
        raise UsageError(f"argument {flag}: expected a number; got {text!r}") from None


def _int_arg(text, flag):
    """An integer, also written in scientific notation (``1e6``) when that is a whole number."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and value == int(value):
        return int(value)
    raise UsageError(f"argument {flag}: expected an integer; got {text!r}")


def _build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="dpaudit", description="Measure, rather than trust, the privacy of DP mechanisms.",
                formatter_class=_FORMATTER,
                epilog="examples:\n  dpaudit list\n  dpaudit audit laplace --dataset '[1]' --neighbor '[0]' "
                       "--epsilon 1\n  dpaudit run configs/quickstart.yaml\n  dpaudit plot results/quickstart\n")
    p.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    a = sub.add_parser("audit", help="black-box audit of one mechanism on one neighbouring pair",
                       description="Audit TARGET on a neighbouring pair and certify an epsilon lower bound.",
                       epilog=AUDIT_EXAMPLE, formatter_class=_FORMATTER)
    a.add_argument("target", metavar="TARGET")
    a.add_argument("--dataset", required=True, metavar="D", help="JSON array literal or .json/.npy/.csv file")
    a.add_argument("--neighbor", "--neighbour", dest="neighbor", required=True, metavar="D2",
                   help="the neighbouring dataset, same forms as --dataset")
    a.add_argument("--epsilon", required=True, metavar="EPS", help="claimed epsilon")
    a.add_argument("--delta", default="0", metavar="DELTA", help="claimed delta (default 0)")
    a.add_argument("--samples", default=None, metavar="N",
                   help="a fixed-size audit of exactly N releases per side (1e6 is fine); without it the audit "
                        "is sequential and stops as soon as the answer is known")
    a.add_argument("--max-samples", default=None, metavar="N",
                   help="budget of a sequential audit in releases per side (default 1000000 if TARGET takes "
                        "size=, else 20000)")
    a.add_argument("--time-budget", default=None, metavar="SEC",
                   help="seconds a sequential audit may take; no round starts that would overrun it")
    a.add_argument("--confidence", default="0.95", metavar="C",
                   help="probability that the bound is valid (default 0.95)")
    a.add_argument("--seed", default=None, metavar="S", help="seed; drawn and reported when absent")
    a.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of a built-in TARGET, e.g. --param epsilon=0.5 (repeatable; "
                        "values are read as JSON, else kept as text)")
    a.add_argument("--attack", default="auto", metavar="NAME",
                   help="auto (default: chosen by output, floating-point attacks included) or a name from "
                        "`dpaudit list`")
    a.add_argument("--ideal", action="store_true",
                   help="audit the mechanism as mathematics: no floating-point attacks")
    a.add_argument("--estimator", default="clopper-pearson", choices=["clopper-pearson", "gdp"],
                   help="clopper-pearson (default, any mechanism) or gdp (assumes a Gaussian trade-off curve)")
    a.add_argument("--jobs", default="1", metavar="J", help="parallel workers; the result does not depend on it")
    a.add_argument("--timeout", default=None, metavar="SEC", help="seconds allowed per target call")
    a.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    a.set_defaults(func=cmd_audit)

    ls = sub.add_parser("list", help="list mechanisms, attacks and estimators",
                        description="List the built-in mechanisms (with their claims), attacks and estimators.",
                        epilog="example:\n  dpaudit list\n  dpaudit list --json", formatter_class=_FORMATTER)
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(func=cmd_list)

    try:
        from .runner import cli_commands
    except ImportError as exc:  # pragma: no cover - only while the runner is missing
        missing = str(exc)

        def _missing(args, _m=missing):
            raise UsageError(f"dpaudit {args.command}: the experiment runner is not available ({_m})")

        for name in ("run", "plot"):
            sp = sub.add_parser(name, help=f"{name} (unavailable)")
            sp.add_argument("rest", nargs="*")
            sp.set_defaults(func=_missing)
    else:
        cli_commands.add_run_parser(sub)
        cli_commands.add_plot_parser(sub)
    return p


def _finite(obj):
    """JSON has no inf/NaN: keep output parseable by any reader."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def cmd_audit(args) -> int:
    from . import _validation as v
    from .auditor import audit

    kw = dict(
        epsilon=v.check_epsilon(_float_arg(args.epsilon, "--epsilon"), "--epsilon"),
        delta=v.check_delta(_float_arg(args.delta, "--delta"), "--delta"),
        confidence=v.check_confidence(_float_arg(args.confidence, "--confidence"), "--confidence"),
        attack=args.attack,
        estimator=args.estimator,
    )
    if args.samples is not None:
        kw["samples"] = v.check_int(_int_arg(args.samples, "--samples"), "--samples", low=20)
        if args.max_samples is not None or args.time_budget is not None:
            raise UsageError("argument --samples: a fixed-size audit takes no --max-samples or --time-budget")
    if args.max_samples is not None:
        kw["max_samples"] = v.check_int(_int_arg(args.max_samples, "--max-samples"), "--max-samples", low=40)
    if args.time_budget is not None:
        kw["time_budget"] = v.check_real(_float_arg(args.time_budget, "--time-budget"), "--time-budget", low=0.0,
                                         low_inclusive=False)
    kw["ideal"] = bool(args.ideal)
    if args.seed is not None:
        kw["seed"] = v.check_int(_int_arg(args.seed, "--seed"), "--seed", low=0)
    jobs = _int_arg(args.jobs, "--jobs")
    if jobs == 0 or jobs < -1:
        raise UsageError(f"argument --jobs: expected an integer >= 1 or -1; got {jobs}")
    kw["n_jobs"] = jobs
    if args.timeout is not None:
        kw["timeout"] = v.check_real(_float_arg(args.timeout, "--timeout"), "--timeout", low=0.0,
                                     low_inclusive=False)
    if args.attack != "auto":
        from .attacks import ATTACKS

        if args.attack not in ATTACKS:
            raise UsageError(f"argument --attack: expected 'auto' or one of {sorted(ATTACKS)}; got {args.attack!r}")
    from .targets import load_target, parse_dataset

    params = dict(_parse_param(p) for p in args.param)
    target = load_target(args.target, **params) if params else args.target
    dataset = parse_dataset(args.dataset, name="--dataset")
    neighbor = parse_dataset(args.neighbor, name="--neighbor")
    report = audit(target, dataset, neighbor, **kw)
    if args.json:
        print(report.summary(), file=sys.stderr)
        sys.stdout.write(json.dumps(_finite(report.to_dict()), allow_nan=False) + "\n")
    else:
        print(report.summary())
    return EXIT_VIOLATION if report.violation else EXIT_OK


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
    from .auditor import ESTIMATORS

    try:
        from .mechanisms import list_mechanisms

        mechs = [(m[0], m[1]) for m in list_mechanisms()]
    except ImportError:  # pragma: no cover
        mechs = []
    estimators = [
        ("clopper-pearson", "exact one-sided intervals on TPR/FPR of a held-out event; valid for any mechanism"),
        ("gdp", "certified Gaussian-DP mu (Nasr et al. 2023) turned into epsilon(delta); assumes a Gaussian curve"),
    ]
    assert [e[0] for e in estimators] == list(ESTIMATORS)
    from .runner import list_kinds

    kinds = list_kinds()
    if args.json:
        print(json.dumps({"mechanisms": dict(mechs), "attacks": dict(list_attacks()),
                          "estimators": dict(estimators), "experiment_kinds": dict(kinds)}, indent=1))
        return EXIT_OK
    for title, rows in (("mechanisms", mechs), ("attacks (for dpaudit audit --attack)", list_attacks()),
                        ("estimators (--estimator)", estimators), ("experiment kinds (YAML `attack.name`)", kinds)):
        print(f"{title}:")
        width = max((len(r[0]) for r in rows), default=0)
        for name, line in rows:
            print(f"  {name:<{width}}  {line}")
    return EXIT_OK


def main(argv=None) -> int:
    from .exceptions import DPAuditError

    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except (DPAuditError, TypeError, ValueError) as exc:
        # Our own errors name the argument; TypeError/ValueError reaching here
        # come from input checks in numpy/json on user data.
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
