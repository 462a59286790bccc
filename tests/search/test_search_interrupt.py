"""Ctrl-C during ``dpaudit search``: handled as ``dpaudit audit`` handles it (tests/cli/test_cli_interrupt.py).

Interrupted during the final audit, the search reports the rounds that audit finished, with the pair and
the screening; interrupted while screening (which only chooses the pair), or before the final audit
certified anything, nothing is certified: one line, exit 2.  The library tests raise KeyboardInterrupt from
the target (as Ctrl-C would) once it has drawn ``after`` releases, counting only while armed: from the
start (screening), or once ``pair_search``'s final audit starts (a wrapped audit function arms it).  The
command-line tests send SIGINT once a marker file says the target drew that far in the chosen stage.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dpaudit
from _cli import interrupted_when_marked
from dpaudit import pair_search

#: Releases of a final audit past its first round (2,000 per side and its Poisson extras).
PAST_FIRST_ROUND = 20_000
#: A small, deterministic screening: 4 candidates of 1,000 releases per side (no time budget).
SMALL = dict(epsilon=1.0, size=1, low=0, high=1, seed=3, ideal=True, screen_samples=1000, max_candidates=4)


class _Target:
    """Laplace of the clipped sum (exactly at epsilon 1); raises KeyboardInterrupt past ``after`` armed releases."""

    def __init__(self, after: int, armed: bool):
        self.after, self.armed, self.drawn = after, armed, 0

    def __call__(self, d, size=None, rng=None):
        if self.armed:
            self.drawn += size
            if self.drawn > self.after:
                raise KeyboardInterrupt
        return float(np.clip(d, 0, 1).sum()) + rng.laplace(0, 1, size=size)


def _arm_in_final_audit(monkeypatch, target: _Target, finalist: int = 0) -> None:
    """Arm ``target`` when the search's final audit of finalist ``finalist`` (0: the first) starts."""
    real, started = pair_search._audit_function(), []

    def audit(*args, **kw):
        target.armed = len(started) == finalist
        started.append(finalist)
        return real(*args, **kw)

    monkeypatch.setattr(pair_search, "_audit_function", lambda: audit)


def test_an_interrupt_while_screening_certifies_nothing_and_says_how_far_it_got():
    with pytest.raises(KeyboardInterrupt) as caught:
        dpaudit.search(_Target(2500, armed=True), max_samples=10**9, **SMALL)
    assert type(caught.value) is KeyboardInterrupt and caught.value.audit_report is None
    # The quick look's first pair (1,000 releases per side) was screened; the second's D' side was not.
    assert caught.value.search_progress == {"stage": "screening", "candidates_screened": 1, "screenings": 1,
                                            "max_candidates": 4, "dataset": None, "neighbor": None}


def test_an_interrupted_final_audit_reports_its_finished_rounds_with_the_search(monkeypatch):
    target = _Target(PAST_FIRST_ROUND, armed=False)
    _arm_in_final_audit(monkeypatch, target)
    with pytest.raises(KeyboardInterrupt) as caught:
        dpaudit.search(target, max_samples=10**9, **SMALL)
    report = caught.value.audit_report
    assert isinstance(report, dpaudit.SearchReport) and report.interrupted and report.audit.interrupted
    assert report.stopping_reason == "budget" and report.rounds >= 1 and report.verdict == "no violation found"
    assert report.candidates_screened == caught.value.search_progress["candidates_screened"] >= 1
    out = report.to_dict()
    assert out["interrupted"] is True and out["search"]["screenings"] >= out["candidates_screened"]
    assert [out["dataset"], out["neighbor"]] == [out["search"]["finalists"][0]["dataset"],
                                                 out["search"]["finalists"][0]["neighbor"]]
    assert any(n.startswith("interrupted: ") for n in out["notes"])
    assert "interrupted by hand" in report.summary()


