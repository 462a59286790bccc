"""The options of each entry point, declared once: name, type, range, default, flag and help.

One table per entry point (:data:`AUDIT_OPTIONS` for :func:`dpaudit.audit`,
:data:`SEARCH_OPTIONS` for :func:`dpaudit.search`, :data:`SCORES_OPTIONS`,
:data:`ONE_RUN_OPTIONS`, :data:`HARNESS_OPTIONS`; the YAML ``training``
kind's table lives with that kind), in the spirit of scikit-learn's
``validate_params``.  :meth:`OptionTable.validates` binds a table to its
function: every parameter of the signature is a row with the same default (a
mismatch raises at import), and every call is checked row by row and against
the table's cross-option rules (:mod:`dpaudit.param_rules`).  The same rows
build the command line's flags (:meth:`OptionTable.add_arguments`,
:meth:`OptionTable.from_args`) and give the YAML runner its keys
(:meth:`OptionTable.yaml_params`), so a rule such as "``samples`` is an
integer >= 20" or "``claim`` or ``epsilon``, not both" lives in one place and
a change to it reaches all three front ends, each naming the option its way.

Examples
--------
>>> AUDIT_OPTIONS.check({"samples": 1e6, "confidence": 0.9}, "samples", "confidence")
(1000000, 0.9)
>>> AUDIT_OPTIONS.check({"samples": 5}, "samples")
Traceback (most recent call last):
...
dpaudit.exceptions.ParameterValueError: samples must be an integer in [20, 1e+15]; got 5
"""

from __future__ import annotations

import argparse
import functools
import inspect
import math
import os
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import (check_bool, check_choice, check_int, check_real, check_str, check_switch, number_text,
                          underscore_hint)
from .exceptions import ParameterValueError
from .param_rules import Front, broken_rule, rule_error
from .privacy import Neighbouring

__all__ = ["Option", "OptionTable", "AUDIT_OPTIONS", "SEARCH_OPTIONS", "SCORES_OPTIONS", "ONE_RUN_OPTIONS",
           "HARNESS_OPTIONS", "RELATIONS", "all_cores"]

#: The neighbouring relations a search domain takes: :class:`dpaudit.Neighbouring`'s canonical spellings.
RELATIONS = tuple(r.value for r in Neighbouring)


def _attack_choices() -> tuple:
    from .auditor.distinguishers import ATTACKS

    return ("auto", *sorted(ATTACKS))


def _backend_choices() -> tuple:
    from ._executor import Backend

    return tuple(b.value for b in Backend)


def _estimator_choices() -> tuple:
    from .stats.estimators import ESTIMATORS

    return tuple(ESTIMATORS)


#: Most workers a ``jobs`` option takes: beyond a C int the process pool failed with an internal OverflowError.
MAX_JOBS = 100_000


