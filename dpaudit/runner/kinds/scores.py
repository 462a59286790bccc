"""The ``scores`` and ``one_run`` kinds: audits of saved attack scores, one per trial (each trial its own seed).

Config (``kind.params``)::

    kind:
      name: scores                 # dpaudit.audit_scores
      params:
        in_scores: in.npy          # .npy/.csv/.json, or a list; beside the config, else the working directory
        out_scores: out.npy
        epsilon: 1.0               # or claim: gdp:mu=1 (then no epsilon/delta)
        delta: 0.0
        selection_fraction: 0.3

    kind:
      name: one_run                # dpaudit.audit_one_run
      params:
        scores: canary_scores.npy
        included: included.npy
        epsilon: 4.0
        delta: 1e-5
        guesses: null              # null: m, m/2, ... at Bonferroni shares

A score audit's trials differ in the random split of the scores (so the table shows how much the
bound depends on it); a one-run audit's only randomness is the order of tied scores (from the trial's seed),
so one trial is enough for scores without ties.
"""

from __future__ import annotations

from ...exceptions import ConfigError, DPAuditError
from ...params import ONE_RUN_OPTIONS, SCORES_OPTIONS
from .audit import check_claim, jsonable, seed_int
from .base import ExperimentKind, register_kind

__all__ = ["scores_params", "one_run_params"]

#: The YAML words of the claim keys (the rows' ranges and defaults are the Python entry points').
CLAIM_HELP = {"epsilon": {"help": "claimed epsilon (or claim)"},
              "claim": {"help": "a claimed curve instead of epsilon/delta (docs/claims.md)"}}


def scores_params() -> dict:
    """The keys of a score audit's ``attack.params``: rows of :data:`dpaudit.params.SCORES_OPTIONS`."""
    return SCORES_OPTIONS.yaml_params("in_scores", "out_scores", "epsilon", "delta", "claim", "selection_fraction",
                                      overrides={"in_scores": {"required": True}, "out_scores": {"required": True},
                                                 **CLAIM_HELP})


def one_run_params() -> dict:
    """The keys of a one-run audit's ``attack.params``: rows of :data:`dpaudit.params.ONE_RUN_OPTIONS`."""
    return ONE_RUN_OPTIONS.yaml_params("scores", "included", "epsilon", "delta", "claim", "guesses",
                                       overrides={"scores": {"required": True}, "included": {"required": True},
                                                  "guesses": {"help": "guesses made (null: m, m/2, ... down to 10)"},
                                                  **CLAIM_HELP})


def _claim_kw(p: dict, path: str = "attack.params") -> dict:
    check_claim(p.get("claim"), f"{path}.claim")
    SCORES_OPTIONS.check_rules(p, SCORES_OPTIONS.front("yaml", path), only=("claim_needed", "one_claim"))
    if p.get("claim") is not None:
        return {"claim": p["claim"]}
    return {"epsilon": p["epsilon"], "delta": p["delta"]}


def _scores_trial(config: dict, mechanism, seed) -> dict:
    from ...auditor import audit_scores

    p = config["attack"]["params"]
    return _record(lambda: audit_scores(p["in_scores"], p["out_scores"], **_claim_kw(p), seed=seed_int(seed),
                                        confidence=config["estimator"]["confidence"],
                                        estimator=config["estimator"]["name"],
                                        selection_fraction=p["selection_fraction"]))


def _one_run_trial(config: dict, mechanism, seed) -> dict:
    from ...auditor import audit_one_run

    p = config["attack"]["params"]
    # The trial's seed orders tied scores (audit_one_run draws one when given none): same seed, same trials.
    return _record(lambda: audit_one_run(p["scores"], p["included"], **_claim_kw(p), guesses=p["guesses"],
                                         confidence=config["estimator"]["confidence"], seed=seed_int(seed)))


def _record(run) -> dict:
    """A trial's JSON record of ``run()``'s report (a bad score file is the config's error, at its key)."""
    try:
        report = run()
    except DPAuditError as exc:
        raise ConfigError("attack.params", str(exc)) from None
    out = jsonable(report.to_dict())
    out.pop("elapsed_seconds", None)
    out["violations"] = int(report.violation)  # a number, so the summary table shows how many trials flagged
    if out.get("curve_rejected") is not None:  # a one-run curve claim rejected whole, with or without a crossed point
        out["curve_rejections"] = int(out["curve_rejected"])
    return out


def _check(p: dict) -> None:
    _claim_kw(p)


for _name, _desc, _params, _trial, _figs in (
        ("scores", "audit saved attack scores, IN against OUT (dpaudit.audit_scores)", scores_params, _scores_trial,
         ("privacy_profile",)),
        ("one_run", "one-run audit of saved canary scores and inclusion bits (dpaudit.audit_one_run)",
         one_run_params, _one_run_trial, ("one_run",))):
    register_kind(ExperimentKind(name=_name, description=_desc, section="attack", params=_params, run_trial=_trial,
                                 figures=_figs, extra={"check": _check}))
