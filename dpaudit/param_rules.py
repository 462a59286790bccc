"""Rules between options, declared once and said in each front end's own words.

A :class:`Rule` ties options of an entry point together ("``samples`` excludes
``max_samples``", "``dataset`` and ``neighbor`` go together").  Its message is
one template; a :class:`Front` renders the option names in it as the front
end spells them: Python keywords (``max_samples``), command-line flags
(``--max-samples``) or YAML keys under a section (``audit.max_samples``).  The
rules live in :data:`RULES`, read at every check, so changing one entry changes
the message of every front end at once (scikit-learn's ``_param_validation``
keeps constraints beside the signature in the same spirit).

Examples
--------
>>> rule = RULES["one_claim"]
>>> print(rule.render({"claim": "gdp:mu=1", "epsilon": 1.0}, PYTHON))
claim: give either claim or epsilon/delta, not both (got epsilon too)
>>> print(rule.render({"claim": "gdp:mu=1", "epsilon": 1.0}, Front("cli", flags={"claim": "--claim"})))
argument --claim: give either --claim or --epsilon/--delta, not both (got --epsilon too)
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ._validation import show
from .exceptions import ParameterValueError

__all__ = ["Rule", "Front", "PYTHON", "RULES", "rule_error", "broken_rule"]


def rule_error(rule: "Rule", given: Mapping[str, Any]) -> ParameterValueError:
    """A broken ``rule`` as Python's error; its ``rule`` and ``given`` let another front end say it in its words."""
    err = ParameterValueError(rule.render(given, PYTHON))
    err.rule, err.given, err.parameter = rule, dict(given), rule.blamed(given)
    return err


@dataclass(frozen=True)
class Front:
    """How one front end names an option and a setting, and where its error points.

    ``kind``: ``"python"`` (keywords), ``"cli"`` (flags, from ``flags`` or ``--name-with-dashes``) or
    ``"yaml"`` (keys of the section at ``path``).
    """

    kind: str
    flags: Mapping[str, str] = field(default_factory=dict)
    path: str = ""

    def name(self, option: str) -> str:
        if self.kind == "cli":
            return self.flags.get(option) or "--" + option.replace("_", "-")
        return option

    def setting(self, option: str, value: Any) -> str:
        """``samples=1000`` (Python), ``--samples 1000`` (command line), ``samples: 1000`` (YAML)."""
        if self.kind == "cli":
            return f"{self.name(option)} {value}"
        if self.kind == "yaml":
            return f"{option}: {value}"
        return f"{option}={show(value)}"

    def where(self, option: str) -> str:
        """What the error line starts with: the keyword, ``argument --flag``, or the YAML key path."""
        if self.kind == "cli":
            return f"argument {self.name(option)}"
        if self.kind == "yaml":
            return f"{self.path}.{option}" if self.path else option
        return option


#: Python's front end: options named by their keywords.
PYTHON = Front("python")


class _Named:
    """An option in a message template: ``{samples}`` its name, ``{samples:setting}`` name and value."""

    def __init__(self, front: Front, option: str, given: Mapping[str, Any]):
        self.front, self.option, self.given = front, option, given

    def __format__(self, spec: str) -> str:
        if spec == "setting":
            return self.front.setting(self.option, self.given.get(self.option))
        if spec == "value":
            return show(self.given.get(self.option))
        if spec:  # a number's format: {low:g}
            return format(self.given.get(self.option), spec)
        return self.front.name(self.option)


class _Names(dict):
    def __init__(self, front: Front, given: Mapping[str, Any], blamed: str, other: str | None):
        super().__init__(given=_Named(front, blamed, given), other=_Named(front, other or blamed, given))
        self.front, self.values = front, given

    def __missing__(self, option: str) -> _Named:
        return _Named(self.front, option, self.values)