@dataclass(frozen=True)
class Option:
    """One option of an entry point.

    Parameters
    ----------
    name : str
        The Python keyword (and YAML key).
    type : {"int", "real", "bool", "switch", "str", "choice", "jobs", "relation", "claim", "certificate", "seed", "any"}
        ``"switch"`` is a boolean that also takes one of ``choices`` (``grey_box``: ``True`` or ``"auto"``); its
        flag alone means ``True``, and the flag followed by a choice means that choice;
        ``"jobs"`` is a worker count: an integer >= 1, or -1 for every core;
        ``"relation"`` a neighbouring relation, aliases read as their canonical spelling;
        ``"claim"`` a claim spec (parsed to check it) or a claim object; ``"certificate"`` a registered
        certificate's name, ``"module:attr"`` or a certificate object (YAML: a registered name);
        ``"seed"`` an integer >= 0, or in Python a ``SeedSequence`` or ``Generator``;
        ``"any"`` whatever the function itself reads (a target, a dataset, a callback).
    default : object
        The Python default (``None``: not given).
    low, high, low_inclusive, high_inclusive : optional
        The range of a number.
    choices : tuple or callable, optional
        The allowed values of a ``"choice"`` (a callable for open registries,
        read when needed so that the command line starts fast).
    flag : str, optional
        The command-line flag; ``None``: Python (and YAML) only.
    metavar, help : str
        What ``--help`` shows.
    required : bool
        Whether the entry point needs a value.
    aliases : tuple of str
        Other spellings of the flag.
    """

    name: str
    type: str
    default: Any = None
    low: float | None = None
    high: float | None = None
    low_inclusive: bool = True
    high_inclusive: bool = True
    choices: tuple | Callable[[], tuple] | None = None
    flag: str | None = None
    metavar: str | None = None
    help: str = ""
    required: bool = False
    aliases: tuple = ()

    def allowed(self) -> tuple:
        """The choices of a ``"choice"`` option."""
        return tuple(self.choices() if callable(self.choices) else self.choices or ())

    def check(self, value: Any, name: str | None = None) -> Any:
        """``value`` in its canonical type, or a ParameterTypeError/ParameterValueError naming ``name``."""
        name = name or self.name
        if value is None and self.required:
            raise ParameterValueError(f"{name} is required")
        if value is None and self.default is None:
            return None
        t = self.type
        if t == "any" or (t == "seed" and isinstance(value, (np.random.SeedSequence, np.random.Generator))):
            return value
        if t in ("int", "seed"):
            return check_int(value, name, low=self.low, high=self.high)
        if t == "jobs":
            value = check_int(value, name, low=-1, high=MAX_JOBS)
            if value == 0:
                raise ParameterValueError(f"{name} must be >= 1 or -1 (all cores); got 0")
            return value
        if t == "real":
            return check_real(value, name, low=self.low, high=self.high, low_inclusive=self.low_inclusive,
                              high_inclusive=self.high_inclusive, finite=True)
        if t == "bool":
            return check_bool(bool(value) if isinstance(value, np.bool_) else value, name)
        if t == "switch":
            return check_switch(bool(value) if isinstance(value, np.bool_) else value, name, self.allowed())
        if t == "str":
            return check_str(value, name)
        if t == "choice":
            return check_choice(value, name, self.allowed())
        if t == "relation":
            return Neighbouring.parse(value, name).value
        if t == "certificate":  # a registered name, "module:attr" or a Certificate: resolved to check it, kept
            from .stats.certificate import certificate_for

            certificate_for(value, name=name)
            return value
        if t == "claim":  # a spec is parsed to check it and kept as given (reports echo it); objects pass
            if isinstance(value, str):
                from .claims import parse_claim

                parse_claim(value)
            return value
        raise AssertionError(f"unknown option type {t!r}")  # a programming error, not a user's

    def parse(self, text: str, flag: str) -> Any:
        """A command-line string read as this option's type (``1e6`` is an integer), then checked."""
        if self.type in ("int", "jobs", "seed"):
            value: Any = _int_text(text, flag)
        elif self.type == "real":
            try:
                value = number_text(text)
            except ValueError:
                raise ParameterValueError(f"argument {flag}: expected a number{underscore_hint(text)}; got {text!r}"
                                          ) from None
        elif self.type == "claim":
            from .exceptions import DPAuditError

            try:
                return self.check(text, flag)
            except DPAuditError as exc:
                raise type(exc)(f"argument {flag}: {exc}") from None
        else:
            value = text
        return self.check(value, flag)

    def cli_help(self) -> str:
        if self.default is not None and self.type not in ("bool", "switch") and "default" not in self.help:
            return f"{self.help} (default {self.default})"
        return self.help


def _int_text(text: str, flag: str) -> int:
    """An integer flag; ``1e6`` and ``2.5e5`` are accepted when they are whole numbers, ``1_000`` is not
    (``int()`` and ``float()`` read it as 1000; a ``_`` on a command line is more likely a typo)."""
    try:
        value = number_text(text)
    except ValueError:
        raise ParameterValueError(f"argument {flag}: expected an integer (1e6 is allowed){underscore_hint(text)}; "
                                  f"got {text!r}") from None
    stripped = text.strip()
    if stripped.lstrip("+-").isdigit():
        return int(stripped)  # exact beyond 2**53, where the float is not
    if math.isfinite(value) and value.is_integer():
        return int(value)
    raise ParameterValueError(f"argument {flag}: expected an integer (1e6 is allowed); got {text!r}")


