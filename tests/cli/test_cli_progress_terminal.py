"""Progress of ``dpaudit run`` and long audits: a bar on a terminal, plain lines in a log (issue 44, item 3).

On a pseudo-terminal that reports no size (python's ``pty``, some CI runners) no bar appeared for ``run``
or a 28 s ``audit``, even with ``--progress``: tqdm read the height as -1 rows and hid the bar.  Into a
pipe, ``dpaudit run`` said nothing for 43 s.  The terminal tests spawn the command with a real
pseudo-terminal as its stderr; the log tests run it in this process, where stderr (pytest's capture) is
not a terminal, with ``DPAUDIT_PROGRESS_EVERY=0`` so that lines come without a long run.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest
import yaml

from _cli import cli, one_line


def _on_a_terminal(args: list, *, timeout: float = 120) -> tuple[int, str, bytes]:
    """``dpaudit ARGS`` with a fresh pseudo-terminal (no size set) as stderr: (exit status, stdout, terminal)."""
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("DPAUDIT_PROGRESS", "DPAUDIT_PROGRESS_EVERY",
                                                             "COLUMNS", "LINES")}
    proc = subprocess.Popen([sys.executable, "-m", "dpaudit", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        seen += chunk
    with proc.stdout:
        out = proc.stdout.read().decode()
    proc.wait(timeout=timeout)
    os.close(master)
    return proc.returncode, out, seen


def _tiny_config(tmp_path, trials: int = 4) -> str:
    cfg = {"name": "tiny", "seed": 11, "trials": trials,
           "attack": {"name": "rr_tradeoff", "params": {"repetitions": 200}},
           "sweep": {"parameters": {"attack.params.epsilon": [0.5, 2.0]}}}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def test_run_draws_a_bar_on_a_terminal(tmp_path):
    code, out, seen = _on_a_terminal(["run", _tiny_config(tmp_path), "--out", tmp_path / "r", "--no-plots"])
    assert code == 0 and "results: " in out
    assert b"tiny: 100%|" in seen and b"8/8" in seen, seen[-500:]
    assert b"progress:" not in seen  # a bar, not log lines


def test_audit_draws_a_bar_on_a_terminal_and_stdout_keeps_only_the_json():
    code, out, seen = _on_a_terminal(["audit", "laplace", "--epsilon", "1", "--seed", "1", "--max-samples", "2e4",
                                      "--progress", "--json"])
    assert code == 0 and json.loads(out)["rounds"] >= 2  # exactly one JSON object
    assert b"round 1 of " in seen and b"%|" in seen and b"chunk" in seen, seen[-500:]


@pytest.fixture
def log_lines(monkeypatch):
    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    monkeypatch.setenv("DPAUDIT_PROGRESS_EVERY", "0")


def test_run_writes_lines_into_a_log(tmp_path, capsys, log_lines):
    code, out, err = cli(capsys, "run", _tiny_config(tmp_path), "--out", tmp_path / "r", "--no-plots")
    assert code == 0 and "progress" not in out
    lines = [line for line in err.splitlines() if line.startswith("progress: ")]
    assert lines[0] == "progress: tiny: 1 of 8 trials done, 0 s, about 0 s left", err
    assert len(lines) == 7 and "\r" not in err  # one per trial but the last; no bar in a log
    # A resumed run counts the finished trials.
    (tmp_path / "r" / "tiny" / "summary.json").unlink()
    with (tmp_path / "r" / "tiny" / "trials.jsonl").open("r+b") as fh:
        fh.truncate(len(b"".join(fh.readlines()[:5])))
    code, out, err = cli(capsys, "run", _tiny_config(tmp_path), "--out", tmp_path / "r", "--no-plots", "--resume")
    assert code == 0 and "(3 run, 5 resumed)" in out and "progress: tiny: 6 of 8 trials done" in err


def test_a_short_run_into_a_log_stays_quiet(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    monkeypatch.delenv("DPAUDIT_PROGRESS_EVERY", raising=False)
    code, _, err = cli(capsys, "run", _tiny_config(tmp_path), "--out", tmp_path / "r", "--no-plots")
    assert code == 0 and err == ""


def test_a_sequential_audit_writes_round_lines_with_its_budget_into_a_log(capsys, log_lines):
    code, out, err = cli(capsys, "audit", "laplace", "--epsilon", "1", "--seed", "1", "--max-samples", "2e4",
                         "--ideal", "--json")
    report = json.loads(out)
    rounds = [line for line in err.splitlines() if line.startswith("progress: round ") and "finished" in line]
    assert code == 0 and len(rounds) == report["rounds"] >= 2
    assert "releases per side (budget 20000)" in rounds[0]
    # Within a round: the step and its chunks, named by the round.
    assert any(line.startswith("progress: round 1 of ") and "chunks done" in line for line in err.splitlines())


def test_a_bad_interval_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    monkeypatch.setenv("DPAUDIT_PROGRESS_EVERY", "soon")
    code, _, err = cli(capsys, "run", _tiny_config(tmp_path), "--out", tmp_path / "r", "--no-plots")
    assert code == 2 and "DPAUDIT_PROGRESS_EVERY" in one_line(err)
