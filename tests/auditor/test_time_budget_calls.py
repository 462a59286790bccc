"""The time budget holds for targets called once per release: no call starts after it.

A round the clock interrupts is dropped (a look at a size chosen by the clock is not covered,
docs/sequential.md): the report is the last completed round; with none, a clear error.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import dpaudit
from dpaudit.exceptions import ParameterValueError


class SlowAfter:
    """Fast for the first ``fast`` calls, then ``pause`` seconds per call (counts in this process)."""

    def __init__(self, fast: int, pause: float):
        self.fast, self.pause, self.calls = fast, pause, 0

    def __call__(self, d, rng=None):
        self.calls += 1
        if self.calls > self.fast:
            time.sleep(self.pause)
        return float(np.sum(d)) + rng.laplace()


def test_budget_shorter_than_the_first_round_is_a_clear_error_and_kept():
    start = time.perf_counter()
    with pytest.raises(ParameterValueError, match=r"time_budget: 0\.5 s \(--time-budget\) ran out before the first "
                                                  r"round .* 'SlowAfter', called once per release"):
        dpaudit.audit(SlowAfter(0, 0.02), [1.0], [0.0], epsilon=1.0, time_budget=0.5, seed=1)
    assert time.perf_counter() - start < 2.0  # the first round alone takes 400 x 0.02 = 8 s


def test_round_cut_by_the_clock_is_dropped_and_the_budget_kept():
    target = SlowAfter(800, 0.05)  # rounds 1 and 2 (400 releases per side) are fast, round 3 takes > 40 s
    start = time.perf_counter()
    rep = dpaudit.audit(target, [1.0], [0.0], epsilon=1.0, time_budget=4.0, seed=1, ideal=True)
    assert time.perf_counter() - start < 6.0
    assert (rep.stopping_reason, rep.rounds, rep.samples) == ("budget", 2, 400)
    # The report says which budget: the JSON records the time budget, the summary names it.
    assert rep.to_dict()["time_budget"] == 4.0 and "the time budget, 4 s, before the sample budget" in rep.summary()


def test_a_budget_that_does_not_bind_changes_nothing():
    def noisy(d, rng=None, size=None):
        return float(np.sum(d)) + rng.laplace(size=size)

    def run(**kw):
        out = dpaudit.audit(noisy, [1.0], [0.0], epsilon=1.0, seed=3, max_samples=20_000, **kw).to_dict()
        out.pop("elapsed_seconds")
        assert out.pop("time_budget") == kw.get("time_budget")  # the setting is recorded; nothing else moves
        return out

    assert run(time_budget=600.0) == run() == run(time_budget=600.0, n_jobs=2)


def test_a_sample_budget_stop_is_named_as_such():
    rep = dpaudit.audit("laplace", epsilon=1.0, max_samples=4_000, seed=1, stop_when_converged=False)
    assert rep.stopping_reason == "budget" and rep.time_budget is None
    assert "stopped: budget (the sample budget)" in rep.summary()