class OptionTable(MutableMapping):
    """The options of one entry point, by name, in the order ``--help`` shows them.

    A name instead of an :class:`Option` is a row read from the ``base`` table
    at every lookup, so an entry point that takes another's options
    (``search`` takes every audit option) follows any change to them.
    Assigning a row replaces it everywhere the table is used: flags, Python
    checks and YAML keys.  ``rules`` names the cross-option rules of
    :data:`dpaudit.param_rules.RULES` the entry point keeps.
    """

    def __init__(self, options: Iterable[Option | str], base: "OptionTable | None" = None, rules: Iterable[str] = ()):
        self._order = [o if isinstance(o, str) else o.name for o in options]
        self._rows = {o.name: o for o in options if not isinstance(o, str)}
        self._base = base
        self.rules = tuple(rules)
        missing = [n for n in self._order if n not in self._rows and (base is None or n not in base)]
        if missing:
            raise ValueError(f"rows {missing} are neither given nor in the base table")

    def __getitem__(self, name: str) -> Option:
        if name in self._rows:
            return self._rows[name]
        if self._base is not None and name in self._order:
            return self._base[name]
        raise KeyError(name)

    def __setitem__(self, name: str, option: Option) -> None:
        if option.name != name:
            raise ValueError(f"row {name!r} must hold the option {name!r}; got {option.name!r}")
        if name not in self._order:
            self._order.append(name)
        if name in self._rows or self._base is None or name not in self._base:
            self._rows[name] = option
        else:
            self._base[name] = option

    def __delitem__(self, name: str) -> None:
        self._order.remove(name)
        self._rows.pop(name, None)

    def __iter__(self):
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __repr__(self) -> str:
        return f"OptionTable({self._order})"

    def check(self, values: Mapping[str, Any], *names: str) -> tuple:
        """The checked ``values[name]`` of each of ``names``, in that order (Python's boundary)."""
        return tuple(self[n].check(values.get(n), n) for n in names)

    # ----------------------------------------------------------------- rules between options
    def given(self, values: Mapping[str, Any]) -> dict:
        """The options of ``values`` that were given: not None, not False and not their row's default."""
        out = {}
        for name, value in values.items():
            if name not in self or value is None or value is False:
                continue
            default = self[name].default
            if default is not None and isinstance(value, (bool, int, float, str)) and value == default:
                continue
            out[name] = value
        return out

    def broken_rule(self, values: Mapping[str, Any], only: Iterable[str] | None = None):
        """(the first rule of the table (or of ``only``) that ``values`` breaks, the options given), or (None, given)."""
        given = self.given(values)
        return broken_rule([r for r in self.rules if only is None or r in only], given), given

    def check_rules(self, values: Mapping[str, Any], front: Front | None = None,
                    only: Iterable[str] | None = None) -> None:
        """Raise the front end's error when ``values`` break one of the table's rules (or of ``only``).

        Python (``front`` None): a ParameterValueError (:func:`~dpaudit.param_rules.rule_error`);
        YAML (``self.front("yaml", path)``): a ConfigError at the key path of the option it names.
        """
        rule, given = self.broken_rule(values, only)
        if rule is None:
            return
        if front is None or front.kind == "python":
            raise rule_error(rule, given)
        from .exceptions import ConfigError

        raise ConfigError(front.where(rule.blamed(given)), rule.text(given, front))

    def front(self, kind: str, path: str = "") -> Front:
        """The front end that names this table's options: ``"cli"`` (its flags) or ``"yaml"`` (keys at ``path``)."""
        return Front(kind, flags={n: self[n].flag for n in self if self[n].flag}, path=path)

    # ----------------------------------------------------------------- Python
    def validates(self, fn: Callable) -> Callable:
        """Bind the table to ``fn``: every call's keywords checked by their rows and the table's rules.

        At decoration (import) time the table and the signature must name the
        same parameters with the same defaults, so the defaults live in one
        place; a mismatch raises ``TypeError`` there, not at a user's call.
        ``fn`` runs with the checked values (``1e6`` as the integer it means).
        """
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        names = [p.name for p in params]
        stray = sorted(set(names) ^ set(self))
        if stray:
            raise TypeError(f"{fn.__qualname__}: the option table and the signature differ in {stray}")
        for p in params:
            default = None if p.default is p.empty else p.default
            if default != self[p.name].default:
                raise TypeError(f"{fn.__qualname__}: {p.name} defaults to {default!r} in the signature but "
                                f"{self[p.name].default!r} in the option table")

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            values = {n: self[n].check(v, n) for n, v in bound.arguments.items()}
            self.check_rules(values)
            bound.arguments.update(values)
            return fn(*bound.args, **bound.kwargs)

        checked.options = self
        return checked

    # ----------------------------------------------------------------- command line
    def add_arguments(self, parser: argparse.ArgumentParser, names: Iterable[str] | None = None) -> None:
        """One flag per row that has one (values stay text until :meth:`from_args`)."""
        for name in names if names is not None else self:
            o = self[name]
            if o.flag is None:
                continue
            if o.type == "bool":
                parser.add_argument(o.flag, *o.aliases, dest=o.name, action="store_true", help=o.cli_help())
            elif o.type == "switch":
                # A plain flag, so that ``--grey-box TARGET`` never reads the target as the flag's value; its
                # named values arrive as hidden flags (``--grey-box auto`` -> ``--grey-box-auto``, switch_argv).
                parser.add_argument(o.flag, *o.aliases, dest=o.name, action="store_const", const=True, default=None,
                                    help=o.cli_help())
                for choice in o.allowed():
                    parser.add_argument(f"{o.flag}-{choice}", dest=o.name, action="store_const", const=choice,
                                        help=argparse.SUPPRESS)
            else:
                metavar = o.metavar or ("{" + ",".join(o.allowed()) + "}" if o.type == "choice"
                                        and not callable(o.choices) else "VALUE")
                parser.add_argument(o.flag, *o.aliases, dest=o.name, default=None, metavar=metavar,
                                    help=o.cli_help(), required=o.required)

    def switch_argv(self, argv: list[str]) -> list[str]:
        """``argv`` with each switch's value joined to its flag, the form :meth:`add_arguments` declares:
        ``--grey-box auto`` and ``--grey-box=auto`` -> ``--grey-box-auto``; ``--grey-box=true`` -> ``--grey-box``,
        ``--grey-box=false`` -> nothing; any other ``--grey-box=VALUE`` is the row's one-line error."""
        rows = {o.flag: o for o in (self[n] for n in self) if o.type == "switch" and o.flag}
        out, i = [], 0
        while i < len(argv):
            token = argv[i]
            flag, eq, value = token.partition("=")
            if flag in rows and eq:
                v = rows[flag].parse({"true": True, "false": False}.get(value.lower(), value), flag)
                out += [] if v is False else [flag if v is True else f"{flag}-{v}"]
            elif token in rows and i + 1 < len(argv) and argv[i + 1] in rows[token].allowed():
                out.append(f"{token}-{argv[i + 1]}")
                i += 1
            else:
                out.append(token)
            i += 1
        return out

    def from_args(self, args: argparse.Namespace, names: Iterable[str] | None = None) -> dict:
        """The keywords given on the command line, parsed and checked, errors naming the flag."""
        out = {}
        for name in names if names is not None else self:
            o = self[name]
            if o.flag is None or not hasattr(args, o.name):
                continue
            value = getattr(args, o.name)
            if o.type == "bool" or (o.type == "switch" and value is True):
                if value:
                    out[name] = True
            elif value is not None:
                out[name] = o.parse(value, o.flag)
        return out

    # ----------------------------------------------------------------- YAML
    def yaml_params(self, *names: str, overrides: Mapping[str, Mapping[str, Any]] | None = None) -> dict:
        """The experiment runner's ``{key: Param}`` for ``names``, from the same rows.

        ``samples`` takes ``auto`` in YAML (a sequential audit).  ``overrides``
        changes a default or help per key (e.g. a search's ``epsilon`` defaults
        to a built-in's claim).
        """
        from .runner._spec import REQUIRED, Param

        out = {}
        for name in names:
            o = self[name]
            extra = dict((overrides or {}).get(name, {}))
            if extra.pop("required", False):
                extra.update(default=REQUIRED, nullable=False)
            kind = {"jobs": "int", "choice": "str", "relation": "str", "claim": "str", "certificate": "str",
                    "seed": "int"}.get(o.type, o.type)
            if name == "samples":
                kind = "samples"
            default = "auto" if name == "samples" else o.default
            out[name] = Param(kind, extra.pop("default", default), low=-1 if o.type == "jobs" else o.low,
                              high=o.high, low_inclusive=o.low_inclusive, high_inclusive=o.high_inclusive,
                              choices={"choice": o.allowed(), "certificate": o.allowed(), "switch": o.allowed(),
                                       "relation": Neighbouring.spellings()}.get(o.type),
                              nullable=extra.pop("nullable", o.default is None or name == "samples"),
                              help=extra.pop("help", o.help))
        return out


