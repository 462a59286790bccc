"""The ``scores`` and ``one_run`` kinds: audits of saved attack scores, one per trial (each trial its own seed).

Config (``attack.params``)::

    attack:
      name: scores                 # dpaudit.audit_scores
      params:
        in_scores: in.npy          # .npy/.csv/.json, or a list; beside the config, else the working directory
        out_scores: out.npy
        epsilon: 1.0               # or claim: gdp:mu=1 (then no epsilon/delta)
        delta: 0.0
        selection_fraction: 0.3

    attack:
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
from .._spec import Param
from .audit import check_claim, jsonable, seed_int
from .base import ExperimentKind, register_kind

__all__ = ["scores_params", "one_run_params"]


def _claim_params() -> dict:
    return {
        "epsilon": Param("real", None, low=0.0, nullable=True, help="claimed epsilon (or claim)"),
        "delta": Param("real", 0.0, low=0.0, high=1.0, high_inclusive=False, help="claimed delta"),
        "claim": Param("str", None, nullable=True, help="a claimed curve instead of epsilon/delta (docs/claims.md)"),
    }


def scores_params() -> dict:
    return {
        "in_scores": Param("any", help="scores with the record IN: a .npy/.csv/.json path or a list"),
        "out_scores": Param("any", help="scores with the record OUT: same forms"),
        **_claim_params(),
        "selection_fraction": Param("real", 0.3, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False,
                                    help="share of each side's scores that chooses the event"),
    }


def one_run_params() -> dict:
    return {
        "scores": Param("any", help="one score per canary: a .npy/.csv/.json path or a list"),
        "included": Param("any", help="0/1 per canary: same forms"),
        **_claim_params(),
        "guesses": Param("int", None, low=1, nullable=True, help="guesses made (null: m, m/2, ... down to 10)"),
    }


def _claim_kw(p: dict) -> dict:
    check_claim(p.get("claim"), "attack.params.claim")
    if p.get("claim") is not None:
        if p.get("epsilon") is not None:
            raise ConfigError("attack.params.claim", "give either a claim or epsilon/delta, not both")
        return {"claim": p["claim"]}
    if p.get("epsilon") is None:
        raise ConfigError("attack.params.epsilon", "required (or a claim)")
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
