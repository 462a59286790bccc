"""One-run statistics (Steinke, Nasr and Jagielski 2023): the paper's numbers, and the bound's defining property."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.exceptions import ParameterValueError
from dpaudit.stats.one_run import guess_counts, guess_grid, one_run_ceiling, one_run_epsilon_bound, one_run_p_value


@pytest.mark.parametrize("m", [1, 2, 10, 100, 1000, 10_000])
def test_all_guesses_right_at_delta_0_is_log_q_over_1_minus_q(m):
    q = 0.05 ** (1 / m)  # below 1/2 for m = 1: one right guess certifies nothing (0, not a negative epsilon)
    assert one_run_epsilon_bound(m, m, m) == pytest.approx(max(0.0, math.log(q / (1 - q))), abs=1e-6)
    assert one_run_ceiling(m, m) == one_run_epsilon_bound(m, m, m)


def test_m_1000_ceiling_is_5_809():
    assert round(one_run_epsilon_bound(1000, 1000, 1000), 3) == 5.809


@pytest.mark.parametrize("m, r, v, delta, published", [
    (1000, 100, 75, 1e-4, 0.673),        # the paper's Appendix D example
    (100_000, 1510, 1439, 1e-5, 2.675),  # its Section 7 (the paper truncates 2.6758)
])
def test_the_papers_published_bounds(m, r, v, delta, published):
    assert one_run_epsilon_bound(m, r, v, delta=delta) == pytest.approx(published, abs=1e-3)


def test_the_papers_p_value_example():
    assert one_run_p_value(100, 100, 75, math.log(3)) == pytest.approx(0.553, abs=1e-3)


@pytest.mark.parametrize("r, v", [(50, 40), (200, 130), (1000, 560), (31, 31)])
def test_delta_0_bound_is_the_binomial_tail_root(r, v):
    # Independent check: the epsilon where P[Bin(r, e^eps/(1+e^eps)) >= v] = 0.05, by scipy's root finder.
    eps = one_run_epsilon_bound(1000, r, v)
    f = lambda e: stats.binom.sf(v - 1, r, 1 / (1 + math.exp(-e))) - 0.05  # noqa: E731
    assert eps == pytest.approx(__import__("scipy.optimize").optimize.brentq(f, 0.0, 50.0), abs=1e-6)
    assert f(eps) <= 0  # the low end: never above the root


def test_the_bound_grows_with_correct_guesses_and_falls_with_delta():
    b = [one_run_epsilon_bound(1000, 200, v) for v in (110, 130, 150, 170)]
    assert b == sorted(b) and b[0] < b[-1]
    assert one_run_epsilon_bound(1000, 200, 170, delta=1e-4) < one_run_epsilon_bound(1000, 200, 170)
    assert one_run_epsilon_bound(1000, 200, 100) == 0.0  # chance level certifies nothing


def test_guesses_use_scores_only_and_split_top_and_bottom():
    scores = np.array([0.9, 0.1, 0.5, 0.8, 0.2, 0.7])
    inc = np.array([1, 0, 1, 1, 0, 0])
    assert guess_counts(scores, inc, 2) == (2, 2)   # median 0.6: 0.1 (out) and 0.9 (in) are farthest
    assert guess_counts(scores, inc, 6) == (6, 4)
    assert guess_grid(1000) == [1000, 500, 250, 125, 62, 31, 15] and guess_grid(3) == [3]


@pytest.mark.parametrize("args", [(10, 11, 5), (10, 5, 6), (0, 0, 0)])
def test_impossible_counts_are_refused(args):
    with pytest.raises(ParameterValueError):
        one_run_epsilon_bound(*args)


def _bisection_bound(m, r, v, delta, confidence):
    """The reference: bisection on the p-value to 1e-9, keeping the low end (how the bound was first read)."""
    from dpaudit.stats.one_run import _largest

    return _largest(lambda e: one_run_p_value(m, r, v, e, delta) < 1 - confidence, 1.0, 1e-9)


def test_the_root_finder_keeps_bisections_bound_and_its_guarantee():
    # Closed form at delta 0, Brent's method below it otherwise: on 400 random counts (seeded) the
    # bound is within 2e-9 (relative) of bisection's, is rejected, and a point 1e-9 above it is not.
    rng = np.random.default_rng(11)
    for _ in range(400):
        m = int(rng.choice([20, 1000, 100_000]))
        r = int(rng.integers(1, m + 1))
        v = int(rng.integers(r // 2, r + 1))
        delta = float(rng.choice([0.0, 1e-6, 1e-4, 1e-2]))
        confidence = float(rng.choice([0.9, 0.95, 0.999, 1 - 1e-7]))
        new = one_run_epsilon_bound(m, r, v, delta=delta, confidence=confidence)
        old = _bisection_bound(m, r, v, delta, confidence)
        assert abs(new - old) <= 2e-9 * max(1.0, old), (m, r, v, delta, confidence, new, old)
        if new > 0:
            assert one_run_p_value(m, r, v, new, delta) < 1 - confidence
            assert one_run_p_value(m, r, v, new + 1.1e-9 * max(1.0, new), delta) >= 1 - confidence


def _delta_term_in_full(r, v, q):
    """The paper's delta term from every count 0..v-1, in the same float operations: the reference."""
    from scipy import special

    k = np.arange(v - 1, -1, -1, dtype=float)
    terms = np.exp(special.gammaln(r + 1.0) - special.gammaln(k + 1.0) - special.gammaln(r - k + 1.0)
                   + special.xlogy(k, q) + special.xlog1py(r - k, -q))
    return float(np.max(np.cumsum(terms) / np.arange(1, len(k) + 1)))


