"""One black-box audit: target -> samples -> distinguisher -> events -> held-out counts -> bounds -> report.

The steps, each owned by its own module:

1. **Samples** (:mod:`dpaudit.sampling`): releases on D and D' in chunks,
   each with its own seed, every output checked.
2. **Distinguisher** (:mod:`dpaudit.auditor.distinguishers`): fitted on the
   first half of the calibration releases.
3. **Events** (:mod:`dpaudit.stats.selection`): chosen on the second half
   (and the attack too, under ``auto``).
4. **Held-out counts**: fresh releases are drawn chunk by chunk and only
   counted, so memory stays bounded by one chunk and the calibration cap.
5. **Bounds** (:mod:`dpaudit.stats.estimators`), computed on those counts alone.
6. **Report** (:mod:`dpaudit.auditor.report`).

A fixed-size audit (``samples=N``) runs these steps once.  A sequential
audit (the default) runs them in rounds of growing size: each round draws
fresh calibration releases (pooled with earlier ones, up to the cap) and
fresh held-out releases, and certifies a bound from its own held-out counts
with the failure probability ``1 - confidence`` shared equally among the
rounds planned for the budget.  Every round's bound is then valid at once
(union bound), so the largest of them is valid whatever round the audit
stopped in.  See :mod:`dpaudit.auditor.sequential` for the schedule and the
stopping rules.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from .._executor import LINES, Executor
from .._progress import RoundProgress, progress_wanted
from .._rng import as_seed_sequence, seed_entropy
from .._version import __version__
from ..datasets import align_empty, load_dataset
from ..exceptions import ParameterValueError, TimeBudgetSpent
from ..params import AUDIT_OPTIONS, all_cores
# DEFAULT_CHUNK_SIZE is re-exported: the one chunk size.
from ..sampling import DEFAULT_CHUNK_SIZE, Sampler, memory_limits, probe_releases, release_bytes
from ..stats import DEFAULT_DELTAS, posterior_interval
from ..stats.bayes import format_confidence, format_percent
from ..stats.bounds import EpsilonBound, poisson_held_out_mean
from ..stats.certificate import (
    POISSON_SHARE,  # noqa: F401  re-exported: the Poisson test's share lives with its certificate
    Certificate,
    CertificateResult,
    ClopperPearson,
    EventCounts,
    GaussianDP,
    certificate_for,
    with_method,
)
from ..stats.curves import CurveCertificate, CurveTest
from ..stats.estimators import (
    profile_from_counts,
    roc_from_counts,
    roc_thresholds,
)
from ..stats.selection import ThresholdEvent, calibration_counts, calibration_rates
from ..stats.sequential import SequentialBound
from ..stats.verdict import verdict_of
from . import sequential
from .distinguishers import FLOAT_ATTACKS, auto_choices, float_choices, make_distinguisher, output_kind
from .report import AuditReport

__all__ = [
    "audit",
    "DEFAULT_SAMPLES_VECTORISED",
    "DEFAULT_SAMPLES_PER_CALL",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_CALIBRATION_CAP",
    "ESTIMATORS",
]

#: Most releases per side of a sequential audit (and of a fixed one without
#: ``samples``) when the target takes ``size`` (one numpy call per chunk).
DEFAULT_SAMPLES_VECTORISED = 1_000_000
#: The same for a target called once per release.
DEFAULT_SAMPLES_PER_CALL = 20_000
#: Most calibration releases kept per side; everything beyond is only counted.
DEFAULT_CALIBRATION_CAP = AUDIT_OPTIONS["calibration_cap"].default
ESTIMATORS = ("clopper-pearson", "gdp")

#: When the held-out set is at least ``TRUST_FROM`` times the selection data, the chosen
#: distinguisher's event is chosen with the selection counts trusted as ``SELECTION_TRUST``
#: times as many (see ``choose_test``).
SELECTION_TRUST = 2
TRUST_FROM = 8
#: A score audit certifies the other tail's best event too when it is worth this share of the chosen event's on the
#: selection split (measured in docs/decisions/event-selection.md).
TAIL_RATIO = 0.9

_CAL, _TEST = (0,), (1,)  # seed phases of a fixed-size audit (fixed: a seed must keep giving the same report)


#: The options ``audit`` checks against :data:`dpaudit.params.AUDIT_OPTIONS` (its one set of rules).
_CHECKED = ("epsilon", "delta", "confidence", "samples", "max_samples", "time_budget", "attack", "ideal", "n_jobs",
            "backend", "scheduler", "calibration_fraction", "calibration_cap", "chunk_size", "timeout", "keep_drawing",
            "stopping")


def _cal_phase(r: int) -> tuple:
    return (2, r)


def _test_phase(r: int) -> tuple:
    return (3, r)


# ----------------------------------------------------------------------------- inputs
def _resolve_pair(tgt, dataset, neighbor):
    """The datasets, or the built-in's own stress pair when both are omitted."""
    if dataset is None and neighbor is None:
        pair = getattr(getattr(tgt, "fn", None), "neighbouring_pair", None)
        if pair is None:
            raise ParameterValueError(f"dataset and neighbor are required for target {tgt.name!r} (only a "
                                      "built-in mechanism has a default pair)")
        dataset, neighbor = pair()
    elif dataset is None or neighbor is None:
        missing = "dataset" if dataset is None else "neighbor"
        raise ParameterValueError(f"{missing} is missing: give both datasets of the pair, or neither for a "
                                  "built-in mechanism's own pair")
    return align_empty(load_dataset(dataset, name="dataset"), load_dataset(neighbor, name="neighbor"))


