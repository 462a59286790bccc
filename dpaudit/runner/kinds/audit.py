"""The ``audit`` kind: one black-box audit of one mechanism per trial.

Mechanism entries (``mechanisms:`` in a config) are built here, both when the
config is validated (so a bad name or parameter fails before anything runs)
and in each trial.  A built-in entry names a registry mechanism
(``dpaudit.mechanisms.get_mechanism``, third-party adapters included, e.g.
``opendp.laplace``); a target entry names ``module:attr`` or
``file.py:attr`` (``dpaudit.targets.load_target``), which is imported only
because the config names it.
"""

from __future__ import annotations

import functools
import inspect
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..._validation import did_you_mean
from ...auditor import audit
from ...exceptions import ConfigError, DPAuditError
from ...mechanisms import get_mechanism
from ...targets import load_target
from ...params import AUDIT_OPTIONS
from ...stats.verdict import any_violation
from .base import ExperimentKind, register_kind

__all__ = ["build_mechanism", "BuiltMechanism", "seed_int", "audit_size", "check_claim"]

#: The ``audit:`` keys: rows of dpaudit.audit's option table, with the YAML wording of the sample size.
AUDIT_KEYS = ("samples", "max_samples", "time_budget", "keep_drawing", "attack", "ideal", "claim", "grey_box",
              "traces", "stopping")
YAML_HELP = {
    "samples": {"help": "'auto' (or null): a sequential audit; an integer: a fixed-size audit of that many "
                        "releases per dataset"},
    "max_samples": {"help": "sample budget of a sequential audit, releases per dataset (null: 10^6 for targets "
                            "that take size, 20,000 for per-call ones)"},
    "time_budget": {"help": "time limit of a sequential audit per trial in seconds (null: none)"},
    "claim": {"help": "a claimed curve for every mechanism instead of its own (epsilon, delta): gdp:mu=MU, "
                      "dpsgd:noise=S,rate=Q,steps=T, profile:FILE.json or eps:EPS[,delta=D] (null: each "
                      "mechanism's claim)"},
}


def params() -> dict:
    """The ``audit:`` section's keys, read from :data:`dpaudit.params.AUDIT_OPTIONS` when a config is checked."""
    return AUDIT_OPTIONS.yaml_params(*AUDIT_KEYS, overrides=YAML_HELP)


def audit_size(section: dict, path: str = "audit") -> dict:
    """The ``samples`` / ``max_samples`` / ``time_budget`` keywords of ``dpaudit.audit`` for an audit section.

    ``samples: auto`` (or null) is a sequential audit within ``max_samples``
    and ``time_budget``; an integer is a fixed-size audit, which takes neither.

    >>> audit_size({"samples": "auto", "max_samples": 50_000, "time_budget": None})
    {'samples': None, 'max_samples': 50000, 'time_budget': None}
    >>> audit_size({"samples": 1000, "max_samples": 50_000})
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: audit.max_samples: a fixed-size audit (samples: 1000) takes no max_samples; leave out samples for a sequential one
    """
    samples = section.get("samples")
    samples = None if samples in (None, "auto") else samples
    AUDIT_OPTIONS.check_rules({**section, "samples": samples}, AUDIT_OPTIONS.front("yaml", path),
                              only=("fixed_size", "anytime_fixed"))
    return {"samples": samples, "max_samples": section.get("max_samples"), "time_budget": section.get("time_budget")}


def _check_config(cfg: dict, base_dir=None) -> None:
    audit_size(cfg["audit"])
    check_claim(cfg["audit"].get("claim"), "audit.claim")


def check_claim(spec, path: str) -> None:
    """A ConfigError at ``path`` when ``spec`` (a claim spec or None) does not parse."""
    if spec is None:
        return
    from ...claims import parse_claim

    try:
        parse_claim(spec)
    except DPAuditError as exc:
        # YAML splits the flow list [dpsgd:noise=1,rate=0.1,steps=10, gdp:mu=1] at every comma.
        split = isinstance(spec, str) and "," not in spec and " missing " in str(exc)
        hint = ("; in a YAML list [a, b], quote a spec that has commas: \"dpsgd:noise=1,rate=0.1,steps=10\""
                if split else "")
        raise ConfigError(path, f"{exc}{hint}") from None


class BuiltMechanism:
    """What a trial needs: the callable, the neighbouring pair and the claim."""

    def __init__(self, target, dataset, neighbor, epsilon, delta, true_epsilon=None, broken=None, label="",
                 true_epsilon_fn=None):
        self.true_epsilon_fn = true_epsilon_fn
        self.target = target
        self.dataset = dataset
        self.neighbor = neighbor
        self.epsilon = epsilon
        self.delta = delta
        self.true_epsilon = true_epsilon
        self.broken = broken
        self.label = label


def seed_int(seed_sequence: np.random.SeedSequence) -> int:
    """A 63-bit integer seed drawn from a trial's SeedSequence (recorded in the report).

    >>> seed_int(np.random.SeedSequence(1)) == seed_int(np.random.SeedSequence(1))
    True
    """
    return int(seed_sequence.generate_state(1, np.uint64)[0] >> np.uint64(1))


