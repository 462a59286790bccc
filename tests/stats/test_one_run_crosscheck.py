"""Independent checks of the one-run bound, written apart from dpaudit.stats.one_run (a second implementation).

Each number here comes another way: the delta term summed by hand from binomial probabilities, the delta-0
bound as a Clopper-Pearson beta quantile in logit, the paper's no-abstention example, and the default
guesses as the best of the grid at the Bonferroni share recomputed from the counts.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.special import logit
from scipy.stats import beta as beta_dist

import dpaudit
from dpaudit.cli import main
from dpaudit.stats.one_run import guess_counts, guess_grid, one_run_epsilon_bound, one_run_p_value


def test_the_delta_term_against_a_hand_sum():
    m, r, v, eps, delta = 200, 30, 24, 0.8, 1e-3
    q = 1 / (1 + math.exp(-eps))
    pmf = [math.comb(r, k) * q ** k * (1 - q) ** (r - k) for k in range(r + 1)]
    alpha = max(sum(pmf[v - i:v]) / i for i in range(1, v + 1))
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(sum(pmf[v:]) + 2 * m * delta * alpha, rel=1e-10)


@pytest.mark.parametrize("m, r, v", [(1000, 1000, 700), (1000, 200, 150), (500, 37, 30), (10_000, 5000, 2600),
                                     (100, 100, 99), (1000, 16, 16)])
def test_delta_0_is_the_clopper_pearson_lower_bound_in_logit(m, r, v):
    # P[Bin(r, q) >= v] is the Beta(v, r - v + 1) cdf at q, so the bound is a beta quantile, in logit.
    assert one_run_epsilon_bound(m, r, v) == pytest.approx(max(0.0, logit(beta_dist.ppf(0.05, v, r - v + 1))),
                                                          abs=1e-7)


def test_the_papers_example_without_abstentions():
    assert one_run_epsilon_bound(100, 100, 75, delta=1e-4) == pytest.approx(0.699, abs=1e-3)


def test_default_guesses_are_the_best_of_the_grid_at_the_bonferroni_share():
    rng = np.random.default_rng(4)
    inc = rng.integers(0, 2, 1000)
    scores = inc + rng.laplace(0.0, 0.5, 1000)
    report = dpaudit.audit_one_run(scores, inc, epsilon=5.0)
    grid = guess_grid(1000)
    share = 1 - 0.05 / len(grid)
    best = max(one_run_epsilon_bound(1000, *guess_counts(scores, inc, k), confidence=share) for k in grid)
    assert report.epsilon_lower_bound == pytest.approx(best, abs=1e-12)
    fixed = dpaudit.audit_one_run(scores, inc, epsilon=5.0, guesses=report.guesses)
    assert fixed.correct == report.correct and fixed.epsilon_lower_bound > report.epsilon_lower_bound


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    inc = rng.integers(0, 2, 100)
    np.save(tmp_path / "s.npy", inc + rng.laplace(0, 0.25, 100))
    np.save(tmp_path / "i.npy", inc)
    (tmp_path / "nan.csv").write_text("score\n" + "\n".join(["1.0"] * 99 + ["nan"]) + "\n")
    np.save(tmp_path / "wide.npy", np.zeros((10, 10)))
    np.save(tmp_path / "two.npy", np.r_[inc[:-1], 2])
    (tmp_path / "bad.json").write_text("{oops")
    return tmp_path


@pytest.mark.parametrize("scores, included, needle", [
    ("nan.csv", "i.npy", "NaN"), ("wide.npy", "i.npy", "wide.npy"), ("bad.json", "i.npy", "bad.json"),
    ("s.npy", "two.npy", "got 2"), ("s.npy", "missing.npy", "missing.npy"),
])
def test_one_run_bad_files_exit_2_in_one_line(files, scores, included, needle, capsys):
    code = main(["one-run", str(files / scores), str(files / included), "--epsilon", "1"])
    cap = capsys.readouterr()
    assert code == 2 and cap.out == "" and cap.err.count("\n") == 1 and cap.err.startswith("dpaudit: error: ")
    assert needle in cap.err and "np." not in cap.err and "Traceback" not in cap.err, cap.err


def test_one_run_json_is_the_python_report(files, capsys):
    assert main(["one-run", str(files / "s.npy"), str(files / "i.npy"), "--epsilon", "1", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    ref = dpaudit.audit_one_run(np.load(files / "s.npy"), np.load(files / "i.npy"), epsilon=1.0).to_dict()
    for key in ("epsilon_lower_bound", "claimed_epsilon", "claimed_delta", "confidence", "canaries", "guesses",
                "correct", "verdict", "claim", "curve_violation"):
        assert out[key] == ref[key]


def test_the_delta_term_leaves_out_nothing_that_counts():
    # The p-value sums P[Bin = v - i] only down to 50 standard deviations below the mean; scipy.stats over
    # every count must give the same p-value (random cases, up to 2 x 10^4 guesses, far and near tails).
    from scipy.stats import binom

    rng = np.random.default_rng(11)
    for _ in range(40):
        r = int(rng.integers(1, 20_000))
        v = int(rng.integers(0, r + 1))
        eps, delta, m = float(rng.uniform(0, 4)), float(10 ** rng.uniform(-8, -2)), r + int(rng.integers(0, 1000))
        q = 1 / (1 + math.exp(-eps))
        full = binom.sf(v - 1, r, q)
        if v > 0:
            below = binom.pmf(np.arange(v - 1, -1, -1), r, q)
            full += 2 * m * delta * np.max(np.cumsum(below) / np.arange(1, v + 1))
        assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(min(full, 1.0), rel=1e-9, abs=1e-300)
