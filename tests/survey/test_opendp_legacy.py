"""The opendp adapters on OpenDP 0.4 and 0.5's API (no ``opendp.prelude``), with a small fake OpenDP.

The fake is a package directory (plus a ``*.dist-info`` naming its version) put first on ``sys.path``, with
the modules, names and call signatures of OpenDP 0.4 (``opendp.meas``, ``opendp.trans``, ``opendp.mod``) and,
for 0.5, ``opendp.comb``; its measurements add uniform noise and its relations are the textbook ones, so
each test knows the scale the adapter must find.  The real modules, if any, are set aside and put back after.
The real OpenDP 0.4.0 and 0.5.0 run in the survey (experiments/library_survey), not here: they need numpy < 2.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from _fake_packages import install_fake

from dpaudit.adapters import available, opendp as odp_adapter, opendp_aggregates as aggregates
from dpaudit.adapters.opendp_legacy import LegacyOpenDP
from dpaudit.exceptions import MissingExtraError, ParameterValueError
from dpaudit.mechanisms import get_mechanism

FAKE_MOD = """
FEATURES = set()
SEARCHES = []


def enable_features(*features):
    FEATURES.update(features)


class Measurement:
    def __init__(self, function, relation, name):
        self.function, self.relation, self.name = function, relation, name

    def __call__(self, arg):
        return self.function(arg)

    def check(self, d_in, d_out):
        return self.relation(d_in, d_out)


class Transformation:
    def __init__(self, function, stability):
        self.function, self.stability = function, stability

    def __rshift__(self, meas):
        return Measurement(lambda a: meas(self.function(a)), lambda d_in, d_out: meas.check(self.stability(d_in), d_out),
                           meas.name)


def binary_search_param(make_chain, d_in, d_out, bounds=None):
    # OpenDP 0.4's search stops within 1e-8 and returns the passing end: a scale a little above the boundary.
    SEARCHES.append((d_in, d_out, bounds))
    lo, hi = bounds
    while hi - lo > 1e-8:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if make_chain(mid).check(d_in, d_out) else (mid, hi)
    return hi
"""

FAKE_MEAS = """
import math
import random
from opendp.mod import Measurement

BUILT = []


def _additive(kind, scale, D, noise, relation):
    BUILT.append((kind, scale, D))
    one = lambda v: v + noise(scale)
    function = (lambda a: [one(v) for v in a]) if D.startswith("VectorDomain") else one
    return Measurement(function, relation, kind)


def make_base_laplace(scale, D="AllDomain<T>"):
    return _additive("laplace", scale, D, lambda s: s * (random.random() - 0.5),
                     lambda d_in, d_out: d_out * scale >= d_in)


def make_base_geometric(scale, bounds=None, D="AllDomain<i32>", QO=None):
    return _additive("geometric", scale, D, lambda s: int(round(s * (random.random() - 0.5))),
                     lambda d_in, d_out: d_out * scale >= d_in)


def make_base_gaussian(scale, D="AllDomain<T>"):
    # 0.4: an (epsilon, delta) relation, here min(epsilon, 1) * scale >= 5 * d_in
    return _additive("gaussian", scale, D, lambda s: s * (random.random() - 0.5),
                     lambda d_in, d_out: min(d_out[0], 1.0) * scale >= 5 * d_in)


def make_randomized_response_bool(prob, constant_time=False, Q=None):
    BUILT.append(("randomized_response", prob, None))
    return Measurement(lambda b: b if random.random() < prob else not b,
                       lambda d_in, d_out: d_out >= d_in * math.log(prob / (1 - prob)), "rr")
"""

FAKE_TRANS = """
from opendp.mod import Transformation

BUILT = []


def make_bounded_sum(bounds, T=None):
    BUILT.append(("sum", bounds))
    return Transformation(sum, lambda d_in: d_in * max(abs(bounds[0]), abs(bounds[1])))


def make_count(TIA, TO="i32"):
    BUILT.append(("count", TIA))
    return Transformation(len, lambda d_in: d_in)


