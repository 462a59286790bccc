"""Audit CPU time over the target's own CPU time for the same releases in the same chunks.

Run: ``python benchmarks/bench_throughput.py --samples 2e8`` (the scalar case) and
``python benchmarks/bench_throughput.py --case vector --samples 1e8``; ``--repeat``
runs (default 3) and prints each ratio and their median.  Aim: <= 1.3, peak < 1 GiB.

Each run is a fresh process that does both, back to back (the order alternates
between runs, so a load that drifts does not favour one side):

* the target's own work: the user function called once per chunk of the audit
  (``chunk_size`` releases, the calibration pool's chunks and the held-out
  chunks, on D and on D'), each chunk from its own seeded generator, as the
  audit draws it; nothing else;
* ``dpaudit.audit`` of the same function, ``--jobs 1``, ``ideal=True``.

Before both, one audit of 20,000 releases warms the process up (the modules an
audit imports on first use: a one-off cost, not throughput); ``--cold`` leaves
it out.

Times are the process's CPU seconds (``getrusage``: user + system), steadier
than wall-clock time on a shared machine; the peak is the process's
``ru_maxrss``.  The two targets are ``bench_pipeline.py``'s: a Laplace count
(scalar) and a 10-d Gaussian vector.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r'''
import json, resource, sys
import numpy as np
case, n, audit_first, warm = sys.argv[1], int(float(sys.argv[2])), sys.argv[3] == "1", sys.argv[5] == "1"
import dpaudit
from dpaudit.sampling import DEFAULT_CHUNK_SIZE as CHUNK

def laplace_count(dataset, size=None, rng=None):
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)

def gaussian_vector(dataset, size=None, rng=None):
    return np.asarray(dataset, float)[:10] + rng.normal(0.0, 1.0, size=(size, 10))

if case == "scalar":
    fn, d0, d1 = laplace_count, [1], [0]
else:
    fn, d0, d1 = gaussian_vector, [1.0] + [0.0] * 9, [0.0] * 10

def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime

def own(n_cal, n_test):
    for side, data in enumerate((d0, d1)):
        for phase, m in ((0, n_cal), (1, n_test)):
            for i, start in enumerate(range(0, m, CHUNK)):
                gen = np.random.default_rng(np.random.SeedSequence(1, spawn_key=(side, phase, i)))
                fn(data, size=min(CHUNK, m - start), rng=gen)

def audit():
    return dpaudit.audit(fn, d0, d1, epsilon=1.0, samples=n, seed=1, ideal=True)

if warm:  # the modules an audit imports on first use, and numpy's first calls, are not throughput
    dpaudit.audit(fn, d0, d1, epsilon=1.0, samples=20_000, seed=2, ideal=True)
out = {}
if audit_first:
    c = cpu(); r = audit(); out["audit_cpu"] = cpu() - c
    c = cpu(); own(r.n_calibration, r.n_test); out["target_cpu"] = cpu() - c
else:
    # A fixed-size audit's pool and held-out sizes depend on n only: the first run's report gives them.
    c = cpu(); own(*json.loads(sys.argv[4])); out["target_cpu"] = cpu() - c
    c = cpu(); r = audit(); out["audit_cpu"] = cpu() - c
out.update(n_calibration=r.n_calibration, n_test=r.n_test, attack=r.attack, bound=r.epsilon_lower_bound,
           peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
'''


def run(case: str, n: int, audit_first: bool, sizes: tuple[int, int] | None, warm: bool) -> dict:
    cmd = [sys.executable, "-c", CHILD, case, str(n), "1" if audit_first else "0", json.dumps(sizes), "1" if warm else "0"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(f"the {case} run failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _load() -> str:
    return "load average {:.2f} {:.2f} {:.2f} on {} cores".format(*os.getloadavg(), os.cpu_count())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", choices=("scalar", "vector"), default="scalar",
                   help="scalar: a Laplace count; vector: a 10-d Gaussian (default: scalar)")
    p.add_argument("--samples", type=float, default=2e8, help="releases per side (default 2e8)")
    p.add_argument("--repeat", type=int, default=3, help="runs, each in its own process (default 3)")
    p.add_argument("--cold", action="store_true",
                   help="no warm-up audit (20,000 releases) before timing: the first audit's imports count too")
    args = p.parse_args()
    n = int(args.samples)
    if n < 20:
        p.error("--samples: at least 20")
    if args.repeat < 1:
        p.error("--repeat: at least 1")
    print(f"before: {_load()}", flush=True)
    ratios, peaks, sizes = [], [], None
    for i in range(args.repeat):
        audit_first = sizes is None or i % 2 == 1
        r = run(args.case, n, audit_first, sizes, not args.cold)
        sizes = (r["n_calibration"], r["n_test"])
        ratios.append(r["audit_cpu"] / r["target_cpu"])
        peaks.append(r["peak_mib"])
        print(f"run {i + 1} ({'audit first' if audit_first else 'target first'}): audit {r['audit_cpu']:.2f} s CPU, "
              f"target {r['target_cpu']:.2f} s CPU, ratio {ratios[-1]:.3f}; peak {r['peak_mib']:.0f} MiB; "
              f"{r['attack']}, bound {r['bound']:.4f}", flush=True)
    print(f"{args.case}, {n:.0e} per side: median ratio {statistics.median(ratios):.3f} (aim <= 1.3), "
          f"max peak {max(peaks):.0f} MiB (aim < 1024)")
    print(f"after: {_load()}")


if __name__ == "__main__":
    main()
