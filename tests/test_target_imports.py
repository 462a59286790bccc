"""Targets import what they would import when run as a script: a module in the current folder, a file's siblings.

The console script ``dpaudit`` does not put the current folder on ``sys.path`` (``python -m`` does), so these
tests take it off first.  Worker processes started *before* the target was loaded must find the folders too.
"""

from __future__ import annotations

import os
import sys
import uuid

import numpy as np
import pytest

import dpaudit
from dpaudit._executor import run_ordered
from dpaudit.exceptions import ParameterValueError
from dpaudit.targets import load_target

BODY = "import numpy as np\ndef f(d, rng=None{size}):\n    return {helper}float(np.sum(d)) + rng.laplace(0, 1{sz})\n"


def _fresh(name: str) -> str:
    return f"{name}_{uuid.uuid4().hex[:10]}"


@pytest.fixture
def no_cwd_on_path(tmp_path, monkeypatch):
    """Run in ``tmp_path`` as the console script does: the current folder is not on sys.path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", os.getcwd())])
    return tmp_path


def _workers_started():
    """Start the reusable loky workers now, before the target's folder is known to this process."""
    run_ordered(pow, [(2, 3), (3, 2), (2, 2)], n_jobs=2)


def _report(spec, n_jobs, **kw):
    out = dpaudit.audit(spec, [1.0], [0.0], epsilon=1.0, seed=4, n_jobs=n_jobs, ideal=True, **kw).to_dict()
    out.pop("elapsed_seconds")
    return out


@pytest.mark.parametrize("vectorised", [True, False])
def test_module_in_the_current_folder_is_a_target(no_cwd_on_path, vectorised):
    name = _fresh("cwdmod")
    (no_cwd_on_path / f"{name}.py").write_text(
        BODY.format(size=", size=None" if vectorised else "", helper="", sz=", size=size" if vectorised else ""))
    _workers_started()
    kw = {"samples": 2000 if vectorised else 1200}  # per-call: 600 calibration calls per side, 3 chunks
    two = _report(f"{name}:f", 2, **kw)
    assert two == _report(f"{name}:f", 1, **kw)


def test_missing_module_is_still_a_clear_error(no_cwd_on_path):
    name = _fresh("nomod")
    with pytest.raises(ParameterValueError, match=rf"target '{name}:f': cannot import module '{name}': No module"):
        load_target(f"{name}:f")


@pytest.mark.parametrize("vectorised", [True, False])
def test_file_target_imports_its_sibling_here_and_in_workers(tmp_path, vectorised):
    helper = _fresh("helper")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / f"{helper}.py").write_text("def shift(x):\n    return x + 0.0\n")
    (sub / "uses.py").write_text(f"import {helper}\n" + BODY.format(
        size=", size=None" if vectorised else "", helper=f"{helper}.shift(0.0) + ",
        sz=", size=size" if vectorised else ""))
    _workers_started()
    kw = {"samples": 2000 if vectorised else 1200}  # per-call: 600 calibration calls per side, 3 chunks
    spec = f"{sub / 'uses.py'}:f"
    assert np.asarray(load_target(spec).sample([1.0], 3, rng=0)).shape == (3,)
    two = _report(spec, 2, **kw)
    assert two == _report(spec, 1, **kw)


@pytest.mark.parametrize("vectorised", [True, False])
def test_file_of_a_package_imports_its_package_here_and_in_workers(tmp_path, vectorised):
    # A library's mechanism file imports its package relatively (`from .util import f`); named by its path it
    # was refused: "executing '.../mech.py' failed: ImportError: attempted relative import with no known parent
    # package". It is now imported by its package name, the folder above the package going on sys.path.
    pkg = _fresh("mylib")
    (tmp_path / pkg / "mechs").mkdir(parents=True)
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "util.py").write_text("def shift(x):\n    return x + 0.0\n")
    (tmp_path / pkg / "mechs" / "__init__.py").write_text("")
    (tmp_path / pkg / "mechs" / "lap.py").write_text("from ..util import shift\n" + BODY.format(
        size=", size=None" if vectorised else "", helper="shift(0.0) + ", sz=", size=size" if vectorised else ""))
    _workers_started()
    spec = f"{tmp_path / pkg / 'mechs' / 'lap.py'}:f"
    target = load_target(spec)
    assert target.fn.__module__ == f"{pkg}.mechs.lap" and target.search_path == (str(tmp_path.resolve()),)
    kw = {"samples": 2000 if vectorised else 1200}
    assert _report(spec, 2, **kw) == _report(spec, 1, **kw)


def test_file_in_a_package_whose_name_is_taken_still_runs_on_its_own(tmp_path):
    # `json` is already imported: the file json/mech.py (no relative imports) must load as a file, as before,
    # not as the standard library's json.mech.
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text("")
    (tmp_path / "json" / "mech.py").write_text(BODY.format(size="", helper="", sz=""))
    target = load_target(f"{tmp_path / 'json' / 'mech.py'}:f")
    assert np.asarray(target.sample([1.0], 3, rng=0)).shape == (3,)
    (tmp_path / "json" / "rel.py").write_text("from .nothing import g\n")
    with pytest.raises(ParameterValueError, match=r"relative import .*; imported as module 'json.rel'"):
        load_target(f"{tmp_path / 'json' / 'rel.py'}:g")
