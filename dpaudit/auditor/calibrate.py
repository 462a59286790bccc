"""Calibration: fit each candidate distinguisher, choose its event on data the held-out counts never see.

The calibration pool's first half fits the distinguisher, the second chooses
the event (:mod:`dpaudit.stats.selection`) the claim's curve ranks best; the
audit's certificate may ask for a variant for the chosen event or choose its
own (:class:`~dpaudit.stats.certificate.Certificate`).  Everything here reads
calibration data only, so the held-out result stays valid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats import DEFAULT_DELTAS
from ..stats.certificate import Certificate, ClopperPearson
from ..stats.curves import CurveCertificate
from ..stats.estimators import roc_thresholds
from ..stats.selection import ThresholdEvent, calibration_counts, calibration_rates, selection_halves
from .distinguishers import auto_choices, float_choices, make_distinguisher
from .distinguishers._features import shared_columns

__all__ = ["ChosenTest", "choose_test", "calibrate", "held_out_total", "FIT_COST",
           "SELECTION_TRUST", "TRUST_FROM", "RARE_TRUST", "NESTED_EVENTS", "SPREAD", "MIN_SPREAD", "RARE_EVENT_NOTE",
           "TAIL_RATIO", "nested_events"]

#: When the held-out set is at least ``TRUST_FROM`` times the selection data, the chosen
#: distinguisher's event is chosen with the selection counts trusted as ``SELECTION_TRUST``
#: times as many (see ``choose_test``).
SELECTION_TRUST = 2
TRUST_FROM = 8
#: There, up to ``NESTED_EVENTS`` events of the chosen distinguisher are certified, each at that share of the
#: failure probability, the best kept: the chosen event; the one chosen with the selection counts trusted as
#: ``RARE_TRUST`` times as many, when it differs and, read at that trust, beats the chosen one at its share; then
#: the nested events holding about ``1 / SPREAD``, ``1 / SPREAD^2`` of the chosen region's selection releases (at
#: least ``MIN_SPREAD``) (docs/decisions/event-selection.md, docs/decisions/selection-limit.md).
RARE_TRUST = 8
NESTED_EVENTS = 3
SPREAD = 4
MIN_SPREAD = 50
RARE_EVENT_NOTE = ("the chosen distinguisher's event and rarer events nested in it were certified, the failure "
                   "probability split evenly among them; the best against the claim is reported")
#: A score audit certifies the other tail's best event too when it is worth this share of the chosen event's on the
#: selection split (measured in docs/decisions/event-selection.md).
TAIL_RATIO = 0.9


# ----------------------------------------------------------------------------- calibration
@dataclass(frozen=True)
class ChosenTest:
    """One distinguisher with the events chosen for it on calibration data, and the certificate of its event."""

    name: str
    scorer: object
    event: ThresholdEvent  # the claim's event: the one the report describes
    value: float  # its bound on the selection counts (nested intervals), to compare distinguishers
    #: The certificate of the event: the audit's, or the variant it asked for on calibration data (the Poisson
    #: conditional test of one of the event's two inequalities, on Poisson-sized held-out sets).
    certificate: Certificate
    #: The event the certificate reads when it chooses its own (GDP's); None: ``event``.
    own_event: ThresholdEvent | None = None
    gdp_event: ThresholdEvent | None = None
    profile_events: tuple = ()
    roc_events: tuple = ()
    #: Events certified beside ``event``, the failure probability split evenly among all of them, the best kept:
    #: the other tail's best (:meth:`~dpaudit.stats.curves.CurveCertificate.choose_other_tail`) or, on a held-out
    #: set many times the selection split, events nested in ``event`` (:func:`nested_events`); empty: ``event``
    #: alone.
    alt_events: tuple = ()
    #: Each of ``alt_events``' certificate (the chosen event's Poisson test when it has one, else the audit's or its
    #: Poisson variant for that event); None: ``certificate``.
    alt_certificates: tuple = ()

    def events(self):
        return self.certified_events() + self.described_events()

    def certified_events(self) -> list[ThresholdEvent]:
        """The events a certificate reads: the claim's event, the other tail's or the nested ones, the
        certificate's own."""
        return [e for e in (self.event, *self.alt_events, self.own_event) if e is not None]

    def described_events(self) -> list[ThresholdEvent]:
        """The events the report only describes: GDP's, the privacy profile's and the ROC's."""
        return [e for e in (self.gdp_event, *self.profile_events, *self.roc_events) if e is not None]

    @property
    def certified_event(self) -> ThresholdEvent:
        """The event the certificate reads."""
        return self.event if self.own_event is None else self.own_event