def replaced_record_note(claim, dataset, neighbor) -> str | None:
    """A note when ``claim`` is a curve accounted for add/remove neighbours (DP-SGD's, a ``DpEvent``'s) and the pair
    replaces one record: replacing is removing one record and adding another, so the pair may rightly show more
    than the curve allows (twice the sensitivity, for opposing gradients) and a "violation" is no evidence against
    the accountant.  Once said nowhere: a correct DP-SGD audited on such a pair was called a violation."""
    from ..pairs import Relation, compare_pair

    if getattr(claim, "accounted_for", None) is not Relation.ADD_REMOVE:
        return None
    diff = compare_pair(dataset, neighbor)
    if diff.is_neighbouring(Relation.ADD_REMOVE) or not diff.is_neighbouring(Relation.REPLACE_ONE):
        return None
    return (f"the claim {claim.spec} is accounted for add/remove neighbours, but the pair differs by a replaced "
            "record (a removal and an addition), so a bound on it may exceed the curve without any violation; "
            "audit the dataset with the record against the dataset without it")


def non_neighbour_note(dataset, neighbor) -> str | None:
    """A note when the pair is neighbouring under no relation (replace-one, add/remove or linf): a bound on it
    may exceed the claim of a correct mechanism.  ``dpaudit audit`` warns on stderr; from Python (``assert_dp``)
    the report was silent, so a failure on a mistyped pair read as a bug in the mechanism."""
    from ..pairs import Relation, compare_pair

    diff = compare_pair(dataset, neighbor)
    if any(diff.is_neighbouring(rel) for rel in (Relation.REPLACE_ONE, Relation.ADD_REMOVE, Relation.LINF)):
        return None
    return (f"the pair is not neighbouring under any relation: {diff.describe()}; a bound on it may exceed the "
            "claim without any violation (neighbours differ in one record, or in every answer by at most 1)")


def _is_builtin(tgt) -> bool:
    """Built-in mechanisms: fast vectorised numpy whose arrays are cheaper to draw than to ship."""
    from ..mechanisms.base import BuiltinMechanism

    return isinstance(getattr(tgt, "fn", None), BuiltinMechanism)


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
    #: The event the certificate reads: ``event``, unless the certificate chooses its own (GDP's).
    certified_event: ThresholdEvent
    gdp_event: ThresholdEvent | None = None
    profile_events: tuple = ()
    roc_events: tuple = ()
    #: The other tail's best event, certified beside ``event`` at half the failure probability each
    #: (:meth:`~dpaudit.stats.curves.CurveCertificate.choose_other_tail`); None: ``event`` alone.
    alt_event: ThresholdEvent | None = None

    def events(self):
        return [e for e in (self.event, self.alt_event, self.certified_event, self.gdp_event, *self.profile_events,
                            *self.roc_events) if e is not None]


#: Rough relative cost of fitting each distinguisher on wide vectors (measured at 50,000 releases of
#: 200 bits): the candidate pool starts the costliest first.  Only the order of work depends on it.
FIT_COST = {"mixed": 5, "binned-logistic": 4, "pattern-cells": 4, "cell-values": 4, "density-ratio-sum": 3,
            "likelihood-ratio": 3, "naive-bayes": 2, "innovation-sign-sum": 2, "coordinate": 1, "sign-sum": 1}


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
    with a larger ratio can win.  Everything here uses calibration data only,
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
    chosen one's (``alt_event``; :func:`certify_round` certifies both).  ``certificate`` certifies the
    event (default Clopper-Pearson); it may ask for a variant for the event (:meth:`Certificate.poisson_variant`)
    or choose its own event (:meth:`Certificate.choose_event`).
    """
    certificate = ClopperPearson() if certificate is None else certificate
    if cert is None:
        from ..claims import PointClaim

        cert = CurveCertificate(PointClaim(1.0, 0.0 if delta is None else delta))
    fit, sel = _halves(pool)

    def candidate(name):
        scorer, s0, s1 = _selection_scores(name, pool, fit, sel)
        # One set of interval bounds per candidate threshold serves every event below.
        cal = calibration_counts(s0, s1)
        rates = calibration_rates(cal, n_test0=len(s0), n_test1=len(s1), confidence=confidence, nested=True)
        event = cert.choose(rates)
        return name, scorer, event, cert.value(rates, event), rates, cal, s1

    results = _fit_in_threads(candidate, names, threads) if threads > 1 and len(names) > 1 else map(candidate, names)
    best = None
    for result in results:
        if best is None or result[3] > best[3]:
            best = result
    if best is None:
        return None
    name, scorer, event, value, rates, cal, s1 = best
    n_sel0, n_sel1 = cal[2], cal[4]
    if n_test >= TRUST_FROM * n_sel0:
        trusted = calibration_rates(cal, n_test0=SELECTION_TRUST * n_sel0, n_test1=SELECTION_TRUST * n_sel1,
                                    confidence=confidence, nested=True)
        event = cert.choose(trusted)
        value = cert.value(rates, event)
    chosen = certificate
    if poisson and cert.pure:
        # The certificate's variant for the chosen event (the Poisson test: one exact test of the ratio in
        # place of two intervals), when it would certify more.  Distinguishers are ranked by the intervals'
        # value: the Poisson test's smaller penalty on rare events let calibration noise pick the
        # distinguisher (docs/decisions/event-selection.md).
        inequality, p_value = rates.poisson_value(event)
        variant = certificate.poisson_variant(inequality)
        if variant is not None and p_value > value:
            chosen = variant
    alt = cert.choose_other_tail(rates, event, ratio=TAIL_RATIO) if tails and chosen is certificate else None
    extras = {}
    if full:
        extras = dict(gdp_event=rates.choose(gdp=True),
                      profile_events=tuple(rates.choose(delta=d) for d in DEFAULT_DELTAS),
                      roc_events=tuple(roc_thresholds(s1, reverse=event.reverse)))
    own = chosen.choose_event(rates)
    return ChosenTest(name, scorer, event, value, chosen, event if own is None else own, alt_event=alt, **extras)


def _fit_in_threads(candidate, names, threads: int) -> list:
    """``[candidate(n) for n in names]``, ``threads`` at a time, the costliest first (:data:`FIT_COST`).

    The costliest start first, so that two long fits do not end the pool together; each thread's BLAS keeps to
    one core: two threads each running BLAS on both cores fought over them
    (docs/decisions/calibration-cost.md).  On Ctrl-C the fits not started are dropped and the running ones
    not awaited, so that the finished rounds are reported at once, as with one thread (waiting for every
    fit took 9 s at 2,000 coordinates, long enough for a second Ctrl-C, which loses the report).
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