@dataclass(frozen=True)
class Rule:
    """One rule between options.

    Parameters
    ----------
    kind : {"exclusive", "together", "one_of", "check"}
        ``exclusive``: no option of ``first`` beside one of ``second``; ``together``: the options of
        ``first`` all given or none; ``one_of``: at least one option of ``first`` given; ``check``:
        when every option of ``first`` and ``second`` is given, ``test`` of their values holds.
    first, second : tuple of str
        The options (Python keywords; each front end renders them).
    message : str
        The template: ``{name}`` is an option as the front end names it, ``{name:setting}`` with its
        value, ``{given}`` the option the error names and ``{other}`` the one it conflicts with.
    blame : {"first", "second"}
        Which side of an ``exclusive`` rule the error names (the one to take out).
    test : callable, optional
        ``test(given) -> bool`` of a ``check`` rule (the error names ``first[0]``).

    A message starting "must" reads after the keyword in Python (``high must be > low``), after a colon
    elsewhere (``argument --high: must be > --low``), as the checks of :mod:`dpaudit._validation` do.
    """

    kind: str
    first: tuple[str, ...]
    second: tuple[str, ...] = ()
    message: str = ""
    blame: str = "first"
    test: Callable[[Mapping[str, Any]], bool] | None = None

    @property
    def options(self) -> tuple[str, ...]:
        return self.first + self.second

    def broken(self, given: Mapping[str, Any]) -> tuple[str, str | None] | None:
        """(the option to name, the one it conflicts with) when the options ``given`` break the rule, else None."""
        a = [n for n in self.first if n in given]
        b = [n for n in self.second if n in given]
        if self.kind == "exclusive" and a and b:
            return (a[0], b[0]) if self.blame == "first" else (b[0], a[0])
        if self.kind == "together" and a and len(a) < len(self.first):
            return next(n for n in self.first if n not in given), a[0]
        if self.kind == "one_of" and not a:
            return self.first[0], None
        if self.kind == "check" and len(a) + len(b) == len(self.options) and not self.test(given):
            return self.first[0], (self.second or (None,))[0]
        return None

    def blamed(self, given: Mapping[str, Any]) -> str | None:
        hit = self.broken(given)
        return None if hit is None else hit[0]

    def text(self, given: Mapping[str, Any], front: Front) -> str:
        """The message of a rule ``given`` breaks, without where it points."""
        blamed, other = self.broken(given) or (self.first[0], None)
        return string.Formatter().vformat(self.message, (), _Names(front, given, blamed, other))

    def render(self, given: Mapping[str, Any], front: Front) -> str:
        """The whole error line of the front end: ``<where>: <message>`` (Python: ``<keyword> must ...``)."""
        text = self.text(given, front)
        sep = " " if front.kind == "python" and text.startswith("must ") else ": "
        return f"{front.where(self.blamed(given) or self.first[0])}{sep}{text}"


#: The rules between options, by name; an entry point's table names those it keeps.
RULES: dict[str, Rule] = {
    "one_claim": Rule("exclusive", ("claim",), ("epsilon", "delta"),
                      "give either {claim} or {epsilon}/{delta}, not both (got {other} too)"),
    "claim_needed": Rule("one_of", ("epsilon", "claim"), message="required (or {claim} for a claimed curve)"),
    "fixed_size": Rule("exclusive", ("samples",), ("max_samples", "time_budget", "keep_drawing"),
                       "a fixed-size audit ({samples:setting}) takes no {given}; leave out {samples} for a "
                       "sequential one", blame="second"),
    "anytime_fixed": Rule("exclusive", ("stopping",), ("samples",),
                          "an anytime audit ({stopping:setting}) takes no {samples}; give {max_samples} (and "
                          "{time_budget}) instead"),
    "ideal_float": Rule("check", ("attack",), ("ideal",),
                        "a floating-point attack ({attack:setting}) beside {ideal}, which turns floating-point "
                        "attacks off; leave out one of them", test=lambda v: not (v["ideal"] and _float_attack(v["attack"]))),
    "pair": Rule("together", ("dataset", "neighbor"),
                 message="give both {dataset} and {neighbor}, or neither (a built-in mechanism's own pair)"),
    "domain_order": Rule("check", ("high",), ("low",), "must be > {low} ({low:g}); got {high:g}",
                         test=lambda v: v["high"] > v["low"]),
    "domain_integer": Rule("check", ("integer",), ("low", "high"),
                           "[{low}, {high}] = [{low:g}, {high:g}] holds no integer",
                           test=lambda v: math.floor(v["high"]) >= math.ceil(v["low"])),
}


def _float_attack(name) -> bool:
    """Whether ``name`` is one of the floating-point family's attacks (imported late: the audit's table is read
    at start-up)."""
    from .auditor.distinguishers import ATTACKS

    spec = ATTACKS.get(name) if isinstance(name, str) else None
    return spec is not None and spec.outputs == "float"


def broken_rule(names, given: Mapping[str, Any]) -> Rule | None:
    """The first of the rules called ``names`` (keys of :data:`RULES`) that ``given`` breaks, else None."""
    for name in names:
        rule = RULES[name]
        if rule.broken(given) is not None:
            return rule
    return None
