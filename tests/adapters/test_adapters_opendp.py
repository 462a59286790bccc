"""OpenDP adapters: run when OpenDP is installed, else skip (all but the last, which needs no OpenDP).

OpenDP cannot be seeded, so these statistical tests draw fresh randomness on
every run: each goodness-of-fit assertion fails with probability ALPHA = 1e-6
when the adapter is right.  (At 1e-3 with five such assertions a correct
adapter failed about one CI run in 200; one such failure was seen and the
p-values over 150 reruns were uniform, KS p = 0.46 and 0.23.)  Power at
N = 20,000, measured over 20 seeds: a Laplace scale off by 10% gives median KS
p = 4e-8 (caught 19 times in 20); off by 15%, p <= 2e-12 (always caught).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms.testing import chisquare_pvalue
from dpaudit.adapters import available
from dpaudit.mechanisms import get_mechanism
from dpaudit.targets import load_target

needs_opendp = pytest.mark.skipif(
    not available("opendp"), reason="OpenDP is not installed (pip install 'dpaudit[opendp]')"
)
ALPHA = 1e-6
N = 20_000


@needs_opendp
def test_laplace_float_and_int():
    m = get_mechanism("opendp.laplace", epsilon=1.0)
    t = load_target(m)
    assert not t.seeded and t.vectorised  # OpenDP draws from its own RNG
    x = t.sample([0.25, 0.5], N)
    assert m.scale == pytest.approx(1.0)
    assert stats.kstest(x, stats.laplace(loc=0.75, scale=m.scale).cdf).pvalue > ALPHA
    mi = get_mechanism("opendp.laplace", epsilon=1.0, domain="int")
    y = mi([1, 1], size=N)
    a = math.exp(-1.0 / mi.scale)
    support = np.arange(-15, 16)
    assert y.dtype == np.int64 and chisquare_pvalue(y - 2, support, (1 - a) / (1 + a) * a ** np.abs(support)) > ALPHA


@needs_opendp
def test_gaussian_float_and_int():
    g = get_mechanism("opendp.gaussian", epsilon=1.0, delta=1e-5)
    assert g.scale > get_mechanism("gaussian_analytic").sigma  # zCDP conversion is looser than Balle-Wang
    x = g([0.0], size=N)
    assert stats.kstest(x, stats.norm(scale=g.scale).cdf).pvalue > ALPHA
    gi = get_mechanism("opendp.gaussian", epsilon=1.0, delta=1e-5, domain="int")
    assert gi([0], size=100).dtype == np.int64


@needs_opendp
def test_randomized_response():
    rr = get_mechanism("opendp.randomized_response", epsilon=math.log(3))
    assert rr.truth_probability == pytest.approx(0.75)
    z = rr([1], size=N)
    assert chisquare_pvalue(z, [0, 1], [0.25, 0.75]) > ALPHA


@needs_opendp
def test_one_release_and_bad_parameters():
    assert np.ndim(get_mechanism("opendp.laplace")([1.0])) == 0
    with pytest.raises(ValueError, match="domain"):
        get_mechanism("opendp.laplace", domain="complex")


def test_float_domain_is_nan_free_on_every_supported_opendp():
    """OpenDP 0.12's atom_domain has no ``nan`` (it excludes NaN by default); 0.14 and 0.16 default to nan=True."""
    from dpaudit.adapters.opendp import _float_atom_domain

    class Old:  # the 0.12 signature
        @staticmethod
        def atom_domain(bounds=None, nullable=False, T=None):
            return ("old", nullable, T)

    class New:  # the 0.14 to 0.16 signature
        @staticmethod
        def atom_domain(bounds=None, nan=None, T=None):
            return ("new", nan, T)

    assert _float_atom_domain(Old) == ("old", False, float)
    assert _float_atom_domain(New) == ("new", False, float)