#: Rough relative cost of fitting each distinguisher on wide vectors (docs/decisions/calibration-cost.md):
#: the candidate pool starts the costliest first.  Only the order of work depends on it.
FIT_COST = {"mixed": 5, "binned-logistic": 4, "pattern-cells": 4, "cell-values": 4, "density-ratio-sum": 3,
            "likelihood-ratio": 3, "naive-bayes": 2, "innovation-sign-sum": 2, "quadratic": 2, "coordinate": 1,
            "sign-sum": 1}


def choose_test(names, pool, *, cert=None, delta=None, confidence, full: bool, n_test: int = 0,
                poisson: bool = True, threads: int = 1, tails: bool = False,
                certificate: Certificate | None = None) -> ChosenTest | None:
    """Fit each named distinguisher on the pool's first half, choose its event on the second, keep the best.

    Candidates are ranked by the bound their selection counts certify, with
    intervals at the selection split's own size shared among the nested
    candidate thresholds: what the event can be trusted to show, not what it
    shows by luck.  Distinguishers with (almost) nothing to fit choose on the
    whole pool.  When the held-out set is at least ``TRUST_FROM`` times the
    selection data, the winner's event is chosen again with the selection
    counts trusted as ``SELECTION_TRUST`` times as many, so that a rarer event
    with a larger ratio can win; events nested in it (:func:`nested_events`) become
    ``alt_events``, all certified at an even share of the failure probability and
    the best kept (:func:`certify_round`): how rare the best event is, the
    selection split cannot tell, the held-out counts can.  Everything here uses calibration data only,
    so the held-out bound stays valid.  The measurements behind these choices
    are in ``docs/decisions/event-selection.md``.

    The claim's certificate ``cert`` (:class:`~dpaudit.stats.curves.CurveCertificate`)
    ranks the events: for a point claim by the bound at its delta, for a curve by
    how close the event's certified curve comes to the claimed one.  Given ``delta``
    instead, the point claim at that delta is meant (its epsilon does not change the choice).
    ``poisson=False``: the held-out sets have fixed sizes (given scores), so no Poisson certificate.
    ``threads`` candidates are fitted at once (numpy and scikit-learn release the GIL in their
    heavy parts), the costliest first (:data:`FIT_COST`), each with one BLAS thread; each
    candidate's fit is deterministic and the best is taken in ``names`` order, so the choice
    depends on neither.  ``tails=True`` (one fixed-size round, no Poisson certificate: the score
    audit) also keeps the other tail's best event when it is worth :data:`TAIL_RATIO` of the
    chosen one's (``alt_events``; :func:`certify_round` certifies both).  ``certificate`` certifies the
    event (default Clopper-Pearson); it may ask for a variant for the event (:meth:`Certificate.poisson_variant`)
    or choose its own event (:meth:`Certificate.choose_event`).
    """
    certificate = ClopperPearson() if certificate is None else certificate
    if cert is None:
        from ..claims import PointClaim

        cert = CurveCertificate(PointClaim(1.0, 0.0 if delta is None else delta))
    fit, sel = selection_halves(pool)

    def candidate(name):
        scorer, s0, s1 = _selection_scores(name, pool, fit, sel)
        # One set of interval bounds per candidate threshold serves every event below.
        cal = calibration_counts(s0, s1)
        rates = calibration_rates(cal, n_test0=len(s0), n_test1=len(s1), confidence=confidence, nested=True)
        event = cert.choose(rates)
        return name, scorer, event, cert.value(rates, event), rates, cal, s1

    with shared_columns():
        results = (_fit_in_threads(candidate, names, threads) if threads > 1 and len(names) > 1
                   else _fit_in_turn(candidate, names))
    best = None
    for result in results:
        if best is None or result[3] > best[3]:
            best = result
    if best is None:
        return None
    name, scorer, event, value, rates, cal, s1 = best
    nested = []
    if n_test >= TRUST_FROM * cal[2]:
        chosen_on = _trusted(cal, SELECTION_TRUST, confidence)
        event = cert.choose(chosen_on)
        value = cert.value(rates, event)
        if not tails and certificate.choose_event(rates) is None:
            nested = nested_events(cert, cal, event, confidence, chosen_on=chosen_on)[1:]
    chosen = _variant(certificate, rates, event, value, poisson=poisson and cert.pure)
    alts, alt_certs = (), ()
    if nested:
        alts = tuple(nested)
        if chosen is not certificate:
            # The chosen event's Poisson test reads the rarer events nested in it too: their own selection counts
            # are too few to choose (at the selection size such an event often certifies nothing either way, and
            # the tie fell to the intervals), and the test gains most on rare events
            # (docs/decisions/selection-limit.md).
            alt_certs = (chosen,) * len(nested)
        else:
            alt_certs = tuple(_variant(certificate, rates, e, cert.value(rates, e), poisson=poisson and cert.pure)
                              for e in nested)
    elif tails and chosen is certificate:
        other = cert.choose_other_tail(rates, event, ratio=TAIL_RATIO)
        alts, alt_certs = ((other,), (None,)) if other is not None else ((), ())
    extras = {}
    if full:
        extras = dict(gdp_event=rates.choose(gdp=True),
                      profile_events=tuple(rates.choose(delta=d) for d in DEFAULT_DELTAS),
                      roc_events=tuple(roc_thresholds(s1, reverse=event.reverse)))
    return ChosenTest(name, scorer, event, value, chosen, own_event=chosen.choose_event(rates), alt_events=alts,
                      alt_certificates=alt_certs, **extras)


