"""The verdict words of every report: one spelling, one rule.

Every report in dpaudit (audit, scores, one-run, search, attacks, the YAML aggregators, the training
lab) says its verdict with :class:`Verdict` and decides it with :func:`verdict_of` or
:func:`any_violation`, so the JSON spells it the same everywhere.  Both enums are ``str`` enums:
``Verdict.VIOLATION == "violation"``, ``json.dumps`` writes the plain string, and the repr is the
string's, so a report reads the same in a REPL as a plain string would.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Iterable

__all__ = ["Verdict", "StoppingReason", "verdict_of", "any_violation"]


class _PlainStrEnum(StrEnum):
    def __repr__(self) -> str:
        return repr(self.value)


class Verdict(_PlainStrEnum):
    """What an audit concluded about its claim."""

    VIOLATION = "violation"
    NO_VIOLATION = "no violation found"
    NO_CLAIM = "no claim"


class StoppingReason(_PlainStrEnum):
    """Why an audit stopped drawing."""

    VIOLATION = "violation"
    CONVERGED = "converged"
    BUDGET = "budget"
    FIXED = "fixed"


def verdict_of(violated: bool | None) -> Verdict:
    """``VIOLATION`` when a violation was certified, ``NO_VIOLATION`` when not, ``NO_CLAIM`` for ``None``."""
    if violated is None:
        return Verdict.NO_CLAIM
    return Verdict.VIOLATION if violated else Verdict.NO_VIOLATION


def any_violation(verdicts: Iterable[object]) -> Verdict:
    """The verdict of a table of trials: a violation when any trial's verdict (or flag) is one."""
    return verdict_of(any(v is True or v == Verdict.VIOLATION for v in verdicts))
