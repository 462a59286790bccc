"""Approximate LDP protocols (LDP-Auditor's AGRR, ASUE, ABLH, AOLH, GM, AGM): reports against their formulas, audits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpaudit
from dpaudit.exceptions import ParameterValueError
from dpaudit.mechanisms import get_mechanism
from dpaudit.mechanisms.float_safe import granularity
from dpaudit.mechanisms.gaussian import gaussian_delta
from dpaudit.mechanisms.ldp_approximate import APPROXIMATE_LDP_PROTOCOLS, aolh_buckets

NAMES = [cls.name for cls in APPROXIMATE_LDP_PROTOCOLS]
N = 200_000
DELTA = 1e-5


def _binom_ok(count, n, p, alpha=1e-4):
    # Two-sided binomial test at 1e-4 per check (about 15 checks here: family-wise failure below 0.2%).
    return stats.binomtest(int(count), n, p).pvalue > alpha


@pytest.mark.parametrize("eps, k", [(1.0, 5), (3.0, 20)])
def test_agrr_keeps_the_value_at_e_eps_q_plus_delta(eps, k):
    m = get_mechanism("agrr", epsilon=eps, k=k, delta=0.01)  # a large delta, so that it shows in 2e5 reports
    p = m.keep_probability
    q = (1 - p) / (k - 1)
    assert p == pytest.approx(math.exp(eps) * q + 0.01, rel=1e-12)
    out = m([2], size=N, rng=1)
    assert _binom_ok((out == 2).sum(), N, p) and _binom_ok((out == 0).sum(), N, q)
    assert m.true_epsilon(0.01) == pytest.approx(eps, abs=1e-12)


def test_asue_bits_and_its_delta():
    m = get_mechanism("asue", epsilon=1.0, k=6, delta=0.01)
    p, q = m._probabilities()
    assert p + q == 1 and p * p - math.e * q * q == pytest.approx(0.01, rel=1e-9)
    out = m([4], size=N, rng=2)
    assert _binom_ok(out[:, 4].sum(), N, p) and _binom_ok(out[:, 0].sum(), N, q)
    assert m.true_epsilon(0.01) == pytest.approx(1.0, abs=1e-12) and m.true_epsilon(0.0) > 1.0


@pytest.mark.parametrize("name, eps", [("ablh", 2.0), ("aolh", 2.0)])
def test_approximate_local_hashing_reports_the_bucket_at_agrr_rate(name, eps):
    m = get_mechanism(name, epsilon=eps, k=30, delta=0.01)
    g = 2 if name == "ablh" else aolh_buckets(eps, 0.01)
    e = math.exp(eps)
    keep = (e + (g - 1) * 0.01) / (e + g - 1)
    out = m([7], size=N, rng=3)
    assert _binom_ok(out[:, 7].sum(), N, keep)
    assert _binom_ok(out[:, 20].sum(), N, keep / g + (1 - keep) * (1 - 1 / g) / (g - 1))


def test_aolh_buckets_follow_ldp_auditor():
    # LDP-Auditor's closed form, and OLH's round(e^eps) + 1 as delta -> 0.
    assert aolh_buckets(1.0, 1e-5) == 4 and aolh_buckets(4.0, 1e-5) == round(math.exp(4)) + 1
    assert aolh_buckets(0.01, 0.5) == 2


@pytest.mark.parametrize("name", ["agm", "gm"])
def test_gaussians_are_one_hot_plus_calibrated_noise_on_a_grid(name):
    m = get_mechanism(name, epsilon=0.5, k=4)
    sigma = m.sigma
    if name == "agm":
        assert gaussian_delta(0.5, sigma, math.sqrt(2)) == pytest.approx(DELTA, rel=1e-6)
    else:
        assert sigma == pytest.approx(math.sqrt(2 * math.log(1.25 / DELTA)) * math.sqrt(2) / 0.5)
        assert m.true_epsilon(DELTA) < 0.5 and not m.broken
    out = m([0], size=N, rng=4)
    assert abs(np.median(out[:, 0]) - 1.0) < 0.05 * sigma
    assert stats.kstest(out[:, 1], stats.norm(scale=sigma).cdf).statistic < 0.01
    step = min(granularity(sigma), 1.0)  # every release on the power-of-two grid (float-safe)
    assert np.all(out / step == np.floor(out / step))


def test_classic_gaussian_is_broken_at_large_epsilon():
    # LDP-Auditor runs the classic calibration at every epsilon; it is proven for eps < 1 only, and at
    # eps = 10 the exact curve (Balle and Wang 2018) exceeds the claim.
    m = get_mechanism("gm", epsilon=10.0, k=4)
    assert m.broken and m.true_epsilon(DELTA) > 10.3
    assert not get_mechanism("gm", epsilon=4.0, k=4).broken


@pytest.mark.parametrize("name", NAMES)
def test_auto_certifies_below_the_truth(name):
    # Confidence 0.999: each bound exceeds its truth with probability <= 0.1%.
    m = get_mechanism(name, epsilon=1.0, k=8)
    true = m.true_epsilon(DELTA)
    r = dpaudit.audit(m, epsilon=true, delta=DELTA, samples=200_000, seed=11, confidence=0.999)
    assert r.verdict == "no violation found"
    floor = 0.85 if name not in ("agm", "gm") else 0.3  # a Gaussian's delta = 1e-5 tail is unseen at 2e5
    assert floor * true <= r.epsilon_lower_bound <= true + 1e-9


@pytest.mark.parametrize("name", ["agrr", "asue", "ablh", "aolh"])
def test_an_overstated_claim_is_flagged(name):
    m = get_mechanism(name, epsilon=2.0, k=8)
    r = dpaudit.audit(m, epsilon=0.5 * m.true_epsilon(DELTA), delta=DELTA, max_samples=200_000, seed=12)
    assert r.verdict == "violation"


def test_bad_parameters_are_named():
    with pytest.raises(ParameterValueError, match="delta"):
        get_mechanism("agrr", epsilon=1.0, k=8, delta=0.0)
    with pytest.raises(ParameterValueError, match="0..7"):
        get_mechanism("asue", epsilon=1.0, k=8)([8])


@pytest.mark.soundness
@pytest.mark.parametrize("name", NAMES)
def test_soundness_over_200_seeds(name):
    # Sequential audits at the default settings against the protocol's true epsilon at delta 1e-5.
    m = get_mechanism(name, epsilon=1.0, k=8)
    true = m.true_epsilon(DELTA)
    alarms = sum(dpaudit.audit(m, epsilon=true, delta=DELTA, max_samples=20_000, seed=s).verdict == "violation"
                 for s in range(200))
    assert alarms <= 10


def test_gaussian_protocols_against_their_whole_curve():
    # The one-hot vector plus N(0, sigma^2) per coordinate is sqrt(2)/sigma-GDP: against that curve the audit
    # reads every delta, where the (eps, 1e-5) point alone shows about 0.6 of epsilon.
    m = get_mechanism("agm", epsilon=1.0, k=10, delta=1e-5)
    mu = math.sqrt(2.0) / m.sigma
    assert m.curve_claim == f"gdp:mu={mu:.12g}"
    ok = dpaudit.audit(m, claim=m.curve_claim, samples=300_000, seed=41, ideal=True)
    assert ok.verdict == "no violation found" and ok.epsilon_lower_bound >= 0.8 * ok.claimed_epsilon
    assert dpaudit.audit(m, claim=f"gdp:mu={0.6 * mu}", samples=300_000, seed=41, ideal=True).verdict == "violation"


@pytest.mark.soundness
def test_soundness_against_the_gaussian_curve_over_200_seeds():
    m = get_mechanism("gm", epsilon=1.0, k=6, delta=1e-5)
    alarms = sum(dpaudit.audit(m, claim=m.curve_claim, max_samples=20_000, seed=s, ideal=True).verdict == "violation"
                 for s in range(200))
    assert alarms <= 10
