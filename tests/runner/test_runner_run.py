"""Running experiments: same seed -> same summary for any --jobs / backend; crash-safe resume."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpaudit.exceptions import ParameterValueError
from dpaudit.runner import ExperimentKind, TrialInternalError, read_trials, register_kind, run_experiment
from dpaudit.runner.kinds import unregister_kind
from dpaudit.results import TrialLog

QUIET = dict(echo=lambda s: None, progress=False)


def summary_text(directory: Path) -> str:
    return (directory / "summary.json").read_text()


def test_layout_and_contents(tmp_path, tiny_yaml):
    out = run_experiment(tiny_yaml(), out=tmp_path / "res", draw=False, **QUIET)
    d = tmp_path / "res" / "tiny"
    assert out.directory == d
    assert {p.name for p in d.iterdir()} >= {"config.resolved.yaml", "trials.jsonl", "summary.json"}
    lines = (d / "trials.jsonl").read_text().splitlines()
    assert len(lines) == 12  # 4 sweep points x 3 trials
    rec = json.loads(lines[0])
    assert {"index", "point", "sweep", "repetition", "result", "elapsed_seconds"} <= set(rec)
    summary = json.loads(summary_text(d))
    assert summary["complete"] and summary["trials_finished"] == 12
    assert "elapsed" not in summary_text(d) and "seconds" not in summary_text(d)
    saved = yaml.safe_load((d / "config.resolved.yaml").read_text())
    assert saved["seed"] == 11 and saved["attack"]["params"]["true_fraction"] == 0.3
    # no stray temporary files from the atomic writes
    assert not [p for p in d.iterdir() if p.name.startswith(".")]


def test_summary_identical_for_jobs_1_and_2(tmp_path, tiny_yaml):
    cfg = tiny_yaml()
    run_experiment(cfg, out=tmp_path / "a", n_jobs=1, draw=False, **QUIET)
    run_experiment(cfg, out=tmp_path / "b", n_jobs=2, draw=False, **QUIET)
    assert summary_text(tmp_path / "a" / "tiny") == summary_text(tmp_path / "b" / "tiny")
    ta = {t["index"]: t["result"] for t in read_trials(tmp_path / "a" / "tiny" / "trials.jsonl")}
    tb = {t["index"]: t["result"] for t in read_trials(tmp_path / "b" / "tiny" / "trials.jsonl")}
    assert ta == tb


@pytest.mark.slow  # several seconds; `make soundness` runs it, `make test` leaves it out
def test_summary_identical_with_dask_local_cluster(tmp_path, tiny_yaml):
    pytest.importorskip("distributed")
    cfg = tiny_yaml()
    run_experiment(cfg, out=tmp_path / "a", n_jobs=1, draw=False, **QUIET)
    start = time.perf_counter()
    run_experiment(cfg, out=tmp_path / "d", backend="dask", draw=False, **QUIET)
    assert time.perf_counter() - start < 120  # a guard against a hung cluster, not a speed test
    assert summary_text(tmp_path / "a" / "tiny") == summary_text(tmp_path / "d" / "tiny")


def test_different_seed_changes_results(tmp_path, tiny_yaml):
    run_experiment(tiny_yaml(seed=1), out=tmp_path / "a", draw=False, **QUIET)
    run_experiment(tiny_yaml(seed=2), out=tmp_path / "b", draw=False, **QUIET)
    assert summary_text(tmp_path / "a" / "tiny") != summary_text(tmp_path / "b" / "tiny")


def test_resume_skips_finished_and_ignores_truncated_line(tmp_path, tiny_yaml):
    cfg = tiny_yaml()
    run_experiment(cfg, out=tmp_path / "full", draw=False, **QUIET)
    full = summary_text(tmp_path / "full" / "tiny")

    d = tmp_path / "part" / "tiny"
    run_experiment(cfg, out=tmp_path / "part", draw=False, **QUIET)
    lines = (d / "trials.jsonl").read_text().splitlines(keepends=True)
    # keep 5 complete lines (out of order) and half of a sixth, as a crash mid-write leaves them
    kept = [lines[i] for i in (3, 0, 7, 1, 9)]
    (d / "trials.jsonl").write_text("".join(kept) + lines[4][: len(lines[4]) // 2])
    (d / "summary.json").unlink()
    assert len(read_trials(d / "trials.jsonl")) == 5
    out = run_experiment(cfg, out=tmp_path / "part", resume=True, draw=False, **QUIET)
    assert out.trials_skipped == 5 and out.trials_run == 7
    assert summary_text(d) == full
    # every line of the log is complete JSON again
    assert all(json.loads(x) for x in (d / "trials.jsonl").read_text().splitlines())


def test_resume_when_complete_runs_nothing(tmp_path, tiny_yaml):
    cfg = tiny_yaml()
    run_experiment(cfg, out=tmp_path, draw=False, **QUIET)
    before = summary_text(tmp_path / "tiny")
    out = run_experiment(cfg, out=tmp_path, resume=True, draw=False, **QUIET)
    assert out.trials_run == 0 and summary_text(tmp_path / "tiny") == before


def test_resume_refuses_a_different_config(tmp_path, tiny_yaml):
    run_experiment(tiny_yaml(), out=tmp_path, draw=False, **QUIET)
    with pytest.raises(ParameterValueError, match="different config"):
        run_experiment(tiny_yaml(repetitions=201), out=tmp_path, resume=True, draw=False, **QUIET)


def test_resume_reuses_a_drawn_seed(tmp_path, tiny_config):
    cfg = tiny_config()
    del cfg["seed"]
    first = run_experiment(cfg, out=tmp_path, draw=False, **QUIET)
    seed = first.summary["seed"]
    assert yaml.safe_load((tmp_path / "tiny" / "config.resolved.yaml").read_text())["seed"] == seed
    log = tmp_path / "tiny" / "trials.jsonl"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:4]))
    again = run_experiment(cfg, out=tmp_path, resume=True, draw=False, **QUIET)
    assert again.summary == first.summary and again.trials_run == 8


def test_trial_log_appends_whole_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"index": 0}\n{"index": 1, "x"')
    with TrialLog(path, fresh=False) as log:
        log.append({"index": 2})
    assert [t["index"] for t in read_trials(path)] == [0, 2]


def test_failing_trial_names_itself_and_keeps_finished(tmp_path):
    calls = []

    def run_trial(config, mechanism, seed):
        calls.append(1)
        if config["attack"]["params"]["x"] == 3:
            raise RuntimeError("boom")
        return {"value": float(np.random.default_rng(seed).random())}

    from dpaudit.runner._spec import Param

    register_kind(ExperimentKind("test_fail", "test kind", "attack", {"x": Param("int", 0)}, run_trial), replace=True)
    try:
        cfg = {"name": "f", "seed": 0, "attack": {"name": "test_fail"},
               "sweep": {"parameters": {"attack.params.x": [1, 2, 3, 4]}}, "plot": {"figures": []}}
        # A RuntimeError is no dpaudit error: the run says so (the command line exits 3, not 2 as for bad input).
        with pytest.raises(TrialInternalError, match=r"trial 2 \(attack.params.x=3\) failed: RuntimeError: boom"):
            run_experiment(cfg, out=tmp_path, draw=False, **QUIET)
        assert [t["index"] for t in read_trials(tmp_path / "f" / "trials.jsonl")] == [0, 1]
    finally:
        unregister_kind("test_fail")


def test_bad_backend_and_jobs(tmp_path, tiny_yaml):
    with pytest.raises(ParameterValueError, match="--backend"):
        run_experiment(tiny_yaml(), out=tmp_path, backend="spark", draw=False, **QUIET)
    with pytest.raises(ParameterValueError, match="--jobs"):
        run_experiment(tiny_yaml(), out=tmp_path, n_jobs=0, draw=False, **QUIET)


def _run_module(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.Popen([sys.executable, "-m", "dpaudit.runner", *args], env=env, stdout=stdout, stderr=stderr)


@pytest.mark.slow  # several seconds; `make soundness` runs it, `make test` leaves it out
def test_sigkill_mid_run_then_resume_equals_uninterrupted(tmp_path, tiny_config):
    # ~0.1 s per trial, so the kill lands in the middle of the run.
    cfg = tiny_config(name="killme", trials=10, repetitions=1_500_000)
    cfg_file = tmp_path / "killme.yaml"
    cfg_file.write_text(yaml.safe_dump(cfg))
    log = tmp_path / "k" / "killme" / "trials.jsonl"
    err_file = open(tmp_path / "stderr.txt", "wb")
    proc = _run_module("run", str(cfg_file), "--out", str(tmp_path / "k"), "--no-plots",
                       stdout=subprocess.DEVNULL, stderr=err_file)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            if log.exists() and len(log.read_bytes().splitlines()) >= 6:
                break
            if proc.poll() is not None:
                pytest.fail(f"the run ended before it could be killed: {(tmp_path / 'stderr.txt').read_text()}")
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        err_file.close()
    assert proc.returncode == -signal.SIGKILL
    done = len(read_trials(log))
    assert 6 <= done < 40
    assert not (tmp_path / "k" / "killme" / "summary.json").exists()

    resumed = run_experiment(cfg_file, out=tmp_path / "k", resume=True, draw=False, **QUIET)
    assert resumed.trials_skipped == done
    straight = run_experiment(cfg_file, out=tmp_path / "s", n_jobs=2, draw=False, **QUIET)
    assert (tmp_path / "k" / "killme" / "summary.json").read_text() == (tmp_path / "s" / "killme" / "summary.json").read_text()
    assert straight.summary["complete"]


@pytest.mark.slow  # a fresh interpreter, two loky workers and a trial of several seconds
def test_sigkill_with_jobs_2_leaves_no_worker_behind(tmp_path, tiny_config):
    # No exit handler runs after SIGKILL (the OOM killer, `timeout -s KILL`, a cancelled CI job): the loky
    # workers ran their trials to the end and then waited out loky's idle timeout, 300 s, holding the run's
    # stdout and stderr (`dpaudit run ... | tee log` hung that long) and competing with a --resume. A worker
    # now ends within a second or two of the process that started it.
    cfg = tiny_config(name="orphans", trials=6, repetitions=60_000_000)  # several seconds a trial
    cfg_file = tmp_path / "orphans.yaml"
    cfg_file.write_text(yaml.safe_dump(cfg))
    proc = subprocess.Popen([sys.executable, "-m", "dpaudit", "run", str(cfg_file), "--out", str(tmp_path),
                             "--no-plots", "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONWARNINGS="ignore"), start_new_session=True)
    try:
        time.sleep(4)  # the workers are started and busy with their first trials
        assert proc.poll() is None, proc.communicate()[1]
        proc.send_signal(signal.SIGKILL)
        start = time.monotonic()
        proc.communicate(timeout=20)  # returns once every process holding the pipes has ended
        assert time.monotonic() - start < 15
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of the run (its workers share its group)
        proc.communicate()


def test_module_entry_point_errors_are_one_line_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nattack:\n  name: rr_tradeoff\n  params: {queries: many}\n")
    proc = _run_module("run", str(bad), "--out", str(tmp_path))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "attack.params.queries: unknown key" in lines[0]


def test_run_prints_where_results_went(tmp_path, tiny_yaml, capsys):
    # In process, the same command as the subprocess check below (which `make soundness` runs).
    from dpaudit.runner.__main__ import main

    assert main(["run", str(tiny_yaml()), "--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert f"results: {tmp_path / 'tiny'}/" in out and "rr_tradeoff.pdf" in out
    assert "trials" not in err  # no progress bar when stderr is not a terminal


@pytest.mark.slow  # a fresh interpreter and two loky workers: several seconds; the in-process check above stays
def test_module_entry_point_prints_where_results_went(tmp_path, tiny_yaml):
    proc = _run_module("run", str(tiny_yaml()), "--out", str(tmp_path), "--jobs", "2")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert f"results: {tmp_path / 'tiny'}/" in text and "rr_tradeoff.pdf" in text
    assert "trials" not in err.decode()  # no progress bar when stderr is not a terminal
