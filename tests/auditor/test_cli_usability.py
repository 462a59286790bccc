"""What a user meets on the command line: warnings, hints, one error prefix, 1e6, did-you-mean."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

TARGETS = str(Path(__file__).with_name("user_targets.py"))


def run_cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "dpaudit", *args], capture_output=True, text=True, timeout=timeout)


def test_epsilon_differing_from_a_builtins_claim_warns_but_runs():
    proc = run_cli("audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "0.5",
                   "--samples", "2e4", "--seed", "1", "--json")
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "laplace's own (epsilon=1)" in warnings[0] and "--param epsilon=0.5" in warnings[0]
    rep = json.loads(proc.stdout)
    assert rep["samples"] == 20_000 and rep["claimed_epsilon"] == 0.5
    # Matching claim: no warning.
    proc = run_cli("audit", "laplace", "--param", "epsilon=0.5", "--dataset", "[1]", "--neighbor", "[0]",
                   "--epsilon", "0.5", "--samples", "2e4", "--seed", "1", "--json")
    assert not [line for line in proc.stderr.splitlines() if line.startswith("warning:")]


@pytest.mark.parametrize("args, needle", [
    (["audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]"], "audit: the following arguments are required"),
    (["audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1", "--samples", "1.5"],
     "argument --samples"),
    (["audit", "lapalce", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1"], "did you mean 'laplace'?"),
    (["audit", TARGETS, "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1"], f"'{TARGETS}:laplace_vec'"),
    (["audit", f"{TARGETS}:laplace_ve", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1"],
     "did you mean 'laplace_vec'?"),
    (["nosuchcommand"], "invalid choice"),
])
def test_every_usage_error_is_one_line_with_one_prefix(args, needle):
    proc = run_cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("dpaudit: error: ") and proc.stderr.strip().count("\n") == 0
    assert needle in proc.stderr


def test_per_call_target_gets_a_hint(monkeypatch, capsys):
    # In-process, with the audit itself replaced: only the hint is under test here.
    import dpaudit
    import dpaudit.auditor
    from dpaudit.cli import main

    report = dpaudit.audit(f"{TARGETS}:laplace_one", [1], [0], epsilon=1, samples=200, seed=1)
    monkeypatch.setattr(dpaudit.auditor, "audit", lambda *a, **k: report)
    assert main(["audit", f"{TARGETS}:laplace_one", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                 "--json"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "laplace_one takes no size= keyword" in notes[0]
    proc = run_cli("audit", f"{TARGETS}:laplace_one", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                   "--samples", "400", "--seed", "2", "--json")
    assert proc.returncode == 0
    assert not [line for line in proc.stderr.splitlines() if line.startswith("note:")]  # --samples given
    proc = run_cli("audit", f"{TARGETS}:laplace_vec", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                   "--samples", "1e4", "--seed", "2", "--json")
    assert not [line for line in proc.stderr.splitlines() if line.startswith("note:")]  # vectorised


def test_list_shows_parameters_and_defaults():
    proc = run_cli("list")
    lines = proc.stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.strip().startswith("laplace "))
    assert "--param epsilon=1.0, sensitivity=1.0" in lines[i + 1]
    data = json.loads(run_cli("list", "--json").stdout)
    assert data["mechanism_parameters"]["noisy_histogram"] == {"epsilon": 1.0, "n_bins": 4}


def test_library_adapters_get_the_slow_note_but_builtins_do_not():
    from dpaudit.cli import _slow_target_note
    from dpaudit.targets import load_target

    assert "can take minutes" in _slow_target_note(load_target("opendp.gaussian"))
    assert _slow_target_note(load_target("laplace")) is None
