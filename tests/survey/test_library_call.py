"""``dpaudit.adapters.library_call``: a library's function or mechanism class as a seeded target."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dpaudit
from dpaudit.adapters import import_dotted, library_call

sys.path.insert(0, str(Path(__file__).parent / "data"))


def test_a_function_of_the_data_is_seeded_through_random_state():
    t = library_call("toylib.mean", params={"epsilon": 1.0, "bounds": [0, 1]})
    a = t(np.array([0.0, 1.0]), size=50, rng=np.random.default_rng(1))
    b = t(np.array([0.0, 1.0]), size=50, rng=np.random.default_rng(1))
    assert a.shape == (50,) and np.array_equal(a, b) and len(set(a.tolist())) > 10
    assert dpaudit.Target(t).seeded


def test_a_mechanism_class_releases_from_a_statistic_and_fresh_builds_one_per_release():
    built = []

    class Counter:
        def __init__(self, epsilon, random_state):
            built.append(1)
            self.rs = random_state

        def randomise(self, value):
            return value + self.rs.randint(0, 2)

    shared = library_call(Counter, params={"epsilon": 1.0}, method="randomise", statistic="count")
    out = shared(np.zeros(5), size=20, rng=0)
    assert set(out.tolist()) <= {5.0, 6.0} and len(built) == 1
    fresh = library_call(Counter, params={"epsilon": 1.0}, method="randomise", statistic="count", fresh=True)
    fresh(np.zeros(5), size=20, rng=0)
    assert len(built) == 1 + 20


def test_global_seeding_and_unseeded_targets():
    def noisy(value):
        return value + np.random.laplace()

    seeded = library_call(noisy, data="value", seed="global")
    assert np.array_equal(seeded(np.array([2]), size=5, rng=3), seeded(np.array([2]), size=5, rng=3))
    unseeded = library_call(noisy, data="value", seed="none")
    assert not dpaudit.Target(unseeded).seeded and unseeded(np.array([2]), size=4).shape == (4,)


def test_pick_selects_part_of_a_tuple_result_and_bad_choices_name_the_argument():
    t = library_call("numpy.histogram", params={"bins": 3, "range": (0, 1)}, pick=0, seed="none")
    assert t(np.array([0.1, 0.9, 0.95]), size=1).tolist() == [[1.0, 0.0, 2.0]]
    with pytest.raises(ValueError, match="data must be one of"):
        library_call("numpy.histogram", data="frame")
    with pytest.raises(ValueError, match="has no attribute 'nope'"):
        import_dotted("numpy.random.nope")
