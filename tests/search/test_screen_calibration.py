"""The pair search screens with the audit's calibration, not a copy of it (issue 45).

The screening's event is chosen and valued by the claim's certificate on ``calibration_rates``; its
projection reads ``calibration_rates(shared=False)`` and ``CalibrationRates.inequalities``; the split is
``selection_halves``.  For a point claim the certificate's numbers are the rates' own, which is why the
search's seeded JSON did not move when it switched.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.auditor.distinguishers import auto_choices
from dpaudit.pair_search import screen_pair
from dpaudit.pair_search_screen import SCREEN_CONFIDENCE, point_certificate
from dpaudit.stats.clopper_pearson import cp_lower, cp_upper
from dpaudit.stats.selection import calibration_counts, calibration_rates, selection_halves


def _rates(seed: int, n: int = 3000, shift: float = 0.3):
    rng = np.random.default_rng(seed)
    a, b = shift + rng.laplace(size=n), rng.laplace(size=n)
    return calibration_rates(calibration_counts(a, b, n_grid=128, n_tail=32, max_unique=1024), n_test0=n,
                             n_test1=n, confidence=SCREEN_CONFIDENCE)


@pytest.mark.parametrize("delta", [0.0, 1e-3])
def test_the_point_certificate_chooses_and_values_as_the_rates_do(delta):
    for seed in range(20):
        rates = _rates(seed)
        cert = point_certificate(0.7, delta)
        event = cert.choose(rates)
        assert event == rates.choose(delta=delta)
        assert cert.value(rates, event) == rates.value(event, delta=delta)


def test_the_inequalities_make_the_objective():
    rates = _rates(0)
    on_event, on_complement, reverse_complement, reverse_event = rates.inequalities(delta=1e-4)
    fwd, rev = rates.objective(delta=1e-4)
    assert np.array_equal(fwd, np.maximum(on_event, on_complement))
    assert np.array_equal(rev, np.maximum(reverse_complement, reverse_event))


def test_unshared_rates_are_one_events_intervals():
    cal = (np.array([0.0, 1.0, 2.0]), np.array([900, 500, 100]), 1000, np.array([700, 300, 40]), 1000)
    rates = calibration_rates(cal, n_test0=50_000, n_test1=50_000, confidence=0.8, shared=False)
    c0, c1 = cal[1] * 50.0, cal[3] * 50.0
    alpha = 0.2 / 4.0  # one event's two-sided pair of intervals, no share for the other candidates
    assert np.array_equal(rates.tpr_lo, cp_lower(c0, 50_000, alpha))
    assert np.array_equal(rates.fpr_hi, cp_upper(c1, 50_000, alpha))
    shared = calibration_rates(cal, n_test0=50_000, n_test1=50_000, confidence=0.8)
    assert np.all(shared.tpr_lo < rates.tpr_lo)  # the default shares alpha among the 3 candidates


def test_selection_halves_split_each_side_at_its_middle():
    pool = (np.arange(7), np.arange(10, 17))
    (f0, f1), (s0, s1) = selection_halves(pool)
    assert f0.tolist() == [0, 1, 2] and s0.tolist() == [3, 4, 5, 6]
    assert f1.tolist() == [10, 11, 12] and s1.tolist() == [13, 14, 15, 16]


def test_rows_never_get_the_threshold():
    rng = np.random.default_rng(0)
    assert "threshold" in auto_choices("discrete", rng.integers(0, 3, size=500))
    for kind in ("vector", "discrete"):
        assert "threshold" not in auto_choices(kind, rng.integers(0, 3, size=(500, 3)).astype(float))


class _Counting:
    """A certificate that counts its event choices and otherwise is the point claim's."""

    def __init__(self, delta):
        self.inner, self.chosen = point_certificate(1.0, delta), 0

    def choose(self, rates):
        self.chosen += 1
        return self.inner.choose(rates)

    def value(self, rates, event):
        return self.inner.value(rates, event)


def test_screen_pair_chooses_its_events_through_the_certificate():
    def leaky(dataset, size=None, rng=None):
        return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)

    cert = _Counting(0.0)
    given = screen_pair(leaky, [0, 0], [1, 0], n_samples=2000, rng=3, certificate=cert)
    default = screen_pair(leaky, [0, 0], [1, 0], n_samples=2000, rng=3)
    assert cert.chosen == 2  # one event per distinguisher of a scalar release (threshold, naive-bayes)
    assert given == default and given["bound"] > 0.3
