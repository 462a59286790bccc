"""Randomness as an argument (SciPy SPEC 7): reproducible, independent streams."""

import numpy as np
import pytest

from dpaudit import _rng
from dpaudit._rng import as_generator, as_seed_sequence, seed_entropy, spawn_generators
from dpaudit.exceptions import ParameterTypeError, ParameterValueError


def test_same_seed_same_draws():
    assert np.array_equal(as_generator(123).random(10), as_generator(123).random(10))
    assert not np.array_equal(as_generator(123).random(10), as_generator(124).random(10))
    seq = np.random.SeedSequence(7)
    assert np.array_equal(as_generator(seq).random(5), np.random.default_rng(7).random(5))


def test_generator_passes_through():
    g = np.random.default_rng(0)
    assert as_generator(g) is g
    assert isinstance(as_generator(None), np.random.Generator)
    assert isinstance(as_generator(np.int64(5)), np.random.Generator)


@pytest.mark.parametrize("bad", ["seed", 1.5, True, [1, 2], np.random.RandomState(0)])
def test_bad_rng_is_a_named_type_error(bad):
    with pytest.raises(ParameterTypeError, match="^rng must be"):
        as_generator(bad)


def test_seed_sequences():
    assert as_seed_sequence(np.random.SeedSequence(3)).entropy == 3
    assert as_seed_sequence(9).entropy == 9
    fresh = as_seed_sequence(None)
    # Entropy is kept even when the user gave none, so the run can be replayed.
    again = np.random.SeedSequence(seed_entropy(fresh))
    assert np.array_equal(np.random.default_rng(again).random(4), np.random.default_rng(fresh).random(4))
    # A Generator gives a reproducible SeedSequence (it draws from the generator).
    a = as_seed_sequence(np.random.default_rng(1)).entropy
    b = as_seed_sequence(np.random.default_rng(1)).entropy
    assert a == b
    with pytest.raises(ParameterValueError, match="^seed"):
        as_seed_sequence(-1)
    with pytest.raises(ParameterTypeError, match="^seed"):
        as_seed_sequence("x")


def test_spawn_is_reproducible_and_independent_of_how_many():
    a = [g.random(3) for g in spawn_generators(11, 4)]
    b = [g.random(3) for g in spawn_generators(11, 4)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    # Child i is the same whether 4 or 8 children are spawned (work split
    # does not change results).
    c = [g.random(3) for g in spawn_generators(11, 8)]
    assert all(np.array_equal(x, y) for x, y in zip(a, c[:4]))


def test_spawned_streams_are_distinct_and_uncorrelated():
    # 8 children x 10^5 uniforms.  Pairwise sample correlations of independent
    # streams are ~N(0, 1/n) (sd 0.0032); |r| < 0.02 is a 6.3 sd allowance, so
    # over 28 pairs the test fails with probability < 28 * 3e-10 ~ 1e-8.
    draws = np.array([g.random(100_000) for g in spawn_generators(20240541, 8)])
    r = np.corrcoef(draws)
    off = r[~np.eye(8, dtype=bool)]
    assert np.all(np.abs(off) < 0.02)
    assert len({tuple(d[:4]) for d in draws}) == 8


def test_all_is_true():
    for name in _rng.__all__:
        assert hasattr(_rng, name)
