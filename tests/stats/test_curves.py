"""Curve tests: one event's two intervals against a whole claimed curve, at one confidence."""

import numpy as np
import pytest

from dpaudit.claims import parse_claim
from dpaudit.stats.bounds import epsilon_lower_bound
from dpaudit.stats.curves import CurveCertificate, certified_curve, curve_test
from dpaudit.stats.estimators import ClopperPearsonEstimator, HeldOutCounts
from dpaudit.stats.selection import calibration_counts, calibration_rates


def test_certified_curve_known_answer():
    # ln((1 - 0 - 0.5) / 0.01) = ln 50 = 3.912; at delta 0.1: ln(0.4 / 0.01) = ln 40 = 3.689.
    assert certified_curve(0.01, 0.5, [0.0, 0.1]) == pytest.approx([np.log(50), np.log(40)])
    # Nothing certified when the rates are those of a coin.
    assert certified_curve(0.5, 0.5, [0.0, 0.2]).tolist() == [0.0, 0.0]


def test_one_point_curve_is_the_point_bound_exactly():
    b = epsilon_lower_bound(7_500, 2_500, 2_500, 7_500, delta=1e-5, confidence=0.95)
    t = CurveCertificate(parse_claim("eps:1,delta=1e-5")).test(b)
    assert t.epsilon_lower_bound == b.epsilon_lower_bound and t.delta == 1e-5 and t.claimed_epsilon == 1.0
    assert t.violation == (b.epsilon_lower_bound > 1.0)
    assert t.as_bound_against(1.0) == b.epsilon_lower_bound


def test_point_certificate_chooses_the_point_event():
    rng = np.random.default_rng(3)
    for delta in (0.0, 1e-5, 1e-2):
        s0, s1 = 1 + rng.laplace(size=20_000), rng.laplace(size=20_000)
        rates = calibration_rates(calibration_counts(s0, s1), n_test0=40_000, n_test1=40_000, nested=True)
        cert = CurveCertificate(parse_claim(f"eps:1,delta={delta}"))
        ev = cert.choose(rates)
        assert ev == rates.choose(delta=delta)
        assert cert.value(rates, ev) == rates.value(ev, delta=delta)


def test_curve_from_rates_holds_at_every_delta_of_the_grid():
    claim = parse_claim("gdp:mu=1")
    t = curve_test(claim, fpr_upper=0.02, fnr_upper=0.6, confidence=0.9)
    gd, ge = claim.grid()
    assert np.array_equal(t.deltas, gd) and np.array_equal(t.claimed, ge)
    assert np.allclose(t.certified, certified_curve(0.02, 0.6, gd))
    # 1-GDP allows FNR >= 0.67 at FPR 0.02 (Phi(Phi^-1(0.98) - 1)): 0.6 is below, so a violation.
    assert float(claim.tradeoff(0.02)) > 0.6 and t.violation
    cv = t.curve_violation()
    assert cv["epsilon_lower_bound"] > cv["claimed_epsilon"] and cv["margin"] == pytest.approx(t.margin)
    assert t.margin == pytest.approx(np.max(t.certified - t.claimed))


def test_bound_per_delta_form_for_other_certificates():
    claim = parse_claim("dpsgd:noise=1,rate=0.1,steps=10")
    ok = curve_test(claim, deltas=[1e-5, 1e-2], epsilon_lower_bounds=[2.0, 0.8], confidence=0.95)
    assert not ok.violation and ok.curve_violation() is None
    bad = curve_test(claim, deltas=[1e-5, 1e-2], epsilon_lower_bounds=[2.0, 0.95], confidence=0.95)
    assert bad.violation and bad.delta == 1e-2 and bad.claimed_epsilon == pytest.approx(0.887, abs=2e-3)
    with pytest.raises(ValueError, match="same non-zero length"):
        curve_test(claim, deltas=[1e-5], epsilon_lower_bounds=[1.0, 2.0], confidence=0.95)
    with pytest.raises(ValueError, match="together"):
        curve_test(claim, fpr_upper=0.1, confidence=0.95)


@pytest.mark.parametrize("margin", [-0.3, -1e-12, 0.0, 1e-12, 0.2])
def test_as_bound_against_exceeds_exactly_on_violation(margin):
    claim = parse_claim("gdp:mu=1")
    gd, ge = claim.grid()
    t = curve_test(claim, deltas=gd[:5], epsilon_lower_bounds=ge[:5] + margin, confidence=0.95)
    for eps in (0.5, 2.0, 7.0):
        assert (t.as_bound_against(eps) > eps) == t.violation == (margin > 0)


def test_reported_point_without_violation_is_the_closest_approach():
    claim = parse_claim("gdp:mu=1")
    t = curve_test(claim, fpr_upper=0.05, fnr_upper=0.8, confidence=0.95)
    assert not t.violation
    ratio = t.certified / np.maximum(t.claimed, 1e-3)
    assert t.index == int(np.argmax(ratio))
    nothing = curve_test(claim, fpr_upper=0.5, fnr_upper=0.5, confidence=0.95)
    assert nothing.epsilon_lower_bound == 0.0 and nothing.delta == pytest.approx(1e-5, rel=0.2)


