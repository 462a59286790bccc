"""A second, rarer event on large held-out sets (calibrate.RARE_TRUST): chosen on calibration data, both events
certified at half the failure probability each, the better kept (certify.certify_round)."""

import numpy as np
import pytest

import dpaudit
from dpaudit.auditor import pipeline
from dpaudit.auditor.certify import certify_round
from dpaudit.claims import PointClaim
from dpaudit.mechanisms import get_mechanism
from dpaudit.stats.certificate import ClopperPearson, EventCounts, PoissonConditional
from dpaudit.stats.curves import CurveCertificate
from dpaudit.stats.estimators import HeldOutCounts


def _pool(seed, n=40_000):
    rng = np.random.default_rng(seed)
    return rng.normal(1.0, 1.0, size=n), rng.normal(0.0, 1.0, size=n)


def _choose(seed, n_test, full=False, **kw):
    # The threshold has nothing to fit: it chooses on the whole pool, so the selection data is all 40,000.
    return pipeline.choose_test(("threshold",), _pool(seed), delta=0.0, confidence=0.95, full=full, n_test=n_test,
                                **kw)


def test_no_second_event_below_trust_from_or_in_a_score_audit():
    """Below TRUST_FROM times the selection data, and for the score audit (``tails``), no rarer event is added."""
    for seed in range(5):
        assert _choose(seed, pipeline.TRUST_FROM * 40_000 - 1).alt_event is None
        # The score audit's second event is the other tail's (choose_other_tail), never a rarer one.
        tails = _choose(seed, pipeline.TRUST_FROM * 40_000, poisson=False, tails=True)
        assert tails.alt_certificate is None


def test_second_event_is_nested_inside_the_first():
    """A Gaussian shift's log ratio grows into both tails: the second event reads the same inequality further out
    in the same tail (a larger threshold for "score >= t" with t in the upper tail, a smaller one where the
    complement "score < t" is read), and it is present on several of ten seeds (deterministic given the seeds)."""
    present = 0
    for seed in range(10):
        t = _choose(seed, pipeline.TRUST_FROM * 40_000)
        if t.alt_event is None:
            continue
        present += 1
        assert t.alt_event.reverse == t.event.reverse
        assert isinstance(t.alt_certificate, (ClopperPearson, PoissonConditional))
        if t.event.threshold > 0:
            assert t.alt_event.threshold > t.event.threshold, seed
        else:
            assert t.alt_event.threshold < t.event.threshold, seed
    assert present >= 3, present


@pytest.mark.parametrize("poisson", [False, True])
def test_the_better_event_is_kept_each_at_half_the_failure_probability(poisson):
    """certify_round's result is the larger of the two events' certificates at half the failure probability each."""
    seed = next(s for s in range(10) if _choose(s, pipeline.TRUST_FROM * 40_000, poisson=poisson).alt_event)
    test = _choose(seed, pipeline.TRUST_FROM * 40_000, full=True, poisson=poisson)
    rng = np.random.default_rng(100 + seed)
    h0, h1 = rng.normal(1.0, 1.0, size=320_000), rng.normal(0.0, 1.0, size=320_000)
    thresholds = [e.threshold for e in test.events()]
    counts = HeldOutCounts.from_scores(thresholds, h0, h1)
    pcounts = HeldOutCounts.from_scores(thresholds, h0[:319_000], h1[:321_000])
    cert = CurveCertificate(PointClaim(1.0, 0.0))
    rd = certify_round(0, 360_000, 40_000, test, None, [counts], [pcounts] if poisson else None, delta=0.0,
                       confidence=0.95, cert=cert)
    each = []
    for event, certificate in ((test.event, test.certificate), (test.alt_event, test.alt_certificate)):
        held = pcounts if certificate.poisson_sized else counts
        each.append(certificate.certify(EventCounts.at(held, event), cert.claim, confidence=0.975, delta=0.0))
    best = max(each, key=lambda r: r.epsilon_lower_bound)
    assert rd.result.epsilon_lower_bound == pytest.approx(best.epsilon_lower_bound)
    assert rd.result.epsilon_lower_bound > 0
    kept = (test.event, test.alt_event)[each.index(best)]
    assert rd.test.event == kept and rd.test.alt_certificate is None
    assert rd.tracked.confidence == pytest.approx(0.975)


def test_audit_notes_the_second_event():
    """An audit whose held-out set is many times its calibration data says when two events were certified."""
    mech = get_mechanism("laplace")
    noted = [any(n == pipeline.RARE_EVENT_NOTE for n in dpaudit.audit(
        mech, epsilon=mech.claim.point_epsilon, samples=40_000, calibration_cap=2_000, seed=seed, ideal=True).notes)
        for seed in range(4, 8)]
    assert any(noted), noted
    plain = dpaudit.audit(mech, epsilon=mech.claim.point_epsilon, samples=40_000, seed=0, ideal=True)
    assert pipeline.RARE_EVENT_NOTE not in plain.notes


@pytest.mark.soundness
@pytest.mark.parametrize("name", ["laplace", "geometric"])
def test_soundness_with_the_second_event(name):
    """400 seeded audits of correct mechanisms at the edge of their claim (every tail event of Laplace and the
    geometric has ratio up to exactly e^epsilon), the held-out set 38 times the selection split, so that the rarer
    event is in play.  The bound is valid at confidence 0.95: more than 33 of 400 above the claim has probability
    below 1e-3 for a sound method.  The second event must be in play in 60 audits or more, so that
    the test checks it."""
    mech = get_mechanism(name)
    claim = mech.claim.point_epsilon
    exceed = noted = 0
    for seed in range(400):
        r = dpaudit.audit(mech, epsilon=claim, samples=40_000, calibration_cap=2_000, seed=1000 + seed, ideal=True)
        exceed += r.epsilon_lower_bound > claim
        noted += pipeline.RARE_EVENT_NOTE in r.notes
    assert noted >= 60, noted
    assert exceed <= 33, exceed
