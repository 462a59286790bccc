"""The f-DP one-run test (Mahloujifar, Melis and Chaudhuri 2025): known answers, jax_privacy's numbers, monotonicity.

Validity over many seeds is in tests/auditor/test_one_run_audit.py (the test as the audit uses it).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.claims import GaussianDPClaim, PointClaim, parse_claim
from dpaudit.exceptions import ParameterValueError
from dpaudit.stats.gdp import gaussian_epsilon
from dpaudit.stats.one_run import (
    fdp_one_run_epsilon_bound,
    fdp_one_run_epsilon_bounds,
    fdp_one_run_mu_bound,
    fdp_one_run_mu_bound_max,
    fdp_one_run_rejects,
    fdp_one_run_rejects_points,
    one_run_epsilon_bound,
    top_guess_counts,
)


@pytest.mark.parametrize("m", [10, 100, 1000, 10_000])
def test_all_right_guesses_reach_the_ceiling(m):
    # With every guess right and delta 0, the most any audit of m canaries certifies: ln(q / (1 - q)), q = 0.05^(1/m).
    q = 0.05 ** (1 / m)
    assert fdp_one_run_epsilon_bound(m, m, m) == pytest.approx(math.log(q / (1 - q)), abs=1e-6)


# jax_privacy's published test values (auditing_test.py, test_epsilon_one_run_close, use_fdp): scores
# N(shift, 1) and N(0, 1), 10,000 each, "deterministic normal" quantiles, significance 0.05 split over the
# thresholds on the ROC's hull, delta 1e-6.  Their search's best threshold has these counts (found by running
# the procedure they describe; hull sizes 386, 374 and 140): our mu bound at those counts, read as epsilon at
# 1e-6 in the Gaussian family, is their number.
@pytest.mark.parametrize("k, c, hull, published", [(406, 379, 386, 2.164749), (938, 934, 374, 4.7218075),
                                                    (5436, 5436, 140, 9.133752)])
def test_jax_privacys_published_fdp_epsilons(k, c, hull, published):
    mu = fdp_one_run_mu_bound(20_000, k, c, confidence=1 - 0.05 / hull)
    assert gaussian_epsilon(mu, 1e-6) == pytest.approx(published, rel=2e-5)


@pytest.mark.parametrize("m, k, c, significance, delta, expected", [
    (1000, 100, 100, 0.05, 1e-5, 5.549028), (1000, 500, 400, 0.05, 1e-5, 2.076807),
    (10_000, 2000, 1800, 0.05, 1e-6, 3.398958), (20_000, 3000, 2500, 0.01, 1e-5, 1.804341),
    (500, 60, 55, 0.1, 1e-3, 1.981983)])
def test_gaussian_family_epsilon_matches_jax_privacy_on_direct_counts(m, k, c, significance, delta, expected):
    # jax_privacy's epsilon_one_run_fdp at one threshold (numbers from its code, run apart from this project).
    mu = fdp_one_run_mu_bound(m, k, c, confidence=1 - significance)
    assert gaussian_epsilon(mu, delta) == pytest.approx(expected, rel=2e-5)


@pytest.mark.parametrize("m, k, c", [(1000, 100, 90), (1000, 500, 400), (200, 30, 26), (1000, 1000, 700),
                                     (100, 20, 20), (10_000, 1000, 900)])
def test_with_one_points_curve_it_certifies_what_steinke_nasr_jagielski_do(m, k, c):
    # Measured: 0.3-1.7% below when some guesses are wrong, at or above when all are right; the f-DP test's gain
    # is in using a whole curve, not one point (the audit uses it only for curve claims).
    snj = one_run_epsilon_bound(m, k, c, delta=1e-5)
    assert snj * 0.98 <= fdp_one_run_epsilon_bound(m, k, c, delta=1e-5) <= snj * 1.005


def _random_cases(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        m = int(rng.integers(20, 3000))
        k = int(rng.integers(1, m + 1))
        yield m, k, int(rng.integers(k // 2, k + 1))


def test_rejection_at_a_significance_holds_at_every_larger_one():
    # The test reads "rejected at tau = significance" as "P[c or more right] < significance", which needs the
    # end rates to exceed k/m at every tau above it too: checked on 60 random counts, 3 curves, 12 taus each.
    curves = [GaussianDPClaim(1.0), parse_claim("dpsgd:noise=1,rate=0.1,steps=10"), PointClaim(1.0, 1e-5)]
    taus = np.geomspace(1e-4, 0.9, 12)
    for m, k, c in _random_cases(60, 0):
        for claim in curves:
            hits = [fdp_one_run_rejects(m, k, c, claim.power_inverse, t) for t in taus]
            first = hits.index(True) if True in hits else len(hits)
            assert all(hits[first:]), (m, k, c, claim.spec)


def test_a_stronger_curve_is_rejected_whenever_a_weaker_one_is():
    # mu-GDP for larger mu promises less: rejecting it must imply rejecting every smaller mu (the mu bound's basis).
    mus = np.linspace(0.05, 3.0, 30)
    for m, k, c in _random_cases(40, 1):
        hits = [fdp_one_run_rejects(m, k, c, GaussianDPClaim(mu).power_inverse, 0.05) for mu in mus]
        last = len(hits) - 1 - hits[::-1].index(True) if True in hits else -1
        assert all(hits[:last + 1]), (m, k, c)


def test_point_curves_at_once_answer_as_one_at_a_time():
    # The array recursion over many points' curves must give the scalar test's answer for each point: 40 random
    # counts against 60 points of the gdp:mu=1 and DP-SGD grids (about a quarter of the answers are "rejected").
    rng = np.random.default_rng(4)
    rejected = 0
    for m, k, c in _random_cases(40, 2):
        for claim in (GaussianDPClaim(1.0), parse_claim("dpsgd:noise=1,rate=0.1,steps=10")):
            d, e = claim.grid()
            pick = rng.choice(len(d), 30, replace=False)
            e = e[pick] * rng.uniform(0.2, 1.0, 30)  # below the curve too, so that some are rejected
            many = fdp_one_run_rejects_points(m, k, c, e, d[pick], 0.05)
            one = [fdp_one_run_rejects(m, k, c, PointClaim(float(a), float(b)).power_inverse, 0.05)
                   for a, b in zip(e, d[pick])]
            assert many.tolist() == one, (m, k, c, claim.spec)
            rejected += int(many.sum())
    assert 200 < rejected < 2200


def test_bounds_at_many_deltas_are_the_one_delta_bounds():
    # Same largest rejected epsilon as fdp_one_run_epsilon_bound, each delta, started from 0 or from a rejected
    # epsilon: both are within 1e-9 (relative) of one boundary, kept below it.
    deltas = np.array([0.0, 1e-6, 1e-4, 1e-3, 1e-2])
    for m, k, c in list(_random_cases(12, 5)) + [(1000, 250, 250), (1000, 500, 498)]:
        one = np.array([fdp_one_run_epsilon_bound(m, k, c, delta=d) for d in deltas])
        assert np.allclose(fdp_one_run_epsilon_bounds(m, k, c, deltas), one, rtol=2e-9, atol=2e-9), (m, k, c)
        started = fdp_one_run_epsilon_bounds(m, k, c, deltas, above=one * 0.5)
        assert np.allclose(started, one, rtol=2e-9, atol=2e-9), (m, k, c)
        wrong = fdp_one_run_epsilon_bounds(m, k, c, deltas, above=one + 1.0)  # not rejected: searched from 0
        assert np.allclose(wrong, one, rtol=2e-9, atol=2e-9), (m, k, c)
        assert all(fdp_one_run_rejects_points(m, k, c, one[one > 0], deltas[one > 0], 0.05))


def test_the_best_margin_search_finds_the_full_searchs_best_point():
    # best_margin drops a delta once its bracket's top is below another's proven margin: the point with the
    # largest bound minus claim, and its bound, must be the full search's (to its 1e-9), on 40 random counts
    # against three claims' crossed grid points; every dropped delta is NaN, and the rest are bounds.
    rng = np.random.default_rng(8)
    curves = [GaussianDPClaim(1.0), GaussianDPClaim(0.5), parse_claim("dpsgd:noise=1,rate=0.1,steps=10")]
    named = 0
    for m, k, c in list(_random_cases(40, 9)) + [(1000, 500, 498), (1000, 250, 250)]:
        claim = curves[int(rng.integers(len(curves)))]
        d, e = claim.grid()
        e = e * rng.uniform(0.3, 1.0)  # a smaller claim, so that counts cross some of its points
        crossed = fdp_one_run_rejects_points(m, k, c, e, d, 0.05)
        if not crossed.any():
            continue
        full = fdp_one_run_epsilon_bounds(m, k, c, d[crossed], above=e[crossed])
        best = fdp_one_run_epsilon_bounds(m, k, c, d[crossed], above=e[crossed], best_margin=True)
        j = int(np.argmax(full - e[crossed]))
        assert np.nanargmax(best - e[crossed]) == j or math.isclose(
            best[np.nanargmax(best - e[crossed])] - e[crossed][np.nanargmax(best - e[crossed])],
            full[j] - e[crossed][j], rel_tol=0, abs_tol=4e-9 * max(1.0, full[j])), (m, k, c, claim.spec)
        kept = ~np.isnan(best)
        assert np.allclose(best[kept], full[kept], rtol=2e-9, atol=2e-9), (m, k, c, claim.spec)
        named += 1
    assert named >= 15
    with pytest.raises(ParameterValueError):
        fdp_one_run_epsilon_bounds(1000, 10, 10, [1e-5], best_margin=True)


def test_a_point_of_a_curve_is_rejected_only_when_the_curve_is():
    # What lets an audit name a crossed point of a rejected curve at no further share: a point's curve is weaker
    # than the whole curve, so rejecting it must imply rejecting the whole.  60 random counts, three claims' grids.
    curves = [GaussianDPClaim(1.0), GaussianDPClaim(0.3), parse_claim("dpsgd:noise=1,rate=0.1,steps=10")]
    points = 0
    for m, k, c in list(_random_cases(60, 6)) + [(1000, 250, 250), (1000, 500, 498), (1000, 125, 125)]:
        for claim in curves:
            d, e = claim.grid()
            hit = fdp_one_run_rejects_points(m, k, c, e, d, 0.05)
            points += int(hit.sum())
            assert not hit.any() or fdp_one_run_rejects(m, k, c, claim.power_inverse, 0.05), (m, k, c, claim.spec)
    assert points > 100  # the check is not empty


def test_top_guesses_read_the_scores_only():
    assert top_guess_counts([3.0, 1.0, 2.0, 0.0], [1, 1, 0, 0], 2) == (2, 1)
    assert top_guess_counts([1.0, 1.0, 1.0], [0, 1, 1], 1, ties=[0, 1, 2]) == (1, 0)  # ties by their ranks,
    assert top_guess_counts([1.0, 1.0, 1.0], [0, 1, 1], 1, ties=[2, 0, 1]) == (1, 1)  # never by the bits


def test_counts_for_guesses_match_a_sort_per_k():
    # One ordering and a running sum must give what sorting for each k gives (ties: by the given ranks, both ways).
    from dpaudit.stats.one_run import counts_for_guesses

    rng = np.random.default_rng(3)
    for n in (7, 100, 1001):
        s = np.round(rng.normal(size=n), 1)  # many ties
        inc = rng.integers(0, 2, n)
        ties = rng.permutation(n)
        ks = [0, 1, n // 3, n // 2, n]
        centre = np.median(s)
        for k, got in zip(ks, counts_for_guesses(s, inc, ks, ties=ties)):
            far = sorted(range(n), key=lambda i: (-abs(s[i] - centre), ties[i]))[:k]
            assert got == (k, sum((s[i] >= centre) == bool(inc[i]) for i in far))
        for k, got in zip(ks, counts_for_guesses(s, inc, ks, one_sided=True, ties=ties)):
            top = sorted(range(n), key=lambda i: (-s[i], ties[i]))[:k]
            assert got == (k, int(sum(inc[i] for i in top)))


def test_mu_bound_above_a_known_mu_is_the_maximum_of_the_searches():
    """The audit's gdp_mu_lower_bound searches only past the best mu so far: the same maximum as a
    full search per number of guesses, on 60 seeded sets of counts (deterministic)."""
    rng = np.random.default_rng(3)
    for _ in range(60):
        m = int(rng.integers(100, 3000))
        counts = []
        for k in sorted(rng.choice(np.arange(5, m + 1), size=4, replace=False)):
            counts.append((int(k), int(k - rng.binomial(k, rng.uniform(0.0, 0.3)))))
        best = 0.0
        for k, c in counts:
            best = fdp_one_run_mu_bound(m, k, c, confidence=0.99, above=best)
        full = max(fdp_one_run_mu_bound(m, k, c, confidence=0.99) for k, c in counts)
        assert abs(best - full) <= 2e-6 * max(1.0, full)
        # In the order of the counts' delta-0 bounds (the audit's), the same maximum.
        assert abs(fdp_one_run_mu_bound_max(m, counts, confidence=0.99) - full) <= 2e-6 * max(1.0, full)
