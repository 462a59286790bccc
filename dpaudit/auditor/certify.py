"""Certification: each test's certificate turns its held-out counts into the round's result.

The audit's certificate (:mod:`dpaudit.stats.certificate`) certifies the
chosen event of the distribution test and of the float test; the round keeps
its results, which alone decide the verdict, the bound and the ceiling, and
the extras the report shows beside them (the event's counts, the GDP mu, the
privacy profile, the ROC).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..stats import DEFAULT_DELTAS
from ..stats.bounds import EpsilonBound
from ..stats.certificate import (
    CertificateResult,
    ClopperPearson,
    EventCounts,
    GaussianDP,
    certificate_for,
    with_method,
)
from ..stats.curves import CurveCertificate, CurveTest
from ..stats.estimators import profile_from_counts, roc_from_counts
from .calibrate import ChosenTest

__all__ = ["CertifiedRound", "certify_round", "resolve_claim", "decisive_point"]


@dataclass(frozen=True)
class CertifiedRound:
    """What one round certified: the audit's certificate's result on the distribution test (and on the float
    test), with the extras the report shows beside it (the main event's counts, GDP mu, profile, ROC)."""

    index: int
    samples: int  # cumulative releases per side after this round
    n_calibration: int  # calibration pool size used
    n_test: int
    confidence: float
    test: ChosenTest
    result: CertificateResult  # the verdict, the bound and the ceiling of the distribution test
    main: EpsilonBound  # the main event's counts and intervals, as the report describes them
    tracked: EpsilonBound  # the main event's interval bound on all held-out counts (for the stopping rules)
    gdp: object  # GDPResult
    profile: tuple
    roc: tuple
    counts: tuple  # held-out counts, kept to add the next round's when the events stay
    poisson_counts: tuple | None = None  # counts on the Poisson-sized held-out sets, when a test uses them
    described_counts: tuple | None = None  # counts of the described events (GDP, profile, ROC), when apart
    float_test: ChosenTest | None = None
    float_result: CertificateResult | None = None
    float_bound: EpsilonBound | None = None

    @property
    def curve(self) -> CurveTest:
        """The distribution test's certified region against the whole claim (a point claim: at its delta)."""
        return self.result.region

    @property
    def float_curve(self) -> CurveTest | None:
        return None if self.float_result is None else self.float_result.region

    @property
    def ceiling(self) -> float:
        """The most this round's held-out sizes could certify with the audit's certificate."""
        return self.result.ceiling

    def results(self) -> list[CertificateResult]:
        return [r for r in (self.result, self.float_result) if r is not None]

    def tests(self) -> list[CurveTest]:
        return [r.region for r in self.results()]

    def violation(self) -> bool:
        return any(r.violation for r in self.results())

    def bound_against(self, epsilon: float, delta: float | None = None) -> float:
        """The round's certified result as one bound against a claim of ``epsilon``: above it exactly on a violation.

        For a point claim at ``epsilon`` it is the larger of the distribution and float bounds; for a
        curve, ``epsilon`` plus the largest margin on a violation, else the certified epsilon at the
        tracker's ``delta`` (or, without it, ``epsilon`` times the closest approach; see
        :meth:`~dpaudit.stats.curves.CurveTest.as_bound_against`).
        """
        return max(r.as_bound_against(epsilon, delta) for r in self.results())


def _certify(test, counts, pcounts, claim, *, delta, confidence) -> tuple[CertificateResult, EpsilonBound]:
    """(the test's certificate's result on its event, the event's description for the report)."""
    held_out = pcounts if test.certificate.poisson_sized else counts
    result = test.certificate.certify(EventCounts.at(held_out, test.certified_event), claim, confidence=confidence,
                                      delta=delta)
    return result, _described(result, counts, test.event, delta=delta, confidence=confidence)


def _described(result, counts, event, *, delta, confidence) -> EpsilonBound:
    """The report's description of ``event``: the result's own point bound, else the event's interval bound
    relabelled with the result's method and point results (a certificate with no intervals of its own)."""
    if result.bound is not None:
        return result.bound
    return with_method(ClopperPearson().bound(counts, event, delta=delta, confidence=confidence), result)


def certify_round(r, samples, n_calibration, test, float_test, counts, pcounts, *, delta, confidence,
                  estimator=None, cert, described=None) -> CertifiedRound:
    """Round ``r``'s results from its held-out counts: each test's certificate's result on its event, all at
    ``confidence`` (shared with a float test), and the extras the report shows (GDP mu, profile, ROC), read
    from the ``described`` counts when those were counted apart (else from ``counts``)."""
    shown = counts[0] if described is None else described[0]
    # Two held-out tests share the failure probability; one keeps all of it.
    conf = 1.0 - (1.0 - confidence) / (2 if float_test is not None else 1)
    claim = cert.claim
    # The stopping rules follow the event's interval bound on all held-out counts (it covers the
    # inequality a Poisson test certifies, so the two move together).
    if test.alt_events:
        test, tracked, result = _best_event(test, counts[0], pcounts[0] if pcounts else None, claim, delta=delta,
                                              confidence=conf)
        main = result.bound if result.bound is not None else with_method(tracked, result)
    else:
        tracked = ClopperPearson().bound(counts[0], test.event, delta=delta, confidence=conf)
        result, main = _certify(test, counts[0], pcounts[0] if pcounts else None, claim, delta=delta,
                                confidence=conf)
    float_result = float_bound = None
    if float_test is not None:
        float_result, float_bound = _certify(float_test, counts[1], pcounts[1] if pcounts else None, claim,
                                             delta=delta, confidence=conf)
    return CertifiedRound(
        index=r, samples=samples, n_calibration=n_calibration, n_test=counts[0].n0, confidence=conf, test=test,
        result=result, main=main, tracked=tracked,
        gdp=GaussianDP().bound(shown, test.gdp_event, delta=delta, confidence=conf),
        profile=tuple(profile_from_counts(shown, test.profile_events, DEFAULT_DELTAS, confidence=conf)),
        roc=roc_from_counts(shown, test.roc_events), counts=tuple(counts),
        poisson_counts=None if pcounts is None else tuple(pcounts),
        described_counts=None if described is None else tuple(described), float_test=float_test,
        float_result=float_result, float_bound=float_bound)


def _best_event(test, counts, pcounts, claim, *, delta, confidence):
    """(the test with the best of its events as ``event``, that event's interval bound, its certificate's result):
    each event certified by its own certificate (on the Poisson-sized counts when it reads them) at an even share of
    the failure probability, so all hold at once and the best (against the claim) may be kept.  A certificate that
    reads its own event (GDP) leaves the choice to the intervals and certifies its event at the full share."""
    events = (test.event, *test.alt_events)
    each = 1.0 - (1.0 - confidence) / len(events)
    own = test.own_event is None
    alt_certs = test.alt_certificates or (None,) * len(test.alt_events)
    rankers = ((test.certificate, *(c or test.certificate for c in alt_certs)) if own
               else (ClopperPearson(),) * len(events))
    results = [ranker.certify(EventCounts.at(pcounts if ranker.poisson_sized else counts, e), claim,
                              confidence=each, delta=delta) for ranker, e in zip(rankers, events)]
    # Ranked as the rounds are (decisive_point): by the margin over the claim, else by the share of it certified;
    # the first of equals.
    keep = max(range(len(events)), key=lambda i: (results[i].as_bound_against(1.0), -i))
    test = replace(test, event=events[keep], certificate=rankers[keep] if own else test.certificate,
                   alt_certificates=())
    tracked = ClopperPearson().bound(counts, events[keep], delta=delta, confidence=each)
    if not own:
        return test, tracked, test.certificate.certify(EventCounts.at(counts, test.certified_event), claim,
                                                        confidence=confidence, delta=delta)
    return test, tracked, results[keep]


def resolve_claim(claim, epsilon, delta, estimator):
    """(claim, its certificate of curves, the audit's certificate) from an entry point's keywords, checked."""
    from ..claims import as_claim

    claim = as_claim(claim, epsilon=epsilon, delta=delta)
    certificate = certificate_for(estimator)
    certificate.check(claim)
    return claim, CurveCertificate(claim), certificate


def decisive_point(rd: CertifiedRound, epsilon: float, delta: float) -> tuple[float, float]:
    """The reported point of the round's decisive test, when its claimed epsilon is finite."""
    t = max(rd.tests(), key=lambda t: t.as_bound_against(epsilon))
    if np.isfinite(t.claimed_epsilon):
        return float(t.claimed_epsilon), float(t.delta)
    return epsilon, delta