def _halves(pool):
    """(fitting half, selection half) of the calibration pool, each a (D, D') pair of views."""
    n_fit = len(pool[0]) // 2
    return (pool[0][:n_fit], pool[1][:n_fit]), (pool[0][n_fit:], pool[1][n_fit:])


# Releases of any finite magnitude are valid (1e300 overflows a square): the candidates' arithmetic may overflow
# and yield non-finite scores, which selection ranks like any other; numpy's warnings about it would stop an
# assert_dp run under warnings-as-errors without changing a number.
_QUIET_FLOATS = {"over": "ignore", "invalid": "ignore", "divide": "ignore", "under": "ignore"}


@np.errstate(**_QUIET_FLOATS)
def _calibrate(pool, *, attack, ideal, kind, cert, confidence, n_test=0, threads=1, certificate=None):
    """Fit and choose on the calibration pool: the distribution test and, when it adds something, a float test."""
    fit, _ = _halves(pool)
    if attack == "auto":
        names = auto_choices(kind, fit[0])
        if kind != "scalar" and "threshold" in names and np.asarray(fit[0]).ndim > 1:
            names = tuple(n for n in names if n != "threshold")
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


def _held_out_total(plan, r: int) -> int:
    """Releases per side the events chosen at round ``r`` will be counted on: its own and the
    following rounds' that draw no new calibration data."""
    total = plan[r].n_test
    for step in plan[r + 1:]:
        if step.n_calibration:
            break
        total += step.n_test
    return total


def _poisson_sizes(entropy: int, test_phase: tuple, n_test: int) -> tuple[int, int]:
    """The Poisson-sized held-out sets of one round: (N0, N1), drawn from the seed before any release."""
    # Spawn keys of chunks start with the side (0 or 1); 7 keeps this stream apart.
    gen = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(7, *test_phase)))
    n0, n1 = gen.poisson(poisson_held_out_mean(n_test), size=2)
    return int(n0), int(n1)


def _count(sampler, tests, *, n_test, test_phase, entropy, previous=None, previous_poisson=None):
    """Held-out counts of every event of ``tests`` (added to ``previous`` counts of the same events).

    When a test's certificate reads Poisson-sized held-out sets, its events are
    also counted on Poisson-sized prefixes of the held-out releases (the second
    item, else None); sums of independent Poisson counts are Poisson, so those
    add up over rounds too.
    """
    scorers = [t.scorer for t in tests]
    thresholds = [[e.threshold for e in t.events()] for t in tests]
    extra = 0
    if any(t.certificate.poisson_sized for t in tests):
        sizes = _poisson_sizes(entropy, test_phase, n_test)
        extra = max(0, max(sizes) - n_test)  # a Poisson size above n_test (probability ~3e-5) draws more
        counts, pcounts = sampler.count(test_phase, n_test, scorers, thresholds, prefix=sizes)
        if previous_poisson is not None:
            pcounts = [a + b for a, b in zip(previous_poisson, pcounts)]
    else:
        counts, pcounts = sampler.count(test_phase, n_test, scorers, thresholds), None
    if previous is not None:
        counts = [a + b for a, b in zip(previous, counts)]
    return tuple(counts), (None if pcounts is None else tuple(pcounts)), extra


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
                  estimator=None, cert) -> CertifiedRound:
    """Round ``r``'s results from its held-out counts: each test's certificate's result on its event, all at
    ``confidence`` (shared with a float test), and the extras the report shows (GDP mu, profile, ROC)."""
    # Two held-out tests share the failure probability; one keeps all of it.
    conf = 1.0 - (1.0 - confidence) / (2 if float_test is not None else 1)
    claim = cert.claim
    # The stopping rules follow the event's interval bound on all held-out counts (it covers the
    # inequality a Poisson test certifies, so the two move together).
    if test.alt_event is not None:
        test, tracked, result = _better_tail(test, counts[0], claim, delta=delta, confidence=conf)
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
        gdp=GaussianDP().bound(counts[0], test.gdp_event, delta=delta, confidence=conf),
        profile=tuple(profile_from_counts(counts[0], test.profile_events, DEFAULT_DELTAS, confidence=conf)),
        roc=roc_from_counts(counts[0], test.roc_events), counts=tuple(counts),
        poisson_counts=None if pcounts is None else tuple(pcounts), float_test=float_test,
        float_result=float_result, float_bound=float_bound)


def _better_tail(test, counts, claim, *, delta, confidence):
    """(the test with the better of its two events as ``event``, that event's interval bound, its certificate's
    result): each event certified at half the failure probability, so both hold at once and the better
    (against the claim) may be kept.  A certificate that reads its own event (GDP) leaves the choice to the
    intervals and certifies its event at the full share."""
    each = 1.0 - (1.0 - confidence) / 2
    ranker = test.certificate if test.certified_event == test.event else ClopperPearson()
    events = (test.event, test.alt_event)
    results = [ranker.certify(EventCounts.at(counts, e), claim, confidence=each, delta=delta) for e in events]
    # Ranked as the rounds are (_retarget): by the margin over the claim, else by the share of it certified.
    keep = max((0, 1), key=lambda i: (results[i].as_bound_against(1.0), -i))
    test = replace(test, event=events[keep], certified_event=events[keep]
                   if test.certified_event == test.event else test.certified_event)
    tracked = ClopperPearson().bound(counts, events[keep], delta=delta, confidence=each)
    if ranker is not test.certificate:
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