def test_the_delta_terms_window_changes_no_bit():
    # Leaving out counts below the mode must give the whole sum's maximum to the bit: 3,000 random (r, v, q),
    # a third of them skewed (q within 1e-3 of 0 or 1).  Measured with the window 3 standard deviations below the
    # mode: it serves 714, the whole range after a window that did not show the maximum 85, the whole range alone
    # (nothing to leave out) 2,201.  (The fallback is the proof's guard: on these cases the short window alone would
    # also give every bit; what must hold is the output.)
    from dpaudit.stats.one_run import _delta_term

    rng = np.random.default_rng(11)
    for i in range(3000):
        r = int(rng.choice([1, 5, 60, 1000, 20_000]) * rng.uniform(0.5, 1.0)) + 1
        q = [rng.uniform(0.01, 0.99), rng.uniform(0.999, 1.0), rng.uniform(0.0, 1e-3)][i % 3]
        # Half anywhere, half where audits ask: 2 below to 8 standard deviations above the mean.
        near = r * q + math.sqrt(r * q * (1 - q)) * rng.uniform(-2, 8)
        v = int(rng.integers(1, r + 1)) if i % 2 else int(min(max(near, 1), r))
        assert _delta_term(r, v, q) == _delta_term_in_full(r, v, q), (r, v, q)


def test_newton_ends_on_a_small_step_instead_of_halving_its_bracket(monkeypatch):
    # A converged step that lands on a bracket end (f exactly 0, or under x's float spacing) used to be
    # halved like a wild one, and bisection then ran to 1e-12: (62, 58) of 1,000 canaries at delta 1e-6 took 38
    # p-values instead of 4.  Deterministic counts, not timings: every search on 300 seeded counts (and that one)
    # takes at most 12, and the bound keeps its guarantee (checked above and here).
    from dpaudit.stats import one_run as mod

    calls = []
    real = mod._p_value_and_slope
    monkeypatch.setattr(mod, "_p_value_and_slope", lambda *a: calls.append(a) or real(*a))
    rng = np.random.default_rng(5)
    cases = [(1000, 62, 58, 1e-6, 1 - (0.05 / 7) * 0.25)]
    for _ in range(300):
        m = int(rng.choice([100, 1000, 100_000]))
        r = int(rng.integers(1, m + 1))
        cases.append((m, r, int(rng.integers(r // 2, r + 1)), float(rng.choice([1e-6, 1e-5, 1e-4])),
                      float(rng.choice([0.95, 0.999]))))
    for m, r, v, delta, confidence in cases:
        calls.clear()
        bound = one_run_epsilon_bound(m, r, v, delta=delta, confidence=confidence)
        assert len(calls) <= 12, (m, r, v, delta, confidence, len(calls))
        if bound > 0:
            assert one_run_p_value(m, r, v, bound, delta) < 1 - confidence
            assert one_run_p_value(m, r, v, bound + 1.1e-9 * max(1.0, bound), delta) >= 1 - confidence
