"""``--json``: stdout holds exactly one JSON object, whatever the target prints (defect A of the outside review)."""

import json
import os
import subprocess
import sys

import pytest

PRINTER = '''
import os
import numpy as np


def f(d, rng=None, size=None):
    print("debug from target")
    os.write(1, b"c-level debug\\n")
    return float(np.sum(d)) + rng.laplace(0, 1, size=size)


def boom(d, rng=None, size=None):
    print("debug before the error")
    raise ValueError("boom")
'''


def run_cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "dpaudit", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def printer(tmp_path):
    path = tmp_path / "printer.py"
    path.write_text(PRINTER)
    return str(path)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_printing_target_leaves_stdout_to_the_json(printer, jobs):
    proc = run_cli("audit", f"{printer}:f", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                   "--samples", "2000", "--seed", "1", "--json", "--jobs", jobs)
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout.count("\n") == 1 and json.loads(proc.stdout)["samples"] == 2000
    assert "debug from target" in proc.stderr and "c-level debug" in proc.stderr


def test_search_json_also_keeps_stdout_clean(printer):
    proc = run_cli("search", f"{printer}:f", "--epsilon", "1", "--size", "2", "--low", "0", "--high", "1",
                   "--samples", "2000", "--seed", "1", "--budget", "2", "--json")
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout.count("\n") == 1 and json.loads(proc.stdout)
    assert "debug from target" in proc.stderr


def test_without_json_the_output_still_goes_to_stdout(printer):
    proc = run_cli("audit", f"{printer}:f", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                   "--samples", "200", "--seed", "1")
    assert "debug from target" in proc.stdout and "verdict" in proc.stdout


def test_stdout_is_restored_after_an_error(printer, capfd):
    from dpaudit.cli import main

    before = os.fstat(1)
    code = main(["audit", f"{printer}:boom", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                 "--samples", "200", "--seed", "1", "--json"])
    after = os.fstat(1)
    assert code == 2 and (before.st_dev, before.st_ino) == (after.st_dev, after.st_ino)
    os.write(1, b"fd 1 is stdout again\n")
    out, err = capfd.readouterr()
    assert out == "fd 1 is stdout again\n"
    assert "debug before the error" in err and "boom" in err


def test_list_json_is_still_on_stdout(capsys):
    from dpaudit.cli import main

    assert main(["list", "--json"]) == 0
    assert "laplace" in json.loads(capsys.readouterr().out)["mechanisms"]