def _retarget(rd: CertifiedRound, epsilon: float, delta: float) -> tuple[float, float]:
    """The reported point of the round's decisive test, when its claimed epsilon is finite."""
    t = max(rd.tests(), key=lambda t: t.as_bound_against(epsilon))
    if np.isfinite(t.claimed_epsilon):
        return float(t.claimed_epsilon), float(t.delta)
    return epsilon, delta


# ----------------------------------------------------------------------------- the audit
def _probe(tgt, dataset, entropy, timeout) -> np.ndarray:
    """The target's first releases (:func:`probe_releases`); Ctrl-C there leaves nothing certified."""
    try:
        return probe_releases(tgt, dataset, entropy, timeout=timeout)
    except KeyboardInterrupt as exc:
        exc.audit_report = None  # interrupted in the target's first call: nothing drawn, nothing certified
        raise


def _grey_box(args: dict) -> AuditReport:
    """:func:`audit` with ``grey_box=True``: the black-box audit wrapped by :mod:`dpaudit.greybox`."""
    from ..greybox.audit import audit_grey_box

    options = {k: v for k, v in args.items() if k not in ("target", "dataset", "neighbor", "grey_box", "traces",
                                                          "sensitivity")}
    return audit_grey_box(audit, args["target"], args["dataset"], args["neighbor"], resolve_pair=_resolve_pair,
                          traces=args["traces"], sensitivity=args["sensitivity"], **options)


