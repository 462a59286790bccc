"""diffprivlib adapters: run when diffprivlib (even with scikit-learn 1.9, through the stub) is usable, else skip."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms.testing import chisquare_pvalue
from dpaudit.adapters import available
from dpaudit.mechanisms import get_mechanism
from dpaudit.targets import load_target

pytestmark = pytest.mark.skipif(
    not available("diffprivlib"), reason="diffprivlib is not installed (pip install 'dpaudit[diffprivlib]')"
)
ALPHA = 1e-3  # per-assertion failure probability for a correct sampler (fixed seed: deterministic)
N = 5_000


def test_laplace_law_and_seeding():
    m = get_mechanism("diffprivlib.laplace", epsilon=1.0)
    t = load_target(m)
    assert t.seeded  # diffprivlib takes a RandomState seeded from our rng
    x = t.sample([0.5, 1.0], N, rng=1)
    assert np.array_equal(x, t.sample([0.5, 1.0], N, rng=1))
    assert stats.kstest(x, stats.laplace(loc=1.5, scale=1.0).cdf).pvalue > ALPHA


def test_gaussians():
    g = get_mechanism("diffprivlib.gaussian_analytic", epsilon=1.0, delta=1e-5)
    x = g([0.0], size=N, rng=2)
    # diffprivlib's analytic sigma at (1, 1e-5) is ~3.73 (Balle and Wang)
    assert stats.kstest(x, stats.norm(scale=get_mechanism("gaussian_analytic").sigma).cdf).pvalue > ALPHA
    assert get_mechanism("diffprivlib.gaussian", epsilon=0.5)([0.0], size=10, rng=3).shape == (10,)


def test_geometric_exponential_binary():
    geo = get_mechanism("diffprivlib.geometric", epsilon=1.0)
    x = geo([1, 1], size=N, rng=4)
    a = math.exp(-1.0)
    support = np.arange(-15, 16)
    assert chisquare_pvalue(x - 2, support, (1 - a) / (1 + a) * a ** np.abs(support)) > ALPHA
    em = get_mechanism("diffprivlib.exponential", epsilon=math.log(2), n_candidates=4)
    y = em([1] * 4 + [2] * 6 + [3] * 6, size=N, rng=5)
    assert chisquare_pvalue(y, range(4), [1 / 21, 4 / 21, 8 / 21, 8 / 21]) > ALPHA
    rr = get_mechanism("diffprivlib.binary", epsilon=math.log(3))
    z = rr([1], size=N, rng=6)
    assert chisquare_pvalue(z, [0, 1], [0.25, 0.75]) > ALPHA


def test_bad_parameters_name_the_library():
    with pytest.raises(ValueError, match="(?i)epsilon cannot be greater than 1"):
        get_mechanism("diffprivlib.gaussian", epsilon=2.0)
