"""Ctrl-C during an audit: a sequential audit reports the rounds it finished; nothing else is certified.

Every round of a sequential audit is certified at its share of the failure probability (the union
bound over the rounds planned before drawing), so the rounds finished before an interrupt are a valid
audit stopped there, like a budget stop.  The subprocess tests send SIGINT only once a marker file
says the target has drawn past the first round (or, for the "nothing certified" cases, on its first
call); after the marker the target sleeps, so the interrupt always lands mid-round.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import dpaudit
from _cli import interrupted_when_marked

TARGET = textwrap.dedent("""
    import os, time
    import numpy as np
    DRAWN = [0]
    def f(d, size=None, rng=None):
        DRAWN[0] += 1 if size is None else size
        if DRAWN[0] > int(os.environ["DPAUDIT_TEST_AFTER"]):
            open(os.environ["DPAUDIT_TEST_MARKER"], "a").close()
            time.sleep(0.2)
        return float(np.sum(d)) + rng.laplace(0, 1, size=size)
""")

#: Releases one process draws before the marker: past the first round's 2,000 per side (and its Poisson extras).
PAST_FIRST_ROUND = 20_000


def _interrupted_cli(tmp_path, after: int, *args: str) -> subprocess.CompletedProcess:
    """``dpaudit audit`` on a Laplace target exactly at its claim, sent SIGINT once the marker exists."""
    target, marker = tmp_path / "slow.py", tmp_path / "marker"
    target.write_text(TARGET)
    env = dict(os.environ, DPAUDIT_TEST_MARKER=str(marker), DPAUDIT_TEST_AFTER=str(after))
    cmd = [sys.executable, "-m", "dpaudit", "audit", f"{target}:f", "--dataset", "[1]", "--neighbor", "[0]",
           "--epsilon", "1", "--seed", "3", "--ideal", *args]
    return interrupted_when_marked(cmd, env, marker)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_interrupted_sequential_audit_reports_its_finished_rounds(tmp_path, jobs):
    proc = _interrupted_cli(tmp_path, PAST_FIRST_ROUND, "--max-samples", "1e9", "--jobs", jobs, "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1
    out = json.loads(proc.stdout)
    assert out["interrupted"] is True and out["stopping_reason"] == "budget"
    assert out["verdict"] == "no violation found" and 0 < out["epsilon_lower_bound"] <= 1.0
    assert out["rounds"] >= 1 and out["samples"] == out["trajectory"]["samples"][-1]
    assert any(n.startswith("interrupted: ") for n in out["notes"])
    assert "stopped: budget (interrupted by hand" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("size, needle", [(("--max-samples", "1e9"), "before the first round finished"),
                                          (("--samples", "1e6"), "before the fixed-size audit finished")])
def test_an_audit_interrupted_before_it_certified_anything_exits_2_in_one_line(tmp_path, size, needle):
    proc = _interrupted_cli(tmp_path, 0, *size, "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("dpaudit: error: interrupted ")
    assert needle in proc.stderr and "nothing is certified" in proc.stderr


#: A script's first lines: under the command line's handler, a first SIGINT is taken as a KeyboardInterrupt.
FIRST_INTERRUPT = """
import os, signal, threading, time
from dpaudit import cli
with cli._second_interrupt_aborts():
    try:
        os.kill(os.getpid(), signal.SIGINT)
        signal.pause()
    except KeyboardInterrupt:
        print("first", flush=True)