def _load_array(value: Any, path: str, base_dir: Path | None):
    """The shared dataset loader (same checks and CSV headers as the command line), errors at ``path``."""
    from ...datasets import load_dataset
    from ...exceptions import DatasetError

    try:
        return load_dataset(value, name=path, base_dir=base_dir)
    except DatasetError as exc:
        raise ConfigError(path, str(exc).removeprefix(f"{path}: ")) from None


def build_mechanism(entry: dict, path: str, base_dir: Path | None = None) -> BuiltMechanism:
    """Build a resolved mechanism entry; every failure is a ConfigError at ``path``."""
    params = entry.get("params") or {}
    label = entry["label"]
    if entry.get("mechanism") is not None:
        try:
            mech = get_mechanism(entry["mechanism"], **params)
        except (DPAuditError, TypeError, ValueError, KeyError, ImportError) as exc:
            from ...mechanisms import REGISTRY

            if entry["mechanism"] not in REGISTRY:
                raise ConfigError(f"{path}.mechanism", f"unknown mechanism {entry['mechanism']!r}"
                                  f"{did_you_mean(entry['mechanism'], REGISTRY)}; `dpaudit list` shows them all") from None
            raise ConfigError(path, f"cannot build mechanism {entry['mechanism']!r} with params {params}: {exc}") from None
        if entry.get("dataset") is not None:
            dataset = _load_array(entry["dataset"], f"{path}.dataset", base_dir)
            neighbor = _load_array(entry["neighbor"], f"{path}.neighbor", base_dir)
        else:
            dataset, neighbor = mech.neighbouring_pair()
        claim = mech.claim
        true_eps = None
        if hasattr(mech, "true_epsilon"):
            try:
                true_eps = float(mech.true_epsilon(claim.point_delta))
            except Exception:  # noqa: BLE001 - a mechanism without a closed form; the plot omits it
                true_eps = None
        return BuiltMechanism(mech, dataset, neighbor, claim.point_epsilon, claim.point_delta, true_eps,
                              bool(getattr(mech, "broken", False)), label, getattr(mech, "true_epsilon", None))
    try:
        fn = load_target(entry["target"])
    except (DPAuditError, ImportError, AttributeError, OSError, ValueError, TypeError) as exc:
        raise ConfigError(f"{path}.target", f"cannot load {entry['target']!r}: {exc}") from None
    if params:
        fn = _bind_params(fn, params, path, entry["target"])
    dataset = _load_array(entry["dataset"], f"{path}.dataset", base_dir)
    neighbor = _load_array(entry["neighbor"], f"{path}.neighbor", base_dir)
    return BuiltMechanism(fn, dataset, neighbor, entry["epsilon"], entry["delta"], None, None, label)


def _bind_params(target, params: dict, path: str, spec: str):
    """``target`` with ``params`` bound, under its own name; a ConfigError at ``path.params.KEY`` for a key its
    function does not take (it surfaced as the first release's TypeError, from a target called 'partial')."""
    from ...targets import Target

    fn = getattr(target, "fn", target)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: the call will tell
        sig = None
    if sig is not None and not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        names = [n for n, p in sig.parameters.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        for key in params:
            if key not in names:
                raise ConfigError(f"{path}.params.{key}", f"{spec!r} takes no parameter {key!r}"
                                                          f"{did_you_mean(key, names)}; it takes {', '.join(names)}")
    return Target(functools.partial(fn, **params), name=getattr(target, "name", None) or spec)


def jsonable(value):
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "value") and hasattr(type(value), "__members__"):  # an Enum
        return value.value
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "to_dict"):
        return jsonable(value.to_dict())
    return str(value)


def _true_epsilon_at(built, delta):
    """The mechanism's true epsilon at the delta the report compares at.

    A curve claim (or ``estimator.delta``) reports at another delta than the mechanism's own claim, so its
    own-claim value would sit beside a claimed epsilon it says nothing about (plot and table)."""
    if built.true_epsilon_fn is None or delta is None or delta == built.delta:
        return built.true_epsilon
    try:
        return float(built.true_epsilon_fn(float(delta)))
    except Exception:  # noqa: BLE001 - no closed form at this delta; the plot omits it
        return None


