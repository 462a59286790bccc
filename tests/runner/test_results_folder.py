"""Running again into a results folder never loses a finished trial (issue 44, item 1).

A re-run without ``--resume`` once truncated ``trials.jsonl`` (100 finished trials became 40 when it was
interrupted) and left the old plots beside the new data.  Now: refused without ``--resume``/``--overwrite``;
``--resume`` only appends and removes the plots and summary drawn from fewer trials; ``--overwrite`` moves the
old folder aside whole.  Each test interrupts a re-run and compares the finished trials byte for byte.
"""

from __future__ import annotations

import dataclasses
import signal
import subprocess
import sys
import time

import pytest
import yaml

from _cli import cli, one_line
from dpaudit.exceptions import ParameterValueError
from dpaudit.runner import run_experiment
from dpaudit.runner.kinds import get_kind
from dpaudit.runner.kinds.base import KINDS

QUIET = dict(progress=False, echo=lambda s: None)


def _interrupt_after(monkeypatch, n_calls: int):
    """rr_tradeoff trials that raise KeyboardInterrupt (a Ctrl-C) on call ``n_calls + 1``, serially.

    Patch once at a time: ``monkeypatch.undo()`` before patching again.
    """
    kind = get_kind("rr_tradeoff")
    calls = []

    def run_trial(config, mechanism, seed):
        calls.append(1)
        if len(calls) > n_calls:
            raise KeyboardInterrupt
        return kind.run_trial(config, mechanism, seed)

    monkeypatch.setitem(KINDS, "rr_tradeoff", dataclasses.replace(kind, run_trial=run_trial))


