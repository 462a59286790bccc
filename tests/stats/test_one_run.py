"""The one-run bound (Steinke, Nasr and Jagielski 2023): known answers, independent checks, soundness."""

import math

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import beta as beta_dist

import dpaudit
from dpaudit.exceptions import ParameterValueError
from dpaudit.stats.one_run import guess, guess_grid, one_run_counts, one_run_epsilon, one_run_p_value


def all_correct(m: int, confidence: float = 0.95) -> float:
    q = (1.0 - confidence) ** (1.0 / m)
    return math.log(q / (1.0 - q))


@pytest.mark.parametrize("m", [1, 4, 5, 10, 100, 1000, 10_000])
def test_all_correct_at_delta_zero_is_the_closed_form(m):
    # Below 5 canaries even all right is no evidence at 95% (0.5^4 > 0.05): the bound is 0, never negative.
    assert one_run_epsilon(m, m, m) == pytest.approx(max(0.0, all_correct(m)), abs=1e-9)


def test_the_ceiling_of_1000_canaries_is_5_809():
    assert round(one_run_epsilon(1000, 1000, 1000), 3) == 5.809
    assert round(all_correct(1000), 3) == 5.809


@pytest.mark.parametrize("m,r,v", [(1000, 1000, 700), (1000, 200, 150), (500, 37, 30), (10_000, 5000, 2600),
                                   (100, 100, 99), (1000, 16, 16)])
def test_delta_zero_is_the_clopper_pearson_lower_bound_in_logit(m, r, v):
    # Independent: P[Bin(r, q) >= v] = beta_cdf(q; v, r - v + 1), so the root is a beta quantile.
    expected = max(0.0, float(logit(beta_dist.ppf(0.05, v, r - v + 1))))
    assert one_run_epsilon(m, r, v) == pytest.approx(expected, abs=1e-7)


@pytest.mark.parametrize("m,r,v,delta,published", [
    (1000, 100, 75, 1e-4, 0.673),       # Appendix D, p. 46 (with abstentions)
    (100, 100, 75, 1e-4, 0.699),        # Appendix D (no abstentions)
    (100_000, 1510, 1439, 1e-5, 2.675),  # the DP-SGD example, p. 28
])
def test_delta_positive_matches_the_papers_values(m, r, v, delta, published):
    assert one_run_epsilon(m, r, v, delta=delta) == pytest.approx(published, abs=1.5e-3)


def test_the_bound_is_the_edge_of_the_p_value():
    for m, r, v, delta in ((1000, 100, 75, 1e-4), (1000, 1000, 640, 0.0), (50, 40, 33, 1e-3)):
        eps = one_run_epsilon(m, r, v, delta=delta)
        assert one_run_p_value(m, r, v, eps, delta) < 0.05 <= one_run_p_value(m, r, v, eps + 1e-6, delta)


def test_p_value_against_a_direct_sum():
    # The theorem's delta term, summed by hand from binomial probabilities.
    m, r, v, eps, delta = 200, 30, 24, 0.8, 1e-3
    q = float(expit(eps))
    pmf = [math.comb(r, k) * q ** k * (1 - q) ** (r - k) for k in range(r + 1)]
    tail = sum(pmf[v:])
    alpha = max(sum(pmf[v - i:v]) / i for i in range(1, v + 1))
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(tail + 2 * m * delta * alpha, rel=1e-10)


def test_a_coin_certifies_nothing_and_delta_only_lowers_the_bound():
    assert one_run_epsilon(100, 100, 50) == 0.0
    assert one_run_epsilon(100, 0, 0) == 0.0
    b = one_run_epsilon(1000, 500, 400, delta=[0.0, 1e-6, 1e-4, 1e-2])
    assert np.all(np.diff(b) <= 0) and b[-1] < b[0]


def test_counts_are_checked():
    with pytest.raises(ParameterValueError, match="correct <= guesses"):
        one_run_epsilon(10, 5, 6)
    with pytest.raises(ParameterValueError, match="guesses must be in"):
        guess([1.0, 2.0], 3)


