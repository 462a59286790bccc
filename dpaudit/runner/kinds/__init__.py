"""The registry of experiment kinds: what one trial of an experiment does.

A kind is a named, open choice (a registry, like Opacus' accountants): the
built-ins are ``audit`` (black-box audits of one or more mechanisms) and the
attacks ``differencing``, ``reconstruction``, ``tracing`` and ``rr_tradeoff``.  Each kind declares its parameters (type, default, range), a
``run_trial(config, mechanism, seed_sequence) -> dict`` that returns plain JSON
data, and the figures it draws by default.

Examples
--------
>>> from dpaudit.runner.kinds import get_kind
>>> get_kind("rr_tradeoff").section
'attack'
>>> "audit" in [name for name, _ in list_kinds()]
True
"""

from __future__ import annotations

from ..._validation import did_you_mean
from ...exceptions import ConfigError
from .base import KINDS, ExperimentKind, register_kind, unregister_kind

__all__ = ["ExperimentKind", "register_kind", "get_kind", "list_kinds", "unregister_kind"]


def get_kind(name: str, path: str = "attack.name") -> ExperimentKind:
    """The registered kind called ``name``; a :class:`ConfigError` at ``path`` otherwise."""
    _load_builtins()
    try:
        return KINDS[name]
    except (KeyError, TypeError):
        names = sorted(k for k, v in KINDS.items() if v.section == "attack")
        raise ConfigError(path, f"expected one of {names}, got {name!r}{did_you_mean(name, names)}") from None


def list_kinds() -> list[tuple[str, str]]:
    """``(name, one-line description)`` for every registered kind, sorted by name."""
    _load_builtins()
    return sorted((k.name, k.description) for k in KINDS.values())


_LOADED = False


def _load_builtins() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from . import attacks, audit, rr_tradeoff, scores, search, training  # noqa: F401  (they register themselves)
