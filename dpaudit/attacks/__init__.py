"""Attacks: black-box distinguishers for the auditor, and the attacks on released statistics.

The distinguishers (:mod:`dpaudit.auditor.distinguishers`) turn releases into
scores for :func:`dpaudit.audit`.  The attacks on statistics live in their own
modules: :mod:`~dpaudit.attacks.differencing`, :mod:`~dpaudit.attacks.reconstruction`,
:mod:`~dpaudit.attacks.census`, :mod:`~dpaudit.attacks.tracing`, with query
answering in :mod:`~dpaudit.attacks.query_mechanisms`.  Their entry points are
re-exported here but imported on first use (they pull in scipy.sparse, pulp and
highspy), so that the command line starts fast.

>>> from dpaudit.attacks import run_differencing
>>> run_differencing(n_people=200, trials=20, mechanism="exact", rng=0).accuracy
1.0
"""

from importlib import import_module

from ..auditor.distinguishers import ATTACKS, Distinguisher, list_attacks, make_distinguisher, register_attack

_LAZY = {
    "run_differencing": "differencing", "differencing_composition": "differencing",
    "DifferencingResult": "differencing",
    "run_reconstruction": "reconstruction", "recovery_curve": "reconstruction", "reconstruct": "reconstruction",
    "ReconstructionResult": "reconstruction",
    "run_tracing": "tracing", "tracing_curve": "tracing", "TracingResult": "tracing",
    "census_solutions": "census", "census_noise_demo": "census", "CensusSolutions": "census",
    "SLIDES_BLOCK": "census", "SLIDES_MALES": "census",
    "as_query_mechanism": "query_mechanisms", "claimed_budget": "query_mechanisms",
    "QUERY_MECHANISMS": "query_mechanisms",
}

__all__ = ["ATTACKS", "Distinguisher", "list_attacks", "make_distinguisher", "register_attack", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
