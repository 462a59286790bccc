"""The ``training`` kind: audit the numpy DP-SGD lab under one threat model (one audit of many training runs per trial).

Config (``kind.params``)::

    kind:
      name: training
      params:
        epsilon: 2                 # the claim at delta 1e-5; the noise multiplier is calibrated to it
        threat: white-box gradient canary
        variant: correct           # or a known-broken loop: batch-clip, noise-unscaled, shuffle, ...
        sampling_rate: 0.5
        steps: 4
        clip_norm: 1.0
        model: logistic
        accountant: curve          # curve: the accountant's whole curve; point: (epsilon, 1e-5) only
        samples: 200000            # training runs per side (fixed-size audit), or auto

Each trial trains ``samples`` models per side (vectorised across runs) and
audits the release the threat model sees against the accountant's claim (of
the accounted sampling rate: a broken variant keeps the claim its code would
report).  The record holds the audit report, the accountant's epsilon at the
reported delta and the best certified/accountant ratio over the profile.
"""

from __future__ import annotations

from ...exceptions import ConfigError, DPAuditError
from ...params import AUDIT_OPTIONS, Option, OptionTable
from .audit import aggregate, audit_size, jsonable, seed_int
from .base import ExperimentKind, register_kind

__all__ = ["params", "TRAINING_OPTIONS", "ALIASES"]


def _threats() -> dict:
    from ...training.lab import CURVE_THREATS, VARIANT_THREATS

    return {**CURVE_THREATS, **VARIANT_THREATS}


def _training_config():
    from ...training import config

    return config


#: The ``training`` kind's options: the numpy DP-SGD lab's loop and threat model, the claim it is audited
#: against, and the audit's size (rows of :data:`dpaudit.params.AUDIT_OPTIONS`, with their rules).
TRAINING_OPTIONS = OptionTable([
    Option("epsilon", "real", 2.0, low=0.0, low_inclusive=False,
           help="claimed epsilon at delta 1e-5; the noise multiplier is calibrated to it"),
    Option("threat", "choice", "white-box gradient canary", choices=lambda: tuple(_threats()),
           help="what the auditor sees (the training experiment's threat models)"),
    Option("variant", "choice", "correct", choices=lambda: tuple(v.value for v in _training_config().Variant),
           help="the training loop: correct or a known-broken one"),
    Option("sampling_rate", "real", 0.5, low=0.0, high=1.0, low_inclusive=False, help="Poisson sampling rate"),
    Option("steps", "int", 4, low=1, help="training steps"),
    Option("clip_norm", "real", 1.0, low=0.0, low_inclusive=False, help="per-example clip norm C"),
    Option("model", "choice", "logistic", choices=lambda: tuple(_training_config().MODELS), help="the model trained"),
    Option("accountant", "choice", "curve", choices=("curve", "point"),
           help="what of the accountant's claim the audit tests: its whole curve, or its point at delta 1e-5"),
    "samples", "max_samples", "time_budget",
], base=AUDIT_OPTIONS, rules=("fixed_size",))

#: Read-only spellings of the ``training`` kind's keys: ``claim: curve|point`` is ``accountant`` (``claim`` elsewhere
#: is a claim spec such as ``gdp:mu=1``).
ALIASES = {"claim": "accountant"}


def params() -> dict:
    """The keys of the ``training`` kind's ``attack.params``, read from :data:`TRAINING_OPTIONS`."""
    return TRAINING_OPTIONS.yaml_params(*TRAINING_OPTIONS, overrides={
        "samples": {"default": 200_000, "help": "training runs per side: an integer (fixed-size audit) or auto "
                                                "(sequential)"},
        "max_samples": {"help": "budget of a sequential audit"},
        "time_budget": {"help": "time limit of a sequential audit in seconds"}})


def _release(p: dict, path: str = "attack.params"):
    """(the release target, its configuration) for a trial's parameters; a ConfigError names the key."""
    from ...training.lab import DELTA, curve_config

    try:
        config = curve_config(p["epsilon"], sampling_rate=p["sampling_rate"], steps=p["steps"],
                              clip_norm=p["clip_norm"], model=p["model"]).replace(variant=p["variant"])
    except (DPAuditError, ValueError) as exc:
        raise ConfigError(f"{path}.epsilon", f"cannot calibrate DP-SGD to epsilon {p['epsilon']} at delta "
                                             f"{DELTA:g}: {exc}") from None
    return _threats()[p["threat"]](config), config


def check(p: dict) -> None:
    """The audit size's rules, when the config is read (a fixed-size audit takes no max_samples or time_budget)."""
    audit_size(p, "attack.params")


def run_trial(config: dict, mechanism, seed) -> dict:
    from ... import audit
    from ...training.accounting import accountant_claim, accountant_epsilon
    from ...training.lab import DELTA, profile_ratio

    p = config["attack"]["params"]
    release, cfg = _release(p)
    # The curve as a spec (exact floats): a legend a figure can show; the point and the recorded epsilon are
    # read off the same curve.
    claim = {"claim": accountant_claim(cfg).spec} if p["accountant"] == "curve" else {
        "epsilon": accountant_epsilon(cfg, DELTA), "delta": DELTA}
    report = audit(release, *release.neighbouring_pair(), **claim, **audit_size(p, "attack.params"),
                   confidence=config["estimator"]["confidence"], seed=seed_int(seed), ideal=True, n_jobs=1)
    out = jsonable(report.to_dict())
    out.pop("elapsed_seconds", None)
    out.update(true_epsilon=None, broken=p["variant"] != "correct", mechanism=f"{p['variant']} / {p['threat']}",
               accountant_epsilon=accountant_epsilon(cfg, out["claimed_delta"]) if out["claimed_delta"] > 0 else None,
               strongest=profile_ratio(report, cfg), dpsgd=cfg.to_dict())
    return out


register_kind(
    ExperimentKind(
        name="training",
        description="audit the numpy DP-SGD lab (correct or broken loop) under one threat model",
        section="attack",
        params=params,
        run_trial=run_trial,
        figures=("privacy_profile",),
        extra={"aggregate": aggregate, "aliases": ALIASES, "check": check},
    )
)
