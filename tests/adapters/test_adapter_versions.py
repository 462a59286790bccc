"""The adapters across library versions, with small fake packages standing in for the real ones.

Each fake is a package directory (plus a ``*.dist-info`` naming its version) put first on
``sys.path``; the real library's modules, if any, are set aside for the test and put back
after it, so these run whether or not diffprivlib or OpenDP is installed.
"""

from __future__ import annotations

import sys
import warnings

import pytest
from _fake_packages import install_fake as _install_fake

from dpaudit.adapters import available, diffprivlib as dpl_adapter
from dpaudit.exceptions import MissingExtraError
from dpaudit.mechanisms import get_mechanism


@pytest.fixture
def isolated_modules(monkeypatch):
    """Set aside the real diffprivlib/OpenDP modules and the adapter's cache; restore both afterwards."""
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] in ("diffprivlib", "opendp")}
    for k in saved:
        del sys.modules[k]
    monkeypatch.setattr(dpl_adapter, "_STATE", {})
    yield
    for k in [k for k in sys.modules if k.split(".")[0] in ("diffprivlib", "opendp")]:
        del sys.modules[k]
    sys.modules.update(saved)


FAKE_MECHANISMS = """
class _Mech:
    def __init__(self, *, epsilon, delta=0.0, sensitivity=1.0, random_state=None, **kw):
        self.epsilon = epsilon

    def randomise(self, value=None):
        return value

Laplace = Gaussian = GaussianAnalytic = Geometric = Exponential = Binary = _Mech
"""


def test_diffprivlib_whose_top_level_warns_as_an_error_is_loaded_through_the_stub(tmp_path, monkeypatch,
                                                                                  isolated_modules):
    # diffprivlib 0.6.3 and 0.6.4 import numpy.core from diffprivlib.tools: a DeprecationWarning with numpy 2,
    # an exception where warnings are errors (as in this test suite).  The mechanisms do not need tools.
    _install_fake(tmp_path, monkeypatch, "diffprivlib", "0.6.4", {
        "diffprivlib/__init__.py": "from . import tools, mechanisms\n",
        "diffprivlib/tools.py": "import warnings\nwarnings.warn('numpy.core is deprecated', DeprecationWarning)\n",
        "diffprivlib/mechanisms.py": FAKE_MECHANISMS,
    })
    with pytest.warns(DeprecationWarning):
        import diffprivlib.tools  # noqa: F401 - the warning really is raised on the normal import path
    for k in [k for k in sys.modules if k.split(".")[0] == "diffprivlib"]:
        del sys.modules[k]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module = dpl_adapter.load_mechanisms()
    assert module.__name__ == "diffprivlib.mechanisms" and hasattr(module, "Laplace")
    assert "diffprivlib.tools" not in sys.modules


def test_diffprivlib_without_random_state_names_its_version_and_the_supported_range(tmp_path, monkeypatch,
                                                                                   isolated_modules):
    # diffprivlib 0.5's mechanisms take no random_state: the adapters could not seed them.
    _install_fake(tmp_path, monkeypatch, "diffprivlib", "0.5.2", {
        "diffprivlib/__init__.py": "from . import mechanisms\n",
        "diffprivlib/mechanisms.py": FAKE_MECHANISMS.replace("random_state=None, **kw", "lower=0.0"),
    })
    with pytest.raises(MissingExtraError) as info:
        get_mechanism("diffprivlib.laplace", epsilon=1.0)
    message = str(info.value)
    assert "diffprivlib 0.5.2 is installed" in message and "random_state" in message
    assert dpl_adapter.SUPPORTED in message and "\n" not in message
    assert not available("diffprivlib")


def test_diffprivlib_whose_mechanisms_do_not_import_names_its_version(tmp_path, monkeypatch, isolated_modules):
    # diffprivlib 0.5.2's mechanisms need crlibm, which is not installed with it.
    _install_fake(tmp_path, monkeypatch, "diffprivlib", "0.5.2", {
        "diffprivlib/__init__.py": "from . import mechanisms\n",
        "diffprivlib/mechanisms.py": "import crlibm_not_here\n",
    })
    with pytest.raises(MissingExtraError, match=r"^diffprivlib 0\.5\.2 is installed but unusable \(.*crlibm_not_here"):
        dpl_adapter.load_mechanisms()
    assert "diffprivlib" not in sys.modules  # nothing half-imported is left behind


FAKE_PRELUDE_0_7 = """
import types
enable_features = binary_search_param = atom_domain = vector_domain = lambda *a, **k: None
absolute_distance = l1_distance = l2_distance = lambda *a, **k: None
m = types.SimpleNamespace(make_base_laplace=None, make_base_gaussian=None, make_randomized_response_bool=None)
c = types.SimpleNamespace(make_zCDP_to_approxDP=None, make_fix_delta=None)
"""


def test_opendp_without_make_laplace_names_its_version_and_what_is_missing(tmp_path, monkeypatch, isolated_modules):
    # OpenDP 0.7 has a prelude, but its Laplace is make_base_laplace: this used to read "rejected the parameters".
    from dpaudit.adapters import opendp as odp_adapter

    _install_fake(tmp_path, monkeypatch, "opendp", "0.7.0",
                  {"opendp/__init__.py": "", "opendp/prelude.py": FAKE_PRELUDE_0_7})
    with pytest.raises(MissingExtraError) as info:
        get_mechanism("opendp.laplace", epsilon=1.0)
    message = str(info.value)
    assert message.startswith("OpenDP 0.7.0 is installed but unusable (its prelude has no m.make_laplace, "
                              "m.make_gaussian)")
    assert odp_adapter.SUPPORTED in message and "\n" not in message
    assert not available("opendp")


def test_opendp_without_a_prelude_is_not_called_missing(tmp_path, monkeypatch, isolated_modules):
    # OpenDP 0.6 has no opendp.prelude: it is installed, so the message names its version, not just "install it".
    _install_fake(tmp_path, monkeypatch, "opendp", "0.6.2", {"opendp/__init__.py": ""})
    with pytest.raises(MissingExtraError, match=r"^OpenDP 0\.6\.2 is installed but unusable \(No module named"):
        get_mechanism("opendp.randomized_response")
