"""Streaming audit: time and peak memory at 2x10^8 and 10^9 releases per side, and a 10-d vector at 10^8.

Run: ``python benchmarks/bench_pipeline.py``; ``--quick`` divides every size
by 10 for a quick look, ``--cases`` picks some of ``laplace``, ``billion`` and
``vector`` (the 10^9 case takes minutes).

Each case runs in its own process, so that its peak resident memory
(``ru_maxrss``) is its own.  Printed ratios:

* audit time / the time numpy needs to draw the same 2n values, in wall-clock
  and in CPU seconds of the process (target: <= 2 at 2x10^8, --jobs 1).  On a
  shared machine the CPU ratio is the steadier one: wall-clock time counts
  the seconds other processes held the core;
* peak memory (target: < 1 GiB in every case, whatever the sample size).

The load average is printed before and after, so that a reader can tell a
quiet run from a loaded one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CHILD = r'''
import json, resource, sys, time
import numpy as np
case, n = sys.argv[1], int(float(sys.argv[2]))
chunk = 1 << 18

def laplace_count(dataset, size=None, rng=None):
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)

def gaussian_vector(dataset, size=None, rng=None):
    return np.asarray(dataset, float)[:10] + rng.normal(0.0, 1.0, size=(size, 10))

def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime

t, c = time.perf_counter(), cpu()
if case == "numpy":
    rng = np.random.default_rng(0)
    for _ in range(2):
        for start in range(0, n, chunk):
            rng.laplace(0.0, 1.0, size=min(chunk, n - start))
    out = {}
elif case == "numpy-vector":
    rng = np.random.default_rng(0)
    for _ in range(2):
        for start in range(0, n, chunk):
            rng.normal(0.0, 1.0, size=(min(chunk, n - start), 10))
    out = {}
else:
    import dpaudit
    if case == "laplace":
        r = dpaudit.audit(laplace_count, [1], [0], epsilon=1.0, samples=n, seed=1, ideal=True)
    else:
        d = [1.0] + [0.0] * 9
        r = dpaudit.audit(gaussian_vector, d, [0.0] * 10, epsilon=1.0, samples=n, seed=1, ideal=True)
    out = {"epsilon_lower_bound": r.epsilon_lower_bound, "attack": r.attack}
out["seconds"] = time.perf_counter() - t
out["cpu_seconds"] = cpu() - c
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
'''

CASES = ("laplace", "billion", "vector")


def run(case: str, n: float) -> dict:
    res = subprocess.run([sys.executable, "-c", CHILD, case, str(n)], capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def _load() -> str:
    return "load average {:.2f} {:.2f} {:.2f} on {} cores".format(*os.getloadavg(), os.cpu_count())


def _ratios(aud: dict, ref: dict) -> str:
    return (f"audit {aud['seconds']:.1f} s wall / {aud['cpu_seconds']:.1f} s CPU, numpy's draws "
            f"{ref['seconds']:.1f} s wall / {ref['cpu_seconds']:.1f} s CPU: ratio "
            f"{aud['seconds'] / ref['seconds']:.2f} wall, {aud['cpu_seconds'] / ref['cpu_seconds']:.2f} CPU")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="every size divided by 10")
    p.add_argument("--cases", default=",".join(CASES),
                   help=f"comma-separated, among {', '.join(CASES)} (default: all)")
    p.add_argument("--skip-billion", action="store_true", help="leave out the 10^9 case (minutes)")
    args = p.parse_args()
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        p.error(f"--cases: unknown {', '.join(unknown)}; choose among {', '.join(CASES)}")
    if args.skip_billion:
        cases = [c for c in cases if c != "billion"]
    scale = 0.1 if args.quick else 1.0
    print(f"before: {_load()}", flush=True)
    if "laplace" in cases:
        n = int(2e8 * scale)
        ref = run("numpy", n)
        aud = run("laplace", n)
        print(f"Laplace, {n:.0e} per side, --jobs 1: {_ratios(aud, ref)} (target <= 2); "
              f"peak {aud['peak_mib']:.0f} MiB (target < 1024); bound {aud['epsilon_lower_bound']:.4f}", flush=True)
    if "billion" in cases:
        big = int(1e9 * scale)
        b = run("laplace", big)
        print(f"Laplace, {big:.0e} per side, --jobs 1: audit {b['seconds']:.1f} s wall / {b['cpu_seconds']:.1f} s "
              f"CPU; peak {b['peak_mib']:.0f} MiB (target < 1024); bound {b['epsilon_lower_bound']:.4f}", flush=True)
    if "vector" in cases:
        nv = int(1e8 * scale)
        vref = run("numpy-vector", nv)
        v = run("vector", nv)
        print(f"10-d Gaussian vector, {nv:.0e} per side, --jobs 1 ({v['attack']}): {_ratios(v, vref)}; "
              f"peak {v['peak_mib']:.0f} MiB (target < 1024); bound {v['epsilon_lower_bound']:.4f}", flush=True)
    print(f"after: {_load()}")


if __name__ == "__main__":
    main()
