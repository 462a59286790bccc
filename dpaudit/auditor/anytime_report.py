"""``dpaudit.audit(..., stopping="anytime")``: a black-box audit certified by e-processes, valid at every look.

The stream (:func:`dpaudit.auditor.anytime.run_stream`) draws releases of
the target in small batches through the package's sampler (the same chunk
seeds, so the same report for any ``n_jobs``), bets after each batch and
stops on a certified violation, at ``max_samples``, at ``time_budget`` or
on Ctrl-C.  Whatever stops it, the report's bound holds at the stated
confidence: it is the running value of a confidence sequence, valid at all
times at once, so a stop chosen by the clock or by a person watching the
bound is covered (a planned-looks audit must drop the round the clock cut).
"""

from __future__ import annotations

import time
import numpy as np

from .._version import __version__
from ..exceptions import ParameterValueError, TimeBudgetSpent
from ..stats import posterior_interval
from ..stats.anytime import certify_stream
from ..stats.bayes import format_confidence, format_percent
from ..stats.verdict import verdict_of
from .anytime import DEFAULT_BATCH, DistinguisherWitnesses, ScalarWitnesses, StreamInterrupted, curve_points, run_stream
from .report import AuditReport
from .report_parts import CertifiedBound, ClaimPart, EventPart, Extras, RunFacts, SamplingPart, TargetPart

__all__ = ["anytime_audit", "STOPPING_RULES"]

#: ``stopping=``: "planned" (rounds fixed in advance, the failure probability shared among them) or "anytime".
STOPPING_RULES = ("planned", "anytime")


#: Distinguishers an anytime audit of vector releases fits on the past pool (cheap ones: they are refitted often).
VECTOR_WITNESSES = ("mean-difference", "naive-bayes", "coordinate", "sign-sum")


def _witnesses(kind: str, attack: str):
    if attack != "auto":
        return DistinguisherWitnesses((attack,))
    return ScalarWitnesses() if kind == "scalar" else DistinguisherWitnesses(VECTOR_WITNESSES)


def anytime_audit(sampler, tgt, *, claim, claim_given, confidence, entropy, max_samples, time_budget, attack,
                  t_start, deadline, kind, probe, batch=DEFAULT_BATCH, on_round=None) -> AuditReport:
    """Run the stream on ``sampler``'s target and report; see the module docstring.

    A ``KeyboardInterrupt`` goes on with ``audit_report``: the looks finished
    before it (None before the first), valid like any look's.
    """
    epsilons, deltas = curve_points(claim)
    scalar = kind == "scalar"
    witnesses = _witnesses(kind, attack)

    def draw(look, m):
        x0, x1 = sampler.draw((5, look), m, desc="anytime")
        if scalar:
            x0, x1 = x0.reshape(len(x0)), x1.reshape(len(x1))
        return x0[None], x1[None]

    def watch(res):
        if on_round is not None:
            from .._progress import RoundProgress

            result, _ = _certified(res, claim, confidence)
            on_round(RoundProgress(round=res.looks, rounds_planned=0, samples=res.pairs,
                                   epsilon_lower_bound=result.epsilon_lower_bound,
                                   claimed_epsilon=result.claimed_epsilon,
                                   elapsed_seconds=time.perf_counter() - t_start,
                                   claimed_delta=result.region.delta if claim.is_curve else None))

    settings = dict(claim=claim, claim_given=claim_given, confidence=confidence, entropy=entropy,
                    max_samples=max_samples, time_budget=time_budget, attack=attack, t_start=t_start, kind=kind,
                    shape=probe.shape[1:], batch=batch)
    try:
        res = run_stream(draw, witnesses, epsilons=epsilons, deltas=deltas, runs=1, confidence=confidence,
                         batch=batch, max_pairs=max_samples, deadline=deadline, on_look=watch,
                         interrupt_on=(TimeBudgetSpent,))
    except StreamInterrupted as exc:
        err = KeyboardInterrupt()
        err.audit_report = build_anytime_report(tgt, exc.result, interrupted=True, **settings) \
            if exc.result.looks else None
        raise err from None
    if res.looks == 0:
        raise ParameterValueError(f"time_budget: {time_budget:g} s (--time-budget) ran out before the first batch of "
                                  f"the anytime audit of target {tgt.name!r} was drawn, so nothing is certified")
    return build_anytime_report(tgt, res, **settings)


def _certified(res, claim, confidence: float):
    """The stream's certificate result now, and the family (tested point) it reports."""
    result = certify_stream(res.audit, claim, confidence=confidence)
    at = np.flatnonzero((res.audit.deltas == result.region.delta) & (res.audit.epsilons == result.claimed_epsilon))
    return result, int(at[0])


