"""One audit's chunks on a Dask cluster give the same report as on loky (timing aside).

The seeds belong to chunks, not to workers, so where a chunk is drawn cannot
change it.  These tests run the command line as a user would: a local cluster,
and a scheduler plus a worker started here on the loopback interface.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ROOT / "tests" / "auditor" / "user_targets.py"
TIMING = ("elapsed_seconds",)
WAIT = 60  # seconds: a guard against a hung cluster, not a speed test


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def audit_json(*args):
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "audit", *args, "--json"], capture_output=True,
                          text=True, timeout=300, env=_env(), cwd=ROOT)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    return {k: v for k, v in report.items() if k not in TIMING}


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """A ``dask-scheduler`` and one ``dask-worker`` on 127.0.0.1, torn down after the module."""
    from distributed import Client

    info = tmp_path_factory.mktemp("dask") / "scheduler.json"
    common = ["--no-dashboard"]
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--scheduler-file", str(info), *common],
                              env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + WAIT
        while not info.exists() or not info.read_text().strip():
            assert time.monotonic() < deadline and procs[0].poll() is None, "the scheduler did not start"
            time.sleep(0.1)
        address = json.loads(info.read_text())["address"]
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                       "--host", "127.0.0.1", "--nworkers", "1", "--nthreads", "1", "--no-nanny",
                                       *common],
                                      env=_env(), cwd=ROOT, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        with Client(address, timeout="10s") as client:
            client.wait_for_workers(1, timeout=WAIT)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# A vectorised built-in (chunks drawn and counted on the workers) and a target called once per
# release (each chunk one task), with a float leak search under auto: every kind of task runs remotely.
CASES = {
    "builtin": ["laplace", "--epsilon", "1", "--max-samples", "2e5"],
    "per-call": [f"{TARGETS}:laplace_one", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                 "--max-samples", "2000"],
}


@pytest.mark.parametrize("case", [
    "builtin", pytest.param("per-call", marks=pytest.mark.slow)])  # per-call: about 7 s
def test_dask_local_cluster_gives_the_loky_json(case):
    args = [*CASES[case], "--seed", "11"]
    assert audit_json(*args, "--backend", "dask") == audit_json(*args)


def test_dask_scheduler_gives_the_loky_json(scheduler):
    args = [*CASES["builtin"], "--samples", "1e5", "--seed", "5"]
    args.remove("--max-samples"), args.remove("2e5")
    assert audit_json(*args, "--scheduler", scheduler) == audit_json(*args, "--jobs", "2")


@pytest.mark.slow  # waits out the connection timeout (10 s)
def test_unreachable_scheduler_is_a_usage_error():
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "audit", "laplace", "--epsilon", "1", "--scheduler",
                           "tcp://127.0.0.1:9", "--samples", "1000"], capture_output=True, text=True,
                          timeout=120, env=_env(), cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.startswith("dpaudit: error: ") and "scheduler" in proc.stderr
    assert proc.stderr.count("\n") == 1
