"""Attack kinds: thin wrappers over the Python entry points in :mod:`dpaudit.attacks`.

Each wrapper reads its parameter names and defaults from the attack
function's signature (so the config always matches the code) and adds the
ranges it knows (``n >= 1``, ``0 < alpha < 1``, ...).  ``rng`` is never a
config key: every trial passes a Generator built from its own SeedSequence.
A module that is not importable leaves its kind registered with a clear error.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import numbers

import numpy as np

from .._spec import REQUIRED, Param
from .base import ExperimentKind, register_kind
from .audit import jsonable

__all__ = ["attack_kind"]

# Ranges for parameter names the attacks share; anything else is typed by its default.
_KNOWN = {
    "n": Param("int", low=1),
    "k": Param("int", low=1),
    "d": Param("int", low=1),
    "queries": Param("int", low=1),
    "n_queries": Param("int", low=1),
    "n_targets": Param("int", low=1),
    "noise_scale": Param("real", low=0),
    "alpha": Param("real", low=0, high=1, low_inclusive=False, high_inclusive=False),
    "fpr": Param("real", low=0, high=1, low_inclusive=False, high_inclusive=False),
    "confidence": Param("real", low=0, high=1, low_inclusive=False, high_inclusive=False),
    "epsilon": Param("real", low=0, low_inclusive=False),
    "delta": Param("real", low=0, high=1, high_inclusive=False),
    "trials": Param("int", low=1),
    "n_people": Param("int", low=1),
    "k_repeats": Param("int", low=1),
    "subsample_size": Param("int", low=1),
    "reference_size": Param("int", low=1),
    "error_bound": Param("real", low=0),
    "disease_rate": Param("real", low=0, high=1),
}

# Where a module lists the accepted strings of a parameter.
_CHOICES = {
    "norm": ("reconstruction", "NORMS"),
    "solver": ("reconstruction", "SOLVERS"),
    "query_family": ("reconstruction", "QUERY_FAMILIES"),
    "threshold": ("tracing", "THRESHOLDS"),
    "noise": ("query_mechanisms", "QUERY_MECHANISMS"),
    "mechanism": ("query_mechanisms", "QUERY_MECHANISMS"),
}


def _choices(name: str):
    where = _CHOICES.get(name)
    if where is None:
        return None
    try:
        values = getattr(importlib.import_module(f"dpaudit.attacks.{where[0]}"), where[1])
    except (ImportError, AttributeError):
        return None
    return tuple(sorted(str(v) for v in values))


def _is_timing(key: str) -> bool:
    return key == "seconds" or key.endswith("_seconds") or key.startswith("elapsed")


def split_timing(out: dict) -> tuple[dict, dict]:
    """Move timing fields out of a result so that summaries compare equal across runs."""
    timing = {k: v for k, v in out.items() if _is_timing(k)}
    rest = {k: v for k, v in out.items() if not _is_timing(k)}
    return rest, timing


def _param_from(name: str, default) -> Param:
    if default is inspect.Parameter.empty:
        default = REQUIRED
    known = _KNOWN.get(name)
    if known is not None:
        nullable = default is None
        return dataclasses.replace(known, default=default, nullable=nullable)
    if isinstance(default, enum.Enum):
        default = default.value
    if isinstance(default, bool):
        return Param("bool", default)
    if isinstance(default, numbers.Integral):
        return Param("int", int(default))
    if isinstance(default, numbers.Real):
        return Param("real", float(default))
    if isinstance(default, str):
        return Param("str", default, choices=_choices(name))
    return Param("any", default, nullable=True)


def attack_kind(name: str, module: str, function: str, description: str, figures=()) -> ExperimentKind:
    """Register an attack kind that calls ``dpaudit.attacks.<module>.<function>(**params, rng=...)``."""

    def _fn():
        mod = importlib.import_module(f"dpaudit.attacks.{module}")
        fn = getattr(mod, function, None)
        if fn is None:
            raise ImportError(f"dpaudit.attacks.{module} has no {function}()")
        return fn

    def params():
        sig = inspect.signature(_fn())
        return {
            p.name: _param_from(p.name, p.default)
            for p in sig.parameters.values()
            if p.name != "rng" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        }

    def run_trial(config: dict, mechanism, seed) -> dict:
        result = _fn()(**config["attack"]["params"], rng=np.random.default_rng(seed))
        if hasattr(result, "to_dict"):
            out = result.to_dict()
        elif dataclasses.is_dataclass(result):
            out = dataclasses.asdict(result)
        else:
            out = dict(result)
        out, timing = split_timing(jsonable(out))
        if timing:
            out["timing"] = {k: timing[k] for k in sorted(timing)}
        return out

    return register_kind(
        ExperimentKind(name=name, description=description, section="attack", params=params,
                       run_trial=run_trial, figures=tuple(figures))
    )


attack_kind("differencing", "differencing", "run_differencing",
            "differencing attack: two aggregate queries that differ in one person")
attack_kind("reconstruction", "reconstruction", "run_reconstruction",
            "Dinur-Nissim reconstruction from noisy subset-sum queries (LP decoding)",
            figures=("reconstruction",))
attack_kind("tracing", "tracing", "run_tracing",
            "tracing / membership inference from noisy means (Dwork et al. 2015)",
            figures=("tracing",))
