"""The registry of experiment kinds: what one trial of an experiment does.

A kind is a named, open choice (a registry, like Opacus' accountants): the
built-ins are ``audit`` (black-box audits of one or more mechanisms) and the
attacks ``differencing``, ``reconstruction``, ``tracing``, ``census`` and
``rr_tradeoff``.  Each kind declares its parameters (type, default, range), a
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

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ...exceptions import ConfigError
from .._spec import Param

__all__ = ["ExperimentKind", "register_kind", "get_kind", "list_kinds", "unregister_kind"]


@dataclass(frozen=True)
class ExperimentKind:
    """One kind of experiment.

    Parameters
    ----------
    name : str
        The registry name, used as ``attack.name`` (or ``audit`` for the audit kind).
    description : str
        One line for ``dpaudit list``.
    section : {"audit", "attack"}
        The config section holding its parameters: ``audit:`` (flat) or ``attack.params``.
    params : mapping or callable
        ``{name: Param}``; a callable returning it is resolved lazily (kinds that
        wrap optional modules read their signature only when used).
    run_trial : callable
        ``run_trial(config, mechanism, seed_sequence) -> dict`` with JSON data;
        ``config`` is the resolved config of one sweep point, ``mechanism`` the
        resolved mechanism entry (audit kind) or ``None``.
    figures : tuple of str
        The figures drawn by default (names in :data:`dpaudit.plots.FIGURES`).
    uses_mechanisms : bool
        Whether the kind needs a ``mechanisms`` list.
    """

    name: str
    description: str
    section: str
    params: Mapping[str, Param] | Callable[[], Mapping[str, Param]]
    run_trial: Callable[[dict, "dict | None", Any], dict]
    figures: tuple[str, ...] = ()
    uses_mechanisms: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    def param_spec(self) -> Mapping[str, Param]:
        """The parameter table, importing the underlying module if needed."""
        if callable(self.params):
            try:
                return self.params()
            except ImportError as exc:
                path = "audit" if self.section == "audit" else "attack.name"
                raise ConfigError(path, f"the {self.name!r} experiment is not available yet: {exc}") from None
        return self.params


_KINDS: dict[str, ExperimentKind] = {}


def register_kind(kind: ExperimentKind, *, replace: bool = False) -> ExperimentKind:
    """Add ``kind`` to the registry (``replace=True`` to overwrite a name)."""
    if kind.section not in ("audit", "attack"):
        raise ValueError(f"section must be 'audit' or 'attack'; got {kind.section!r}")
    if kind.name in _KINDS and not replace:
        raise ValueError(f"experiment kind {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    return kind


def unregister_kind(name: str) -> None:
    """Remove a kind (tests use this to clean up their own kinds)."""
    _KINDS.pop(name, None)


def get_kind(name: str, path: str = "attack.name") -> ExperimentKind:
    """The registered kind called ``name``; a :class:`ConfigError` at ``path`` otherwise."""
    _load_builtins()
    try:
        return _KINDS[name]
    except (KeyError, TypeError):
        names = sorted(k for k, v in _KINDS.items() if v.section == "attack")
        raise ConfigError(path, f"expected one of {names}, got {name!r}") from None


def list_kinds() -> list[tuple[str, str]]:
    """``(name, one-line description)`` for every registered kind, sorted by name."""
    _load_builtins()
    return sorted((k.name, k.description) for k in _KINDS.values())


_LOADED = False


def _load_builtins() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    from . import attacks, audit, rr_tradeoff, search  # noqa: F401  (they register themselves)