def _gaussian_curve_trial(seed, claim, *, n_sel=4_000, n_test=8_000, mu=1.0, confidence=0.95):
    """One audit at score level: N(mu, 1) against N(0, 1), event chosen for the curve, counted held out."""
    rng = np.random.default_rng(seed)
    s0, s1 = rng.normal(mu, 1.0, n_sel + n_test), rng.normal(0.0, 1.0, n_sel + n_test)
    cert = CurveCertificate(claim)
    rates = calibration_rates(calibration_counts(s0[:n_sel], s1[:n_sel]), n_test0=n_test, n_test1=n_test,
                              confidence=confidence, nested=True)
    ev = cert.choose(rates)
    counts = HeldOutCounts.from_scores([ev.threshold], s0[n_sel:], s1[n_sel:])
    return cert.test(ClopperPearsonEstimator().bound(counts, ev, delta=0.0, confidence=confidence))


def test_gaussian_against_its_own_curve_quick():
    # The scores are exactly 1-GDP, so a violation is a false alarm: at most 5% per trial by the theory
    # (far fewer in practice, the intervals are conservative).  P(>= 5 of 40 | p = 0.05) = 0.05.
    claim = parse_claim("gdp:mu=1")
    alarms = sum(_gaussian_curve_trial(seed, claim).violation for seed in range(40))
    assert alarms <= 4


def test_gaussian_against_a_tighter_curve_is_flagged():
    # mu = 2 mechanism, claim mu = 1: every seeded trial flags it (the margin is large at these sizes).
    claim = parse_claim("gdp:mu=1")
    assert all(_gaussian_curve_trial(seed, claim, mu=2.0).violation for seed in range(10))


@pytest.mark.soundness
def test_gaussian_against_its_own_curve_over_400_seeds():
    # False alarms over 400 seeds; the stated confidence allows 5% (20); 30 or more has probability
    # 0.013 if the true rate were exactly 5%.
    claim = parse_claim("gdp:mu=1")
    alarms = sum(_gaussian_curve_trial(seed, claim).violation for seed in range(1000, 1400))
    assert alarms < 30


def test_bound_against_a_correct_curve_is_the_certified_value_not_the_claim():
    # A GDP curve reaches epsilon 0 at large deltas, where any certified curve is 0 too: the largest
    # margin of a mechanism that meets the claim is then exactly 0.  Read as "epsilon + margin", every
    # such round looked certified up to the claim and a sequential audit stopped as "converged" the
    # moment calibration ended (measured: DP-SGD's white-box view at 512,000 of 10^6 releases).
    claim = parse_claim("gdp:mu=1")
    t = curve_test(claim, fpr_upper=0.2, fnr_upper=0.6, confidence=0.95)
    assert not t.violation and t.margin == 0.0 and t.claimed[-1] == 0.0
    for eps, delta in ((1.0, 1e-2), (0.5, 0.1), (3.0, 1e-6)):
        at = t.as_bound_against(eps, delta)
        assert at == pytest.approx(min(eps, t.certified_at(delta))) and at < eps
    # Without a delta: epsilon times the closest approach, below epsilon.
    i = t.index
    assert t.as_bound_against(2.0) == pytest.approx(2.0 * t.certified[i] / t.claimed[i])
    assert t.as_bound_against(2.0) < 2.0


def test_violation_is_reported_at_the_largest_factor_in_delta():
    # Bounds per delta (a one-run audit's form): the claim is crossed at delta_a ~ 1e-6 by a hair, and the bound at
    # delta_c ~ 1e-3 exceeds the claim's epsilon at delta_a, so at that epsilon the audit certifies delta >= delta_c:
    # a factor ~1000 in delta, where the large crossing at delta_b ~ 0.1 certifies only its own delta (factor 1).
    claim = parse_claim("gdp:mu=1")
    gd, ge = claim.grid()
    a, c, b = (int(np.argmin(np.abs(np.log(gd) - np.log(x)))) for x in (1e-6, 1e-3, 0.1))
    bounds = np.zeros_like(gd)
    bounds[a], bounds[c], bounds[b] = ge[a] + 0.01, ge[a] + 0.02, ge[b] + 0.5
    t = curve_test(claim, deltas=gd, epsilon_lower_bounds=bounds, confidence=0.95)
    assert t.violation and t.index == a and t.delta == gd[a]
    cv = t.curve_violation()
    assert cv["certified_delta"] == gd[c] and cv["delta_factor"] == pytest.approx(gd[c] / gd[a])
    # the largest margin in epsilon is elsewhere (at delta_c), and stays the JSON's margin
    assert cv["margin"] == pytest.approx(np.max(t.certified - t.claimed))
    assert cv["margin"] > t.certified[a] - t.claimed[a]
    # A claimed delta of 0 that is crossed is an infinite factor: reported there, its factor None in the JSON.
    t0 = curve_test(parse_claim("eps:1"), deltas=[0.0], epsilon_lower_bounds=[1.5], confidence=0.95)
    assert t0.index == 0 and t0.curve_violation()["delta_factor"] is None


def test_witness_from_rates_is_a_point_of_the_certified_curve():
    claim = parse_claim("gdp:mu=1")
    t = curve_test(claim, fpr_upper=0.02, fnr_upper=0.6, confidence=0.9)
    cv = t.curve_violation()
    got = t.certified_deltas(t.claimed)
    crossed = t.certified > t.claimed
    assert cv["delta_factor"] == pytest.approx(np.max(np.where(crossed, got / t.deltas, 0.0)))
    # epsilon = claimed there, delta just below the certified one: the certified curve lies above the claim's point.
    assert certified_curve(0.02, 0.6, cv["certified_delta"] * (1 - 1e-9)) >= cv["claimed_epsilon"]
    with pytest.raises(ValueError, match="no violation"):
        curve_test(claim, fpr_upper=0.5, fnr_upper=0.5, confidence=0.9).witness_index()
