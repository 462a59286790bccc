"""Exceptions raised by dpaudit.

Every dpaudit error subclasses a built-in exception so that callers who do not
know dpaudit can still catch it: wrong types raise a :class:`TypeError`
subclass, wrong values a :class:`ValueError` subclass (the habit of
scikit-learn's ``_param_validation``).  The command line turns any
:class:`DPAuditError` into one line on stderr and exit status 2, and nothing else: a plain ``ValueError`` or
``TypeError`` reaching it is a bug in dpaudit (exit status 3), so input checks raise these classes.
"""

from __future__ import annotations

import contextlib

__all__ = [
    "DPAuditError",
    "ParameterTypeError",
    "ParameterValueError",
    "ConfigError",
    "DatasetError",
    "TargetError",
    "TargetTimeoutError",
    "MissingExtraError",
    "SerialFallbackWarning",
]


class DPAuditError(Exception):
    """Base class of every error dpaudit raises on purpose."""


class ParameterTypeError(DPAuditError, TypeError):
    """A parameter has the wrong type; the message names the parameter."""


class ParameterValueError(DPAuditError, ValueError):
    """A parameter has a value outside its domain; the message names it."""


class ConfigError(ParameterValueError):
    """An experiment configuration is invalid.

    The message starts with the key path, e.g.
    ``attack.params.queries: expected an integer >= 1, got 'many'``.
    """

    def __init__(self, key_path: str, problem: str):
        self.key_path = key_path
        self.problem = problem
        super().__init__(f"{key_path}: {problem}" if key_path else problem)


class DatasetError(ParameterValueError):
    """A dataset argument could not be read or parsed."""


class TargetError(DPAuditError, RuntimeError):
    """The mechanism under audit misbehaved (raised, returned NaN, changed shape...).

    The message always names the target.
    """


class TargetTimeoutError(TargetError, TimeoutError):
    """The mechanism under audit did not return within the allowed time."""


class TimeBudgetSpent(DPAuditError, TimeoutError):
    """A sequential audit's time budget ran out while a round was being drawn (the round is dropped).

    Raised between target calls, in whichever process draws; the auditor reports the last
    completed round, or a clear error when not even one round fits in the budget.
    """


class MissingExtraError(DPAuditError, ImportError):
    """An optional third-party library is missing or unusable; the message names the extra to install."""


class SerialFallbackWarning(UserWarning):
    """Work asked to run in worker processes runs in this one (e.g. a target that cannot be pickled).

    The results are the same (they never depend on the number of workers); the command line
    shows it as a ``note:`` line on stderr.
    """


@contextlib.contextmanager
def notes_as_lines():
    """While the block runs, each :class:`SerialFallbackWarning` becomes a ``note: ...`` line added to the
    list it yields, for the command line to print once the command has succeeded.

    Said at once, the note would come before a later error, and an error must be the only line on stderr.
    Other warnings keep Python's display; on leaving, the previous display is restored.

    >>> import warnings
    >>> with warnings.catch_warnings(), notes_as_lines() as notes:
    ...     warnings.simplefilter("always", SerialFallbackWarning)
    ...     warnings.warn("drawing in this process", SerialFallbackWarning)
    >>> notes
    ['note: drawing in this process']
    """
    import warnings

    shown = warnings.showwarning
    notes: list[str] = []

    def show(message, category, filename, lineno, file=None, line=None):
        if isinstance(category, type) and issubclass(category, SerialFallbackWarning):
            notes.append(f"note: {message}")
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield notes
    finally:
        warnings.showwarning = shown