def all_cores(n_jobs: int) -> int:
    """``n_jobs`` with -1 read as every core of this machine."""
    return (os.cpu_count() or 1) if n_jobs == -1 else n_jobs


# ----------------------------------------------------------------------------- the tables
#: The most releases per side an audit takes: counts stay exact in a float (below 2**53), and the
#: certificate's tail computations still work (at 1e18 the ceiling already comes out 0; numpy's
#: Poisson draw of the held-out size fails near 9.2e18).
MAX_SAMPLES = 10**15

#: The most records a searched dataset holds: every candidate pair is built in memory (8 bytes a record), and
#: beyond it numpy fails with its own message (MemoryError, "Maximum allowed dimension exceeded").
MAX_SEARCH_SIZE = 10**7

CLAIM_HELP = ("a claimed privacy curve instead of --epsilon/--delta: gdp:mu=MU, dpsgd:noise=SIGMA,rate=Q,steps=T, "
              "profile:FILE.json ([[epsilon, delta], ...]) or eps:EPS[,delta=DELTA]; the verdict is a violation "
              "when a certified (epsilon, delta) lies above the curve, at --confidence for the whole curve")

#: :func:`dpaudit.audit`'s options.  A row with a flag is on the command line; the experiment kinds name
#: the rows their YAML sections take.  A ``claim`` (a whole privacy curve) stands
#: in for epsilon and delta.
AUDIT_OPTIONS = OptionTable([
    Option("target", "any", help="the mechanism audited"),
    Option("dataset", "any", flag="--dataset", metavar="D",
           help="JSON array literal or .json/.npy/.csv file (default for a built-in: its stress pair)"),
    Option("neighbor", "any", flag="--neighbor", aliases=("--neighbour",), metavar="D2",
           help="the neighbouring dataset, same forms as --dataset"),
    Option("epsilon", "real", None, low=0.0, flag="--epsilon", metavar="EPS", help="claimed epsilon (or --claim)"),
    Option("delta", "real", 0.0, low=0.0, high=1.0, high_inclusive=False, flag="--delta", metavar="DELTA",
           help="claimed delta"),
    Option("claim", "claim", None, flag="--claim", metavar="SPEC", help=CLAIM_HELP),
    Option("samples", "int", None, low=20, high=MAX_SAMPLES, flag="--samples", metavar="N",
           help="a fixed-size audit of exactly N releases per side (1e6 is fine; at most 1e15); without it the "
                "audit is sequential and stops as soon as the answer is known"),
    Option("max_samples", "int", None, low=40, high=MAX_SAMPLES, flag="--max-samples", metavar="N",
           help="sample budget of a sequential audit, releases per side (at most 1e15; default 1000000 if TARGET "
                "takes size=, else 20000)"),
    Option("time_budget", "real", None, low=0.0, low_inclusive=False, flag="--time-budget", metavar="SEC",
           help="time limit of a sequential audit in seconds; no round starts that would overrun it, and no target "
                "call starts after it (a round it cuts is dropped)"),
    Option("stopping", "choice", "planned", choices=("planned", "anytime"), flag="--stopping",
           metavar="{planned,anytime}",
           help="how a sequential audit may stop: planned (default: rounds doubling from 2,000 per side, the "
                "failure probability shared among them) or anytime (batches of 10 per side and a look after each, "
                "certified by e-processes: valid whenever it stops, often after a few hundred releases)"),
    Option("confidence", "real", 0.95, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False,
           flag="--confidence", metavar="C", help="probability that the bound is valid"),
    Option("seed", "seed", None, low=0, flag="--seed", metavar="S", help="seed; drawn and reported when absent"),
    Option("attack", "choice", "auto", choices=_attack_choices, flag="--attack", metavar="NAME",
           help="distinguisher: auto (default: chosen by output, floating-point attacks included) or a name "
                "from `dpaudit list`"),
    Option("ideal", "bool", False, flag="--ideal",
           help="audit the mechanism as mathematics: no floating-point attacks"),
    Option("keep_drawing", "bool", False, flag="--keep-drawing",
           help="a sequential audit that certifies a violation draws on to its budget for a tighter bound, "
                "where it would stop at once (still valid: every round's bound holds at once)"),
    Option("estimator", "certificate", "clopper-pearson", choices=_estimator_choices, flag="--estimator",
           metavar="{clopper-pearson,gdp,MODULE:ATTR}",
           help="certificate: clopper-pearson (default, any mechanism), gdp (assumes a Gaussian trade-off "
                "curve), another registered name or a Certificate as 'module:attr'"),
    Option("n_jobs", "jobs", 1, flag="--jobs", metavar="J",
           help="parallel workers (-1: every core); the result does not depend on it"),
    Option("backend", "choice", "loky", choices=_backend_choices, flag="--backend", metavar="{loky,dask}",
           help="where chunks are drawn and counted: loky processes (default) or a Dask cluster; the result is "
                "the same"),
    Option("scheduler", "str", None, flag="--scheduler", metavar="ADDRESS",
           help="a Dask scheduler address, e.g. tcp://host:8786 (implies --backend dask; default: a local "
                "cluster)"),
    Option("timeout", "real", None, low=0.0, low_inclusive=False, flag="--timeout", metavar="SEC",
           help="seconds allowed per target call"),
    Option("grey_box", "switch", False, choices=("auto",), flag="--grey-box", metavar="auto",
           help="grey-box audit too: record the target's draws from its rng on D, replay them coupled on D2, report "
                "findings and an upper bound on the pair's epsilon beside the certified lower bound; a target "
                "whose randomness cannot be recorded is an error, or with '--grey-box auto' a black-box audit "
                "with a note saying why"),
    Option("traces", "int", 1000, low=1, high=10**7, flag="--traces", metavar="N",
           help="traces (runs on D, replayed on D2) of a grey-box audit"),
    Option("sensitivity", "real", None, low=0.0, low_inclusive=False, flag="--sensitivity", metavar="S",
           help="declared sensitivity a grey-box audit checks the noise locations' moves against (L1 for "
                "Laplace noise, L2 for Gaussian; default: a built-in's own)"),
    Option("calibration_fraction", "real", 0.5, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False,
           help="share of a round's releases that fit the distinguisher and choose the event"),
    Option("calibration_cap", "int", 1_000_000, low=10, help="most calibration releases kept per side"),
    Option("chunk_size", "int", 1 << 18, low=1, help="releases per chunk; part of the reproducibility key"),
    Option("progress", "any", help="progress bars on stderr (None: when long and on a terminal; 'lines': a log)"),
    Option("stop_when_converged", "any", True, help="False: a sequential audit stops only on a violation or its "
                                                    "budget"),
    Option("on_round", "any", help="called with each finished round's progress"),
], rules=("claim_needed", "one_claim", "pair", "fixed_size", "anytime_fixed", "ideal_float"))