def audit(
    target,
    dataset=None,
    neighbor=None,
    *,
    epsilon=None,
    delta=0.0,
    claim=None,
    samples=None,
    max_samples=None,
    time_budget=None,
    confidence=0.95,
    seed=None,
    attack="auto",
    ideal=False,
    n_jobs=1,
    backend="loky",
    scheduler=None,
    estimator="clopper-pearson",
    calibration_fraction=0.5,
    calibration_cap=DEFAULT_CALIBRATION_CAP,
    chunk_size=DEFAULT_CHUNK_SIZE,
    timeout=None,
    progress=None,
    stop_when_converged=True,
    on_round=None,
    keep_drawing=False,
    grey_box=False,
    traces=1000,
    sensitivity=None,
    stopping="planned",
) -> AuditReport:
    """Audit a mechanism on one pair of neighbouring datasets.

    Parameters
    ----------
    target : str or callable
        ``"package.module:attr"``, ``"path/file.py:attr"``, a built-in
        mechanism name or object, or any callable ``f(dataset)`` returning one
        release (a number or a 1-D array); it may accept ``size`` (many
        releases at once, much faster) and ``rng`` (a numpy Generator).
    dataset, neighbor : array_like or str, optional
        The neighbouring pair: arrays, JSON array literals or paths to
        ``.json``, ``.npy`` or ``.csv`` files.  Omitted for a built-in
        mechanism, its own stress pair is used.
    epsilon, delta : float
        The claimed budget (a point; omit them when ``claim`` is given).
    claim : str, Claim or dp_accounting DpEvent, optional
        A claimed privacy curve instead of a point: ``"gdp:mu=MU"``,
        ``"dpsgd:noise=SIGMA,rate=Q,steps=T"``, ``"profile:FILE.json"``,
        ``"eps:EPS[,delta=DELTA]"``, a :class:`dpaudit.claims.Claim` or a
        ``DpEvent`` (see :mod:`dpaudit.claims`).  The verdict is a violation
        when some certified (epsilon, delta) lies above the curve, at
        ``confidence`` for the whole curve; giving ``epsilon`` too is an error.
    samples : int, optional
        A fixed-size audit of exactly ``samples`` releases per side.  Without
        it the audit is sequential: rounds of growing size until a violation
        is certified, more samples could not change the verdict, or the budget
        is spent.
    max_samples : int, optional
        Budget of a sequential audit in releases per side: 1,000,000 for
        targets that take ``size``, 20,000 for targets called once per release.
    time_budget : float, optional
        Seconds a sequential audit may take; no round starts that would
        probably overrun it.
    confidence : float
        Probability that the reported bound is below the true epsilon.
    seed : int, optional
        Seed of all randomness; drawn and reported when not given.
    attack : str
        ``"auto"`` or a name from :func:`dpaudit.attacks.list_attacks`.
    ideal : bool
        Audit the mechanism as mathematics: no floating-point attacks.
    n_jobs : int
        Worker processes; the result does not depend on it.
    backend : {"loky", "dask"}
        Where chunks are drawn and counted: loky processes on this machine, or
        a Dask cluster.  Same chunks, same seeds, so the same report.
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:8786``; implies ``backend="dask"``);
        without it ``backend="dask"`` starts a local cluster for the audit.
    estimator : {"clopper-pearson", "gdp"}
        ``"clopper-pearson"`` (default) certifies epsilon for any mechanism.
        ``"gdp"`` certifies a Gaussian-DP mu (valid for any mechanism) and
        reports the epsilon(delta) of a Gaussian mechanism with that mu: a
        valid bound only for mechanisms whose trade-off curve is Gaussian
        (Nasr et al. 2023); it needs ``delta > 0``.
    calibration_fraction : float
        Share of a round's releases used to fit the distinguisher and choose the event.
    calibration_cap : int
        Most calibration releases kept per side; releases beyond it are only
        counted, so memory does not grow with ``samples``.
    chunk_size : int
        Releases per chunk; part of the reproducibility key with the seed.
    timeout : float, optional
        Seconds allowed per target call.
    progress : bool or "lines", optional
        Progress bars on stderr; default: when the audit is long and stderr is
        a terminal, or ``DPAUDIT_PROGRESS`` says 1 (0: never).  ``"lines"``:
        no bar, one plain line every 30 s once 10 s have passed (for a log).
    stop_when_converged : bool
        False: a sequential audit stops only on a violation or its budget,
        never as "converged" (:func:`dpaudit.search` when its screening
        expects a violation).  Valid either way: the bound holds at every round.
    on_round : callable, optional
        Called after each finished round of a sequential audit with a
        :class:`~dpaudit._progress.RoundProgress` (round, samples, bound so
        far, seconds); ``dpaudit audit`` prints it as a line when stderr is
        not a terminal.  It only watches: what it does cannot change the report.
    keep_drawing : bool
        True: a sequential audit that certifies a violation draws on to its
        budget (``max_samples`` or ``time_budget``) for a tighter bound,
        where by default it stops at once; ``stopping_reason`` is then
        "budget".  Valid either way: every planned round's bound holds at
        once, and the largest of those drawn is reported.
    grey_box : bool
        Also audit grey-box (:mod:`dpaudit.greybox`): record the target's draws
        from ``rng`` on ``dataset``, replay them coupled on ``neighbor``, and
        report findings and an upper bound on the pair's epsilon
        (``report.grey_box``); an exact upper bound above the claim is a
        violation too (``violation_source``).  The target must take ``rng``.
    traces : int
        Traces of the grey-box analysis.
    sensitivity : float, optional
        Declared sensitivity the grey-box analysis checks the noise locations'
        moves against (default: a built-in mechanism's own).
    stopping : {"planned", "anytime"}
        How a sequential audit may stop.  ``"planned"``: rounds doubling from
        2,000 releases per side (200 for a per-call target), the failure
        probability shared among them.  ``"anytime"``: batches of 10 per side
        and a look after each, certified by e-processes, so the bound holds
        whenever the audit stops (Ctrl-C and the time budget included); it
        catches gross violations after tens to hundreds of releases, runs no
        floating-point attacks and reports no privacy profile (see
        ``docs/sequential.md``).  It takes no ``samples``.

    Returns
    -------
    AuditReport

    Raises
    ------
    KeyboardInterrupt
        Passed on as raised (the round being drawn is dropped).  Its
        ``audit_report`` attribute is the report of the sequential rounds
        already finished (``interrupted=True``, ``stopping_reason="budget"``),
        valid at the stated confidence like any round's; None when no round
        finished or the audit is fixed-size (a fixed-size bound holds only at
        its planned size, so nothing is certified).

    Examples
    --------
    >>> import numpy as np
    >>> def laplace_count(dataset, size=None, rng=None):
    ...     return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)
    >>> r = audit(laplace_count, [0, 1], [0, 0], epsilon=1.0, samples=200_000, seed=1, ideal=True)
    >>> r.verdict, 0.9 < r.epsilon_lower_bound <= 1.0, r.stopping_reason
    ('no violation found', True, 'fixed')
    """
    if AUDIT_OPTIONS["grey_box"].check(grey_box, "grey_box"):
        return _grey_box(dict(locals()))
    t_start = time.perf_counter()
    (epsilon, delta, confidence, samples, max_samples, time_budget, attack, ideal, n_jobs, backend, scheduler,
     calibration_fraction, calibration_cap, chunk_size, timeout, keep_drawing,
     stopping) = AUDIT_OPTIONS.check(locals(), *_CHECKED)
    claim_given = claim
    claim, cert, est = resolve_claim(claim, epsilon, delta, estimator)
    # The point the per-delta extras (GDP event, sequential planning) start from: the claim's
    # own for a point, a point of the curve (updated after the first round) for a curve.
    epsilon, delta = claim.finite_point
    from ..targets import load_target

    tgt = load_target(target)
    pair = _resolve_pair(tgt, dataset, neighbor)
    vectorised = bool(getattr(tgt, "vectorised", False))
    entropy = seed_entropy(as_seed_sequence(seed))
    # Wide releases (a 10,000-bin histogram, a model's weights) get shorter chunks and a smaller calibration pool.
    probe = _probe(tgt, pair[0], entropy, timeout)
    chunk_size, calibration_cap = memory_limits(release_bytes(probe), chunk_size, calibration_cap)
    if stopping == "anytime":
        return _anytime(tgt, pair, probe, claim, claim_given, est, samples, confidence=confidence, entropy=entropy,
                        max_samples=max_samples, time_budget=time_budget, attack=attack, n_jobs=n_jobs,
                        backend=backend, scheduler=scheduler, chunk_size=chunk_size, timeout=timeout,
                        t_start=t_start, on_round=on_round)
    plan, tracker, max_samples = _plan(samples, max_samples, time_budget, vectorised=vectorised,
                                       calibration_fraction=calibration_fraction, calibration_cap=calibration_cap,
                                       epsilon=epsilon, delta=delta, confidence=confidence,
                                       stop_when_converged=bool(stop_when_converged), keep_drawing=keep_drawing)
    total_planned = sum(p.n_calibration + p.n_test for p in plan)
    if progress is None:
        # DPAUDIT_PROGRESS=1/0 overrides the terminal test, as for every other bar.
        progress = progress_wanted(None) and (total_planned > 4 * chunk_size or not vectorised)
    sampler = Sampler(tgt, pair, entropy=entropy, chunk_size=chunk_size, n_jobs=all_cores(n_jobs), timeout=timeout,
                      progress=progress if progress == LINES else bool(progress), in_process=_is_builtin(tgt),
                      executor=Executor(all_cores(n_jobs), backend, scheduler),
                      deadline=_deadline(time_budget, t_start), shape=probe.shape[1:])
    run = _Run(sampler, plan, tracker, attack=attack, ideal=bool(ideal), cert=cert, est=est, entropy=entropy,
               epsilon=epsilon, delta=delta, confidence=confidence, t_start=t_start,
               reason="fixed" if samples is not None else "budget", on_round=on_round,
               curve=claim.is_curve)
    settings = dict(attack=attack, ideal=bool(ideal), est=est, confidence=confidence, entropy=entropy,
                    claim=None if claim_given is None else (claim_given if isinstance(claim_given, str) else
                                                            claim.spec),
                    max_samples=max_samples, t_start=t_start, time_budget=time_budget)
    try:
        run.rounds_until_stop()
    except KeyboardInterrupt as exc:
        # Not swallowed: the same KeyboardInterrupt goes on, carrying what the finished rounds certified.
        exc.audit_report = run.report(tgt, sampler.shape, interrupted=True, **settings) \
            if run.rounds and tracker is not None else None
        raise
    finally:
        sampler.close()
    report = run.report(tgt, sampler.shape, **settings)
    notes = [n for n in (replaced_record_note(claim, *pair) or non_neighbour_note(*pair), ceiling_note(report)) if n]
    return replace(report, notes=[*report.notes, *notes]) if notes else report


