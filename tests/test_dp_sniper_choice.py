"""experiments/dp_sniper/choice.py: how a chosen event is valued without a held-out set.

docs/decisions/selection-limit.md rests on three of its pieces: events valued with the exact log
ratio (each side's count averaged with the other side's count weighted by the ratio), the best
event of a score's own order, and the chosen event certified on simulated Poisson held-out sets.
Seeded; the statistical checks hold at 5 standard errors (a false failure about once in 10^6 runs).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from dpaudit.mechanisms import get_mechanism

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "experiments/dp_sniper"


@pytest.fixture
def choice(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))  # choice.py imports ceiling.py beside it
    spec = importlib.util.spec_from_file_location("dp_sniper_choice", HERE / "choice.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _laplace(choice, n=200_000):
    mech = get_mechanism("laplace", epsilon=0.1, answers=True)
    d, d2 = np.array([1.0]), np.array([2.0])
    rng = np.random.default_rng(0)
    fresh = (np.asarray(mech(d, size=n, rng=rng), float), np.asarray(mech(d2, size=n, rng=rng), float))
    return fresh, choice.exact_log_ratio(mech, d, d2)


def test_an_event_of_one_exact_ratio_is_valued_at_that_ratio(choice):
    """Every release at or above 2 has log ratio exactly -0.1 (Laplace of scale 10, answers 1 and 2): the weighted
    counts give that ratio to rounding, where plain counts of 200,000 releases miss it by about 0.005."""
    fresh, llr = _laplace(choice)
    valuer = choice.Valuer(fresh, llr=llr)
    p0, p1 = valuer.masses(fresh[0] >= 2, fresh[1] >= 2)
    assert np.log(p0 / p1) == pytest.approx(-0.1, abs=1e-9)
    assert p0 == pytest.approx(0.5 * np.exp(-0.1), abs=5 * np.sqrt(0.25 / 200_000))


def test_the_best_run_of_a_ratio_ordered_score_is_the_ceiling(choice):
    """On the exact ratio's own order, the best run is what ceiling.best_event_bound finds on the same bins."""
    from ceiling import best_event_bound

    fresh, llr = _laplace(choice)
    valuer = choice.Valuer(fresh, llr=llr)
    p0, p1 = valuer.binned(llr(fresh[0]), llr(fresh[1]))
    value, ev, comp, cert = choice.best_run(p0, p1, 10**6, 0.9)
    assert value == pytest.approx(best_event_bound(p0, p1, 10**6, 0.9, ordered=True), rel=1e-9)
    assert ev[0] + comp[0] == pytest.approx(p0.sum()) and ev[1] + comp[1] == pytest.approx(p1.sum())
    assert choice.event_value(*ev, 10**6, 0.9, comp) == pytest.approx(value, rel=1e-9)


def test_simulated_held_out_sets_centre_on_the_value_at_expected_counts(choice):
    """An event of masses 0.02 and 0.018 on 10^6 held-out releases: the bounds of 2,000 simulated Poisson held-out
    sets average what the same certificate gives at expected counts (a bound is nearly linear in its counts)."""
    from dpaudit.stats.certificate import ClopperPearson, PoissonConditional

    ev = ((0.02, 0.018), (0.98, 0.982))
    for cert, kind in ((ClopperPearson(), "intervals"), (PoissonConditional("event"), "poisson")):
        from ceiling import best_event_bound

        expected = best_event_bound(np.array([0.02, 0.98]), np.array([0.018, 0.982]), 10**6, 0.9, certificate=kind)
        b = choice.held_out_draws(ev, None, 10**6, 0.9, [cert], 2000, np.random.default_rng(1))
        assert abs(b.mean() - expected) < 5 * b.std() / np.sqrt(len(b)) + 1e-3
        assert b.std() > 0