#: :func:`dpaudit.search`'s options: the domain, the screening, and every audit option (same rows).
SEARCH_OPTIONS = OptionTable([
    "target",
    "epsilon",
    "delta",
    "claim",
    Option("size", "int", None, low=1, high=MAX_SEARCH_SIZE, flag="--size", metavar="N",
           help="records per dataset (at most 1e7)"),
    Option("low", "real", None, flag="--low", metavar="LO", help="smallest record value"),
    Option("high", "real", None, flag="--high", metavar="HI", help="largest record value"),
    Option("integer", "bool", False, flag="--integer", help="records are integers"),
    Option("relation", "relation", "replace-one", flag="--relation", metavar="{" + ",".join(RELATIONS) + "}",
           help="neighbouring relation (a built-in's own by default; add/remove is read as add-remove)"),
    Option("budget", "real", None, low=0.0, low_inclusive=False, flag="--budget", metavar="SEC",
           help="time limit of the screening in seconds"),
    Option("finalists", "int", 1, low=1, flag="--finalists", metavar="K",
           help="pairs audited at the end, each at confidence 1-(1-C)/K"),
    Option("screen_samples", "int", None, low=40, help="releases per side per screened pair"),
    Option("max_candidates", "int", None, low=1, help="pairs screened at most"),
    "samples", "max_samples", "time_budget", "keep_drawing", "confidence", "seed", "attack", "ideal", "estimator",
    "n_jobs", "backend", "scheduler", "timeout", "grey_box", "traces", "sensitivity",
    "stopping", "progress",
], base=AUDIT_OPTIONS, rules=("claim_needed", "one_claim", "domain_order", "domain_integer", "fixed_size",
                               "anytime_fixed", "ideal_float"))

