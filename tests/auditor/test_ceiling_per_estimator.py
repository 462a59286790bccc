"""The report's ceiling is the most the held-out samples could certify with the estimator used (defect G).

It used to be Clopper-Pearson's whatever the estimator, so ``--estimator gdp`` on separated scores
reported a bound of 44.4 under a "ceiling" of 6.85.
"""

import numpy as np
import pytest

import dpaudit
from dpaudit.stats.estimators import ESTIMATORS


@pytest.mark.parametrize("estimator", sorted(ESTIMATORS))
def test_scores_bound_never_exceeds_the_ceiling(estimator):
    rng = np.random.default_rng(0)
    # Perfectly separated scores: every estimator certifies as much as the sizes allow.
    rep = dpaudit.audit_scores(rng.normal(10, 1, 1000), rng.normal(0, 1, 1000), epsilon=1, delta=1e-5,
                               estimator=estimator, seed=1)
    assert rep.estimator == estimator
    assert 0 < rep.epsilon_lower_bound <= rep.ceiling + 1e-9
    assert rep.epsilon_lower_bound == pytest.approx(rep.ceiling, rel=1e-9)  # a perfect attack reaches it


@pytest.mark.parametrize("estimator", sorted(ESTIMATORS))
def test_audit_bound_never_exceeds_the_ceiling(estimator):
    # A release that reveals the record: a perfect attack, again at the ceiling.
    rep = dpaudit.audit(lambda d, rng=None, size=None: np.full(size, float(np.sum(d))), [1.0], [0.0], epsilon=1,
                        delta=1e-5, samples=2000, seed=1, ideal=True, estimator=estimator)
    assert 0 < rep.epsilon_lower_bound <= rep.ceiling + 1e-9


def test_gdp_ceiling_is_the_perfect_attack_bound():
    from dpaudit.stats.estimators import GaussianDPEstimator, HeldOutCounts
    from dpaudit.stats.selection import ThresholdEvent

    counts = HeldOutCounts.from_scores([0.5], np.ones(700), np.zeros(3500))
    res = GaussianDPEstimator().bound(counts, ThresholdEvent(0.5), delta=1e-5, confidence=0.95)
    assert res.ceiling == pytest.approx(res.epsilon_lower_bound) and res.ceiling > 10
    worse = HeldOutCounts.from_scores([0.5], np.r_[np.ones(600), np.zeros(100)], np.zeros(3500))
    res2 = GaussianDPEstimator().bound(worse, ThresholdEvent(0.5), delta=1e-5, confidence=0.95)
    assert res2.epsilon_lower_bound < res2.ceiling == pytest.approx(res.ceiling)