def test_guesses_take_the_extremes_and_break_ties_by_index():
    g = guess([0.1, 0.9, 0.5, 0.2], 3)
    assert g.tolist() == [-1, 1, 1, 0]                      # ceil(3/2) = 2 'included', 1 'excluded'
    assert guess([1.0, 1.0, 1.0, 1.0], 2).tolist() == [-1, 0, 0, 1]
    c = one_run_counts([3.0, 2.0, 1.0, 0.0], [1, 0, 1, 0], [2, 4])
    assert [(x.guesses, x.correct) for x in c] == [(2, 2), (4, 2)]


def test_the_default_grid():
    assert guess_grid(1000) == (1000, 500, 250, 125, 62, 31, 16)
    assert guess_grid(19) == (19,)
    assert guess_grid(20) == (20, 10)


def test_default_guesses_are_the_best_of_the_grid_at_a_bonferroni_split():
    rng = np.random.default_rng(4)
    inc = rng.integers(0, 2, 1000)
    scores = inc + rng.laplace(0.0, 0.5, 1000)
    r = dpaudit.audit_one_run(scores, inc, epsilon=5.0)
    grid = guess_grid(1000)
    split = 1 - 0.05 / len(grid)
    expected = max(one_run_epsilon(1000, c.guesses, c.correct, confidence=split)
                   for c in one_run_counts(scores, inc, grid))
    assert r.epsilon_lower_bound == pytest.approx(expected, abs=1e-12)
    assert r.guess_rule == "grid" and r.grid == list(grid) and r.grid_confidence == pytest.approx(split)
    # The split costs something: each count alone, fixed in advance, certifies more.
    fixed = dpaudit.audit_one_run(scores, inc, epsilon=5.0, guesses=r.guesses)
    assert fixed.epsilon_lower_bound > r.epsilon_lower_bound and fixed.correct == r.correct
    assert r.ceiling == pytest.approx(all_correct(1000, split), abs=1e-9)
    assert fixed.ceiling == pytest.approx(all_correct(r.guesses), abs=1e-9)


# ----------------------------------------------------------------------------- soundness
def randomized_response(seed: int, m: int, eps: float):
    """The worst case of the theorem: each canary's score is its bit, kept with probability e^eps/(1+e^eps)."""
    rng = np.random.default_rng(seed)
    inc = rng.integers(0, 2, m)
    keep = rng.random(m) < expit(eps)
    return np.where(keep, inc, 1 - inc).astype(float), inc


def laplace_scores(seed: int, m: int, eps: float):
    rng = np.random.default_rng(seed)
    inc = rng.integers(0, 2, m)
    return inc + rng.laplace(0.0, 1.0 / eps, m), inc


def _exceed(draw, seeds, eps, **kw) -> int:
    return sum(dpaudit.audit_one_run(*draw(s, 1000, eps), epsilon=eps, **kw).epsilon_lower_bound > eps
               for s in seeds)


def test_soundness_small_randomized_response_default_guesses():
    # make test's quick version of the 400-seed runs below: 40 seeds, at most 5% (2) above the claim.
    assert _exceed(randomized_response, range(40), 1.0) <= 2


@pytest.mark.soundness
@pytest.mark.parametrize("draw", [randomized_response, laplace_scores])
@pytest.mark.parametrize("guesses", [None, 1000])
def test_soundness_epsilon_dp_scores_over_400_seeds(draw, guesses):
    # Measured (seeds 0..399, eps 1): randomized response 12 (default grid) and 10 (all guesses) of 400;
    # Laplace 8 and 0 of 400.  The bound may exceed epsilon in at most 5% of runs: 20 of 400.
    assert _exceed(draw, range(400), 1.0, guesses=guesses) <= 20


@pytest.mark.soundness
def test_soundness_gaussian_scores_against_their_gdp_curve_over_200_seeds():
    # Each score is inc + N(0, 1): exactly 1-GDP in its own bit; audited against the whole curve, delta > 0.
    bad = 0
    for s in range(200):
        rng = np.random.default_rng(s)
        inc = rng.integers(0, 2, 1000)
        bad += dpaudit.audit_one_run(inc + rng.normal(0.0, 1.0, 1000), inc, claim="gdp:mu=1").violation
    assert bad <= 10