#: :func:`dpaudit.audit_scores`'s options: the claim and the certificate, as for an audit.
SCORES_OPTIONS = OptionTable([
    Option("in_scores", "any", help="scores with the record IN: a .npy/.csv/.json path or a list"),
    Option("out_scores", "any", help="scores with the record OUT: same forms"),
    "epsilon", "delta", "claim", "confidence", "seed", "estimator",
    Option("selection_fraction", "real", 0.3, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False,
           help="share of each side's scores that chooses the event; the rest certify it"),
    "stopping", "max_samples", "time_budget",
], base=AUDIT_OPTIONS, rules=("claim_needed", "one_claim"))

#: :func:`dpaudit.audit_one_run`'s options: the claim, the number of guesses and the confidence.
ONE_RUN_OPTIONS = OptionTable([
    Option("scores", "any", help="one score per canary: a .npy/.csv/.json path or a list"),
    Option("included", "any", help="0/1 per canary: same forms"),
    "epsilon", "delta", "claim", "confidence", "seed",
    Option("guesses", "int", None, low=1, flag="--guesses", metavar="K",
           help="guesses made, on the K scores farthest from the median: 'included' above it, 'excluded' below "
                "(ties at the median on the thinner side), in the proportion the scores show (a curve claim's "
                "f-DP test guesses 'included' on the K highest); default: m, m/2, m/4, ... down to 10, each at a "
                "Bonferroni share of the confidence"),
], base=AUDIT_OPTIONS, rules=("claim_needed", "one_claim"))

#: :func:`dpaudit.one_run`'s options: the training harness around :func:`dpaudit.audit_one_run`.
HARNESS_OPTIONS = OptionTable([
    Option("train", "any", help="train(data, rng=...) -> model"),
    Option("dataset", "any", help="the training data the canaries are added to"),
    Option("canaries", "any", help="the canaries, one record each"),
    Option("score", "any", help="score(model, canary) -> a number, higher for 'more likely included'"),
    "epsilon", "delta", "claim", "seed", "guesses", "confidence",
    Option("save", "any", help="a directory that keeps the run's evidence"),
], base=ONE_RUN_OPTIONS, rules=("claim_needed", "one_claim"))
