"""The certificate protocol: one validated entry (certify), one frozen result, one registry."""

import dataclasses

import numpy as np
import pytest

from dpaudit.claims import parse_claim
from dpaudit.exceptions import ParameterTypeError, ParameterValueError
from dpaudit.stats.bounds import epsilon_lower_bound, poisson_epsilon_bound
from dpaudit.stats.certificate import (
    CERTIFICATES,
    Certificate,
    CertificateResult,
    ClopperPearson,
    EventCounts,
    GaussianDP,
    IntervalCertificate,
    PoissonConditional,
    certificate_for,
    register_certificate,
)
from dpaudit.stats.clopper_pearson import cp_lower, cp_upper
from dpaudit.stats.curves import CurveCertificate
from dpaudit.stats.estimators import HeldOutCounts
from dpaudit.stats.selection import ThresholdEvent

COUNTS = EventCounts(900, 100, 100, 900)


def test_clopper_pearson_point_claim_is_the_point_bound():
    b = epsilon_lower_bound(900, 100, 100, 900, delta=1e-5, confidence=0.9)
    r = ClopperPearson().certify(COUNTS, parse_claim("eps:1,delta=1e-5"), confidence=0.9)
    assert r.epsilon_lower_bound == b.epsilon_lower_bound == r.epsilon_at_delta
    assert r.ceiling == b.ceiling and r.bound == b and r.method == "clopper-pearson"
    assert r.violation and r.margin == pytest.approx(b.epsilon_lower_bound - 1.0)
    assert r.witness == (b.epsilon_lower_bound, 1e-5)


def test_clopper_pearson_region_is_the_curve_certificate_test():
    # The region of a curve claim is exactly what CurveCertificate.test gave for the same bound.
    claim = parse_claim("gdp:mu=1")
    b = epsilon_lower_bound(900, 100, 100, 900, delta=1e-5, confidence=0.95)
    old = CurveCertificate(claim).test(b)
    new = ClopperPearson().certify(COUNTS, claim, confidence=0.95, delta=1e-5).region
    assert np.array_equal(old.certified, new.certified) and np.array_equal(old.deltas, new.deltas)
    assert (old.violation, old.delta, old.margin) == (new.violation, new.delta, new.margin)


def test_poisson_conditional_runs_at_its_share_of_the_failure_probability():
    r = PoissonConditional("event").certify(EventCounts(3000, 997_000, 1000, 999_000), parse_claim("eps:1"),
                                            confidence=0.95)
    b = poisson_epsilon_bound(3000, 997_000, 1000, 999_000, confidence=0.975)
    assert r.epsilon_lower_bound == b.epsilon_lower_bound and r.bound.method == "poisson-conditional"
    assert r.violation and r.ceiling == b.ceiling
    empty = PoissonConditional("complement").certify(EventCounts(0, 0, 0, 0), parse_claim("eps:1"), confidence=0.95)
    assert empty.epsilon_lower_bound == 0.0 and not empty.violation


def test_gdp_certifies_one_point_and_says_its_caveat():
    counts = HeldOutCounts.from_scores([0.5], np.r_[np.ones(600), np.zeros(100)], np.zeros(3500))
    old = GaussianDP().bound(counts, ThresholdEvent(0.5), delta=1e-5, confidence=0.95)
    r = GaussianDP().certify(EventCounts.at(counts, ThresholdEvent(0.5)), parse_claim("eps:1,delta=1e-5"),
                             confidence=0.95)
    assert r.epsilon_lower_bound == old.epsilon_lower_bound and r.ceiling == old.ceiling
    assert r.details["mu_lower_bound"] == old.mu_lower_bound and "Gaussian" in r.caveat
    with pytest.raises(ParameterValueError, match="estimator 'gdp' certifies at one delta"):
        GaussianDP().certify(COUNTS, parse_claim("gdp:mu=1"), confidence=0.95)
    with pytest.raises(ParameterValueError, match="estimator 'gdp' needs delta > 0"):
        GaussianDP().certify(COUNTS, parse_claim("eps:1"), confidence=0.95)


def test_certify_checks_its_inputs():
    with pytest.raises(ParameterValueError, match="confidence"):
        ClopperPearson().certify(COUNTS, parse_claim("eps:1"), confidence=1.5)
    with pytest.raises(ParameterTypeError, match="EventCounts"):
        ClopperPearson().certify((900, 100, 100, 900), parse_claim("eps:1"), confidence=0.95)
    with pytest.raises(ParameterValueError, match="tp"):
        EventCounts(-1, 0, 0, 1)


