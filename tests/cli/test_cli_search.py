"""`dpaudit search` and the pair handling of `dpaudit audit`, through the command line (issue 13).

Verdict checks: the unclipped sum leaks far above its claim on the outlier
pair (missing it needs a many-sigma deviation); the Laplace checks only look
at warnings and exit codes that do not depend on randomness.
"""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = os.path.join(HERE, "..", "search", "user_domain_targets.py")


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "dpaudit", *args], capture_output=True, text=True, timeout=300)


def test_search_json_finds_the_outlier_pair_and_exits_1():
    proc = run_cli("search", f"{TARGETS}:unclipped_sum", "--epsilon", "1", "--size", "4", "--low", "0",
                   "--high", "100", "--max-samples", "1e5", "--seed", "3", "--json")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.count("\n") == 1
    rep = json.loads(proc.stdout)
    assert rep["verdict"] == "violation" and rep["epsilon_lower_bound"] > 5
    assert rep["samples"] <= 100_000 and rep["candidates_screened"] >= 24  # sequential: stops at a violation
    assert len(rep["dataset"]) == len(rep["neighbor"]) == 4
    assert sum(a != b for a, b in zip(rep["dataset"], rep["neighbor"])) == 1
    assert all(0 <= v <= 100 for v in rep["dataset"] + rep["neighbor"])
    assert "candidate pairs screened" in proc.stderr


@pytest.mark.parametrize("args, needle", [
    (["--epsilon", "1", "--size", "4", "--low", "0"], "argument --high"),
    (["--epsilon", "1", "--size", "4", "--low", "5", "--high", "1"], "argument --high"),
    (["--epsilon", "1", "--size", "four", "--low", "0", "--high", "1"], "argument --size"),
    (["--epsilon", "1", "--size", "4", "--low", "0", "--high", "1", "--relation", "swap"], "--relation"),
    (["--epsilon", "1", "--size", "4", "--low", "0", "--high", "1", "--budget", "-2"], "--budget"),
])
def test_search_usage_errors_are_one_line_naming_the_argument(args, needle):
    proc = run_cli("search", f"{TARGETS}:clipped_sum", *args)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and needle in proc.stderr, proc.stderr


def test_search_help_has_an_example():
    proc = run_cli("search", "--help")
    assert proc.returncode == 0 and "examples:" in proc.stdout and "--relation" in proc.stdout


def test_audit_of_a_builtin_without_a_pair_uses_its_stress_pair():
    proc = run_cli("audit", "laplace", "--epsilon", "1", "--samples", "20000", "--seed", "1", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == (1 if out["verdict"] == "violation" else 0), proc.stderr
    assert "warning" not in proc.stderr and 0.9 < out["epsilon_lower_bound"] < 1.05
    # The stress pair ([1] vs [0]) is at the edge of the claim: every tail event has a ratio of exactly e,
    # so a valid 95% bound exceeds 1 in up to 5% of seeds (2% of 300 seeded audits here; seed 1 is one of
    # them, at 1.0197).  At confidence 0.999 a correct claim is flagged with probability <= 0.1%.
    strict = run_cli("audit", "laplace", "--epsilon", "1", "--samples", "20000", "--seed", "1", "--json",
                     "--confidence", "0.999")
    assert strict.returncode == 0 and json.loads(strict.stdout)["verdict"] == "no violation found", strict.stderr


def test_audit_of_a_user_target_without_a_pair_is_a_usage_error():
    proc = run_cli("audit", f"{TARGETS}:clipped_sum", "--epsilon", "1")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "--dataset/--neighbor" in proc.stderr and "dpaudit search" in proc.stderr
    proc = run_cli("audit", f"{TARGETS}:clipped_sum", "--epsilon", "1", "--dataset", "[0,1]")
    assert proc.returncode == 2 and "--neighbor" in proc.stderr


def test_a_pair_that_is_not_neighbouring_gets_one_warning_and_still_runs():
    # The example: a correctly clipped sum on [1,1,1,1] vs [0,0,0,0] is not a neighbouring pair.
    proc = run_cli("audit", "laplace", "--dataset", "[1,1,1,1]", "--neighbor", "[0,0,0,0]", "--epsilon", "1",
                   "--samples", "20000", "--seed", "2", "--json")
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "4 records differ" in warnings[0], proc.stderr
    assert proc.returncode in (0, 1) and "epsilon_lower_bound" in json.loads(proc.stdout)


@pytest.mark.parametrize("dataset, neighbor", [("[1]", "[0]"), ("[0,1]", "[0,1,1]"), ("[3,1,2]", "[1,2]")])
def test_neighbouring_pairs_get_no_warning(dataset, neighbor):
    proc = run_cli("audit", f"{TARGETS}:clipped_sum", "--dataset", dataset, "--neighbor", neighbor,
                   "--epsilon", "1", "--samples", "2000", "--seed", "4")
    assert proc.returncode in (0, 1) and "warning" not in proc.stderr, proc.stderr


def _search_float_sum(*extra):
    proc = run_cli("search", f"{TARGETS}:float_clipped_sum", "--epsilon", "1", "--size", "3", "--low", "0",
                   "--high", "1", "--integer", "--max-samples", "1e5", "--seed", "4", "--json", *extra)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_search_ideal_audits_a_float_mechanism_as_mathematics():
    # numpy's float Laplace at loc 0 and loc 1 takes bit patterns the other cannot (about a quarter of
    # its releases), so the float attacks certify far above the claim; the mathematics is epsilon = 1,
    # and --ideal (floating-point attacks off) finds nothing above it.
    code, rep = _search_float_sum()
    assert code == 1 and rep["verdict"] == "violation"
    assert rep["floating_point"] is not None and rep["floating_point"]["epsilon_lower_bound"] > 1
    code, rep = _search_float_sum("--ideal")
    assert code == 0 and rep["verdict"] == "no violation found", rep
    assert rep["floating_point"] is None and rep["ideal"] is True


def test_search_takes_every_audit_option():
    from dpaudit.params import AUDIT_OPTIONS

    proc = run_cli("search", "--help")
    flags = [o.flag for n, o in AUDIT_OPTIONS.items() if o.flag and n not in ("dataset", "neighbor")]  # search finds its pair
    assert {"--ideal", "--timeout", "--attack", "--backend", "--scheduler"} <= set(flags)
    for flag in flags:
        assert flag in proc.stdout, flag


def test_every_builtin_that_declares_a_domain_can_be_searched_on_it():
    # A built-in's declared domain is what `dpaudit search NAME` uses without --size/--low/--high; under add/remove
    # the smaller dataset has size - 1 records, so a size of 1 left it empty ("the dataset is empty", once for
    # laplace).  Checked on the declarations, then laplace end to end.
    from dpaudit.exceptions import MissingExtraError
    from dpaudit.mechanisms.registry import get_mechanism, list_mechanisms

    declared = 0
    for name, _, _ in list_mechanisms():
        try:
            mech = get_mechanism(name)
        except MissingExtraError:  # a library adapter whose optional extra is not installed
            continue
        dom = getattr(mech, "input_domain", None)
        if callable(dom):
            declared += 1
            d = dom()
            assert d["size"] >= (2 if d["relation"] == "add-remove" else 1), (name, d)
    assert declared >= 10
    proc = run_cli("search", "laplace", "--epsilon", "0.5", "--max-samples", "2e4", "--seed", "1", "--json")
    assert proc.returncode in (0, 1), proc.stderr
    rep = json.loads(proc.stdout)
    assert len(rep["dataset"]) == 2 and len(rep["neighbor"]) == 1
