"""The Poisson certificate: exact conditional test of two Poisson counts.

Known answers are computed exactly (sums over the Poisson laws), so these
tests are deterministic; the one simulation states its failure probability.
"""

import math

import numpy as np
import pytest
import scipy.stats as sps

from dpaudit.exceptions import ParameterValueError
from dpaudit.stats.bounds import (
    epsilon_lower_bound,
    poisson_epsilon_bound,
    poisson_held_out_mean,
    poisson_log_ratio,
)
from dpaudit.stats.selection import ThresholdEvent, calibration_counts, calibration_rates


def test_log_ratio_is_the_clopper_pearson_bound_on_the_conditional_binomial():
    # theta_lo is the alpha quantile of Beta(x, S - x + 1); the ratio is theta / (1 - theta).
    for x, y, alpha in [(2000, 1000, 0.05), (30, 7, 0.01), (5, 0, 0.1), (1, 40, 0.05)]:
        theta = sps.beta.ppf(alpha, x, y + 1)
        want = max(0.0, math.log(theta / (1 - theta)))
        assert poisson_log_ratio(x, y, alpha) == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert poisson_log_ratio(0, 0, 0.05) == 0.0 and poisson_log_ratio(0, 9, 0.05) == 0.0
    # Unequal exposures: twice the releases on the numerator's side halve the ratio.
    assert poisson_log_ratio(400, 100, 0.05, 0.5) == pytest.approx(poisson_log_ratio(400, 100, 0.05) - math.log(2))


@pytest.mark.parametrize("mean_den", [0.5, 3.0, 20.0, 150.0])
def test_exact_size_at_the_boundary_never_exceeds_alpha(mean_den):
    """P(bound > eps) when the means' ratio is exactly e^eps, summed exactly over both Poisson laws."""
    eps, alpha = 1.0, 0.05
    mean_num = math.e ** eps * mean_den
    hi = int(mean_num + 12 * math.sqrt(mean_num) + 30)
    x = np.arange(hi)
    p_num = sps.poisson.pmf(x, mean_num)
    p_den = sps.poisson.pmf(x, mean_den)
    xx, yy = np.meshgrid(x, x, indexing="ij")
    over = poisson_log_ratio(xx, yy, alpha) > eps
    size = float(np.sum(p_num[:, None] * p_den[None, :] * over))
    assert size <= alpha
    if mean_den >= 20:  # not needlessly conservative once the counts are not tiny
        assert size >= 0.6 * alpha


def test_a_rare_event_certifies_more_than_two_intervals_at_the_same_share():
    """300 against 100 hits of 10^6 (ratio 3): the conditional test at alpha/2 against two intervals at alpha/2 each."""
    two = epsilon_lower_bound(300, 999_700, 100, 999_900, confidence=0.95).epsilon_lower_bound
    one = poisson_epsilon_bound(300, 999_700, 100, 999_900, confidence=0.975).epsilon_lower_bound
    assert 0.75 < two < one < math.log(3)


def test_epsilon_bound_fields_and_direction():
    # The complement's inequality: P_D'(E^c) / P_D(E^c) from tn = 700 against fn = 400.
    b = poisson_epsilon_bound(600, 400, 300, 700, inequality="complement", confidence=0.95)
    assert b.method == "poisson-conditional" and b.direction == "D' over D" and b.event == "complement"
    assert b.epsilon_lower_bound == pytest.approx(poisson_log_ratio(700, 400, 0.05)) and b.epsilon_lower_bound > 0
    assert (b.tp, b.fn, b.fp, b.tn) == (600, 400, 300, 700)
    assert b.ceiling == pytest.approx(poisson_log_ratio(1000, 0, 0.05)) and b.ceiling > b.epsilon_lower_bound
    e = poisson_epsilon_bound(600, 400, 300, 700, confidence=0.95)
    assert e.direction == "D over D'" and e.event == "event"
    assert e.epsilon_lower_bound == pytest.approx(poisson_log_ratio(600, 300, 0.05))
    assert poisson_epsilon_bound(100, 900, 300, 700, confidence=0.95).epsilon_lower_bound == 0.0
    with pytest.raises(ParameterValueError):
        poisson_epsilon_bound(0, 0, 3, 4)
    with pytest.raises(ParameterValueError):
        poisson_epsilon_bound(1, 2, 3, 4, inequality="both")


def test_held_out_mean_leaves_room_for_the_poisson_draw():
    for n in (10, 100, 10_000, 10**7):
        lam = poisson_held_out_mean(n)
        assert n / 2 <= lam < n
        if n >= 10_000:
            assert sps.poisson.sf(n, lam) < 1e-4


def test_poisson_value_takes_the_better_of_event_and_complement():
    rng = np.random.default_rng(3)
    s0, s1 = 1 + rng.laplace(size=50_000), rng.laplace(size=50_000)
    rates = calibration_rates(calibration_counts(s0, s1, [0.0, 3.0]), n_test0=50_000, n_test1=50_000,
                              confidence=0.95, nested=True)
    # score >= 3 (0.068 against 0.025): the event itself, D over D'.
    inequality, value = rates.poisson_value(ThresholdEvent(3.0))
    assert inequality == "event" and 0.8 < value < 1.0
    inequality, value = rates.poisson_value(ThresholdEvent(0.0))
    # score >= 0 holds 0.82 against 0.5: its complement (score < 0: 0.5 on D' against 0.18) is the leak.
    assert inequality == "complement" and 0.8 < value < 1.0