def _anytime(tgt, pair, probe, claim, claim_given, est, samples, *, confidence, entropy, max_samples, time_budget,
             attack, n_jobs, backend, scheduler, chunk_size, timeout, t_start, on_round):
    """The anytime-valid audit (:mod:`dpaudit.auditor.anytime_report`) on the package's sampler."""
    from .anytime_report import anytime_audit

    if samples is not None:
        raise ParameterValueError("stopping: an anytime audit (--stopping anytime) takes no samples; give "
                                  "max_samples (and time_budget) instead")

    if type(est) is not ClopperPearson:  # e-processes certify it: no certificate of counts to choose
        raise ParameterValueError(f"estimator: an anytime audit is certified by e-processes; got {est.name!r} "
                                  "(leave estimator out, or use stopping='planned')")
    vectorised = bool(getattr(tgt, "vectorised", False))
    if max_samples is None:
        max_samples = DEFAULT_SAMPLES_VECTORISED if vectorised else DEFAULT_SAMPLES_PER_CALL
    kind = output_kind(np.asarray(probe))
    sampler = Sampler(tgt, pair, entropy=entropy, chunk_size=chunk_size, n_jobs=all_cores(n_jobs), timeout=timeout,
                      progress=False, in_process=_is_builtin(tgt), executor=Executor(all_cores(n_jobs), backend,
                                                                                      scheduler),
                      deadline=_deadline(time_budget, t_start), shape=probe.shape[1:])
    try:
        report = anytime_audit(sampler, tgt, claim=claim, claim_given=claim_given, confidence=confidence,
                               entropy=entropy, max_samples=max_samples, time_budget=time_budget, attack=attack,
                               t_start=t_start, deadline=_deadline(time_budget, t_start), kind=kind, probe=probe,
                               on_round=on_round)
    finally:
        sampler.close()
    notes = [n for n in (replaced_record_note(claim, *pair) or non_neighbour_note(*pair),) if n]
    return replace(report, notes=[*report.notes, *notes]) if notes else report


def ceiling_note(report) -> str | None:
    """A note when the claim is above what the audit's sample size could certify at all: its "no violation" is no
    evidence (a classic Gaussian at epsilon 10, truly 14.7, passed ``assert_dp`` at a ceiling of 9.4, and nothing
    said that no size of this order could have caught it).  The ceiling grows about as ``ln`` of the samples."""
    if report.violation or not report.ceiling < report.claimed_epsilon:
        return None
    return (f"the claimed epsilon {report.claimed_epsilon:.4g} is above the ceiling {report.ceiling:.4g}, the most "
            f"these samples could certify: no violation could have been found; the ceiling grows about as ln(samples)")


def _deadline(time_budget, t_start: float) -> float | None:
    """The wall-clock time (``time.time()``, which worker processes share) at which ``time_budget`` ends."""
    if time_budget is None:
        return None
    return time.time() + time_budget - (time.perf_counter() - t_start)


def _no_round_in_budget(time_budget: float, step, target) -> str:
    per_call = "" if getattr(target, "vectorised", False) else ", called once per release"
    return (f"time_budget: {time_budget:g} s (--time-budget) ran out before the first round of the sequential audit "
            f"was drawn ({step.n_calibration + step.n_test} releases per side of target {target.name!r}{per_call}), "
            "so nothing is certified; allow more time, or give a smaller fixed --samples")


def _plan(samples, max_samples, time_budget, *, vectorised, calibration_fraction, calibration_cap, epsilon, delta,
          confidence, stop_when_converged=True, keep_drawing=False):
    """(rounds, sequential tracker or None, sample budget): one round for a fixed audit, else a schedule."""
    if samples is not None:
        if max_samples is not None or time_budget is not None or keep_drawing:
            raise ParameterValueError("samples fixes the audit's size; max_samples, time_budget and keep_drawing "
                                      "are for sequential audits (leave samples out)")
        n_cal = min(max(int(round(samples * calibration_fraction)), 10), samples - 10, calibration_cap)
        return [sequential.RoundPlan(n_cal, samples - n_cal, _CAL, _TEST)], None, max_samples
    if max_samples is None:
        max_samples = DEFAULT_SAMPLES_VECTORISED if vectorised else DEFAULT_SAMPLES_PER_CALL
    sched, plan = sequential.schedule(max_samples, vectorised=vectorised, calibration_fraction=calibration_fraction,
                                      calibration_cap=calibration_cap, cal_phase=_cal_phase, test_phase=_test_phase)
    # The statistics core owns the rounds' confidence and the stopping rules.
    tracker = SequentialBound(schedule=sched, epsilon=epsilon, delta=delta, confidence=confidence,
                              time_budget=time_budget, stop_when_converged=stop_when_converged,
                              stop_on_violation=not keep_drawing)
    return plan, tracker, max_samples


