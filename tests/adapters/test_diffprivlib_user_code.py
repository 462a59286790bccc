"""A user's own code that imports diffprivlib runs under dpaudit, whatever scikit-learn the environment has.

diffprivlib 0.6.6 does not import beside scikit-learn 1.9 on its own (``cannot import name 'DOUBLE' from
sklearn.tree._tree``); ``import dpaudit`` installs :func:`dpaudit.adapters.compat.fix_diffprivlib_import`.
The command-line and script checks run in a fresh interpreter, where diffprivlib has not been imported yet,
as for a user.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dpaudit
from dpaudit.adapters.compat import SKLEARN_TREE_ALIASES, fix_diffprivlib_import

pytestmark = pytest.mark.skipif(importlib.util.find_spec("diffprivlib") is None,
                                reason="diffprivlib is not installed (pip install 'dpaudit[diffprivlib]')")

#: A user's target file: module-level imports of diffprivlib.tools, both spellings.
USER_FILE = textwrap.dedent("""
    import numpy as np
    import diffprivlib.tools
    from diffprivlib.tools import count_nonzero


    def dpl_count(dataset, rng=None):
        seed = None if rng is None else int(rng.integers(2**32))
        return count_nonzero(dataset, epsilon=1.0, random_state=seed)


    def dpl_mean(dataset, size=None, rng=None):
        state = np.random.RandomState(rng.integers(2**32))
        n = 1 if size is None else size
        out = np.array([diffprivlib.tools.mean(dataset, epsilon=1.0, bounds=(0.0, 1.0), random_state=state,
                                               accountant=diffprivlib.BudgetAccountant()) for _ in range(n)])
        return out[0] if size is None else out
""")


def _fresh_python(*args, cwd):
    """Run ``python ARGS`` in a new interpreter that imports this checkout's dpaudit."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(dpaudit.__file__)),
                                                       os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def test_the_fix_restores_only_missing_aliases_with_their_old_values():
    import sklearn.tree._tree as tree

    fix_diffprivlib_import()
    assert fix_diffprivlib_import() == ()  # idempotent: nothing left to add
    for name, value in SKLEARN_TREE_ALIASES.items():
        assert getattr(tree, name) is value or np.dtype(getattr(tree, name)) == np.dtype(value)


def test_a_user_file_importing_diffprivlib_tools_is_audited_by_the_cli(tmp_path):
    (tmp_path / "dpl_user.py").write_text(USER_FILE)
    # add/remove pair: diffprivlib's count is clipped to [0, len(dataset)], which the size reveals; the point
    # here is that the file imports and is audited, whatever the verdict.
    proc = _fresh_python("-m", "dpaudit", "audit", "dpl_user.py:dpl_count", "--dataset", "[1,1,1]", "--neighbor",
                         "[1,1]", "--epsilon", "1", "--seed", "1", "--max-samples", "2000", "--json", cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["claimed_epsilon"] == 1.0 and report["samples"] > 0
    assert "ImportError" not in proc.stderr


def test_a_script_importing_dpaudit_first_imports_diffprivlib_and_audits_through_python(tmp_path):
    (tmp_path / "dpl_user.py").write_text(USER_FILE)
    script = textwrap.dedent("""
        import dpaudit
        import diffprivlib.tools, diffprivlib.models
        from diffprivlib.models import GaussianNB
        assert diffprivlib.__version__ and hasattr(diffprivlib.tools, "histogram")
        report = dpaudit.audit("dpl_user.py:dpl_mean", [0.0, 1.0], [0.0, 0.0], epsilon=1.0, samples=2000, seed=3)
        print(report.verdict, report.samples)
    """)
    proc = _fresh_python("-c", script, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    *verdict, samples = proc.stdout.split()
    assert " ".join(verdict) in ("violation", "no violation found") and samples == "2000"


def test_a_diffprivlib_target_from_python_is_seeded_and_reproducible(tmp_path, monkeypatch):
    # In this process: dpaudit is imported, so importing the user's file imports diffprivlib.tools.
    (tmp_path / "dpl_user.py").write_text(USER_FILE)
    monkeypatch.chdir(tmp_path)
    runs = [dpaudit.audit("dpl_user.py:dpl_mean", [0.0, 1.0], [0.0, 0.0], epsilon=1.0, samples=1000, seed=5)
            for _ in range(2)]
    assert runs[0].to_dict()["epsilon_lower_bound"] == runs[1].to_dict()["epsilon_lower_bound"]
    assert runs[0].samples == 1000


def test_the_adapters_guide_wraps_diffprivlib_tools_and_prints_what_it_says(tmp_path, monkeypatch, capsys):
    # docs/adapters.md: diffprivlib's mean, nanmean and histogram as targets, three seeded audits of 2,000
    # releases per side (about three seconds); the printed lines are quoted in the guide.
    import re

    from test_docs_examples import ROOT, run_blocks

    monkeypatch.chdir(tmp_path)
    spaces = run_blocks("docs/adapters.md", tmp_path)
    printed = capsys.readouterr().out
    guide = (ROOT / "docs" / "adapters.md").read_text(encoding="utf-8")
    quoted = re.search(r"It prints \(diffprivlib 0\.6\.6\):\n\n```\n(.*?)```", guide, re.S).group(1)
    assert printed == quoted
    mean, nanmean = spaces[0]["mean"], spaces[0]["nanmean"]
    assert mean.floating_point["attack"] == "float-lattice"
    assert f"{mean.distribution_epsilon_lower_bound:.2f}" == "0.82" and "is 0.82" in guide
    # nanmean's noise is calibrated for 3 records where 2 are present: true epsilon about 1.5
    assert 1.0 < nanmean.epsilon_lower_bound < 1.5 + 0.01