def nested_events(cert, cal, event: ThresholdEvent, confidence: float, *, k: int = NESTED_EVENTS,
                  spread: float = SPREAD, chosen_on=None) -> list[ThresholdEvent]:
    """``event`` and up to ``k - 1`` events nested in it, to be certified each at ``1 / len`` of the failure
    probability, the best kept.

    First the best nested event with the selection counts trusted ``RARE_TRUST`` times
    (:meth:`~dpaudit.stats.curves.CurveCertificate.choose_rarer`), when, read at that trust, it beats ``event`` at
    failure ``alpha / k`` (what certifying ``k`` events costs it); then the nested events whose region holds about
    ``1 / spread``, ``1 / spread^2``, ... of ``event``'s selection releases (at least ``MIN_SPREAD``), whatever their
    ratio on the selection counts, until ``k``.  How rare the best event is the selection split cannot tell; events
    spread over the score's order let the held-out counts tell (docs/decisions/selection-limit.md: 4-7 points of the
    ceiling on the sparse-vector rows).  Calibration data only, and the number of events is fixed before any
    held-out count is read, so the even split of the failure probability keeps the best one valid.
    ``chosen_on``: the selection counts' intervals at ``SELECTION_TRUST``, on which ``event`` was chosen, when
    the caller has them.
    """
    if chosen_on is None:
        chosen_on = _trusted(cal, SELECTION_TRUST, confidence)
    events = [event]
    trusted = _trusted(cal, RARE_TRUST, confidence)
    rare = cert.choose_rarer(trusted, event, chosen_on=chosen_on)
    if (rare is not None and rare != event and k > 1
            and cert.value(_trusted(cal, RARE_TRUST, 1.0 - (1.0 - confidence) / k), rare) > cert.value(trusted, event)):
        events.append(rare)
    for e in _spread_events(cal, event, cert._family(chosen_on, event), chosen_on._index(event), spread, k):
        if len(events) < k and e not in events:
            events.append(e)
    return events


def _spread_events(cal, base: ThresholdEvent, family: int, i: int, spread: float, k: int) -> list[ThresholdEvent]:
    """The candidate events nested in ``base`` (candidate ``i`` of ``cal``, certified through inequality ``family``)
    whose regions hold about ``1 / spread``, ..., ``1 / spread^(k - 1)`` of its selection releases, each the
    candidate closest in log size (none below ``MIN_SPREAD`` releases)."""
    cand, ge0, n0, ge1, n1 = cal
    # Families 0 and 3 read the region "score >= t" (further out: larger t), 1 and 2 "score < t".
    region = np.asarray(ge0 + ge1 if family in (0, 3) else (n0 + n1) - (ge0 + ge1), float)
    idx = np.arange(len(cand))
    inside = (idx > i) if family in (0, 3) else (idx < i)
    ok = inside & (region >= MIN_SPREAD) & (region < region[i])
    out = []
    for j in range(1, k):
        if not ok.any():
            break
        target = region[i] / float(spread) ** j
        best = idx[ok][np.argmin(np.abs(np.log(region[ok] / target)))]
        out.append(ThresholdEvent(float(cand[best]), reverse=base.reverse))
    return out


def _trusted(cal, trust: float, confidence: float):
    """The selection counts' nested intervals with the counts trusted as ``trust`` times as many."""
    return calibration_rates(cal, n_test0=trust * cal[2], n_test1=trust * cal[4], confidence=confidence, nested=True)