def _lines(path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_a_rerun_without_a_flag_is_refused_before_writing(tmp_path, tiny_yaml, capsys, monkeypatch):
    cfg = tiny_yaml()
    assert run_experiment(cfg, out=tmp_path, draw=False, **QUIET).summary["complete"]
    folder = tmp_path / "tiny"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    _interrupt_after(monkeypatch, 2)  # were a trial to run, the re-run would be interrupted mid-way
    code, out, err = cli(capsys, "run", cfg, "--out", tmp_path, "--no-plots")
    line = one_line(err)
    assert code == 2 and out == ""
    assert "--resume" in line and "--overwrite" in line and "12 finished trials" in line and str(folder) in line
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    with pytest.raises(ParameterValueError, match="--overwrite"):
        run_experiment(cfg, out=tmp_path, draw=False, **QUIET)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_an_interrupted_resume_keeps_every_finished_trial_byte_for_byte(tmp_path, tiny_yaml, monkeypatch):
    cfg = tiny_yaml()
    folder = tmp_path / "tiny"
    _interrupt_after(monkeypatch, 5)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(cfg, out=tmp_path, draw=False, **QUIET)
    first = _lines(folder / "trials.jsonl")
    assert len(first) == 5
    # A re-run without --resume is refused however little the folder holds...
    with pytest.raises(ParameterValueError, match="5 finished trials"):
        run_experiment(cfg, out=tmp_path, draw=False, **QUIET)
    assert _lines(folder / "trials.jsonl") == first
    # ... and a resume interrupted again only appended.
    monkeypatch.undo()
    _interrupt_after(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(cfg, out=tmp_path, resume=True, draw=False, **QUIET)
    second = _lines(folder / "trials.jsonl")
    assert second[:5] == first and len(second) == 8
    monkeypatch.undo()
    done = run_experiment(cfg, out=tmp_path, resume=True, draw=False, **QUIET)
    assert done.trials_run == 4 and done.trials_skipped == 8 and _lines(folder / "trials.jsonl")[:8] == second
    straight = run_experiment(cfg, out=tmp_path / "straight", draw=False, **QUIET)
    assert done.summary == straight.summary


def _partial_folder_with_plots(tmp_path, tiny_yaml, monkeypatch):
    """A folder of 4 finished trials beside the plots and summary of 12 (what an older dpaudit left after a re-run
    that truncated the trials); returns (config mapping, folder)."""
    import shutil

    raw = yaml.safe_load(tiny_yaml().read_text())
    raw["plot"] = {"figures": ["rr_tradeoff"]}
    whole = run_experiment(raw, out=tmp_path / "whole", **QUIET)
    assert {p.name for p in whole.figures} == {"rr_tradeoff.pdf", "rr_tradeoff.png"}
    _interrupt_after(monkeypatch, 4)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(raw, out=tmp_path, **QUIET)
    monkeypatch.undo()
    folder = tmp_path / "tiny"
    for name in ("rr_tradeoff.pdf", "rr_tradeoff.png", "summary.json"):
        shutil.copy(whole.directory / name, folder / name)
    return raw, folder


def test_resume_removes_the_plots_and_summary_drawn_from_other_trials(tmp_path, tiny_yaml, monkeypatch):
    raw, folder = _partial_folder_with_plots(tmp_path, tiny_yaml, monkeypatch)
    first = _lines(folder / "trials.jsonl")
    _interrupt_after(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(raw, out=tmp_path, resume=True, **QUIET)
    # Six trials now, the four first byte for byte, and no plot or summary of other trials beside them.
    assert _lines(folder / "trials.jsonl")[:4] == first and len(_lines(folder / "trials.jsonl")) == 6
    assert sorted(p.name for p in folder.iterdir()) == ["config.resolved.yaml", "trials.jsonl"]
    monkeypatch.undo()
    done = run_experiment(raw, out=tmp_path, resume=True, **QUIET)
    assert {p.name for p in done.figures} == {"rr_tradeoff.pdf", "rr_tradeoff.png"}
    assert (folder / "summary.json").read_bytes() == (tmp_path / "whole" / "tiny" / "summary.json").read_bytes()


def test_resume_without_plots_says_it_removed_them(tmp_path, tiny_yaml, monkeypatch):
    raw, folder = _partial_folder_with_plots(tmp_path, tiny_yaml, monkeypatch)
    (folder / "notes.png").write_bytes(b"not ours")  # a file someone put there is left alone
    said = []
    run_experiment(raw, out=tmp_path, resume=True, draw=False, progress=False, echo=said.append)
    assert any("removed 2 plot files" in s and "dpaudit plot" in s for s in said), said
    assert not (folder / "rr_tradeoff.png").exists() and (folder / "notes.png").read_bytes() == b"not ours"


def test_a_folder_holding_only_old_plots_is_refused(tmp_path, tiny_yaml, monkeypatch):
    raw, folder = _partial_folder_with_plots(tmp_path, tiny_yaml, monkeypatch)
    (folder / "trials.jsonl").write_bytes(b"")
    with pytest.raises(ParameterValueError, match="the summary or plots of an earlier run"):
        run_experiment(raw, out=tmp_path, draw=False, **QUIET)
    assert (folder / "rr_tradeoff.png").exists()


def test_overwrite_moves_the_old_folder_aside_whole(tmp_path, tiny_yaml, monkeypatch, capsys):
    raw = yaml.safe_load(tiny_yaml().read_text())
    raw["plot"] = {"figures": ["rr_tradeoff"]}
    cfg = tmp_path / "plotted.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    folder, aside = tmp_path / "tiny", tmp_path / "tiny.previous"
    assert run_experiment(cfg, out=tmp_path, **QUIET).summary["complete"]
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert "rr_tradeoff.png" in before and "summary.json" in before
    _interrupt_after(monkeypatch, 3)
    code, _, err = cli(capsys, "run", cfg, "--out", tmp_path, "--overwrite")
    assert code == 130 and f"moved to {aside}" in err
    assert {p.name: p.read_bytes() for p in aside.iterdir()} == before
    # The interrupted new run: its three trials, and no plot or summary of the old run beside them.
    assert sorted(p.name for p in folder.iterdir()) == ["config.resolved.yaml", "trials.jsonl"]
    assert len(_lines(folder / "trials.jsonl")) == 3
    monkeypatch.undo()
    code, out, _ = cli(capsys, "run", cfg, "--out", tmp_path, "--resume")
    assert code == 0 and "(9 run, 3 resumed)" in out
    assert (folder / "summary.json").read_bytes() == before["summary.json"]  # same seed, same summary


def test_both_flags_are_refused(tmp_path, tiny_yaml, capsys):
    code, _, err = cli(capsys, "run", tiny_yaml(), "--out", tmp_path, "--resume", "--overwrite")
    assert code == 2 and "--resume and --overwrite" in one_line(err)
    assert not (tmp_path / "tiny").exists()


def test_a_folder_with_no_finished_trial_is_reused(tmp_path, tiny_yaml, monkeypatch):
    cfg = tiny_yaml()
    _interrupt_after(monkeypatch, 0)  # stopped before its first trial finished
    with pytest.raises(KeyboardInterrupt):
        run_experiment(cfg, out=tmp_path, draw=False, **QUIET)
    monkeypatch.undo()
    assert (tmp_path / "tiny" / "trials.jsonl").read_bytes() == b""
    assert run_experiment(cfg, out=tmp_path, draw=False, **QUIET).summary["complete"]
    assert not (tmp_path / "tiny.previous").exists()


def test_sigint_to_a_resumed_run_keeps_every_earlier_trial(tmp_path, monkeypatch):
    """The real command line, stopped by SIGINT (a Ctrl-C) while it resumes a partial run."""
    cfg = {"name": "slow", "seed": 5, "trials": 16,
           "attack": {"name": "rr_tradeoff", "params": {"repetitions": 150_000, "epsilon": 1.0}}}
    cfg_file = tmp_path / "slow.yaml"
    cfg_file.write_text(yaml.safe_dump(cfg))
    log = tmp_path / "slow" / "trials.jsonl"
    _interrupt_after(monkeypatch, 4)
    with pytest.raises(KeyboardInterrupt):
        run_experiment(cfg_file, out=tmp_path, draw=False, **QUIET)
    monkeypatch.undo()
    first = _lines(log)
    assert len(first) == 4
    command = [sys.executable, "-m", "dpaudit", "run", str(cfg_file), "--out", str(tmp_path), "--no-plots"]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--resume" in refused.stderr and _lines(log) == first
    proc = subprocess.Popen([*command, "--resume"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 90
    while time.time() < deadline and proc.poll() is None and len(_lines(log)) < 6:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 130), err  # 0: it finished before the signal came
    now = _lines(log)
    assert now[:4] == first and len(now) >= 6
