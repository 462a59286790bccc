"""A target that cannot be pickled for worker processes is drawn in this process, with the same results.

Results never depend on the number of jobs, so ``n_jobs=2`` with such a target (a lock in its module or
its instance) falls back to one job with a note, never an internal error.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import dpaudit
from dpaudit.exceptions import SerialFallbackWarning

LOCKED = textwrap.dedent("""
    import threading
    import numpy as np
    lock = threading.Lock()
    def f(d, rng=None, size=None):
        with lock:
            return float(np.sum(d)) + rng.laplace(0, 1, size=size)
    def per_call(d, rng=None):
        with lock:
            return float(np.sum(d)) + rng.laplace(0, 1)
""")


class Holder:
    def __init__(self):
        self.lock = threading.Lock()

    def __call__(self, d, rng=None, size=None):
        with self.lock:
            return float(np.sum(d)) + rng.laplace(0, 1, size=size)


def _audit(target, n_jobs, **kw):
    return dpaudit.audit(target, [1.0], [0.0], epsilon=1.0, seed=1, n_jobs=n_jobs, ideal=True, **kw).to_dict()


def _same(a: dict, b: dict) -> None:
    a, b = dict(a), dict(b)
    a.pop("elapsed_seconds"), b.pop("elapsed_seconds")
    assert a == b


def test_unpicklable_instance_falls_back_to_one_job_with_a_warning():
    with pytest.warns(SerialFallbackWarning, match=r"target 'Holder' cannot be sent to worker processes"):
        two = _audit(Holder(), 2, samples=4000)
    _same(two, _audit(Holder(), 1, samples=4000))


@pytest.mark.parametrize("name, kw", [("f", {"samples": 4000}), ("per_call", {"max_samples": 600})])
def test_file_target_with_a_lock_falls_back(tmp_path, name, kw):
    path = tmp_path / "locked.py"
    path.write_text(LOCKED)
    with pytest.warns(SerialFallbackWarning, match="_thread.lock"):
        two = _audit(f"{path}:{name}", 2, **kw)
    _same(two, _audit(f"{path}:{name}", 1, **kw))


def test_picklable_target_gives_no_warning(tmp_path):
    path = tmp_path / "free.py"
    path.write_text("import numpy as np\ndef f(d, rng=None, size=None):\n"
                    "    return float(np.sum(d)) + rng.laplace(0, 1, size=size)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SerialFallbackWarning)
        _audit(f"{path}:f", 2, samples=2000)


def test_search_final_audits_fall_back_too():
    with pytest.warns(SerialFallbackWarning):
        rep = dpaudit.search(Holder(), epsilon=1.0, size=2, low=0, high=1, samples=2000, seed=2, n_jobs=2,
                             ideal=True)
    assert rep.to_dict()["verdict"]


def test_cli_note_is_one_line_and_json_equals_one_job(tmp_path):
    path = tmp_path / "locked.py"
    path.write_text(LOCKED)

    def run(jobs):
        proc = subprocess.run([sys.executable, "-m", "dpaudit", "audit", f"{path}:f", "--dataset", "[1]",
                               "--neighbor", "[0]", "--epsilon", "1", "--samples", "4000", "--seed", "1",
                               "--ideal", "--jobs", str(jobs), "--json"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1), proc.stderr
        return json.loads(proc.stdout), proc.stderr

    two, err = run(2)
    notes = [line for line in err.splitlines() if "cannot be sent to worker processes" in line]
    assert len(notes) == 1 and notes[0].startswith("note: target ") and "Traceback" not in err
    _same(two, run(1)[0])


def test_a_target_that_pickles_but_cannot_be_rebuilt_falls_back_too(tmp_path):
    # A module global holding a ctypes library handle pickles, but no worker can rebuild it: the pool broke
    # (exit 3, "BrokenProcessPool: A task has failed to un-serialize").  The check reads the pickle back.
    path = tmp_path / "cdll_target.py"
    path.write_text(textwrap.dedent("""
        import ctypes
        import numpy as np
        libc = ctypes.CDLL(None)
        def f(d, rng=None, size=None):
            libc.abs(-1)
            return float(np.sum(d)) + rng.laplace(0, 1, size=size)
    """))
    with pytest.warns(SerialFallbackWarning, match="cannot be sent to worker processes"):
        two = _audit(f"{path}:f", 2, samples=4000)
    _same(two, _audit(f"{path}:f", 1, samples=4000))


def test_cli_note_waits_for_success_so_a_later_error_is_the_only_line(tmp_path):
    # The note used to be printed as soon as the fallback was known, so an audit that then failed left two
    # lines on stderr; an error must be one line.  The note is said with the other notes, after success.
    path = tmp_path / "locked_nan.py"
    path.write_text(LOCKED + textwrap.dedent("""
        def nan(d, rng=None, size=None):
            with lock:
                return np.full(size, np.nan)
    """))
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "audit", f"{path}:nan", "--dataset", "[1]",
                           "--neighbor", "[0]", "--epsilon", "1", "--samples", "4000", "--seed", "1", "--jobs", "2"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.startswith("dpaudit: error: ")
    assert proc.stderr.count("\n") == 1 and "cannot be sent" not in proc.stderr, proc.stderr