def _event_counts(res, f: int, attack: str) -> EventPart:
    """The latest bet of family ``f`` as the report's event, and the counts of all its bets."""
    aud, choice = res.audit, res.choice
    names = res.witness_names or ("score",)
    witness = names[int(choice.witness[0, f])] if choice is not None else "none yet"
    threshold = float(choice.threshold[0, f]) if choice is not None else 0.0
    upper = bool(choice.upper[0, f]) if choice is not None else True
    reverse = bool(choice.reverse[0, f]) if choice is not None else False
    n_bet = int(aud.bet_pairs[0, f])
    x_hits, y_hits = (int(v) for v in aud.hits[0, f])
    tpr, fpr = (x_hits / n_bet, y_hits / n_bet) if n_bet else (0.0, 0.0)
    return EventPart(
        attack=attack if attack != "auto" else witness,
        event=f"{witness} {'>' if upper else '<='} {threshold:.6g} (the latest bet; chosen anew from the past)",
        threshold=threshold, direction=f"{'reverse' if reverse else 'forward'}, {'event' if upper else 'complement'}",
        tp=x_hits, fn=n_bet - x_hits, fp=y_hits, tn=n_bet - y_hits, tpr_interval=[tpr, tpr], fpr_interval=[fpr, fpr])


def _anytime_section(res, f: int, batch: int) -> dict:
    aud = res.audit
    return {
        "valid_at_any_time": True,
        "releases_seen": int(res.pairs),
        "looks": int(res.looks),
        "batch": int(batch),
        "e_value": float(np.exp(min(float(aud.max_claim_log_e[0, f]), 700.0))),  # the largest so far, there
        "threshold": float(np.exp(aud.log_threshold)),
        "points_tested": int(aud.families),
        "bet_pairs": int(aud.bet_pairs[0, f]),
        "seconds_drawing": round(res.seconds_drawing, 4),
        "seconds_per_look": round(res.seconds_looking / max(res.looks, 1), 6),
    }


def _notes(res, interrupted: bool) -> list[str]:
    notes = ["anytime-valid: the bound is the running value of a confidence sequence (e-processes and Ville's "
             f"inequality), so it holds at the stated confidence whenever the audit stops; {res.pairs} releases "
             "per side were seen"]
    if interrupted:
        notes.append(f"interrupted: stopped by hand after {res.pairs} releases per side; the batch being drawn is "
                     "dropped, and the bound holds as at any look")
    notes.append("floating-point attacks are not run by the anytime audit (stopping=planned runs them)")
    return notes


def build_anytime_report(tgt, res, *, claim, claim_given, confidence, entropy, max_samples, time_budget, attack,
                         t_start, kind, shape, batch, interrupted=False) -> AuditReport:
    """The :class:`AuditReport` of a stream (one run) at its reported point of the claim."""
    aud = res.audit
    result, f = _certified(res, claim, confidence)
    bound, claimed_eps, claimed_delta = result.epsilon_lower_bound, result.claimed_epsilon, result.region.delta
    violation = result.violation
    post = posterior_interval(min(bound, 700.0), delta=claimed_delta)
    claim_post = posterior_interval(claimed_eps, delta=claimed_delta)
    at = f" at delta = {claimed_delta:g}" if claim.is_curve else ""
    explanation = (f"on this pair an attacker who starts at 50% can be moved to {format_percent(post.high)} or more "
                   f"(epsilon >= {bound:.3g}{at} with {format_confidence(confidence)} confidence, valid at whatever "
                   f"release the audit stopped); the claim epsilon = {claimed_eps:g}{at} allows at most "
                   f"{format_percent(claim_post.high)}")
    traj = res.trajectory
    trajectory = {"samples": list(traj.get("samples", [])),
                  "epsilon_lower_bound": [float(b[0, f]) for b in traj.get("epsilon_lower_bound", [])]}
    curve_violation = result.region.curve_violation() if claim.is_curve else None
    return AuditReport(
        verdict=verdict_of(result.violation),
        claimed=ClaimPart(
            claimed_epsilon=claimed_eps, claimed_delta=claimed_delta, curve_violation=curve_violation,
            claim=None if claim_given is None else (claim_given if isinstance(claim_given, str) else claim.spec)),
        certified=CertifiedBound(epsilon_lower_bound=bound, confidence=confidence, ceiling=result.ceiling,
                                 estimator="e-process", certificate="e-process", distribution_epsilon_lower_bound=bound),
        sampling=SamplingPart(
            samples=int(res.pairs), seed=entropy, n_calibration=0, n_test=int(aud.bet_pairs[0, f]),
            rounds=int(res.looks), stopping_reason="violation" if violation else "budget", max_samples=max_samples,
            time_budget=time_budget, interrupted=bool(interrupted), stopping="anytime",
            anytime=_anytime_section(res, f, batch)),
        events=_event_counts(res, f, attack),
        subject=TargetPart(target=str(tgt.name), seeded=bool(getattr(tgt, "seeded", True)), output_kind=kind,
                           output_shape=list(shape or ()), ideal=True),
        extras=Extras(
            gdp_mu_lower_bound=0.0,
            privacy_profile={"delta": [], "epsilon": [], "simultaneous": True, "confidence": confidence},
            roc={"fpr": [], "tpr": []},
            posterior={"prior": 0.5, "low": post.low, "high": post.high, "claimed_high": claim_post.high},
            explanation=explanation, trajectory=trajectory),
        run=RunFacts(version=__version__, elapsed_seconds=round(time.perf_counter() - t_start, 4)),
        notes=_notes(res, interrupted),
    )