class _Run:
    """One audit's rounds: calibrate on the growing pool, count held out, certify, ask the tracker whether to stop."""

    def __init__(self, sampler, plan, tracker, *, attack, ideal, cert, est, entropy, epsilon, delta, confidence,
                 t_start, reason, on_round=None, curve=False):
        self.sampler, self.plan, self.tracker, self.on_round = sampler, plan, tracker, on_round
        self.curve = curve  # a claimed curve: the point the rounds are reported at moves, so progress names its delta
        self.attack, self.ideal, self.cert, self.est, self.entropy = attack, ideal, cert, est, entropy
        self.epsilon, self.delta, self.t_start, self.reason = epsilon, delta, t_start, reason
        self.confidence = tracker.round_confidence if tracker is not None else confidence
        # Candidates are fitted here, on this machine: as many at once as the local workers (1 on Dask).
        self.threads = sampler.executor.n_jobs if sampler.executor._dask is None else 1
        self.pool: list = [None, None]
        self.kind = None
        self.test = self.float_test = None
        self.rounds: list[CertifiedRound] = []
        self.updates: list[dict] = []  # each round's counts for the tracker, replayed when its point moves
        self.drawn = 0

    def report(self, tgt, shape, *, interrupted: bool = False, **settings) -> AuditReport:
        """The report of the rounds finished so far (``interrupted``: the round being drawn was dropped).

        Valid at any round: each round's bound was certified at the round confidence of the
        schedule fixed before drawing (:mod:`dpaudit.stats.sequential`), so by the union bound every
        planned round's bound holds at once with probability ``confidence``, and the largest of the
        finished ones is valid whatever stopped the audit, a person's Ctrl-C included.
        """
        return build_report(tgt, self.rounds, self.kind, shape, reason=self.reason, epsilon=self.epsilon,
                            drawn=self.rounds[-1].samples, interrupted=interrupted, **settings)

    def rounds_until_stop(self) -> None:
        """Draw and certify rounds until a stopping rule (or the one round of a fixed audit) says stop.

        A ``KeyboardInterrupt`` goes through untouched; the caller reports the rounds already finished
        (:meth:`report`), dropping the one being drawn, as a time budget that runs out mid-round does.
        """
        for r, step in enumerate(self.plan):
            t_round = time.perf_counter()
            self.sampler.stage = f"round {r + 1} of {len(self.plan)}: " if len(self.plan) > 1 else ""
            try:
                rd, same_event = self._round(r, step)
            except TimeBudgetSpent:
                # A look at a size chosen by the clock is not covered: the last completed round is the result.
                if not self.rounds:
                    raise ParameterValueError(_no_round_in_budget(self.tracker.time_budget, step,
                                                                  self.sampler.target)) from None
                self.reason = "budget"
                return
            self.rounds.append(rd)
            if self.tracker is None:
                return
            stop = self._track(r, step, rd, same_event, round_seconds=time.perf_counter() - t_round)
            if self.on_round is not None:
                self.on_round(RoundProgress(round=r + 1, rounds_planned=len(self.plan), samples=rd.samples,
                                            epsilon_lower_bound=self.tracker.epsilon_lower_bound,
                                            claimed_epsilon=self.epsilon,
                                            elapsed_seconds=time.perf_counter() - self.t_start,
                                            claimed_delta=self.delta if self.curve else None,
                                            samples_planned=sum(p.n_calibration + p.n_test for p in self.plan),
                                            time_budget=self.tracker.time_budget))
            if stop is not None:
                self.reason = stop
                return

    def _round(self, r, step) -> tuple[CertifiedRound, bool]:
        previous = previous_poisson = None
        if step.n_calibration or not self.rounds:
            x0, x1 = self.sampler.draw(step.cal_phase, step.n_calibration)
            self.pool = [x if p is None else np.concatenate([p, x]) for p, x in zip(self.pool, (x0, x1))]
            if self.kind is None:
                self.kind = output_kind(np.concatenate([self.pool[0][:10_000], self.pool[1][:10_000]]))
            self.test, self.float_test = _calibrate(self.pool, attack=self.attack, ideal=self.ideal, kind=self.kind,
                                                    cert=self.cert, confidence=self.confidence,
                                                    n_test=_held_out_total(self.plan, r), threads=self.threads,
                                                    certificate=self.est)
        else:
            # No new calibration data: the events stay, so their held-out counts add up.
            previous, previous_poisson = self.rounds[-1].counts, self.rounds[-1].poisson_counts
        tests = [self.test] + ([self.float_test] if self.float_test is not None else [])
        counts, pcounts, extra = _count(self.sampler, tests, n_test=step.n_test, test_phase=step.test_phase,
                                        entropy=self.entropy, previous=previous, previous_poisson=previous_poisson)
        self.drawn += step.n_calibration + step.n_test + extra
        rd = certify_round(r, self.drawn, len(self.pool[0]), self.test, self.float_test, counts, pcounts,
                           delta=self.delta, confidence=self.confidence, cert=self.cert)
        return rd, previous is not None

    def _track(self, r, step, rd, same_event, *, round_seconds) -> str | None:
        # The tracker plans at the point of the claim this round came closest to (a point claim's own
        # point; for a curve it moves with the event, so that futility is judged where the event is
        # strongest).  It is fed each round's certified bound against that point, the one the verdict
        # reads (Poisson certificate, float leak and their shares of the failure probability included),
        # which exceeds its epsilon exactly when some point of the claim is violated, so it stops on
        # "violation" exactly when the report says "violation"; the main event's counts only plan the
        # rest (its reachable bound).  When the point moves, the rounds so far are replayed against it.
        self.epsilon, self.delta = _retarget(rd, self.epsilon, self.delta)
        self.updates.append(dict(tp=rd.tracked.tp, fp=rd.tracked.fp, samples=step.cumulative, counted=rd.n_test,
                                 same_event=same_event,
                                 projected=sequential.held_out_at_budget(self.plan, r, rd.n_test)))
        tracker = replace(self.tracker, epsilon=self.epsilon, delta=self.delta, trajectory=())
        for done, kw in zip(self.rounds, self.updates):
            tracker = tracker.update(**kw, certified=done.bound_against(self.epsilon, self.delta))
        self.tracker = tracker
        nxt = self.plan[r + 1] if r + 1 < len(self.plan) else None
        next_seconds = None if nxt is None else round_seconds * (nxt.n_calibration + nxt.n_test) / max(
            step.n_calibration + step.n_test, 1)
        stop = self.tracker.stopping_reason(elapsed_seconds=time.perf_counter() - self.t_start,
                                            next_round_seconds=next_seconds)
        if stop == "converged" and any(p.n_calibration for p in self.plan[r + 1:]):
            # "Converged" judges this round's event; while the calibration pool
            # still grows, a later round may choose a far better one (an SVT leak
            # can hide from an event chosen on a few thousand releases).
            return None
        return stop


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
    fpr, tpr = best.roc
    return AuditReport(
        epsilon_lower_bound=float(bound), claimed_epsilon=float(claimed_epsilon), claimed_delta=float(delta),
        confidence=confidence, samples=drawn, attack=best.test.name if attack == "auto" else attack, seed=entropy,
        verdict=verdict_of(any(rd.violation() for rd in rounds)),
        ceiling=best.ceiling, estimator=est.name, target=str(tgt.name), seeded=bool(getattr(tgt, "seeded", True)),
        output_kind=kind, output_shape=list(shape or ()),
        event=best.test.event.describe(), threshold=best.test.event.threshold,
        direction=f"{main.direction}, {main.event}",
        tp=main.tp, fn=main.fn, fp=main.fp, tn=main.tn, tpr=main.tpr, fpr=main.fpr,
        tpr_interval=list(main.tpr_interval()), fpr_interval=list(main.fpr_interval()),
        n_calibration=best.n_calibration, n_test=best.n_test, gdp_mu_lower_bound=best.gdp.mu_lower_bound,
        privacy_profile={"delta": list(DEFAULT_DELTAS), "epsilon": list(best.profile),
                         "simultaneous": True, "confidence": confidence},
        roc={"fpr": fpr.tolist(), "tpr": tpr.tolist()},
        posterior={"prior": 0.5, "low": post.low, "high": post.high, "claimed_high": claim_post.high},
        explanation=explanation, notes=_notes(tgt, est, main, floating, dist_bound, interrupted, len(rounds)),
        rounds=len(rounds), interrupted=bool(interrupted),
        stopping_reason=reason, max_samples=max_samples, time_budget=time_budget,
        trajectory=_trajectory(rounds, delta),
        floating_point=floating, distribution_epsilon_lower_bound=float(dist_bound), ideal=ideal,
        certificate=main.method, version=__version__, elapsed_seconds=round(time.perf_counter() - t_start, 4),
        claim=claim,
        curve_violation=None if not decisive.violation else {
            **decisive.curve_violation(), "confidence": confidence},  # every round's test holds at once
        claim_curve=decisive.curve(),
    )


