"""YAML experiments: validate a config, run its trials anywhere, keep every result.

``dpaudit run CONFIG.yaml`` and ``dpaudit plot DIR/<name>`` (docs/experiments.md)
are thin wrappers over :func:`run_experiment` and
:func:`dpaudit.plots.draw_figures`.

Examples
--------
>>> from dpaudit.runner import load_config
>>> cfg = load_config({"name": "x", "seed": 0, "kind": {"name": "rr_tradeoff", "params": {"epsilon": 1}},
...                    "sweep": {"parameters": {"kind.params.n": [10, 100]}}})
>>> len(cfg.trials)
2
"""

from ._spec import Param
from .execution import Backend, RunOutcome, TrialError, TrialInternalError, execute_trial, run_experiment
from .kinds import ExperimentKind, get_kind, list_kinds, register_kind
from ..results import load_results, read_trials
from .schema import ExperimentConfig, TrialSpec, load_config, resolve_config

__all__ = [
    "Backend",
    "ExperimentConfig",
    "ExperimentKind",
    "RunOutcome",
    "TrialError",
    "TrialInternalError",
    "TrialSpec",
    "execute_trial",
    "get_kind",
    "list_kinds",
    "load_config",
    "load_results",
    "Param",
    "read_trials",
    "register_kind",
    "resolve_config",
    "run_experiment",
]
