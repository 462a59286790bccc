"""``dpaudit scores`` and ``dpaudit one-run``: file forms, JSON fields, exit codes, usage errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpaudit.cli import main


@pytest.fixture
def score_files(tmp_path):
    rng = np.random.default_rng(0)
    a, b = rng.normal(1, 1, 20_000), rng.normal(0, 1, 20_000)
    paths = {}
    np.save(tmp_path / "in.npy", a)
    np.save(tmp_path / "out.npy", b)
    (tmp_path / "in.csv").write_text("score\n" + "\n".join(f"{x:.17g}" for x in a) + "\n")
    (tmp_path / "out.csv").write_text("score\n" + "\n".join(f"{x:.17g}" for x in b) + "\n")
    (tmp_path / "in.json").write_text(json.dumps(a.tolist()))
    (tmp_path / "out.json").write_text(json.dumps(b.tolist()))
    for ext in ("npy", "csv", "json"):
        paths[ext] = (str(tmp_path / f"in.{ext}"), str(tmp_path / f"out.{ext}"))
    return paths


@pytest.mark.parametrize("ext", ["npy", "csv", "json"])
def test_scores_reads_every_file_form_alike(score_files, ext, capsys):
    assert main(["scores", *score_files[ext], "--epsilon", "0.2", "--seed", "5", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    for key in ("epsilon_lower_bound", "claimed_epsilon", "claimed_delta", "confidence", "samples", "verdict",
                "seed", "ceiling"):
        assert key in out
    assert out["samples"] == 20_000 and out["verdict"] == "violation" and out["seed"] == 5
    assert main(["scores", *score_files["npy"], "--epsilon", "0.2", "--seed", "5", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["epsilon_lower_bound"] == out["epsilon_lower_bound"]


def test_scores_takes_a_claimed_curve(score_files, capsys):
    assert main(["scores", *score_files["npy"], "--claim", "gdp:mu=1.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["claim"] == "gdp:mu=1.5" and out["curve_violation"] is None


@pytest.mark.parametrize("argv, needle", [
    (["--epsilon", "1", "--claim", "gdp:mu=1"], "give either --claim or --epsilon"),
    ([], "argument --epsilon: required (or --claim"),
    (["--epsilon", "1", "--confidence", "2"], "--confidence"),
])
def test_scores_usage_errors(score_files, argv, needle, capsys):
    assert main(["scores", *score_files["npy"], *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_scores_names_a_bad_file(tmp_path, score_files, capsys):
    (tmp_path / "bad.csv").write_text("score\n1\nabc\n")
    assert main(["scores", str(tmp_path / "bad.csv"), score_files["npy"][1], "--epsilon", "1"]) == 2
    err = capsys.readouterr().err
    assert "IN (" in err and "bad.csv" in err


@pytest.fixture
def canary_files(tmp_path):
    rng = np.random.default_rng(1)
    inc = rng.integers(0, 2, 1000)
    np.save(tmp_path / "scores.npy", inc + rng.laplace(0, 0.25, 1000))
    (tmp_path / "included.csv").write_text("included\n" + "\n".join(str(i) for i in inc) + "\n")
    (tmp_path / "short.json").write_text(json.dumps(inc[:10].tolist()))
    return str(tmp_path / "scores.npy"), str(tmp_path / "included.csv"), str(tmp_path / "short.json")


def test_one_run_json_and_exit_codes(canary_files, capsys):
    scores, included, _ = canary_files
    assert main(["one-run", scores, included, "--epsilon", "1", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    for key in ("epsilon_lower_bound", "claimed_epsilon", "claimed_delta", "confidence", "canaries", "guesses",
                "correct", "verdict"):
        assert key in out
    assert out["canaries"] == 1000 and out["verdict"] == "violation" and out["correct"] <= out["guesses"]
    assert main(["one-run", scores, included, "--epsilon", "8", "--guesses", "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["guesses"] == 200 and out["guesses_tried"] == [200]


def test_one_run_claim_and_errors(canary_files, capsys):
    scores, included, short = canary_files
    assert main(["one-run", scores, included, "--claim", "gdp:mu=0.5", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["curve_violation"]["delta"] > 0
    assert main(["one-run", scores, short, "--epsilon", "1"]) == 2
    err = capsys.readouterr().err
    assert "INCLUDED (" in err and "short.json" in err and "10 values for 1000 scores" in err
    assert main(["one-run", scores, included, "--epsilon", "1", "--guesses", "0"]) == 2
    assert "--guesses" in capsys.readouterr().err


def test_one_run_curve_claim_reports_the_fdp_test(tmp_path, capsys):
    # Scores of a 4-GDP release against gdp:mu=1: the point bound does not cross the curve, the f-DP test rejects
    # it and names a point it crosses (exit 1, the point in curve_violation); a 3-GDP one (seed 7) is rejected as
    # a whole at no single point (seed 17): exit 0, said in curve_rejected and on stderr.
    rng = np.random.default_rng(5)
    inc = rng.integers(0, 2, 1000)
    np.save(tmp_path / "s.npy", rng.normal(4.0 * inc, 1.0))
    np.save(tmp_path / "i.npy", inc)
    assert main(["one-run", str(tmp_path / "s.npy"), str(tmp_path / "i.npy"), "--claim", "gdp:mu=1", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["curve_violation"]["test"] == "f-dp" and out["epsilon_lower_bound"] > out["claimed_epsilon"]
    assert out["curve_violation"]["delta"] == out["claimed_delta"] > 0 and out["curve_rejected"] is True
    assert out["gdp_mu_lower_bound"] > 1.0 and len(out["fdp_tests"]) == len(out["guesses_tried"])
    rng = np.random.default_rng(17)
    inc = rng.integers(0, 2, 1000)
    np.save(tmp_path / "s.npy", rng.normal(3.0 * inc, 1.0))
    np.save(tmp_path / "i.npy", inc)
    assert main(["one-run", str(tmp_path / "s.npy"), str(tmp_path / "i.npy"), "--claim", "gdp:mu=1", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["curve_rejected"] is True and out["curve_violation"] is None
    assert out["epsilon_lower_bound"] <= out["claimed_epsilon"] and "REJECTED" in captured.err


def test_unequal_sides_are_reported_both_in_json_and_summary(tmp_path):
    # Outside review, defect F: 100 IN and 5000 OUT used to read "100 per side" and "70 held-out samples per side".
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    a, b = tmp_path / "in.npy", tmp_path / "out.npy"
    np.save(a, rng.normal(1, 1, 100))
    np.save(b, rng.normal(0, 1, 5000))
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "scores", str(a), str(b), "--epsilon", "1", "--seed",
                            "1", "--json"], capture_output=True, text=True, timeout=120)
    rep = json.loads(proc.stdout)
    assert rep["samples"] == 100 and rep["samples_in"] == 100 and rep["samples_out"] == 5000
    assert rep["n_test_in"] == rep["n_test"] == 70 and rep["n_test_out"] == 3500
    assert "100 IN and 5000 OUT" in proc.stderr and "70 IN and 3500 OUT held-out samples" in proc.stderr
    assert "per side" not in proc.stderr


def test_a_dpsgd_curve_beyond_the_accountants_arithmetic_is_a_usage_error(score_files, capsys):
    # noise 0.02 in one full-batch step is mu = 50: dp_accounting's e^epsilon overflows at every grid point,
    # which left an empty grid (exit 3, IndexError) after lines of RuntimeWarnings on stderr.
    assert main(["scores", *score_files["npy"], "--claim", "dpsgd:noise=0.02,rate=1,steps=1", "--json"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and "\n" not in err and "Warning" not in err
    assert err.startswith("dpaudit: error: argument --claim:") and "computes no point" in err


@pytest.mark.parametrize("command", ["scores", "one-run", "audit"])
@pytest.mark.parametrize("content, needle", [
    (None, "expected a 1-D or 2-D array, got a single number"),  # a 0-d .npy
    (b"", "cannot read: the file is empty"),
    ("dir", "not a file"),
    ("missing", "file not found"),
])
def test_a_bad_file_is_named_once(command, content, needle, tmp_path, capsys):
    # Was "IN (in_0d.npy): 'in_0d.npy': expected a 1-D or 2-D array": the argument's name already showed the file.
    import numpy as np

    from dpaudit.cli import main

    bad = tmp_path / "bad_file.npy"
    if content is None:
        np.save(bad, np.float64(1.0))
    elif content == "dir":
        bad.mkdir()
    elif content != "missing":
        bad.write_bytes(content)
    ok = tmp_path / "ok.csv"
    ok.write_text("0\n1\n" * 20)
    args = {"scores": ["scores", str(bad), str(ok), "--epsilon", "1"],
            "one-run": ["one-run", str(ok), str(bad), "--epsilon", "1"],
            "audit": ["audit", "laplace", "--dataset", str(bad), "--neighbor", "[0]", "--epsilon", "1"]}[command]
    code = main(args)
    err = capsys.readouterr().err
    label = {"scores": "IN (", "one-run": "INCLUDED (", "audit": "--dataset: "}[command]
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"dpaudit: error: {label}"), err
    assert err.count("bad_file.npy") == 1 and needle in err, err
