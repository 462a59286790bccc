"""The ``search`` kind: find the most revealing pair in a declared domain, then audit it (one search per trial).

Config (``kind.params``)::

    kind:
      name: search
      params:
        target: unclipped_sum        # a built-in name, or module:attr / file.py:attr
        target_params: {}            # parameters of a built-in
        epsilon: null                # the claim; null: the built-in's own
        delta: null
        claim: null                  # or a claimed curve instead of epsilon/delta (gdp:mu=1, dpsgd:..., profile:F.json)
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
from ...params import SEARCH_OPTIONS
from ...stats.verdict import any_violation
from .._spec import Param
from .base import ExperimentKind, register_kind
from .attacks import split_timing
from .audit import audit_size, check_claim, jsonable, seed_int

__all__ = ["SEARCH_KEYS", "params"]

#: Keys of ``attack.params`` that are rows of dpaudit.search's option table (the same rules as its flags).
SEARCH_KEYS = ("epsilon", "delta", "claim", "size", "low", "high", "integer", "relation", "budget", "samples",
               "max_samples", "time_budget", "screen_samples", "finalists", "attack", "ideal", "timeout")
#: In YAML the claim, the domain and the relation default to a built-in's own.
YAML_OVERRIDES = {
    "epsilon": {"default": None, "nullable": True, "help": "claimed epsilon (null: the built-in's claim)"},
    "delta": {"default": None, "nullable": True, "help": "claimed delta (null: the built-in's claim)"},
    "relation": {"default": None, "nullable": True, "help": "neighbouring relation (null: the built-in's, else "
                                                            "replace-one)"},
    "samples": {"help": "'auto' (or null): a sequential final audit; an integer: a fixed-size one (releases per "
                        "side)"},
}


def params() -> dict:
    """The keys of a search's ``attack.params``, read from :data:`dpaudit.params.SEARCH_OPTIONS` when checked."""
    return {
        "target": Param("str", help="built-in mechanism name, or module:attr / file.py:attr"),
        "target_params": Param("any", None, nullable=True, help="parameters of a built-in target"),
        **SEARCH_OPTIONS.yaml_params(*SEARCH_KEYS, overrides=YAML_OVERRIDES),
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
    kw["integer"] = bool(params.get("integer") or declared.get("integer", False))
    SEARCH_OPTIONS.check_rules(kw, SEARCH_OPTIONS.front("yaml", path), only=("domain_order", "domain_integer"))
    relation = params.get("relation") or declared.get("relation")
    if relation is None and claim is not None:
        relation = claim.neighbouring.value
    kw["relation"] = relation or "replace-one"
    if params.get("claim") is not None:  # a claimed curve stands in for epsilon and delta
        check_claim(params["claim"], f"{path}.claim")
        SEARCH_OPTIONS.check_rules(params, SEARCH_OPTIONS.front("yaml", path), only=("one_claim",))
        kw["claim"] = params["claim"]
    for key in () if "claim" in kw else ("epsilon", "delta"):
        value = params.get(key)
        if value is None and claim is not None:  # the target's own claim: its point (epsilon, delta)
            value = dict(zip(("epsilon", "delta"), claim.reference))[key]
        if value is None:
            if key == "epsilon":
                raise ConfigError(f"{path}.epsilon", f"required: {params['target']!r} states no claim")
            value = 0.0
        kw[key] = value
    size_kw = audit_size(params, path)
    for key, value in (("budget", params.get("budget")), ("screen_samples", params.get("screen_samples")),
                       *size_kw.items()):
        if value is not None:
            kw[key] = value
    for key in ("finalists", "attack", "ideal", "timeout"):
        if params.get(key) is not None:
            kw[key] = params[key]
    true_eps = None
    if callable(getattr(fn, "true_epsilon", None)):
        try:
            true_eps = None if "claim" in kw else float(fn.true_epsilon(kw["delta"]))
        except Exception:  # noqa: BLE001 - no closed form; the table shows '-'
            true_eps = None
    return target, kw, true_eps


def check(params: dict) -> None:
    _resolve(params)


def run_trial(config: dict, mechanism, seed) -> dict:
    from ...pair_search import search

    target, kw, true_eps = _resolve(config["attack"]["params"])
    report = search(target, confidence=config["estimator"]["confidence"], estimator=config["estimator"]["name"],
                    seed=seed_int(seed), n_jobs=1, progress=False, **kw)
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
        "verdict": any_violation(t.get("violation") for t in trials),
        "pairs": [[t.get("dataset"), t.get("neighbor")] for t in trials],
    }


register_kind(
    ExperimentKind(
        name="search",
        description="search a declared input domain for the most revealing pair, then audit it (dpaudit.search)",
        section="attack",
        params=params,
        run_trial=run_trial,
        figures=("trajectory",),  # the final audits' rounds; skipped when they are fixed-size
        extra={"check": check, "aggregate": aggregate},
    )
)
