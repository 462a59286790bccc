"""Epsilon lower bounds from confusion counts: known answers, edge cases, results.

Failure probabilities of the seeded tests are over the choice of seed and were
computed before the tests were written (normal approximation of the bound's
sampling distribution, confirmed by simulating 2000 seeds).
"""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.exceptions import ParameterTypeError, ParameterValueError
from dpaudit.stats import bounds as bounds_module
from dpaudit.stats import (
    EpsilonBound,
    ceiling,
    cp_lower,
    cp_upper,
    epsilon_bounds_array,
    epsilon_lower_bound,
    log_ratio_bound,
)

LN3 = math.log(3.0)


# --------------------------------------------------------------------------- #
# Known answers without randomness
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("n,k", [(1, 0), (1, 1), (10, 3), (1000, 0), (1000, 500), (1000, 1000), (10**6, 123_456)])
@pytest.mark.parametrize("directions", ["forward", "both"])
def test_constant_mechanism_certifies_nothing(n, k, directions):
    # Identical counts on D and D' (an attack whose guess ignores the output):
    # every CP interval contains k/n on both sides, so every ratio is <= 1.
    b = epsilon_lower_bound(k, n - k, k, n - k, directions=directions)
    assert b.epsilon_lower_bound == 0.0


@pytest.mark.parametrize("n0,n1", [(1, 1), (10, 10), (1000, 1000), (10**6, 10**6), (500, 2000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.999])
def test_perfect_separation_gives_exactly_the_ceiling(n0, n1, confidence):
    b = epsilon_lower_bound(n0, 0, 0, n1, confidence=confidence)
    assert b.epsilon_lower_bound == b.ceiling == ceiling(n0, n1, confidence=confidence)
    # Closed form (forward: two intervals, alpha = (1 - c) / 2 each):
    # TPR_lo = alpha^(1/n0), FPR_hi = 1 - alpha^(1/n1); the complement gives
    # the same ratio with n0 and n1 swapped, and the bound is the larger.
    a = (1 - confidence) / 2
    ev = math.log(a ** (1 / n0)) - math.log(-math.expm1(math.log(a) / n1))
    co = math.log(a ** (1 / n1)) - math.log(-math.expm1(math.log(a) / n0))
    assert b.ceiling == pytest.approx(max(ev, co, 0.0), rel=1e-9, abs=1e-12)


def test_ceiling_known_value_and_growth():
    # ln(0.025^(1e-6) / (1 - 0.025^(1e-6))) at 10^6 per side: with
    # x = ln(0.025) / 1e6 = -3.68888e-6, x - ln(-expm1(x)) = 12.51019.
    assert ceiling(10**6, 10**6) == pytest.approx(12.51019, abs=1e-5)
    # Roughly ln(n / ln(1/alpha)): more samples, higher ceiling; the
    # extra intervals of "both" and a Bonferroni factor lower it.
    assert ceiling(10**3, 10**3) < ceiling(10**4, 10**4) < ceiling(10**5, 10**5)
    assert ceiling(10**4, 10**4, directions="both") < ceiling(10**4, 10**4)
    assert ceiling(10**4, 10**4, n_comparisons=100) < ceiling(10**4, 10**4)
    # Every bound is below its ceiling.
    assert epsilon_lower_bound(9_000, 1_000, 10, 9_990).epsilon_lower_bound < ceiling(10_000, 10_000)


def test_randomized_response_at_expected_counts():
    # RR with p = 1/2: outputs 1 w.p. 3/4 on D and 1/4 on D', true eps = ln 3.
    # At the expected counts (no randomness) the bound is 1.0941 (module doctest)
    # and never above the truth.
    b = epsilon_lower_bound(750_000, 250_000, 250_000, 750_000)
    assert 1.09 <= b.epsilon_lower_bound <= LN3
    # By hand: both intervals at alpha = 0.025.
    by_hand = math.log(cp_lower(750_000, 10**6, 0.025) / cp_upper(250_000, 10**6, 0.025))
    assert b.epsilon_lower_bound == pytest.approx(by_hand, rel=1e-12)


def test_randomized_response_seeded_certifies_at_least_1_09():
    # Issue 2 known answer: 10^6 runs per side certify >= 1.09 (truth ln 3 = 1.0986).
    # The bound has mean 1.0947 and sd 0.0017 over seeds (2000 simulated), so
    # P(bound < 1.09) ~ Phi(-2.75) ~ 0.3% for a random seed.
    rng = np.random.default_rng(20240502)
    n = 10**6
    tp, fp = int(rng.binomial(n, 0.75)), int(rng.binomial(n, 0.25))
    b = epsilon_lower_bound(tp, n - tp, fp, n - fp)
    assert 1.09 <= b.epsilon_lower_bound <= LN3  # the upper side fails w.p. <= 5% (soundness)


LAPLACE_Q = math.exp(-1.0) / 2.0  # P(Lap(1) >= 1); P(1 + Lap(1) >= 1) = 1/2, ratio exactly e


def test_laplace_fixed_threshold_at_expected_counts():
    # Laplace mechanism, eps = 1 (D: 1 + Lap(1), D': Lap(1)), event "score >= 1"
    # fixed in advance: TPR = 1/2, FPR = e^-1 / 2, so TPR / FPR = e exactly.
    n = 10**6
    fp = round(n * LAPLACE_Q)
    b = epsilon_lower_bound(n // 2, n // 2, fp, n - fp)
    assert 0.99 <= b.epsilon_lower_bound <= 1.0  # 0.99391


def test_laplace_fixed_threshold_seeded_certifies_at_least_0_99():
    # Issue 2 known answer at 10^6 runs per side.  One draw has mean 0.99391 and
    # sd 0.00227 (2000 simulated seeds), so a single seed misses 0.99 with
    # probability ~4.2% -- too often for a test.  We assert it for the median of
    # 5 independent draws: P(>= 3 of 5 below 0.99) = 10 p^3 (1-p)^2 + ... ~ 7e-4.
    rng = np.random.default_rng(20240503)
    n = 10**6
    tp = rng.binomial(n, 0.5, size=5)
    fp = rng.binomial(n, LAPLACE_Q, size=5)
    got = [epsilon_lower_bound(int(t), n - int(t), int(f), n - int(f)).epsilon_lower_bound for t, f in zip(tp, fp)]
    assert np.median(got) >= 0.99
    # None is above the truth: each exceeds 1 w.p. <= 5% if sound (~0.5% here).
    assert max(got) <= 1.0


# --------------------------------------------------------------------------- #
# Zero counts, delta, directions
# --------------------------------------------------------------------------- #

def test_every_count_is_finite_and_bounded():
    # All 21 x 21 confusion tables at n = 20 per side, in both directions and
    # with delta: no NaN, no inf, never negative, never above the ceiling.
    n = 20
    tp, fp = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    for directions in ("forward", "both"):
        for delta in (0.0, 0.01, 0.5, 0.999):
            b, which = epsilon_bounds_array(tp, n - tp, fp, n - fp, delta=delta, directions=directions)
            top = ceiling(n, n, delta=delta, directions=directions)
            assert np.all(np.isfinite(b)) and np.all(b >= 0) and np.all(b <= top + 1e-12)
            assert set(np.unique(which)) <= ({0, 1} if directions == "forward" else {0, 1, 2, 3})


@pytest.mark.parametrize("counts", [(0, 10, 0, 10), (10, 0, 10, 0), (0, 1, 1, 0), (0, 10**6, 0, 10**6)])
def test_zero_counts_give_zero_not_nan(counts):
    b = epsilon_lower_bound(*counts)
    assert b.epsilon_lower_bound == 0.0
    assert math.isfinite(b.ceiling)


def test_delta_lowers_the_bound():
    counts = (9_000, 1_000, 500, 9_500)
    eps = [epsilon_lower_bound(*counts, delta=d).epsilon_lower_bound for d in (0, 1e-6, 1e-3, 0.01, 0.1, 0.5)]
    assert eps[0] > 0
    assert all(a >= b for a, b in zip(eps, eps[1:]))
    assert eps[-2] < eps[0]
    # Kairouz et al. form by hand: eps >= ln((TPR_lo - delta) / FPR_hi).
    delta = 0.1
    by_hand = math.log((cp_lower(9_000, 10_000, 0.025) - delta) / cp_upper(500, 10_000, 0.025))
    assert epsilon_lower_bound(*counts, delta=delta).epsilon_lower_bound == pytest.approx(by_hand, rel=1e-12)
    # The ceiling also decreases with delta.
    assert ceiling(10_000, 10_000, delta=0.1) < ceiling(10_000, 10_000)


def test_delta_at_least_tpr_certifies_nothing():
    # TPR = 0.9 and TNR = 0.9: with delta = 0.95 > both rates no inequality
    # P(E) <= e^eps P'(E) + delta can be violated, so the bound is 0.
    b = epsilon_lower_bound(900, 100, 100, 900, delta=0.95)
    assert b.epsilon_lower_bound == 0.0
    assert epsilon_lower_bound(900, 100, 100, 900, delta=0.95, directions="both").epsilon_lower_bound == 0.0
    # Between TPR_lo and TPR as well (delta above the certified rate).
    tpr_lo = cp_lower(900, 1000, 0.025)
    assert epsilon_lower_bound(900, 100, 0, 1000, delta=(tpr_lo + 0.9) / 2).epsilon_lower_bound == 0.0


def test_both_directions_catch_a_reverse_oriented_attack():
    # The attack guesses "D" when it should guess "D'" (RR with the labels swapped).
    counts = (250_000, 750_000, 750_000, 250_000)
    assert epsilon_lower_bound(*counts).epsilon_lower_bound == 0.0
    b = epsilon_lower_bound(*counts, directions="both")
    assert 1.08 < b.epsilon_lower_bound <= LN3
    assert b.direction == "D' over D"
    # "both" pays for its four intervals: slightly lower than "forward" on the
    # correctly oriented attack.
    fwd = epsilon_lower_bound(750_000, 250_000, 250_000, 750_000).epsilon_lower_bound
    assert b.epsilon_lower_bound < fwd


def test_which_inequality_is_reported():
    # A rare event in D' (few FP) with a modest TPR: the event gives the bound.
    b = epsilon_lower_bound(300, 700, 10, 990)
    assert (b.direction, b.event) == ("D over D'", "event")
    # Few FN, FPR = 1/2: the complement (guess D') gives it.
    b = epsilon_lower_bound(990, 10, 500, 500)
    assert (b.direction, b.event) == ("D' over D", "complement")


def test_log_ratio_bound_edges():
    assert log_ratio_bound(0.75, 0.25, 0.0) == pytest.approx(LN3)
    assert log_ratio_bound(0.2, 0.4, 0.0) == 0.0  # negative log clipped
    assert log_ratio_bound(0.1, 0.05, 0.2) == 0.0  # p - delta < 0
    assert log_ratio_bound(0.0, 0.0, 0.0) == 0.0  # 0/0
    out = log_ratio_bound(np.array([0.5, 0.0]), np.array([0.25, 0.5]), 0.0)
    assert np.allclose(out, [math.log(2), 0.0])


@settings(max_examples=200, deadline=None)
@given(
    n0=st.integers(1, 10**6), n1=st.integers(1, 10**6),
    f0=st.floats(0, 1), f1=st.floats(0, 1),
    delta=st.sampled_from([0.0, 1e-6, 0.01, 0.3]),
    directions=st.sampled_from(["forward", "both"]),
)
def test_bound_properties(n0, n1, f0, f1, delta, directions):
    tp, fp = round(f0 * n0), round(f1 * n1)
    b = epsilon_lower_bound(tp, n0 - tp, fp, n1 - fp, delta=delta, directions=directions)
    assert 0.0 <= b.epsilon_lower_bound <= b.ceiling
    # A better attack (one more TP, or one fewer FP) never certifies less
    # under "forward"; "both" is symmetric, so it is not monotone here.
    if directions == "forward":
        if tp < n0:
            assert epsilon_lower_bound(tp + 1, n0 - tp - 1, fp, n1 - fp, delta=delta).epsilon_lower_bound \
                >= b.epsilon_lower_bound
        if fp > 0:
            assert epsilon_lower_bound(tp, n0 - tp, fp - 1, n1 - fp + 1, delta=delta).epsilon_lower_bound \
                >= b.epsilon_lower_bound
    # Swapping the roles of D and D' under "both" gives the same bound.
    if directions == "both":
        swapped = epsilon_lower_bound(fp, n1 - fp, tp, n0 - tp, delta=delta, directions="both")
        assert swapped.epsilon_lower_bound == pytest.approx(b.epsilon_lower_bound, rel=1e-9, abs=1e-12)


# --------------------------------------------------------------------------- #
# Result object and validation
# --------------------------------------------------------------------------- #

def test_result_echoes_inputs_and_round_trips_json():
    b = epsilon_lower_bound(750, 250, 250, 750, delta=1e-5, confidence=0.99, directions="both",
                           n_comparisons=3, details={"threshold": 1.25, "selection": "bonferroni"})
    assert (b.tp, b.fn, b.fp, b.tn, b.n0, b.n1) == (750, 250, 250, 750, 1000, 1000)
    assert (b.delta, b.confidence, b.directions, b.n_comparisons) == (1e-5, 0.99, "both", 3)
    assert b.tpr == 0.75 and b.fpr == 0.25
    lo, hi = b.tpr_interval()
    assert lo < 0.75 < hi
    assert lo == cp_lower(750, 1000, 0.01 / 12)  # four intervals, three comparisons
    text = b.to_json()
    d = json.loads(text)
    assert d["epsilon_lower_bound"] == b.epsilon_lower_bound and d["details"]["threshold"] == 1.25
    assert d["tpr_interval"] == list(b.tpr_interval())
    assert EpsilonBound.from_json(text) == b
    assert EpsilonBound.from_dict(d) == b


def test_result_is_frozen_and_readable():
    b = epsilon_lower_bound(750_000, 250_000, 250_000, 750_000)
    with pytest.raises(AttributeError):
        b.epsilon_lower_bound = 5.0
    r = repr(b)
    assert r.startswith("EpsilonBound(epsilon_lower_bound=1.0941, ceiling=12.5")
    for part in ("tp=750000", "fn=250000", "fp=250000", "tn=750000", "delta=0.0", "confidence=0.95"):
        assert part in r
    assert len(r) < 200


@pytest.mark.parametrize(
    "kwargs,exc,name",
    [
        (dict(tp=-1), ParameterValueError, "tp"),
        (dict(fn=1.5), ParameterTypeError, "fn"),
        (dict(fp="3"), ParameterTypeError, "fp"),
        (dict(tn=True), ParameterTypeError, "tn"),
        (dict(tp=0, fn=0), ParameterValueError, "tp + fn"),
        (dict(fp=0, tn=0), ParameterValueError, "fp + tn"),
        (dict(delta=1.0), ParameterValueError, "delta"),
        (dict(delta=-0.1), ParameterValueError, "delta"),
        (dict(confidence=1.5), ParameterValueError, "confidence"),
        (dict(confidence="high"), ParameterTypeError, "confidence"),
        (dict(directions="sideways"), ParameterValueError, "directions"),
        (dict(n_comparisons=0), ParameterValueError, "n_comparisons"),
    ],
)
def test_validation_names_the_parameter(kwargs, exc, name):
    args = dict(tp=5, fn=5, fp=5, tn=5)
    args.update(kwargs)
    tp, fn, fp, tn = (args.pop(k) for k in ("tp", "fn", "fp", "tn"))
    with pytest.raises(exc) as info:
        epsilon_lower_bound(tp, fn, fp, tn, **args)
    assert str(info.value).startswith(name)
    # dpaudit's errors are also the built-in ones.
    assert isinstance(info.value, TypeError if exc is ParameterTypeError else ValueError)


def test_ceiling_validates_sample_sizes():
    with pytest.raises(ParameterValueError, match="^n0"):
        ceiling(0, 10)
    with pytest.raises(ParameterTypeError, match="^n1"):
        ceiling(10, 2.5)


def test_numpy_integers_are_accepted():
    b = epsilon_lower_bound(np.int64(750), np.int32(250), np.uint16(250), np.int64(750))
    assert type(b.tp) is int and b.epsilon_lower_bound > 0
    json.dumps(b.to_dict())  # plain Python types only


def test_all_is_true():
    for name in bounds_module.__all__:
        assert hasattr(bounds_module, name)


def test_package_all_is_true():
    import dpaudit.stats as stats

    assert len(set(stats.__all__)) == len(stats.__all__)
    for name in stats.__all__:
        assert hasattr(stats, name), name