def _variant(certificate: Certificate, rates, event: ThresholdEvent, value: float, *, poisson: bool) -> Certificate:
    """The certificate's variant for ``event`` (the Poisson test: one exact test of the ratio in place of two
    intervals) when the selection counts say it certifies more than the intervals' ``value``, else ``certificate``.

    Distinguishers are ranked by the intervals' value: the Poisson test's smaller penalty on rare events let
    calibration noise pick the distinguisher (docs/decisions/event-selection.md).
    """
    if not poisson:
        return certificate
    inequality, p_value = rates.poisson_value(event)
    variant = certificate.poisson_variant(inequality)
    return variant if variant is not None and p_value > value else certificate


def _fit_in_turn(candidate, names) -> list:
    """``[candidate(n) for n in names]`` with one BLAS thread: the audit was given one core, and a BLAS spinning
    on the other costs CPU time for little gain (docs/decisions/scoring-cost.md); each fit is the same."""
    if len(names) < 2:  # a scalar's one candidate: no BLAS to speak of
        return [candidate(n) for n in names]
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return [candidate(n) for n in names]


def _fit_in_threads(candidate, names, threads: int) -> list:
    """``[candidate(n) for n in names]``, ``threads`` at a time, the costliest first (:data:`FIT_COST`).

    The costliest start first, so that two long fits do not end the pool together; each thread's BLAS keeps to
    one core, so that threads do not fight over the cores (docs/decisions/calibration-cost.md).  On Ctrl-C the
    fits not started are dropped and the running ones not awaited, so that the finished rounds are reported at
    once, as with one thread, before a second Ctrl-C could lose the report.
    """
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    order = sorted(range(len(names)), key=lambda i: FIT_COST.get(names[i], 0), reverse=True)
    ex = ThreadPoolExecutor(max_workers=threads)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            futures = {i: ex.submit(candidate, names[i]) for i in order}
            results = [futures[i].result() for i in range(len(names))]
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown()
    return results


def _selection_scores(name, pool, fit, sel):
    """The candidate fitted on the fitting half and its scores on the selection half, or, when it
    has (almost) nothing to fit, fitted and scored on the whole pool: half the selection noise, no
    optimism worth counting.  A score that can say so (``confirms_pooling``) must also separate the
    sides on the selection half, releases it was not fitted on, before it is pooled."""
    scorer = make_distinguisher(name).fit(fit[0], fit[1])
    pooled = getattr(scorer, "pooled", lambda n: False)(len(pool[0]))
    confirm = getattr(scorer, "confirms_pooling", None)
    s0 = s1 = None
    if pooled and confirm is not None:
        s0, s1 = scorer.score(sel[0]), scorer.score(sel[1])
        pooled = confirm(s0, s1)
    if pooled:
        scorer = make_distinguisher(name).fit(pool[0], pool[1])
        return scorer, scorer.score(pool[0]), scorer.score(pool[1])
    if s0 is None:
        s0, s1 = scorer.score(sel[0]), scorer.score(sel[1])
    return scorer, s0, s1


# Releases of any finite magnitude are valid (1e300 overflows a square): the candidates' arithmetic may overflow
# and yield non-finite scores, which selection ranks like any other; numpy's warnings about it would stop an
# assert_dp run under warnings-as-errors without changing a number.
_QUIET_FLOATS = {"over": "ignore", "invalid": "ignore", "divide": "ignore", "under": "ignore"}


@np.errstate(**_QUIET_FLOATS)
def calibrate(pool, *, attack, ideal, kind, cert, confidence, n_test=0, threads=1, certificate=None):
    """Fit and choose on the calibration pool: the distribution test and, when it adds something, a float test."""
    fit, _ = selection_halves(pool)
    if attack == "auto":
        names = auto_choices(kind, fit[0], fit[1])
    else:
        names = (attack,)
    fnames = () if (ideal or attack != "auto") else float_choices(fit[0], fit[1])
    certificate = ClopperPearson() if certificate is None else certificate
    test = choose_test(names, pool, cert=cert, confidence=confidence, full=True, n_test=n_test, threads=threads,
                       certificate=certificate)
    float_test = choose_test(fnames, pool, cert=cert, confidence=confidence, full=False, n_test=n_test,
                             threads=threads, certificate=certificate.float_certificate)
    if float_test is not None and float_test.value <= test.value:
        # The float family adds nothing the distribution attack does not show:
        # do not spend failure probability on it.
        float_test = None
    return test, float_test


def held_out_total(plan, r: int) -> int:
    """Releases per side the events chosen at round ``r`` will be counted on: its own and the
    following rounds' that draw no new calibration data."""
    total = plan[r].n_test
    for step in plan[r + 1:]:
        if step.n_calibration:
            break
        total += step.n_test
    return total
