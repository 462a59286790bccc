"""Randomized response, exponential mechanism, report-noisy-max and histograms: known answers and laws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms.testing import chisquare_pvalue
from dpaudit.exceptions import ParameterValueError
from dpaudit.mechanisms import (
    ExponentialMechanism,
    HistogramReplaceOneBug,
    NoisyHistogram,
    RandomizedResponse,
    ReportNoisyMaxExponential,
    ReportNoisyMaxLaplace,
    ReportNoisyMaxWithValue,
    rr_debias,
    rr_epsilon,
)

ALPHA = 1e-3  # per-assertion failure probability for a correct sampler (fixed seed: deterministic)
N = 40_000


# -- randomized response ----------------------------------------------------------------
def test_rr_seed_known_answers():
    # Dwork and Roth 2014, section 3.2: p = 1/2 gives Pr[1 | x=1] = 3/4, Pr[1 | x=0] = 1/4, epsilon = ln 3.
    rr = RandomizedResponse(p=0.5)
    assert rr.claim.point_epsilon == math.log(3)
    assert rr.output_probabilities(1) == (0.25, 0.75)
    assert rr.output_probabilities(0) == (0.75, 0.25)
    assert rr_epsilon(0.8) == pytest.approx(math.log(1 + 2 * 0.8 / 0.2))
    assert rr.claim.neighbouring.value == "replace-one"


def test_rr_one_respondent_is_bernoulli():
    rr = RandomizedResponse(p=0.5)
    x = rr([1], size=N, rng=1)
    assert chisquare_pvalue(x, [0, 1], [0.25, 0.75]) > ALPHA
    y = rr([0], size=N, rng=2)
    assert chisquare_pvalue(y, [0, 1], [0.75, 0.25]) > ALPHA


def test_rr_count_is_sum_of_binomials():
    p = 0.3
    rr = RandomizedResponse(p=p)
    x = rr([1, 1, 0, 1, 0], size=N, rng=3)
    law = np.convolve(stats.binom.pmf(range(4), 3, (1 + p) / 2), stats.binom.pmf(range(3), 2, (1 - p) / 2))
    assert chisquare_pvalue(x, range(6), law) > ALPHA


def test_rr_answers_and_debias():
    rr = RandomizedResponse(p=0.6, release="answers")
    truth = np.r_[np.ones(300), np.zeros(700)]
    answers = rr(truth, size=40, rng=4)
    assert answers.shape == (40, 1000)
    assert chisquare_pvalue(answers[:, 0], [0, 1], [0.2, 0.8]) > ALPHA
    # 40 000 answers: the debiased estimate has sd sqrt(var)/p ~ 0.004; 0.02 is 5 sd.
    assert rr_debias(answers.ravel(), 0.6) == pytest.approx(0.3, abs=0.02)
    with pytest.raises(ParameterValueError, match="p must be in"):
        rr_debias([1], 0.0)
    with pytest.raises(ParameterValueError, match="p must be in"):
        RandomizedResponse(p=1.0)


# -- exponential mechanism ----------------------------------------------------------------
FR_SO_JU_SE = [1] * 4 + [2] * 6 + [3] * 6  # 0 Fr, 4 So, 6 Ju, 6 Se (a four-season vote: Fr, So, Ju, Se)


def test_exponential_seed_known_answer():
    em = ExponentialMechanism(epsilon=math.log(2), n_candidates=4)
    # 2^(q/2): 1, 4, 8, 8 over 21 (the seed's "= 20" line is a typo; its probabilities use 21).
    np.testing.assert_allclose(em.probabilities(FR_SO_JU_SE), [1 / 21, 4 / 21, 8 / 21, 8 / 21], rtol=1e-12)
    one_hot = np.eye(4)[FR_SO_JU_SE]  # the same data as 2-D rows
    np.testing.assert_allclose(em.probabilities(one_hot), [1 / 21, 4 / 21, 8 / 21, 8 / 21], rtol=1e-12)
    x = em(FR_SO_JU_SE, size=N, rng=5)
    assert chisquare_pvalue(x, range(4), [1 / 21, 4 / 21, 8 / 21, 8 / 21]) > ALPHA


def test_exponential_custom_utility_and_true_epsilon():
    em = ExponentialMechanism(epsilon=1.0, n_candidates=3, utility=lambda d: [0.0, 1.0, 2.0])
    np.testing.assert_allclose(em.probabilities([0]), np.exp([0, 0.5, 1]) / np.exp([0, 0.5, 1]).sum())
    assert em.true_epsilon() == 1.0
    assert ExponentialMechanism(epsilon=1.0).true_epsilon() == 0.5  # monotone counting utilities


# -- report noisy max ----------------------------------------------------------------------
@pytest.mark.parametrize("cls", [ReportNoisyMaxLaplace, ReportNoisyMaxExponential])
def test_report_noisy_max_law(cls):
    m = cls(epsilon=1.0, n_candidates=4)
    data = [0, 1, 1, 2, 2, 2, 3]  # counts 1, 2, 3, 1
    probs = m.probabilities(data)
    assert probs.sum() == pytest.approx(1.0)
    x = m(data, size=N, rng=6)
    assert chisquare_pvalue(x, range(4), probs) > ALPHA


def test_report_noisy_max_with_value_law():
    m = ReportNoisyMaxWithValue(epsilon=1.0, n_candidates=3)
    d, d2 = m.neighbouring_pair()
    out = m(d2, size=N, rng=7)  # all three counts equal 1
    assert out.shape == (N, 2)
    # the noisy maximum of three i.i.d. Laplace(1) around 1 has CDF F(x - 1)^3
    lap = stats.laplace(loc=1.0, scale=1.0)
    assert stats.kstest(out[:, 1], lambda v: lap.cdf(v) ** 3).pvalue > ALPHA
    assert m.broken and m.true_epsilon() == 3.0


# -- histograms ----------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [NoisyHistogram, HistogramReplaceOneBug])
def test_histogram_law(cls):
    m = cls(epsilon=0.5, n_bins=3)
    x = m([0, 1, 1, 2, 2, 2, 7], size=N, rng=8)  # label 7 falls in no bin
    for j, count in enumerate([1, 2, 3]):
        # three KS tests at 1e-3 each: failure probability <= 3e-3 for the parametrised case
        assert stats.kstest(x[:, j], stats.laplace(loc=count, scale=2.0).cdf).pvalue > ALPHA


def test_histogram_claims():
    assert NoisyHistogram().claim.neighbouring.value == "add-remove"
    bug = HistogramReplaceOneBug(epsilon=1.0)
    assert bug.claim.neighbouring.value == "replace-one" and bug.true_epsilon() == 2.0
    d, d2 = bug.neighbouring_pair()
    assert len(d) == len(d2) and np.count_nonzero(d != d2) == 1
    with pytest.raises(ParameterValueError, match="1-D dataset of labels"):
        NoisyHistogram()(np.zeros((2, 2)))
