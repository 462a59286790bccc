"""jax_privacy's published one-run numbers, reproduced with dpaudit's bounds and jax_privacy's guess rule.

Where the numbers and the rule were read: google-deepmind/jax_privacy, ``tests/auditing_test.py``
(``test_epsilon_one_run_close``: 10,000 "deterministic normal" scores per side, the quantiles
``Phi^-1((i + 1/2) / n)`` shifted by 0 or ``shift``, significance 0.05, delta 1e-6; Steinke, Nasr and
Jagielski (2023): shift 1 -> 1.13346, 2 -> 2.311945, 4 -> 4.395568; f-DP (Mahloujifar, Melis and
Chaudhuri 2025): 2.164749, 4.7218075, 9.133752) and ``jax_privacy/auditing.py``
(``CanaryScoreAuditor.epsilon_one_run`` with its defaults: ``one_sided=True`` and the ``Bonferroni()``
threshold strategy; ``_get_tn_fn_counts``, ``_pareto_frontier``, ``_epsilon_one_run_all_thresholds``).
Their guess rule, as read there:

* the m canaries are all 20,000 scores, IN and OUT together;
* one-sided guesses: at a threshold t every canary scoring >= t is guessed IN (k+ = TP + FP guesses,
  TP of them right), every other one abstains (k- = 0);
* the thresholds are every distinct score and +inf, kept only where the (FN, TN) counts lie on the
  upper convex hull of that polyline (strictly: points on or under a chord are dropped);
* the significance 0.05 is split equally over the kept thresholds (Bonferroni), and the bound is the
  largest over them of the epsilon the theorem rejects at that share.

dpaudit's own bounds (``one_run_epsilon_bound``, the paper's theorem with its delta term, and
``fdp_one_run_mu_bound``) are applied to the counts this rule gives; dpaudit's audits choose their
guesses differently (``docs/ml-auditing.md``), so this checks the arithmetic, not the audit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpaudit.stats.gdp import gaussian_epsilon
from dpaudit.stats.one_run import fdp_one_run_mu_bound_max, one_run_epsilon_bound

N, SIGNIFICANCE, DELTA = 10_000, 0.05, 1e-6


def _deterministic_normal(shift: float, n: int = N) -> np.ndarray:
    return stats.norm.ppf(np.linspace(0, 1, n, endpoint=False) + 1 / (2 * n)) + shift


def _upper_hull(x: np.ndarray, y: np.ndarray) -> list[int]:
    """Indices of the points (sorted by x) on the upper convex hull; collinear and lower points dropped."""
    hull: list[int] = []
    for i in range(len(x)):
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            if (x[a] - x[o]) * (y[i] - y[o]) - (y[a] - y[o]) * (x[i] - x[o]) >= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    return hull


def jax_privacy_guess_counts(in_scores, out_scores) -> list[tuple[int, int]]:
    """``(guesses, correct)`` at each threshold jax_privacy keeps (see the module docstring)."""
    thresholds = np.append(np.union1d(in_scores, out_scores), np.inf)
    fn = np.searchsorted(np.sort(in_scores), thresholds, side="left")
    tn = np.searchsorted(np.sort(out_scores), thresholds, side="left")
    keep = _upper_hull(fn.astype(float), tn.astype(float))
    tp, fp = len(in_scores) - fn[keep], len(out_scores) - tn[keep]
    return [(int(a + b), int(a)) for a, b in zip(tp, fp)]


@pytest.mark.parametrize("shift, published, digits, published_fdp", [
    (1, 1.13346, 5, 2.164749), (2, 2.311945, 6, 4.7218075), (4, 4.395568, 6, 9.133752)])
def test_steinke_nasr_jagielski_bounds_match_jax_privacy_to_their_digits(shift, published, digits, published_fdp):
    in_scores, out_scores = _deterministic_normal(shift), _deterministic_normal(0)
    counts = jax_privacy_guess_counts(in_scores, out_scores)
    m, confidence = 2 * N, 1 - SIGNIFICANCE / len(counts)
    snj = max(one_run_epsilon_bound(m, k, c, delta=DELTA, confidence=confidence) for k, c in counts if c)
    assert round(snj, digits) == published, snj
    # beside them, the f-DP bound of the same guesses (already matched at fixed counts in test_one_run_fdp.py)
    mu = fdp_one_run_mu_bound_max(m, [(k, c) for k, c in counts if c], confidence=confidence)
    assert gaussian_epsilon(mu, DELTA) == pytest.approx(published_fdp, rel=2e-5)
    assert snj < gaussian_epsilon(mu, DELTA)   # the f-DP test certifies more on Gaussian scores


def test_the_hull_keeps_what_jax_privacys_pareto_frontier_keeps():
    """Their docstring's examples (``test_pareto_frontier_simple_*`` in the same test file)."""
    for points, kept in [([[0, 0], [0, 2], [3, 2], [3, 5], [5, 5]], [0, 1, 3, 4]),
                         ([[0, 0], [0, 2], [2, 2], [2, 3], [3, 3], [3, 5], [5, 5]], [0, 1, 5, 6]),
                         ([[0, 0], [0, 2], [1, 2], [1, 4], [3, 4], [3, 5], [5, 5]], [0, 1, 3, 5, 6]),
                         ([[0, 0], [1, 1], [2, 2]], [0, 2])]:
        p = np.array(points, dtype=float)
        assert _upper_hull(p[:, 0], p[:, 1]) == kept
