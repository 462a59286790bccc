"""Sampler.draw: each chunk copied once, before the next call; the pool's type is the chunks' common type."""

import numpy as np
import pytest

from dpaudit.exceptions import TargetError
from dpaudit.sampling import Sampler, _chunk
from dpaudit.targets import load_target

PAIR = (np.array([0.0, 0.0]), np.array([1.0, 0.0]))


def _fresh(dataset, size=None, rng=None):
    return np.asarray(dataset, float) + rng.normal(size=(size, 2))


class _Reusing:
    """Writes every call's releases into one buffer and returns it (a view of it for a short chunk)."""

    def __init__(self):
        self.buffer = np.empty((64, 2))

    def __call__(self, dataset, size=None, rng=None):
        self.buffer[:size] = _fresh(dataset, size, rng)
        return self.buffer[:size]


def _draw(fn, n=100, chunk=32, in_process=True):
    sampler = Sampler(load_target(fn), PAIR, entropy=7, chunk_size=chunk, in_process=in_process)
    return sampler, sampler.draw((0,), n)


def test_a_target_that_reuses_its_buffer_gives_every_chunk_its_own_releases():
    sampler, (x0, x1) = _draw(_Reusing())
    tgt = load_target(_fresh)
    for side, x in enumerate((x0, x1)):
        want = np.concatenate([_chunk(tgt, PAIR[side], m, 7, (side, 0, i), None, 1) for i, m in sampler._chunks(100)])
        assert np.array_equal(x, want)


def test_the_pool_takes_the_type_concatenation_gives():
    calls = []

    def ints_then_floats(dataset, size=None, rng=None):
        calls.append(size)
        v = rng.integers(0, 5, size=(size, 2))
        return v if len(calls) % 4 != 2 else v + 0.5  # one chunk of each side's four is float

    _, (x0, x1) = _draw(ints_then_floats, n=100)
    assert x0.dtype == x1.dtype == np.float64
    assert np.all(x0 == np.floor(x0) + 0.5 * (np.arange(100)[:, None] // 32 == 1))


def test_one_chunk_is_still_a_copy():
    fn = _Reusing()
    _, (x0, x1) = _draw(fn, n=20)
    assert not np.shares_memory(x0, fn.buffer) and not np.shares_memory(x1, fn.buffer)
    assert not np.array_equal(x0, x1)


def test_a_shape_change_between_calls_is_named():
    calls = []

    def widening(dataset, size=None, rng=None):
        calls.append(size)
        return rng.normal(size=(size, 2 if len(calls) < 2 else 3))

    with pytest.raises(TargetError, match="changed its output shape between calls on the dataset"):
        _draw(widening)


def test_a_chunk_drawn_in_parts_is_written_part_by_part():
    """A target called once per release is drawn DEFAULT_CALL_CHUNK releases per part: a chunk of 600 is three
    parts, each written in place in turn; the pool equals the chunks' concatenation."""
    def one(dataset, rng=None):
        return np.asarray(dataset, float) + rng.normal(size=2)

    sampler, (x0, x1) = _draw(one, n=1500, chunk=600)
    tgt = load_target(one)
    for side, x in enumerate((x0, x1)):
        want = np.concatenate([_chunk(tgt, PAIR[side], m, 7, (side, 0, i), None, 1) for i, m in sampler._chunks(1500)])
        assert x.shape == (1500, 2) and np.array_equal(x, want)