def run_trial(config: dict, mechanism: dict, seed) -> dict:
    built = build_mechanism(mechanism, f"mechanisms.{mechanism['label']}")
    est = config["estimator"]
    delta = built.delta if est["delta"] is None else est["delta"]
    claim = config["audit"].get("claim")
    kwargs = dict(
        **({"claim": claim} if claim is not None else {"epsilon": built.epsilon, "delta": delta}),
        **audit_size(config["audit"]),
        confidence=est["confidence"],
        seed=seed_int(seed),
        attack=config["audit"]["attack"],
        ideal=config["audit"]["ideal"],
        keep_drawing=bool(config["audit"].get("keep_drawing", False)),
        estimator=est["name"],
        n_jobs=1,
        **({"grey_box": config["audit"]["grey_box"], "traces": config["audit"]["traces"]}
           if config["audit"].get("grey_box") else {}),
        **({"stopping": "anytime"} if config["audit"].get("stopping") == "anytime" else {}),
    )
    report = audit(built.target, built.dataset, built.neighbor, **kwargs)
    out = jsonable(report.to_dict() if hasattr(report, "to_dict") else report)
    out.pop("elapsed_seconds", None)
    out["true_epsilon"] = _true_epsilon_at(built, out.get("claimed_delta"))
    curve = out.get("claim_curve")
    if built.true_epsilon_fn is not None and isinstance(curve, dict) and curve.get("delta"):
        # for the group's common point of the curve (aggregate), which may be none of the trials' own
        curve["true_epsilon"] = [_true_epsilon_at(built, d) for d in curve["delta"]]
    profile = out.get("privacy_profile")
    if built.true_epsilon_fn is not None and isinstance(profile, dict) and profile.get("delta"):
        # The mechanism's own epsilon(delta) at the profile's deltas, for the privacy-profile plot.
        true_eps = []
        for d in profile["delta"]:
            try:
                true_eps.append(float(built.true_epsilon_fn(float(d))))
            except Exception:  # noqa: BLE001 - no closed form at this delta; the plot skips it
                true_eps.append(None)
        out["true_profile"] = {"delta": list(profile["delta"]), "epsilon": true_eps}
    out["broken"] = built.broken
    out["mechanism"] = built.label
    return out


def _floats(values) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values], dtype=float)


def _common_curve_point(trials: list[dict]) -> dict | None:
    """One point of a claimed curve for trials that each report at their own delta, else None.

    Each trial of a curve claim reports at its own point (its witness, on a violation), so the trials of one group
    compare at different deltas; their bounds' median beside the first trial's claimed epsilon mixed
    deltas (a group whose every trial was a violation showed bounds below its claimed epsilon). Every
    trial carries its certified curve on the same grid deltas of the claim (``claim_curve``); the group
    compares there, at the delta of the largest margin of the median over the curve, else of the largest
    ratio median / claimed.
    """
    curves = [t.get("claim_curve") for t in trials]
    if len({t.get("claimed_delta") for t in trials}) < 2 or not all(isinstance(c, dict) for c in curves):
        return None
    grid = curves[0].get("delta") or []
    if any(c.get("delta") != grid for c in curves):
        return None
    claimed = _floats(curves[0]["claimed_epsilon"])
    certified = np.array([_floats(c["epsilon_lower_bound"]) for c in curves])
    median = np.median(certified, axis=0)
    ok = np.isfinite(claimed) & np.isfinite(median)
    margin = np.where(ok, median - claimed, -np.inf)
    ratio = np.where(ok & (claimed > 0) & (median > 0), median / np.where(claimed > 0, claimed, 1.0), -np.inf)
    if margin.max(initial=-np.inf) > 0:
        j = int(np.argmax(margin))
    elif np.isfinite(ratio.max(initial=-np.inf)):
        j = int(np.argmax(ratio))
    else:
        return None
    true = curves[0].get("true_epsilon")
    return {"claimed_epsilon": float(claimed[j]), "claimed_delta": float(grid[j]), "lbs": certified[:, j],
            "true_epsilon": true[j] if isinstance(true, list) and len(true) == len(grid) else None}


def aggregate(trials: list[dict], confidence: float = 0.95) -> dict:
    """Per (sweep point, mechanism): the claim and the lower bound across trials, at one (epsilon, delta)."""
    lbs = np.array([t.get("epsilon_lower_bound", math.nan) for t in trials], dtype=float)
    first = trials[0]
    point = _common_curve_point(trials) or {"claimed_epsilon": first.get("claimed_epsilon"), "lbs": lbs,
                                            "claimed_delta": first.get("claimed_delta"),
                                            "true_epsilon": first.get("true_epsilon")}
    lbs = point["lbs"]
    return {
        "claimed_epsilon": point["claimed_epsilon"],
        "claimed_delta": point["claimed_delta"],
        "true_epsilon": point["true_epsilon"],
        "broken": first.get("broken"),
        "ceiling": first.get("ceiling"),
        "samples": first.get("samples"),
        "confidence": first.get("confidence"),
        "epsilon_lower_bound_max": float(np.max(lbs)),
        "epsilon_lower_bound_median": float(np.median(lbs)),
        "epsilon_lower_bound_min": float(np.min(lbs)),
        "violations": int(sum(t.get("verdict") == "violation" for t in trials)),
        "verdict": any_violation(t.get("verdict") for t in trials),
    }


register_kind(
    ExperimentKind(
        name="audit",
        description="black-box audit: an epsilon lower bound for each mechanism (dpaudit.audit)",
        section="audit",
        params=params,
        run_trial=run_trial,
        figures=("epsilon_vs_claimed", "trajectory"),  # trajectory: skipped when every audit is fixed-size
        uses_mechanisms=True,
        extra={"aggregate": aggregate, "check_config": _check_config},
    )
)