def _floating_section(rounds, delta: float) -> dict | None:
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
    return {"attack": test.name, "epsilon_lower_bound": curve.certified_at(delta), "event": test.event.describe(),
            "tp": fb.tp, "fp": fb.fp, "n_test": fb.n0, "ceiling": fb.ceiling,
            # what the summary's float block shows: the rest of the counts, the rates and the inequality certified
            "fn": fb.fn, "tn": fb.tn, "tpr_interval": list(fb.tpr_interval()), "fpr_interval": list(fb.fpr_interval()),
            "direction": f"{fb.direction}, {fb.event}", "certificate": fb.method}


def _notes(tgt, est, main, floating, dist_bound: float, interrupted: bool = False, rounds: int = 1) -> list[str]:
    notes = []
    if interrupted:
        notes.append(f"interrupted: the audit was stopped by hand during round {rounds + 1}, which is dropped; "
                     f"this report covers the {rounds} round{'s' * (rounds != 1)} finished, and its bound holds "
                     "at the stated confidence, as at any round of a sequential audit")
    if est.caveat:
        notes.append(est.caveat)
    if floating is not None and floating["epsilon_lower_bound"] > dist_bound:
        notes.append(f"the bound is the floating-point test's ({floating['attack']}), from which bit patterns the "
                     "releases can take; audit with ideal=True / --ideal to check the mathematics only")
    if not getattr(tgt, "seeded", True):
        notes.append("the target takes no rng: its randomness is its own, so this audit is not reproducible")
    if main.epsilon_lower_bound >= main.ceiling - 1e-9 and est.name == "clopper-pearson":
        notes.append("the bound reached the sample-size ceiling: more samples could certify more")
    return notes


def _trajectory(rounds, delta: float) -> dict:
    """The running best certified epsilon at ``delta`` after each round."""
    running, trajectory = 0.0, {"samples": [], "epsilon_lower_bound": []}
    for rd in rounds:
        running = max(running, *(t.certified_at(delta) for t in rd.tests()))
        trajectory["samples"].append(rd.samples)
        trajectory["epsilon_lower_bound"].append(running)
    return trajectory
