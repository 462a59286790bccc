"""The anytime-valid e-processes: known answers, a seeded null run and power (fast), and many-seed soundness.

Each random check is seeded (so deterministic); the bounds it asserts are ones a sound method passes with the
stated probability, so a failure means a broken method, not bad luck.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.auditor.anytime import ScalarWitnesses, curve_points, run_stream
from dpaudit.claims import as_claim
from dpaudit.stats.anytime import AnytimeAudit, BetChoice, choose_bets, epsilon_grid, kelly_fractions


def rr(p: float):
    """Randomized response on one bit: 1 with probability p on D, 1 - p on D' (true epsilon ln(p / (1 - p)))."""

    def draw(rng, runs, m):
        return (rng.random((runs, m)) < p).astype(float), (rng.random((runs, m)) < 1 - p).astype(float)

    return draw


def stream(draw, claim, runs, max_pairs, seed, full_grid=True):
    eps, deltas = curve_points(as_claim(claim))
    rng = np.random.default_rng(seed)
    return run_stream(lambda look, m: draw(rng, runs, m), ScalarWitnesses(), epsilons=eps, deltas=deltas, runs=runs,
                      max_pairs=max_pairs, full_grid=full_grid, track=False)


def test_grid_holds_the_claim_and_starts_at_zero():
    g = epsilon_grid(0.3)
    assert g[0] == 0.0 and 0.3 in g and np.all(np.diff(g) > 0)
    assert epsilon_grid(0.0, full=False).tolist() == [0.0, 1e-4]


def test_kelly_fraction_is_zero_when_the_claim_holds_and_positive_when_it_does_not():
    rates = np.array([[0.6, 0.3], [0.5, 0.5 / math.e]])
    f = kelly_fractions(rates, np.array([0.5, 1.0]), 0.0)
    assert f[0] > 0          # 0.6 > e^0.5 * 0.3 = 0.49
    assert f[1] == 0.0       # exactly at e^1: no edge, no bet


def test_a_fair_bet_never_grows_and_a_sure_one_grows_as_computed():
    a = AnytimeAudit(1, [0.0], [0.0], full_grid=False)
    choice = BetChoice(*(np.zeros((1, 1), dtype=t) for t in (int, float, bool, bool)), np.full((1, 1), 0.5),
                       np.ones((1, 1)), rates=np.array([[[0.75, 0.25]]]))
    # Every pair (X, Y) = (1, 0): each factor 1 + f at epsilon 0 with Kelly f = E[Z] / E[Z^2] = 0.5 / 0.5 = ... clipped.
    a.update(np.ones((1, 1, 5), bool), np.zeros((1, 1, 5), bool), choice)
    f = kelly_fractions(np.array([0.75, 0.25]), 0.0, 0.0)
    assert a.log_evalue()[0, 0, 0] == pytest.approx(5 * math.log1p(float(f)))


def test_choice_orients_the_event_toward_the_likelier_side():
    # Scores higher on D: whichever of the equivalent bets is chosen ("> t" likelier on D, or "<= t" likelier on
    # D'), the oriented indicators must fall in the event more often on the side bet likelier.
    rng = np.random.default_rng(0)
    for s0, s1 in ((rng.normal(1.0, 1.0, (1, 1, 400)), rng.normal(0.0, 1.0, (1, 1, 400))),
                   (rng.normal(0.0, 1.0, (1, 1, 400)), rng.normal(1.0, 1.0, (1, 1, 400)))):
        c = choose_bets(s0, s1, epsilons=[0.1], deltas=[0.0])
        assert c.fraction[0, 0] > 0 and c.rates[0, 0, 0] > c.rates[0, 0, 1]
        x, y = c.indicators(s0, s1)
        assert x.mean() > y.mean() + 0.2


def test_null_rejects_rarely_seeded():
    # Randomized response at exactly its claim (ln 3): 200 audits of 300 pairs each, seed 1.  A level-5% test
    # rejects more than 22 of 200 with probability < 0.003 (binomial tail), so this fails only if unsound.
    res = stream(rr(0.75), "eps:1.0986", 200, 300, seed=1, full_grid=False)
    assert int(np.sum(res.first_violation > 0)) <= 22


def test_gross_violation_is_found_in_a_few_dozen_pairs():
    # True epsilon ln 9 = 2.2 against a claim of 0.5: 100 seeded audits.
    res = stream(rr(0.9), "eps:0.5", 100, 1000, seed=2)
    assert np.all(res.first_violation > 0)
    assert np.median(res.first_violation) <= 60


def test_bound_stays_below_the_truth_seeded():
    # The confidence sequence: true epsilon ln 3 = 1.0986, claimed 0.3 (a violation, so bets are placed and the
    # bound climbs).  At 95% confidence more than 17 of 150 audits ending above the truth has probability < 6e-4.
    res = stream(rr(0.75), "eps:0.3", 150, 800, seed=3)
    bound = res.audit.bounds()[:, 0]
    assert int(np.sum(bound > math.log(3))) <= 17
    assert np.median(bound) > 0.5   # and it does climb well past the claim


@pytest.mark.soundness
@pytest.mark.parametrize("claim, draw, truth", [
    ("eps:1.0986", rr(0.75), math.log(3)),        # at its claim: the bets have no edge
    ("eps:0.3", rr(0.75), math.log(3)),           # violated claim: the bound must still stay under ln 3
    ("gdp:mu=1", lambda rng, r, m: (rng.normal(0, 1, (r, m)), rng.normal(1, 1, (r, m))), None),
])
def test_soundness_many_seeds(claim, draw, truth):
    # 2,000 audits of up to 2,000 pairs per side.  Sound at 95% means at most 5% err; more than 120 of 2,000
    # (6%) has probability < 0.02 under a 5% rate (binomial), and in fact the e-processes err far less.
    res = stream(draw, claim, 2000, 2000, seed=11)
    if truth is None:   # the curve is the truth: any certified violation is an error
        errs = res.first_violation > 0
    else:
        errs = res.audit.bounds()[:, 0] > truth
    assert int(np.sum(errs)) <= 120