@pytest.mark.parametrize("size", [{"max_samples": 10**9}, {"samples": 10**5}])
def test_a_final_audit_interrupted_before_it_certified_anything_certifies_nothing(monkeypatch, size):
    target = _Target(0, armed=False)
    _arm_in_final_audit(monkeypatch, target)
    with pytest.raises(KeyboardInterrupt) as caught:
        dpaudit.search(target, **size, **SMALL)
    assert caught.value.audit_report is None
    progress = caught.value.search_progress
    assert progress["stage"] == "final audit" and progress["candidates_screened"] >= 1
    assert len(progress["dataset"]) == len(progress["neighbor"]) == 1


def test_finalists_audited_before_the_interrupt_are_reported(monkeypatch):
    """Each finalist holds at the Bonferroni confidence, so the finished ones hold together at the stated one."""
    target = _Target(0, armed=False)
    _arm_in_final_audit(monkeypatch, target, finalist=1)
    with pytest.raises(KeyboardInterrupt) as caught:
        dpaudit.search(target, max_samples=20_000, finalists=2, **SMALL)
    report = caught.value.audit_report
    assert report.interrupted and not report.audit.interrupted and len(report.finalists) == 1
    assert report.to_dict()["interrupted"] is True and report.finalist_confidence == pytest.approx(0.975)
    assert any("1 of the 2 finalists" in n for n in report.notes)
    assert "(Bonferroni)" in report.summary()


TARGET = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    DRAWN = [0]
    def _in_final_audit():
        frame = sys._getframe()
        while frame is not None and frame.f_code.co_name != "_final_audits":
            frame = frame.f_back
        return frame is not None
    def f(d, size=None, rng=None):
        if (os.environ["DPAUDIT_TEST_STAGE"] == "final audit") == _in_final_audit():
            DRAWN[0] += 1 if size is None else size
            if DRAWN[0] > int(os.environ["DPAUDIT_TEST_AFTER"]):
                open(os.environ["DPAUDIT_TEST_MARKER"], "a").close()
                time.sleep(0.2)
        return float(np.sum(d)) + rng.laplace(0, 1, size=size)
""")


def _interrupted_search(tmp_path, stage: str, after: int, *args: str) -> subprocess.CompletedProcess:
    """``dpaudit search`` (1 s of screening) sent SIGINT once the target drew ``after`` releases in ``stage``."""
    target, marker = tmp_path / "slow.py", tmp_path / "marker"
    target.write_text(TARGET)
    env = dict(os.environ, DPAUDIT_TEST_MARKER=str(marker), DPAUDIT_TEST_AFTER=str(after), DPAUDIT_TEST_STAGE=stage)
    cmd = [sys.executable, "-m", "dpaudit", "search", f"{target}:f", "--epsilon", "1", "--size", "1", "--low", "0",
           "--high", "1", "--budget", "1", "--seed", "3", "--ideal", *args]
    return interrupted_when_marked(cmd, env, marker)


def test_the_cli_reports_an_interrupted_final_audit_in_json_with_its_verdicts_status(tmp_path):
    proc = _interrupted_search(tmp_path, "final audit", PAST_FIRST_ROUND, "--max-samples", "1e9", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1
    out = json.loads(proc.stdout)
    assert out["interrupted"] is True and out["stopping_reason"] == "budget" and out["rounds"] >= 1
    assert out["verdict"] == "no violation found" and 0 < out["epsilon_lower_bound"] <= 1.0
    assert out["candidates_screened"] >= 1 and out["search"]["finalists"][0]["dataset"] == out["dataset"]
    assert "stopped: budget (interrupted by hand" in proc.stderr and "candidate pairs screened" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("stage, after, size, needles", [
    ("screening", 0, ("--max-samples", "1e9"), ("interrupted while screening (", "the screening only chooses")),
    ("final audit", 0, ("--max-samples", "1e9"), ("before the final audit's first round finished", "--dataset '[")),
    ("final audit", 0, ("--samples", "1e6"), ("before the fixed-size final audit finished", "--neighbor '[")),
])
def test_the_cli_says_in_one_line_that_nothing_is_certified_and_exits_2(tmp_path, stage, after, size, needles):
    proc = _interrupted_search(tmp_path, stage, after, *size, "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("dpaudit: error: interrupted ")
    assert "nothing is certified" in proc.stderr and "candidate pairs screened" in proc.stderr
    assert all(n in proc.stderr for n in needles), proc.stderr
