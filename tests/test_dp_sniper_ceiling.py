"""experiments/dp_sniper/ceiling.py: the exact sparse-vector outcome probabilities behind the README's ceilings.

The README says no distinguisher can reach three of DP-Sniper's published bounds at 2 x 10^7
samples; that rests on these probabilities being right, so they are checked against the
mechanism's own releases (chi-square, alpha 1e-3 per test: a false failure once in a thousand runs
of a correct integral, and the seeds are fixed).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms import get_mechanism

ROOT = Path(__file__).resolve().parents[1]
ALPHA = 1e-3


def _ceiling_module():
    spec = importlib.util.spec_from_file_location("dp_sniper_ceiling", ROOT / "experiments/dp_sniper/ceiling.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, threshold", [("sparse_vector", 0.5), ("svt_lyu_alg4", 1.0)])
def test_exact_svt_probabilities_match_the_releases(name, threshold):
    ceiling = _ceiling_module()
    mech = get_mechanism(name, epsilon=0.1, c=1, threshold=threshold, n_queries=10, answers=True)
    d, d2 = mech.neighbouring_pair()
    p0, p1 = ceiling.exact_svt_probabilities(mech, d, d2)
    assert p0.sum() == pytest.approx(1.0) and p1.sum() == pytest.approx(1.0)
    n = 200_000
    for data, p, seed in ((d, p0, 1), (d2, p1, 2)):
        out = np.asarray(mech(data, size=n, rng=seed))
        above = out == 1
        first = np.where(above.any(axis=1), above.argmax(axis=1), out.shape[1])  # position of the first "above"
        counts = np.bincount(first, minlength=len(p))
        assert stats.chisquare(counts, p * n).pvalue > ALPHA


def test_ceiling_of_identical_distributions_is_zero_and_grows_with_samples():
    ceiling = _ceiling_module()
    p = np.array([0.5, 0.3, 0.2])
    assert ceiling.best_event_bound(p, p, 10**6, 0.9) == 0.0
    q = np.array([0.45, 0.3, 0.25])  # the largest privacy loss of any event: ln(0.25 / 0.2) = 0.223
    small, large = (ceiling.best_event_bound(p, q, n, 0.9) for n in (10**5, 10**8))
    assert 0.0 < small < large < np.log(0.25 / 0.2)


def test_the_audits_certificate_is_the_better_of_its_two_per_event():
    ceiling = _ceiling_module()
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.45, 0.3, 0.25])
    both, cp, pois = (ceiling.best_event_bound(p, q, 10**6, 0.9, c) for c in ("both", "intervals", "poisson"))
    assert both == max(cp, pois) and cp > 0 and pois > 0
    # A rare outcome: the Poisson test certifies more than two intervals at the same share.
    p, q = np.array([0.999, 0.001]), np.array([0.9995, 0.0005])
    assert ceiling.best_event_bound(q, p, 10**6, 0.9, "poisson") > ceiling.best_event_bound(q, p, 10**6, 0.9, "intervals")
