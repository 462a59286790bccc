"""The audit's own CPU time beside its target's: each target call inside one audit timed, the rest is the audit's.

Run: ``python benchmarks/bench_overhead.py`` (the 10-d vector audit of ``bench_throughput.py``, 10^8 releases
per side) or ``--samples N``; ``--repeat`` fresh processes (default 2).  To compare two checkouts, run it with
each on ``PYTHONPATH`` from a directory outside both (``python -c`` and a script's own directory come first on
``sys.path``).

Why: ``bench_throughput.py``'s ratio divides by the target's time measured on its own, which moves by 20% with
the machine's state (the same draws took 26-28 s and 32-33 s of CPU on two days, idle both times); the audit's
overhead, its CPU time less the target's calls inside it, moves far less and shows what a change saved.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r'''
import json, resource, sys, time
import numpy as np
import dpaudit
n = int(float(sys.argv[1]))
spent = [0.0]

def gaussian_vector(dataset, size=None, rng=None):
    c = time.process_time()
    out = np.asarray(dataset, float)[:10] + rng.normal(0.0, 1.0, size=(size, 10))
    spent[0] += time.process_time() - c
    return out

def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime

d0, d1 = [1.0] + [0.0] * 9, [0.0] * 10
dpaudit.audit(gaussian_vector, d0, d1, epsilon=1.0, samples=20_000, seed=2, ideal=True)  # imports, first calls
spent[0] = 0.0
c = cpu()
r = dpaudit.audit(gaussian_vector, d0, d1, epsilon=1.0, samples=n, seed=1, ideal=True)
total = cpu() - c
print(json.dumps({"audit": total, "target": spent[0], "overhead": total - spent[0], "bound": r.epsilon_lower_bound,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "module": dpaudit.__file__}))
'''


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=float, default=1e8, help="releases per side (default 1e8)")
    p.add_argument("--repeat", type=int, default=2, help="fresh processes (default 2)")
    args = p.parse_args()
    if args.samples < 20:
        p.error("--samples: at least 20")
    if args.repeat < 1:
        p.error("--repeat: at least 1")
    for i in range(args.repeat):
        res = subprocess.run([sys.executable, "-c", CHILD, str(int(args.samples))], capture_output=True, text=True)
        if res.returncode:
            raise SystemExit(f"run {i + 1} failed:\n{res.stderr}")
        r = json.loads(res.stdout.strip().splitlines()[-1])
        print(f"run {i + 1}: audit {r['audit']:.2f} s CPU, in the target {r['target']:.2f} s, the audit's own "
              f"{r['overhead']:.2f} s; peak {r['peak_mib']:.0f} MiB; bound {r['bound']:.4f} ({r['module']})",
              flush=True)


if __name__ == "__main__":
    main()