def test_the_result_is_frozen():
    r = ClopperPearson().certify(COUNTS, "eps:1", confidence=0.95)
    assert isinstance(r, CertificateResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.ceiling = 0.0
    with pytest.raises(TypeError):
        r.details["x"] = 1
    assert r.to_dict()["method"] == "clopper-pearson"


class _HalfCP(IntervalCertificate):
    """Clopper-Pearson's rates through the generic interval path."""

    name = "half-cp-test"

    def rate_bounds(self, counts, *, confidence):
        a = (1 - confidence) / 2
        return float(cp_lower(counts.tp, counts.n0, a)), float(cp_upper(counts.fp, counts.n1, a))


def test_an_interval_certificate_gives_the_clopper_pearson_curve_from_clopper_pearson_rates():
    claim = parse_claim("gdp:mu=1")
    mine = _HalfCP().certify(COUNTS, claim, confidence=0.95, delta=1e-5)
    cp = ClopperPearson().certify(COUNTS, claim, confidence=0.95, delta=1e-5)
    assert np.allclose(mine.region.certified, cp.region.certified, rtol=1e-12, atol=1e-12)
    assert mine.ceiling == pytest.approx(cp.ceiling, rel=1e-9) and mine.violation == cp.violation


def test_registry_resolves_names_import_paths_classes_and_instances():
    assert certificate_for("clopper-pearson") is CERTIFICATES["clopper-pearson"]
    assert isinstance(certificate_for("dpaudit.stats.certificate:GaussianDP"), GaussianDP)
    inst = _HalfCP()
    assert certificate_for(inst) is inst and isinstance(certificate_for(_HalfCP), _HalfCP)
    with pytest.raises(ParameterValueError, match="must be one of"):
        certificate_for("bayes")
    with pytest.raises(ParameterValueError, match="no attribute"):
        certificate_for("dpaudit.stats.certificate:Nothing")
    with pytest.raises(ParameterValueError, match="not a Certificate"):
        certificate_for("numpy:pi")


def test_register_refuses_a_taken_name(monkeypatch):
    monkeypatch.setattr("dpaudit.stats.certificate.CERTIFICATES", dict(CERTIFICATES))
    import dpaudit.stats.certificate as mod

    register_certificate(_HalfCP)
    assert isinstance(mod.CERTIFICATES["half-cp-test"], _HalfCP)

    class Impostor(_HalfCP):
        pass

    with pytest.raises(ParameterValueError, match="taken"):
        register_certificate(Impostor)
    with pytest.raises(ParameterTypeError):
        register_certificate(object())


def test_a_subclass_must_implement_certify():
    class Nothing(Certificate):
        name = "nothing"

    with pytest.raises(TypeError):
        Nothing()


def test_clopper_pearson_is_sound_on_a_point_claim_over_seeds():
    # Randomized response at epsilon = ln 3 against its own claim: a violation is a false alarm, at most 5%
    # per seed; over 100 seeds 12 or more happen with probability < 1e-3 for a sound method.
    rng = np.random.default_rng(2024)
    p = 0.75
    alarms = 0
    for _ in range(100):
        tp, fp = rng.binomial(2000, p), rng.binomial(2000, 1 - p)
        r = ClopperPearson().certify(EventCounts(tp, 2000 - tp, fp, 2000 - fp), f"eps:{np.log(3)}",
                                     confidence=0.95)
        alarms += r.violation
    assert alarms < 12


def test_the_one_run_certificate_reports_the_test_closest_to_the_claim():
    from dpaudit.stats.one_run import one_run_epsilon_bound
    from dpaudit.stats.one_run_certificate import GuessCounts, OneRun

    ev = GuessCounts(1000, ((1000, 700), (500, 480), (100, 100)))
    r = OneRun().certify(ev, parse_claim("eps:1"), confidence=0.95)
    level = 1 - 0.05 / 3  # Bonferroni over the three numbers of guesses
    bounds = {k: one_run_epsilon_bound(1000, k, v, confidence=level) for k, v in ev.counts}
    assert r.epsilon_lower_bound == max(bounds.values()) and r.violation
    assert r.details["guesses"] == max(bounds, key=bounds.get) and r.method == "steinke-nasr-jagielski"
    assert r.ceiling >= r.epsilon_lower_bound
    none = OneRun().certify(ev, parse_claim("eps:8"), confidence=0.95)
    assert not none.violation and none.epsilon_lower_bound == max(bounds.values())
    with pytest.raises(ParameterValueError, match="guess counts"):
        GuessCounts(10, ((5, 6),))
