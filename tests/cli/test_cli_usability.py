"""What a user meets on the command line: warnings, hints, one error prefix, 1e6, did-you-mean."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

TARGETS = str(Path(__file__).parent.parent / "auditor" / "user_targets.py")


def run_cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "dpaudit", *args], capture_output=True, text=True, timeout=timeout)


def cli(capsys, *args):
    """``dpaudit ARGS`` in this process (no interpreter start-up): (exit status, stdout, stderr)."""
    from dpaudit.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_epsilon_differing_from_a_builtins_claim_warns_but_runs(capsys):
    code, out, err = cli(capsys, "audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "0.5",
                         "--samples", "2e4", "--seed", "1", "--json")
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "laplace's own (epsilon=1)" in warnings[0] and "--param epsilon=0.5" in warnings[0]
    rep = json.loads(out)
    assert rep["samples"] == 20_000 and rep["claimed_epsilon"] == 0.5 and code == 1
    # Matching claim: no warning.
    code, out, err = cli(capsys, "audit", "laplace", "--param", "epsilon=0.5", "--dataset", "[1]", "--neighbor", "[0]",
                         "--epsilon", "0.5", "--samples", "2e4", "--seed", "1", "--json")
    assert not [line for line in err.splitlines() if line.startswith("warning:")]


@pytest.mark.parametrize("args, needle", [
    (["audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]"], "argument --epsilon: required (or --claim"),
    (["audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1", "--samples", "1.5"],
     "argument --samples"),
    (["audit", "lapalce", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1"], "did you mean 'laplace'?"),
    (["audit", TARGETS, "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1"], f"'{TARGETS}:laplace_vec'"),
    (["audit", f"{TARGETS}:laplace_ve", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1"],
     "did you mean 'laplace_vec'?"),
    (["nosuchcommand"], "invalid choice"),
])
def test_every_usage_error_is_one_line_with_one_prefix(args, needle, capsys):
    code, out, err = cli(capsys, *args)
    assert code == 2, err
    assert err.startswith("dpaudit: error: ") and err.strip().count("\n") == 0
    assert needle in err and out == ""


def test_the_same_from_a_fresh_interpreter():
    # One real process, to be sure nothing above depends on running in-process.
    proc = run_cli("audit", "lapalce", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1")
    assert proc.returncode == 2 and proc.stderr.startswith("dpaudit: error: ") and "did you mean" in proc.stderr


def test_per_call_target_gets_a_hint(monkeypatch, capsys):
    # In-process, with the audit itself replaced: only the hint is under test here.
    import dpaudit
    import dpaudit.auditor
    from dpaudit.cli import main

    report = dpaudit.audit(f"{TARGETS}:laplace_one", [1], [0], epsilon=1, samples=200, seed=1, ideal=True)
    monkeypatch.setattr(dpaudit.auditor, "audit", lambda *a, **k: report)
    assert main(["audit", f"{TARGETS}:laplace_one", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                 "--json"]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "laplace_one takes no size= keyword" in notes[0]
    monkeypatch.undo()
    code, _, err = cli(capsys, "audit", f"{TARGETS}:laplace_one", "--dataset", "[1]", "--neighbor", "[0]",
                       "--epsilon", "1", "--samples", "400", "--seed", "2", "--ideal", "--json")
    assert code == 0
    assert not [line for line in err.splitlines() if line.startswith("note:")]  # --samples given
    code, _, err = cli(capsys, "audit", f"{TARGETS}:laplace_vec", "--dataset", "[1]", "--neighbor", "[0]",
                       "--epsilon", "1", "--samples", "1e4", "--seed", "2", "--json")
    assert not [line for line in err.splitlines() if line.startswith("note:")]  # vectorised


def test_list_shows_parameters_and_defaults(capsys):
    code, out, _ = cli(capsys, "list")
    lines = out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.strip().startswith("laplace "))
    assert "--param epsilon=1.0, sensitivity=1.0" in lines[i + 1]
    data = json.loads(cli(capsys, "list", "--json")[1])
    assert data["mechanism_parameters"]["noisy_histogram"]["n_bins"] == 4
    assert data["mechanism_parameters"]["laplace"]["epsilon"] == 1.0


def test_library_adapters_get_the_slow_note_but_builtins_do_not():
    pytest.importorskip("opendp")
    from dpaudit.cli import _slow_target_note
    from dpaudit.targets import load_target

    assert "can take minutes" in _slow_target_note(load_target("opendp.gaussian"))
    assert _slow_target_note(load_target("laplace")) is None


RAISING = '''
import numpy as np


def sometimes_raises(d, rng=None):
    if rng.random() < 0.01:
        raise ValueError("boom")
    return float(np.sum(d)) + rng.laplace(0, 1)
'''


@pytest.mark.parametrize("pair", [("[1,0,1]", "[1,0,0]"), ("[1,1,1]", "[0,0,0]")])
def test_an_audit_that_fails_leaves_only_the_error_line(pair, tmp_path, capsys):
    # Per-call target (the slow-target note) and, in the second pair, not neighbours (the pair warning):
    # neither line may precede the error.
    path = tmp_path / "targets.py"
    path.write_text(RAISING)
    code, out, err = cli(capsys, "audit", f"{path}:sometimes_raises", "--dataset", pair[0], "--neighbor", pair[1],
                         "--epsilon", "1", "--max-samples", "20000", "--seed", "3", "--json")
    assert code == 2 and out == ""
    assert err.startswith("dpaudit: error: ") and err.strip().count("\n") == 0 and "boom" in err


def test_claim_eps_warns_like_epsilon(capsys):
    warnings = {}
    for claim in (["--epsilon", "2"], ["--claim", "eps:2"]):
        code, out, err = cli(capsys, "audit", "laplace", *claim, "--samples", "2000", "--seed", "1", "--json")
        assert code in (0, 1) and json.loads(out)
        warnings[claim[0]] = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings["--claim"]) == 1 and "laplace's own (epsilon=1)" in warnings["--claim"][0]
    assert "--param epsilon=2" in warnings["--claim"][0] and len(warnings["--epsilon"]) == 1
    code, _, err = cli(capsys, "audit", "laplace", "--claim", "eps:1", "--samples", "2000", "--seed", "1", "--json")
    assert not [line for line in err.splitlines() if line.startswith("warning:")]
