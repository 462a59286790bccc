"""``cell-values``: per cell (pattern of special values) its count ratio plus a fitted density ratio of its numbers.

Power: seeded, against the exact answer of a synthetic case.  Soundness: the
bound counts held-out releases whatever the score, so an audit with
``attack="cell-values"`` on a correct mechanism exceeds its true epsilon with
probability at most ``1 - confidence``; a few seeded audits at confidence
0.999 run in the normal suite, 200 seeds at 0.95 under ``soundness``.
"""

import numpy as np
from _releases import audits_above, two_cell_releases
import pytest
from scipy import stats as sps

from dpaudit.auditor.distinguishers import auto_choices, make_distinguisher
from dpaudit.auditor.distinguishers.cells import CellValuesScore
from dpaudit.mechanisms import get_mechanism


def _noisy_max_with_value(dataset, size=None, rng=None):
    """Report noisy max (Laplace 2/0.5 on 4 counts: 0.5-DP) and the winner's count with fresh Laplace 1/0.5
    (0.5-DP): epsilon 1 by composition.  A release is (index, value): the index is the cell."""
    q = np.asarray(dataset, float)
    idx = np.argmax(q + rng.laplace(scale=4.0, size=(size, len(q))), axis=1)
    return np.column_stack([idx.astype(float), q[idx] + rng.laplace(scale=2.0, size=size)])


def _correct_cases():
    m = get_mechanism("numerical_svt", epsilon=1.0, c=2, threshold=1.0, n_queries=6, answers=True)
    d, d2 = m.neighbouring_pair()
    return [("numerical_svt", m, d, d2, m.true_epsilon()),
            ("noisy_max_with_value", _noisy_max_with_value, [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 1.0], 1.0)]


def test_cell_values_recovers_a_per_cell_density_ratio():
    """Two cells; only the second cell's number leaks (Laplace(1) shifted by 1: log ratio in [-1, 1]).

    The fitted ratio inside the second cell must follow the exact one, |x - 1| - |x| clipped, to
    within 0.15 at -3, -0.5, 0.5 and 3 (the bins' noise at 60,000 releases per side is about 0.05),
    and the first cell's must stay near 0.  Seeded, deterministic.
    """
    rng = np.random.default_rng(3)
    n = 60_000

    def draw(shift):
        return two_cell_releases(rng, n, shift)

    s = CellValuesScore().fit(draw(1.0), draw(0.0))
    v = np.array([-3.0, -0.5, 0.5, 3.0])
    late = s.score(np.column_stack([np.full(4, -1.0), v]))
    early = s.score(np.column_stack([v, np.full(4, -1.0)]))
    exact = np.abs(v) - np.abs(v - 1.0)
    assert np.max(np.abs(late - exact)) < 0.15, (late, exact)
    assert np.max(np.abs(early)) < 0.15, early


def test_cell_values_is_offered_by_auto_beside_pattern_cells():
    rng = np.random.default_rng(4)
    svt = rng.laplace(size=(5_000, 4))
    svt[rng.random((5_000, 4)) < 0.5] = -1000.0
    assert "cell-values" in auto_choices("vector", svt)
    assert "cell-values" not in auto_choices("vector", rng.normal(size=(5_000, 4)))
    assert make_distinguisher("cell-values").name == "cell-values"


def test_cell_values_scores_unseen_cells_and_plain_coordinates():
    """A cell never seen when fitting scores its numbers' part only (0 for the cell); a coordinate without
    special values gets one curve whatever the cell."""
    rng = np.random.default_rng(6)
    n = 20_000
    a = np.column_stack([rng.integers(0, 2, n).astype(float), rng.laplace(1.0, 1.0, n)])
    b = np.column_stack([rng.integers(0, 2, n).astype(float), rng.laplace(0.0, 1.0, n)])
    s = CellValuesScore().fit(a, b)
    assert 1 in s.plain and not any(curves for *_, curves in s.blocks)
    lo, hi, unseen = s.score(np.array([[0.0, -3.0], [0.0, 3.0], [7.0, 3.0]]))
    _, _, index, cell_lr, _ = s.blocks[0]
    cell0 = cell_lr[index.lookup(np.array([1]))[0]]  # the cell of the value 0.0, its coordinate's special 1
    assert lo < 0 < hi and unseen == pytest.approx(hi - cell0)


@pytest.mark.parametrize("name,target,d,d2,true_eps", _correct_cases(), ids=[c[0] for c in _correct_cases()])
def test_cell_values_does_not_flag_correct_mechanisms(name, target, d, d2, true_eps):
    """Two seeded audits per mechanism at confidence 0.999: each exceeds the true epsilon w.p. <= 0.001."""
    assert audits_above(target, d, d2, true_eps, attack="cell-values", seeds=(21, 22), confidence=0.999) == [], name


@pytest.mark.soundness
@pytest.mark.parametrize("name,target,d,d2,true_eps", _correct_cases(), ids=[c[0] for c in _correct_cases()])
def test_cell_values_soundness_over_many_seeds(name, target, d, d2, true_eps):
    """200 audits at confidence 0.95 with ``attack="cell-values"``: at most 18 above the true epsilon
    (P[Bin(200, 0.05) > 18] = 2.5%)."""
    over = audits_above(target, d, d2, true_eps, attack="cell-values", seeds=range(5000, 5200), confidence=0.95)
    assert len(over) <= 18, (name, over)
    assert sps.binom.sf(18, 200, 0.05) < 0.03
