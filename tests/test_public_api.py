"""``__all__`` is kept true: every public name exists, and the package imports fast (lazily)."""

import importlib
import subprocess
import sys

import pytest

MODULES = ["dpaudit", "dpaudit.stats", "dpaudit.attacks", "dpaudit.auditor", "dpaudit.mechanisms",
           "dpaudit.exceptions", "dpaudit.privacy", "dpaudit.targets", "dpaudit.testing"]


@pytest.mark.parametrize("name", MODULES)
def test_all_names_exist(name):
    mod = importlib.import_module(name)
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing


def test_importing_dpaudit_does_not_import_heavy_optional_modules():
    # The CLI must start fast: sklearn, scipy.stats, pulp, matplotlib and dask load on use only.
    code = ("import sys, dpaudit, dpaudit.cli; heavy = ['sklearn', 'scipy.stats', 'pulp', 'matplotlib', 'dask']; "
            "print([m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
