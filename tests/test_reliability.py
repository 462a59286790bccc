"""Reliability and security (issue 7): bad input, misbehaving targets, untrusted content, durability.

Everything goes through the installed command line in a subprocess, as a user
would meet it: exit status 2 and exactly one line on stderr naming the
argument, key or target, never a traceback.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.exceptions import DatasetError
from dpaudit.targets import parse_dataset

HERE = Path(__file__).resolve().parent
TARGETS = HERE / "auditor" / "user_targets.py"


def cli(*args, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "dpaudit", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, **kw)


def assert_one_line_exit_2(proc, *needles):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# --------------------------------------------------------------------------- misbehaving targets
@pytest.mark.parametrize("name, extra, words", [
    ("hangs", ["--timeout", "0.5"], ["hangs", "did not return within 0.5 s"]),
    ("returns_inf", [], ["returns_inf", "inf"]),
    ("returns_nan", [], ["returns_nan", "NaN"]),
    ("changes_shape", [], ["changes_shape", "shape"]),
    ("returns_text", [], ["returns_text", "non-numeric"]),
    ("raises", [], ["raises", "RuntimeError: boom"]),
    ("mutates", [], ["mutates", "mutated the dataset"]),
])
def test_misbehaving_target_gets_a_clear_error_never_a_bound(name, extra, words):
    t = time.perf_counter()
    proc = cli("audit", f"{TARGETS}:{name}", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
               "--samples", "1000", "--seed", "1", "--json", *extra)
    assert_one_line_exit_2(proc, *words)
    assert proc.stdout == ""  # no JSON, so no bound can be read by a script
    assert time.perf_counter() - t < 60


# --------------------------------------------------------------------------- dataset parser
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True) | st.text(max_size=3),
    lambda children: st.lists(children, max_size=4), max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_dataset_parser_returns_a_numeric_array_or_raises_dataset_error(value):
    text = json.dumps(value)
    try:
        arr = parse_dataset(text, name="--dataset")
    except DatasetError as exc:
        assert "--dataset" in str(exc)
        return
    assert isinstance(arr, np.ndarray) and arr.ndim in (1, 2)
    assert arr.size > 0 or arr.shape == (0,) or (arr.ndim == 2 and arr.shape[1] > 0)  # "[]": an empty dataset
    assert arr.dtype.kind in "biuf" and np.all(np.isfinite(arr))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_dataset_parser_on_arbitrary_text(text):
    try:
        parse_dataset(text, name="--neighbor")
    except DatasetError as exc:
        assert "--neighbor" in str(exc)


# --------------------------------------------------------------------------- run / plot bad input
@pytest.fixture
def good_config(tmp_path):
    cfg = {"name": "tiny", "seed": 3, "trials": 2,
           "attack": {"name": "rr_tradeoff", "params": {"repetitions": 50, "epsilon": 1.0}}}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize("content, words", [
    ("name: [unclosed\n", ["YAML"]),
    ("- just\n- a list\n", ["mapping"]),
    ("name: x\ntrials: many\nattack: {name: rr_tradeoff, params: {epsilon: 1.0}}\n", ["trials"]),
    ("name: x\ntrials: -3\nattack: {name: rr_tradeoff, params: {epsilon: 1.0}}\n", ["trials"]),
    ("name: x\nattack: {name: rr_tradeoff, params: {epsilon: -1}}\n", ["attack.params.epsilon"]),
    ("name: x\nattack: {name: rr_tradeoff, params: {epsilon: 1.0, n: 2.5}}\n", ["attack.params.n"]),
    ("name: x\nattack: {name: nonsense, params: {epsilon: 1.0}}\n", ["attack.name"]),
    ("name: x\nbogus: 1\nattack: {name: rr_tradeoff, params: {epsilon: 1.0}}\n", ["bogus"]),
    ("name: ../../escape\nattack: {name: rr_tradeoff, params: {epsilon: 1.0}}\n", ["name"]),
    ("name: /abs\nattack: {name: rr_tradeoff, params: {epsilon: 1.0}}\n", ["name"]),
    ("name: x\nestimator: {confidence: 2}\nattack: {name: rr_tradeoff, params: {epsilon: 1.0}}\n", ["estimator.confidence"]),
])
def test_bad_config_exits_2_naming_the_key(tmp_path, content, words):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    proc = cli("run", path, "--out", tmp_path / "out")
    assert_one_line_exit_2(proc, *words)
    assert not (tmp_path / "escape").exists() and not Path("/abs").exists()


@pytest.mark.parametrize("args, words", [
    (["run", "no/such/config.yaml"], ["no/such/config.yaml"]),
    (["run", "{cfg}", "--jobs", "zero"], ["--jobs"]),
    (["run", "{cfg}", "--jobs", "0"], ["--jobs"]),
    (["run", "{cfg}", "--backend", "spark"], ["--backend"]),
    (["plot", "no/such/results"], ["no/such/results"]),
    (["audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]"], ["--epsilon"]),
    (["bogus-command"], ["bogus-command"]),
])
def test_bad_command_lines_exit_2(good_config, args, words):
    proc = cli(*[a.replace("{cfg}", str(good_config)) for a in args])
    assert_one_line_exit_2(proc, *words)


def test_config_that_is_a_directory(tmp_path):
    assert_one_line_exit_2(cli("run", tmp_path), str(tmp_path))


# --------------------------------------------------------------------------- untrusted content
def test_yaml_cannot_construct_objects_or_run_code(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.yaml"
    path.write_text(f"name: !!python/object/apply:os.system ['touch {marker}']\n"
                    "attack: {name: rr_tradeoff, params: {epsilon: 1.0}}\n")
    proc = cli("run", path, "--out", tmp_path / "out")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert not marker.exists()


def test_a_target_module_is_imported_only_when_named(tmp_path, monkeypatch, capsys):
    # In process (the marker file is written on import, whichever process imports): the module is on
    # the path and in the working directory, and only naming it imports it.
    from dpaudit.cli import main

    marker = tmp_path / "imported"
    mod = tmp_path / "sideeffect_target.py"
    mod.write_text(f"open({str(marker)!r}, 'w').close()\n"
                   "def f(dataset, size=None, rng=None):\n    return rng.laplace(size=size)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "sideeffect_target", raising=False)
    for args in (["list"], ["audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                           "--samples", "1000", "--seed", "1"]):
        assert main(args) in (0, 1), capsys.readouterr().err
        assert not marker.exists(), args
    assert main(["audit", "sideeffect_target:f", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                 "--samples", "1000", "--seed", "1"]) == 0, capsys.readouterr().err
    assert marker.exists()
    sys.modules.pop("sideeffect_target", None)


# --------------------------------------------------------------------------- durability
def _kill_after(cfg_file, out, n_lines, delay):
    log = out / "durable" / "trials.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "dpaudit", "run", str(cfg_file), "--out", str(out),
                             "--no-plots"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 90
    while time.time() < deadline and proc.poll() is None:
        if log.exists() and len(log.read_bytes().splitlines()) >= n_lines:
            break
        time.sleep(0.005)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return proc.returncode


# Kill points drawn once from random.Random(7): after 0-12 finished trials plus a
# random delay of up to 50 ms, so kills land mid-trial and mid-write alike.
_rnd = random.Random(7)
KILL_POINTS = [(_rnd.randint(0, 12), _rnd.uniform(0, 0.05)) for _ in range(3)]


# The first kill point runs in `make test`; the other two (about 7 s each) in `make soundness`.
@pytest.mark.parametrize("n_lines, delay", [KILL_POINTS[0]] + [pytest.param(*k, marks=pytest.mark.slow)
                                                               for k in KILL_POINTS[1:]])
def test_sigkill_at_random_points_then_resume_equals_uninterrupted(tmp_path, n_lines, delay):
    cfg = {"name": "durable", "seed": 5, "trials": 16,
           "attack": {"name": "rr_tradeoff", "params": {"repetitions": 150_000, "epsilon": 1.0}}}
    cfg_file = tmp_path / "durable.yaml"
    cfg_file.write_text(yaml.safe_dump(cfg))
    code = _kill_after(cfg_file, tmp_path / "killed", n_lines, delay)
    log = tmp_path / "killed" / "durable" / "trials.jsonl"
    if code == -signal.SIGKILL and log.exists():
        # Whatever was written, every complete line is a finished trial.
        for line in log.read_bytes().splitlines()[:-1]:
            json.loads(line)
    # The kill needs a process of its own; resuming and the uninterrupted run do not (in process, they
    # save two interpreter starts; `dpaudit run --resume` itself is the same call).
    from dpaudit.runner import run_experiment

    quiet = dict(draw=False, progress=False, echo=lambda s: None)
    assert run_experiment(cfg_file, out=tmp_path / "killed", resume=True, **quiet).summary["complete"]
    assert run_experiment(cfg_file, out=tmp_path / "straight", **quiet).summary["complete"]
    a = (tmp_path / "killed" / "durable" / "summary.json").read_text()
    b = (tmp_path / "straight" / "durable" / "summary.json").read_text()
    assert a == b