"""


def test_a_second_interrupt_aborts_at_once():
    script = FIRST_INTERRUPT + textwrap.dedent("""
        os.kill(os.getpid(), signal.SIGINT)
        signal.pause()
    print("not reached", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGINT and proc.stdout == "first\n"
    assert proc.stderr == "dpaudit: interrupted again: stopped at once, without a report\n"


def test_a_second_interrupt_while_the_process_exits_aborts_without_a_traceback():
    """The first Ctrl-C ends the command (its report said); the process then waits at exit for a thread
    (a fit still running, loky's executor manager).  A second Ctrl-C there printed Python's traceback
    ('Exception ignored in: <module 'threading'>'); it aborts in one line as during the command."""
    script = FIRST_INTERRUPT + textwrap.dedent("""
    threading.Thread(target=time.sleep, args=(60,)).start()  # joined at exit
    print("report", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline() == "first\n" and proc.stdout.readline() == "report\n"
    time.sleep(0.5)  # the main thread is at exit, joining the sleeping thread
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGINT and out == ""
    assert err == "dpaudit: interrupted again: stopped at once\n"


def test_a_second_interrupt_kills_the_idle_worker_processes():
    """Idle loky workers outlived a process killed by a signal for loky's idle timeout (300 s), holding its
    stdout, so `dpaudit audit --jobs 2 | tee log` hung after a second Ctrl-C.  The abort kills them: stdout
    reaches end of file (what tee waits for) and the workers are gone within seconds."""
    script = textwrap.dedent("""
        from dpaudit._executor import run_ordered
        import joblib.externals.loky.reusable_executor as loky_executor
        run_ordered(pow, [(2, 3)] * 4, n_jobs=2)  # the workers stay, idle
        print(*loky_executor._executor._processes, flush=True)
    """) + FIRST_INTERRUPT + "    os.kill(os.getpid(), signal.SIGINT)\n    signal.pause()\n"
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    workers = [int(pid) for pid in proc.stdout.readline().split()]
    try:
        assert len(workers) == 2 and proc.stdout.readline() == "first\n"
        out, err = proc.communicate(timeout=20)  # an end of file on stdout: no worker holds it
        assert proc.returncode == -signal.SIGINT and out == ""
        # (loky's resource tracker may add warnings as it removes the semaphores of the process killed)
        assert err.startswith("dpaudit: interrupted again: stopped at once, without a report\n")
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in workers)
    finally:
        proc.kill()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


class _InterruptAfter:
    """Laplace of the sum; raises KeyboardInterrupt (as Ctrl-C would) once ``after`` releases were drawn."""

    def __init__(self, after):
        self.after, self.drawn = after, 0

    def __call__(self, d, size=None, rng=None):
        self.drawn += size
        if self.drawn > self.after:
            raise KeyboardInterrupt
        return float(np.sum(d)) + rng.laplace(0, 1, size=size)


def test_the_library_passes_the_interrupt_on_with_the_finished_rounds_report():
    with pytest.raises(KeyboardInterrupt) as caught:
        dpaudit.audit(_InterruptAfter(PAST_FIRST_ROUND), [1.0], [0.0], epsilon=1.0, max_samples=10**9, seed=3,
                      ideal=True)
    report = caught.value.audit_report
    assert type(caught.value) is KeyboardInterrupt
    assert report.interrupted and report.stopping_reason == "budget" and report.rounds >= 1
    assert report.samples == report.trajectory["samples"][-1] and report.verdict == "no violation found"
    assert dpaudit.AuditReport.from_dict(report.to_dict()).interrupted


@pytest.mark.parametrize("kw", [{"max_samples": 10**9}, {"samples": 10**5}])
def test_the_library_certifies_nothing_before_a_round_finished(kw):
    with pytest.raises(KeyboardInterrupt) as caught:
        dpaudit.audit(_InterruptAfter(0), [1.0], [0.0], epsilon=1.0, seed=3, ideal=True, **kw)
    assert caught.value.audit_report is None



def test_an_interrupt_while_candidates_are_fitted_in_threads_waits_for_no_pending_fit(monkeypatch):
    """With --jobs 2 candidates are fitted two at a time; Ctrl-C (a SIGINT sent by the first fit once the main
    thread waits for results) stops the fitting at once: no candidate starts afterwards, so the finished rounds
    are reported without waiting for every fit (at 2,000 coordinates that wait was 9 s, long enough for a
    second Ctrl-C, which loses the report)."""
    import threading

    from dpaudit.auditor import calibrate

    started, gate = [], threading.Event()

    def fake_selection_scores(name, pool, fit, sel):
        started.append(name)
        if name == "a":
            time.sleep(0.3)  # the main thread is waiting for the results by now
            os.kill(os.getpid(), signal.SIGINT)
        gate.wait(2)  # a long fit
        raise AssertionError("not used")

    monkeypatch.setattr(calibrate, "_selection_scores", fake_selection_scores)
    pool = (np.zeros((40, 1)), np.ones((40, 1)))
    with pytest.raises(KeyboardInterrupt):
        calibrate.choose_test(("a", "b", "c", "d", "e"), pool, confidence=0.95, full=False, threads=2)
    seen = list(started)
    gate.set()
    assert seen == ["a", "b"], seen


@pytest.mark.parametrize("command, patched, what", [
    (["scores", "configs/data/mia_in.npy", "configs/data/mia_out.npy", "--epsilon", "1"], "audit_scores",
     "score audit"),
    (["one-run", "[1, 0, 1, 0]", "[1, 0, 1, 0]", "--epsilon", "1"], "audit_one_run", "one-run audit")])
def test_scores_and_one_run_interrupted_certify_nothing_in_one_line(monkeypatch, capsys, command, patched, what):
    # They printed Python's bare "dpaudit: interrupted" and exited 130, where an audit interrupted before its first
    # round says nothing is certified and exits 2, as the contract's exit statuses have it.
    from pathlib import Path

    import dpaudit.auditor
    from _cli import cli, one_line

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    monkeypatch.setattr(dpaudit.auditor, patched, interrupted)
    code, out, err = cli(capsys, *command, "--json")
    assert code == 2 and out == ""
    assert one_line(err) == f"dpaudit: error: interrupted before the {what} finished, so nothing is certified"