def make_sized_bounded_mean(size, bounds, T=None):
    BUILT.append(("mean", size, bounds))
    return Transformation(lambda a: sum(a) / size, lambda d_in: d_in / 2 * (bounds[1] - bounds[0]) / size)


def make_count_by_categories(categories, MO="L1Distance<i32>", TIA=None, TOA="i32"):
    BUILT.append(("histogram", tuple(categories), TIA))
    counts = lambda a: [a.count(c) for c in categories] + [sum(v not in categories for v in a)]
    return Transformation(counts, lambda d_in: d_in)
"""

FAKE_COMB_0_5 = """
from opendp.mod import Measurement

WRAPPED = []


def make_zCDP_to_approxDP(meas):
    WRAPPED.append("zCDP_to_approxDP")
    return meas


def make_fix_delta(meas, delta):
    WRAPPED.append(("fix_delta", delta))
    return Measurement(meas.function, lambda d_in, d_out: d_out[1] >= delta and meas.check(d_in, d_out), meas.name)
"""


def _install(tmp_path, monkeypatch, version: str, files: dict[str, str]) -> None:
    install_fake(tmp_path, monkeypatch, "opendp", version, files)


def _old_api(**override: str) -> dict[str, str]:
    files = {"opendp/__init__.py": "", "opendp/mod.py": FAKE_MOD, "opendp/meas.py": FAKE_MEAS,
             "opendp/trans.py": FAKE_TRANS}
    files.update({f"opendp/{k}.py": v for k, v in override.items()})
    return files


@pytest.fixture
def isolated_opendp(monkeypatch):
    """Set aside the real OpenDP modules; restore them afterwards."""
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "opendp"}
    for k in saved:
        del sys.modules[k]
    yield
    for k in [k for k in sys.modules if k.split(".")[0] == "opendp"]:
        del sys.modules[k]
    sys.modules.update(saved)


@pytest.fixture
def opendp_0_4(tmp_path, monkeypatch, isolated_opendp):
    _install(tmp_path, monkeypatch, "0.4.0", _old_api())
    import opendp.meas
    import opendp.mod
    import opendp.trans

    return opendp.meas, opendp.trans, opendp.mod


def test_opendp_0_4_float_laplace_is_make_base_laplace_at_the_scale_a_user_writes(opendp_0_4):
    meas, _, mod = opendp_0_4
    m = get_mechanism("opendp.laplace", epsilon=1.0)
    assert isinstance(odp_adapter.load_api(), LegacyOpenDP) and available("opendp")
    assert {"floating-point", "contrib"} <= mod.FEATURES
    # the search ends a little above 1 (its tolerance); the adapter uses 1.0, which the relation accepts
    assert mod.SEARCHES[0] == (1.0, 1.0, (1e-3, 1e6))
    assert m.scale == 1.0
    assert meas.BUILT[-2:] == [("laplace", 1.0, "AllDomain<f64>"), ("laplace", 1.0, "VectorDomain<AllDomain<f64>>")]
    out = m(np.array([0.0, 1.0]), size=1000)  # the sum 1 plus uniform noise of width 1 (the fake's)
    assert out.shape == (1000,) and out.dtype == float and 0.5 <= out.min() and out.max() <= 1.5
    assert get_mechanism("opendp.laplace", epsilon=2.0).scale == 0.5  # an epsilon > 1 searches within the bounds


def test_opendp_0_4_integer_laplace_is_the_geometric_and_gaussian_takes_epsilon_delta(opendp_0_4):
    meas, _, mod = opendp_0_4
    g = get_mechanism("opendp.laplace", epsilon=0.5, domain="int", sensitivity=1)
    assert g.scale == 2.0 and meas.BUILT[-1] == ("geometric", 2.0, "VectorDomain<AllDomain<i32>>")
    assert g(np.array([1, 0]), size=50).dtype == np.int64
    n = get_mechanism("opendp.gaussian", epsilon=1.0, delta=1e-5)
    assert n.scale == 5.0 and mod.SEARCHES[-1][1:] == ((1.0, 1e-5), (1e-3, 1e6))
    with pytest.raises(ParameterValueError, match="no discrete Gaussian"):
        get_mechanism("opendp.gaussian", epsilon=1.0, delta=1e-5, domain="int", sensitivity=1)


def test_opendp_0_4_randomized_response(opendp_0_4):
    meas, _, _ = opendp_0_4
    rr = get_mechanism("opendp.randomized_response", epsilon=1.0)
    assert meas.BUILT[-1] == ("randomized_response", pytest.approx(math.e / (1 + math.e)), None)
    counts = rr(np.array([1, 1, 0]), size=200)
    assert counts.dtype == np.int64 and counts.min() >= 0 and counts.max() <= 3


def test_opendp_0_4_aggregates_chain_opendp_trans_into_make_base_star(opendp_0_4):
    meas, trans, mod = opendp_0_4
    s = aggregates.sum_laplace(1.0, -1.0, 1.0)
    assert trans.BUILT[-1] == ("sum", (-1.0, 1.0)) and meas.BUILT[-1] == ("laplace", 1.0, "AllDomain<f64>")
    assert -1.5 <= s(np.array([1.0, 1.0, -1.0])) <= 1.5
    aggregates.sum_laplace(1.0, 0, 5, integer=True)
    assert trans.BUILT[-1] == ("sum", (0, 5)) and meas.BUILT[-1] == ("geometric", 5.0, "AllDomain<i32>")
    c = aggregates.count_laplace(1.0)
    assert trans.BUILT[-1] == ("count", "i32") and c(np.array([0, 1, 1]), size=4).shape == (4,)
    aggregates.mean_laplace(1.0, 0.0, 1.0, 3)  # d_in 2 (one record replaced): sensitivity 1/3
    assert trans.BUILT[-1] == ("mean", 3, (0.0, 1.0)) and mod.SEARCHES[-1][0] == 2
    assert meas.BUILT[-1][1] == pytest.approx(1 / 3, rel=1e-3) and meas.BUILT[-1][1] >= 1 / 3
    h = aggregates.histogram_laplace(1.0, [0, 1, 2])
    assert trans.BUILT[-1] == ("histogram", (0, 1, 2), "i32")
    assert meas.BUILT[-1] == ("geometric", 1.0, "VectorDomain<AllDomain<i32>>")
    assert h(np.array([0, 1, 1]), size=3).shape == (3, 4)


def test_opendp_0_5_gaussian_goes_through_the_zcdp_conversion(tmp_path, monkeypatch, isolated_opendp):
    _install(tmp_path, monkeypatch, "0.5.0", _old_api(comb=FAKE_COMB_0_5))
    n = get_mechanism("opendp.gaussian", epsilon=1.0, delta=1e-5)
    import opendp.comb

    assert opendp.comb.WRAPPED[:2] == ["zCDP_to_approxDP", ("fix_delta", 1e-5)] and n.scale == 5.0


def test_old_opendp_without_a_constructor_names_its_version_and_what_is_missing(tmp_path, monkeypatch,
                                                                               isolated_opendp):
    _install(tmp_path, monkeypatch, "0.3.0", _old_api(trans=FAKE_TRANS.replace("def make_count(", "def _count(")))
    with pytest.raises(MissingExtraError) as info:
        get_mechanism("opendp.laplace", epsilon=1.0)
    message = str(info.value)
    assert message.startswith("OpenDP 0.3.0 is installed but unusable (it has no trans.make_count)")
    assert odp_adapter.SUPPORTED in message and "\n" not in message
    assert not available("opendp")


def test_old_opendp_that_does_not_import_says_why(tmp_path, monkeypatch, isolated_opendp):
    # OpenDP 0.4's typing module reads numpy.bool8, which numpy 2 removed: an AttributeError, not an ImportError.
    _install(tmp_path, monkeypatch, "0.4.0",
             _old_api(meas="import numpy\nnumpy.bool8\n"))
    with pytest.raises(MissingExtraError, match=r"^OpenDP 0\.4\.0 is installed but unusable \(its opendp\.meas does "
                                                r"not import: AttributeError: .*bool8"):
        get_mechanism("opendp.laplace", epsilon=1.0)
