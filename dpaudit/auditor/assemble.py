"""The :class:`~dpaudit.auditor.report.AuditReport` of an audit's certified rounds: the reported point, each test's
strongest round, the floating-point section, the trajectory and the notes."""

from __future__ import annotations

import time

from .._version import __version__
from ..stats import DEFAULT_DELTAS, posterior_interval
from ..stats.bayes import format_confidence, format_percent
from ..stats.verdict import verdict_of
from .distinguishers import FLOAT_ATTACKS
from .report import AuditReport
from .report_parts import CertifiedBound, ClaimPart, EventPart, Extras, FloatFinding, RunFacts, SamplingPart, TargetPart

__all__ = ["build_report", "ceiling_note"]


def build_report(tgt, rounds, kind, shape, *, reason, attack, ideal, est, epsilon, claim, confidence, entropy, drawn,
                 max_samples, t_start, time_budget=None, interrupted=False) -> AuditReport:
    """The :class:`AuditReport` of certified rounds: the decisive point of the claim, each test's strongest round, notes.

    The distribution test's fields (event, counts, rates, GDP, profile, ROC, ceiling) all come from the round
    whose distribution test certified most at the reported delta, the bound reported as
    ``distribution_epsilon_lower_bound``; the float test's (``floating_point``) from its own strongest round.
    """
    # The reported point: that of the test (any round, distribution or float) that came closest to the
    # claim -- the largest margin over the curve when there is a violation, reported at its witness
    # (CurveTest.index; a point claim: its own point).
    decisive = max(reversed([t for rd in rounds for t in rd.tests()]), key=lambda t: t.as_bound_against(epsilon))
    delta, claimed_epsilon = decisive.delta, decisive.claimed_epsilon
    # The distribution test's round that certified most at that delta (the latest on ties) is the one described.
    best = max(reversed(rounds), key=lambda rd: rd.curve.certified_at(delta))
    main = best.main
    dist_bound = best.curve.certified_at(delta)
    floating = _floating_section(rounds, delta)
    bound = decisive.epsilon_lower_bound
    post = posterior_interval(min(bound, 700.0), delta=delta)
    claim_post = posterior_interval(claimed_epsilon, delta=delta)
    at = f" at delta = {delta:g}" if len(decisive.deltas) > 1 else ""  # a curve: say where
    explanation = (
        f"on this pair an attacker who starts at 50% can be moved to {format_percent(post.high)} or more "
        f"(epsilon >= {bound:.3g}{at} with {format_confidence(confidence)} confidence); "
        f"the claim epsilon = {claimed_epsilon:g}{at} "
        f"allows at most {format_percent(claim_post.high)}")
    return AuditReport(
        verdict=verdict_of(any(rd.violation() for rd in rounds)),
        claimed=ClaimPart(
            claimed_epsilon=float(claimed_epsilon), claimed_delta=float(delta), claim=claim,
            curve_violation=None if not decisive.violation else {
                **decisive.curve_violation(), "confidence": confidence},  # every round's test holds at once
            claim_curve=decisive.curve()),
        certified=CertifiedBound(
            epsilon_lower_bound=float(bound), confidence=confidence, ceiling=best.ceiling, estimator=est.name,
            certificate=main.method, distribution_epsilon_lower_bound=float(dist_bound)),
        sampling=SamplingPart(
            samples=drawn, seed=entropy, n_calibration=best.n_calibration, n_test=best.n_test, rounds=len(rounds),
            stopping_reason=reason, max_samples=max_samples, time_budget=time_budget, interrupted=bool(interrupted)),
        events=_event_counts(best, attack),
        subject=TargetPart(target=str(tgt.name), seeded=bool(getattr(tgt, "seeded", True)), output_kind=kind,
                           output_shape=list(shape or ()), ideal=ideal),
        extras=_extras(best, post, claim_post, explanation, _trajectory(rounds, delta), confidence),
        run=RunFacts(version=__version__, elapsed_seconds=round(time.perf_counter() - t_start, 4)),
        notes=_notes(tgt, est, main, floating, dist_bound, interrupted, len(rounds)) + _described_note(best),
        floating_point=floating,
    )


def _event_counts(best, attack: str) -> EventPart:
    """The round's distribution test: its event and the held-out counts of the inequality that certified."""
    main = best.main
    return EventPart(
        attack=best.test.name if attack == "auto" else attack, event=best.test.event.describe(),
        threshold=best.test.event.threshold, direction=f"{main.direction}, {main.event}",
        tp=main.tp, fn=main.fn, fp=main.fp, tn=main.tn,
        tpr_interval=list(main.tpr_interval()), fpr_interval=list(main.fpr_interval()))


