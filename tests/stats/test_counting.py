"""count_at_least: every strategy gives the counts of a float64 sort, on every kind of score."""

import numpy as np
import pytest

from dpaudit.stats import counting
from dpaudit.stats.counting import count_at_least


def sorted_counts(scores, thresholds):
    """The definition: sort the float64 scores (NaN last) and look each threshold up."""
    s = np.sort(np.asarray(scores, dtype=float).ravel())
    return len(s) - np.searchsorted(s, np.asarray(thresholds, dtype=float), side="left")


def _cases(rng):
    n = 3000
    lap = rng.laplace(size=n)
    yield "continuous", lap, np.unique(rng.laplace(size=60))  # chosen on other draws, as an audit's are
    yield "discrete", rng.integers(0, 7, n).astype(float), np.arange(-1.0, 8.0, 0.5)
    few = rng.integers(0, 3, n).astype(float)
    yield "discrete, thresholds between", few, np.array([0.5, 1.5] + list(np.linspace(2.1, 2.9, 10)))
    spec = np.concatenate([lap, [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, -1e300, 3.5e38, 5e-324]])
    rng.shuffle(spec)
    yield "specials", spec, np.unique(np.concatenate([rng.laplace(size=20), [0.0, np.inf, -np.inf, 1e300,
                                                                             3.4e38, 5e-324, np.nan]]))
    # Thresholds at or one float64 step from a score: equal in float32 (the recount, then the sort).
    for k in (1, 2, 12):
        near = rng.choice(lap, k)
        yield f"{k} float32 ties", lap, np.unique(np.concatenate([near, np.nextafter(near, np.inf),
                                                                  rng.laplace(size=40)]))
    yield "ties from the first score on", np.concatenate([[0.25] * 300, lap]), np.unique(
        np.concatenate([[0.25], rng.choice(lap, 30)]))


@pytest.mark.parametrize("seed", range(4))
def test_every_strategy_counts_like_the_sort(seed):
    rng = np.random.default_rng(seed)
    for name, scores, thresholds in _cases(rng):
        want = sorted_counts(scores, thresholds)
        for k in (0, 1, 3, counting.PASS_LIMIT, counting.PASS_LIMIT + 1, len(thresholds)):
            t = thresholds[:k]
            got = count_at_least(scores, t)
            assert got.dtype == np.int64, name
            np.testing.assert_array_equal(got, want[:k], err_msg=f"{name}, {k} thresholds")
        kept = scores.copy()
        np.testing.assert_array_equal(count_at_least(kept, thresholds, overwrite=True), want, err_msg=name)


def test_float32_path_and_its_fallbacks_are_taken():
    # Each branch must be reached by the cases above, or the equality proves nothing about it.
    rng = np.random.default_rng(5)
    lap = rng.laplace(size=5000)
    t = np.unique(rng.laplace(size=40))
    assert counting._by_float32(lap, t) is not None  # continuous: float32
    assert counting._by_float32(rng.integers(0, 5, 5000).astype(float), np.arange(0.0, 20.0)) is None  # probe
    far = np.concatenate([np.zeros(counting.PROBE) + 100.0, lap])
    many = np.unique(np.concatenate([rng.choice(lap, counting.TIE_LIMIT + 3), rng.laplace(size=30)]))
    assert counting._by_float32(far, np.nextafter(many, np.inf)) is None  # ties found after the probe
    few = np.unique(np.concatenate([np.nextafter(rng.choice(lap, 2), np.inf), rng.laplace(size=30)]))
    out = counting._by_float32(far, few)  # a tie or two: recounted in float64
    np.testing.assert_array_equal(out, sorted_counts(far, few))


def test_overwrite_sorts_in_place_only_when_the_sort_runs_and_is_allowed():
    rng = np.random.default_rng(1)
    s = rng.integers(0, 9, 1000).astype(float)  # discrete: the float64 sort
    before = s.copy()
    count_at_least(s, np.arange(10.0))
    np.testing.assert_array_equal(s, before)
    count_at_least(s, np.arange(10.0), overwrite=True)
    assert (np.diff(s) >= 0).all()
    lap = rng.laplace(size=1000)
    kept = lap.copy()
    count_at_least(lap, np.unique(rng.laplace(size=30)), overwrite=True)  # float32: the scores stay as they are
    np.testing.assert_array_equal(lap, kept)


def test_scalar_threshold_and_integer_scores():
    assert count_at_least(np.array([0.0, 1.0, 2.0]), 1.0) == 2
    ints = np.array([2**53 + 1, 3, 5], dtype=np.int64)  # compared as float64, as the sort did
    np.testing.assert_array_equal(count_at_least(ints, np.array([4.0, float(2**53)])), sorted_counts(ints, [4.0, 2.0**53]))


@pytest.mark.parametrize("k", [1, 2, counting.PASS_LIMIT + 2])
def test_a_nan_threshold_counts_the_nan_scores(k):
    s = np.array([np.nan, 1.0, np.nan, -np.inf, np.inf, 0.0] * 5)
    t = np.concatenate([np.linspace(-0.5, 0.5, k - 1) + 10.0 * np.arange(k - 1), [np.nan]])
    np.testing.assert_array_equal(count_at_least(s, t), sorted_counts(s, t))
    assert count_at_least(s, t)[-1] == 10
