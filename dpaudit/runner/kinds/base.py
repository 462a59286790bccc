"""What an experiment kind is, and the registry that holds them.

The built-in kinds (:mod:`.audit`, :mod:`.attacks`, :mod:`.rr_tradeoff`)
import this module to register themselves; :mod:`dpaudit.runner.kinds` loads
them on first use.  Keeping the registry here, rather than in the package's
``__init__``, means no built-in kind imports the package that imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ...exceptions import ConfigError
from .._spec import Param

__all__ = ["ExperimentKind", "register_kind", "unregister_kind", "KINDS"]


@dataclass(frozen=True)
class ExperimentKind:
    """One kind of experiment.

    Parameters
    ----------
    name : str
        The registry name, used as ``kind.name`` (or ``audit`` for the audit kind).
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
        """The parameter table, importing the underlying module if needed.

        A module that cannot be imported (an optional dependency is missing)
        is a :class:`ConfigError` at the kind's name, saying what is missing.
        """
        if callable(self.params):
            try:
                return self.params()
            except ImportError as exc:
                path = "audit" if self.section == "audit" else "attack.name"
                raise ConfigError(path, f"the {self.name!r} experiment cannot be loaded here: {exc}") from None
        return self.params


#: name -> kind; read it through :func:`dpaudit.runner.kinds.get_kind`.
KINDS: dict[str, ExperimentKind] = {}


def register_kind(kind: ExperimentKind, *, replace: bool = False) -> ExperimentKind:
    """Add ``kind`` to the registry (``replace=True`` to overwrite a name)."""
    if kind.section not in ("audit", "attack"):
        raise ValueError(f"section must be 'audit' or 'attack'; got {kind.section!r}")
    if kind.name in KINDS and not replace:
        raise ValueError(f"experiment kind {kind.name!r} is already registered")
    KINDS[kind.name] = kind
    return kind


def unregister_kind(name: str) -> None:
    """Remove a kind (tests use this to clean up their own kinds)."""
    KINDS.pop(name, None)