def _extras(best, post, claim_post, explanation: str, trajectory: dict, confidence: float) -> Extras:
    fpr, tpr = best.roc
    return Extras(
        gdp_mu_lower_bound=best.gdp.mu_lower_bound,
        privacy_profile={"delta": list(DEFAULT_DELTAS), "epsilon": list(best.profile),
                         "simultaneous": True, "confidence": confidence},
        roc={"fpr": fpr.tolist(), "tpr": tpr.tolist()},
        posterior={"prior": 0.5, "low": post.low, "high": post.high, "claimed_high": claim_post.high},
        explanation=explanation, trajectory=trajectory)


def _floating_section(rounds, delta: float) -> FloatFinding | None:
    """The report's ``floating_point``: the strongest float test at ``delta``, or None.

    When the audit's own attack is a float attack (``attack="float-lsb"``, say), that attack's result
    is the float answer: it is reported here as well as in the main fields, not as null.
    """
    float_rounds = [(rd.float_test, rd.float_bound, rd.float_curve) if rd.float_bound is not None
                    else (rd.test, rd.main, rd.curve) for rd in rounds
                    if rd.float_bound is not None or rd.test.name in FLOAT_ATTACKS]
    if not float_rounds:
        return None
    test, fb, curve = max(reversed(float_rounds), key=lambda f: f[2].certified_at(delta))
    return FloatFinding(attack=test.name, epsilon_lower_bound=curve.certified_at(delta), event=test.event.describe(),
                        tp=fb.tp, fp=fb.fp, n_test=fb.n0, ceiling=fb.ceiling, fn=fb.fn, tn=fb.tn,
                        tpr_interval=list(fb.tpr_interval()), fpr_interval=list(fb.fpr_interval()),
                        direction=f"{fb.direction}, {fb.event}", certificate=fb.method)


def _notes(tgt, est, main, floating, dist_bound: float, interrupted: bool = False, rounds: int = 1) -> list[str]:
    notes = []
    if interrupted:
        notes.append(f"interrupted: the audit was stopped by hand during round {rounds + 1}, which is dropped; "
                     f"this report covers the {rounds} round{'s' * (rounds != 1)} finished, and its bound holds "
                     "at the stated confidence, as at any round of a sequential audit")
    if est.caveat:
        notes.append(est.caveat)
    if floating is not None and floating.epsilon_lower_bound > dist_bound:
        notes.append(f"the bound is the floating-point test's ({floating.attack}), from which bit patterns the "
                     "releases can take; audit with ideal=True / --ideal to check the mathematics only")
    if not getattr(tgt, "seeded", True):
        notes.append("the target takes no rng: its randomness is its own, so this audit is not reproducible")
    if main.epsilon_lower_bound >= main.ceiling - 1e-9:
        notes.append("the bound reached the sample-size ceiling: more samples could certify more")
    return notes


def _described_note(best) -> list[str]:
    """A note when the profile, ROC and GDP mu were counted on fewer held-out releases than the certified event."""
    shown = best.described_counts
    if shown is None or shown[0].n0 >= best.n_test:
        return []
    return [f"the privacy profile, the ROC and the GDP mu were counted on the first {shown[0].n0:,} held-out "
            f"releases per side, the certified event on all {best.n_test:,}"]


def _trajectory(rounds, delta: float) -> dict:
    """The running best certified epsilon at ``delta`` after each round."""
    running, trajectory = 0.0, {"samples": [], "epsilon_lower_bound": []}
    for rd in rounds:
        running = max(running, *(t.certified_at(delta) for t in rd.tests()))
        trajectory["samples"].append(rd.samples)
        trajectory["epsilon_lower_bound"].append(running)
    return trajectory


def ceiling_note(report) -> str | None:
    """A note when the claim is above what the audit's sample size could certify at all: its "no violation" is no
    evidence (a classic Gaussian at epsilon 10, truly 14.7, passed ``assert_dp`` at a ceiling of 9.4, and nothing
    said that no size of this order could have caught it).  The ceiling grows about as ``ln`` of the samples."""
    if report.violation or not report.ceiling < report.claimed_epsilon:
        return None
    return (f"the claimed epsilon {report.claimed_epsilon:.4g} is above the ceiling {report.ceiling:.4g}, the most "
            f"these samples could certify: no violation could have been found; the ceiling grows about as ln(samples)")
