"""The ``search`` kind: find the most revealing pair in a declared domain, then audit it (one search per trial).

Config (``attack.params``)::

    attack:
      name: search
      params:
        target: unclipped_sum        # a built-in name, or module:attr / file.py:attr
        target_params: {}            # parameters of a built-in
        epsilon: null                # the claim; null: the built-in's own
        delta: null
        size: 5                      # the input domain: size records in [low, high]
        low: 0
        high: 100
        integer: false
        relation: null               # replace-one | add-remove | linf; null: the built-in's, else replace-one
        budget: null                 # seconds of screening
        samples: auto                # auto (or null): a sequential final audit; an integer: a fixed-size one
        max_samples: null            # the budget of the sequential one (releases per side)
        finalists: 1
        attack: auto

``estimator.confidence`` is the confidence of the whole search.  Each trial
records the search report (``dpaudit.search``) plus ``true_epsilon`` when a
built-in knows it; the summary table shows the bound, the claim and how many
trials found a violation.
"""

from __future__ import annotations

import math

from ...exceptions import ConfigError, DPAuditError
from .._spec import Param
from .base import ExperimentKind, register_kind
from .attacks import split_timing
from .audit import jsonable, seed_int

__all__ = ["PARAMS"]

RELATIONS = ("replace-one", "add-remove", "linf")

PARAMS = {
    "target": Param("str", help="built-in mechanism name, or module:attr / file.py:attr"),
    "target_params": Param("any", None, nullable=True, help="parameters of a built-in target"),
    "epsilon": Param("real", None, low=0, nullable=True, help="claimed epsilon (null: the built-in's claim)"),
    "delta": Param("real", None, low=0, high=1, high_inclusive=False, nullable=True, help="claimed delta"),
    "size": Param("int", None, low=1, nullable=True, help="records per dataset"),
    "low": Param("real", None, nullable=True, help="smallest record value"),
    "high": Param("real", None, nullable=True, help="largest record value"),
    "integer": Param("bool", False, help="records are integers"),
    "relation": Param("str", None, choices=RELATIONS, nullable=True, help="neighbouring relation"),
    "budget": Param("real", None, low=0, low_inclusive=False, nullable=True, help="seconds of screening"),
    "samples": Param("samples", "auto", low=20, nullable=True,
                     help="'auto' (or null): a sequential final audit; an integer: a fixed-size one (releases per side)"),
    "max_samples": Param("int", None, low=40, nullable=True, help="budget of the sequential final audit"),
    "screen_samples": Param("int", None, low=40, nullable=True, help="releases per side per screened pair"),
    "finalists": Param("int", 1, low=1, help="pairs audited at the end (Bonferroni)"),
    "attack": Param("str", "auto", help="distinguisher of the final audit"),
}


def _resolve(params: dict, path: str = "attack.params"):
    """(target, search keyword arguments, true epsilon or None); a ConfigError names the key."""
    from ...targets import load_target

    try:
        target = load_target(params["target"], **(params.get("target_params") or {}))
    except (DPAuditError, ImportError, OSError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}.target", f"cannot load {params['target']!r}: {exc}") from None
    fn = target.fn
    declared = {}
    if callable(getattr(fn, "input_domain", None)):
        declared = dict(fn.input_domain())
    claim = getattr(fn, "claim", None)
    kw = {}
    for key in ("size", "low", "high"):
        value = params.get(key)
        if value is None:
            value = declared.get(key)
        if value is None:
            raise ConfigError(f"{path}.{key}", "required: the input domain is size records in [low, high]")
        kw[key] = value
    if not kw["high"] > kw["low"]:
        raise ConfigError(f"{path}.high", f"expected a number > low ({kw['low']:g}), got {kw['high']!r}")
    kw["integer"] = bool(params.get("integer") or declared.get("integer", False))
    relation = params.get("relation") or declared.get("relation")
    if relation is None and claim is not None:
        relation = claim.neighbouring.value
    kw["relation"] = relation or "replace-one"
    for key in ("epsilon", "delta"):
        value = params.get(key)
        if value is None and claim is not None:
            value = getattr(claim, key)
        if value is None:
            if key == "epsilon":
                raise ConfigError(f"{path}.epsilon", f"required: {params['target']!r} states no claim")
            value = 0.0
        kw[key] = value
    fixed = params.get("samples") if params.get("samples") != "auto" else None
    if fixed is not None and params.get("max_samples") is not None:
        raise ConfigError(f"{path}.samples", "a fixed-size final audit takes no max_samples; give one of them "
                                             "(samples: auto for a sequential one)")
    for key, value in (("budget", params.get("budget")), ("samples", fixed), ("max_samples", params.get("max_samples")),
                       ("screen_samples", params.get("screen_samples"))):
        if value is not None:
            kw[key] = value
    kw["finalists"] = params.get("finalists", 1)
    kw["attack"] = params.get("attack", "auto")
    true_eps = None
    if callable(getattr(fn, "true_epsilon", None)):
        try:
            true_eps = float(fn.true_epsilon(kw["delta"]))
        except Exception:  # noqa: BLE001 - no closed form; the table shows '-'
            true_eps = None
    return target, kw, true_eps


def check(params: dict) -> None:
    _resolve(params)


def run_trial(config: dict, mechanism, seed) -> dict:
    from ...pair_search import search

    target, kw, true_eps = _resolve(config["attack"]["params"])
    report = search(target, confidence=config["estimator"]["confidence"], seed=seed_int(seed), n_jobs=1,
                    progress=False, **kw)
    full = jsonable(report.to_dict())
    # The few numbers the summary table shows come first; then the whole report.
    out = {
        "epsilon_lower_bound": full["epsilon_lower_bound"],
        "claimed_epsilon": full["claimed_epsilon"],
        "true_epsilon": true_eps if true_eps is None or math.isfinite(true_eps) else None,
        "ceiling": full["ceiling"],
        "candidates_screened": full["candidates_screened"],
        "violation": full["verdict"] == "violation",
    }
    search_info = full.pop("search")
    full["search"] = {k: v for k, v in search_info.items() if k != "search_seconds"}
    out.update({k: v for k, v in full.items() if k not in out})
    out, timing = split_timing(out)
    timing["search_seconds"] = search_info.get("search_seconds")
    out["timing"] = {k: timing[k] for k in sorted(timing)}
    return out


def aggregate(trials: list[dict], confidence: float = 0.95) -> dict:
    """Per sweep point: how many searches certified a violation, and the pairs they found."""
    return {
        "violations": int(sum(bool(t.get("violation")) for t in trials)),
        "verdict": "violation" if any(t.get("violation") for t in trials) else "no violation found",
        "pairs": [[t.get("dataset"), t.get("neighbor")] for t in trials],
    }


register_kind(
    ExperimentKind(
        name="search",
        description="search a declared input domain for the most revealing pair, then audit it (dpaudit.search)",
        section="attack",
        params=PARAMS,
        run_trial=run_trial,
        figures=("trajectory",),  # the final audits' rounds; skipped when they are fixed-size
        extra={"check": check, "aggregate": aggregate},
    )
)
