"""Audit speed, as ratios (issue 4): ``python benchmarks/bench_audit.py``.

1. Wall time of ``dpaudit audit laplace ... --samples 10**6`` from process start
   to verdict, against a process that starts Python, imports numpy and draws the
   same 2 x 10**6 Laplace values (the floor any audit must pay).  Target: <= 3x.
2. The ``--jobs 2`` over ``--jobs 1`` speed-up at 10**7 samples per side of the
   built-in, and for a plain one-release-per-call Python target.
3. In-process: audit samples/s against raw numpy Laplace draws/s.

Each figure is the median of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(os.path.dirname(sys.executable), "dpaudit")


def wall(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        res = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - t)
        if res.returncode not in (0, 1):
            raise SystemExit(f"command failed ({res.returncode}): {' '.join(cmd)}\n{res.stderr}")
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=10**6)
    ap.add_argument("--big", type=int, default=10**7, help="samples per side for the --jobs speed-up")
    ap.add_argument("--per-call", type=int, default=200_000,
                    help="samples per side for the one-release-per-call target")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = args.samples

    floor = wall([sys.executable, "-c",
                  f"import numpy as np; r = np.random.default_rng(0); r.laplace(size={n}); r.laplace(size={n})"],
                 args.repeat)
    bare = wall([sys.executable, "-c", "pass"], args.repeat)
    audit_cmd = [BIN, "audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                 "--samples", str(n), "--seed", "1", "--json"]
    t_audit = wall(audit_cmd, args.repeat)
    print(f"interpreter start-up alone            {bare:8.3f} s")
    print(f"python + numpy + 2 x {n:.0e} Laplace draws {floor:8.3f} s")
    print(f"dpaudit audit laplace --samples {n:.0e}  {t_audit:8.3f} s")
    print(f"ratio audit / draws                   {t_audit / floor:8.2f} x   (target <= 3x)")

    big = [BIN, "audit", "laplace", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
           "--samples", str(args.big), "--seed", "1", "--json"]
    t1 = wall(big + ["--jobs", "1"], max(1, args.repeat - 1))
    t2 = wall(big + ["--jobs", "2"], max(1, args.repeat - 1))
    print(f"built-in laplace, --samples {args.big:.0e}: --jobs 1 {t1:.2f} s, --jobs 2 {t2:.2f} s, "
          f"speed-up {t1 / t2:.2f}x")
    # A target called once per release (no `size`) is where --jobs pays: Python calls, not numpy.
    one = [BIN, "audit", f"{os.path.join(HERE, '..', 'tests', 'auditor', 'user_targets.py')}:laplace_one",
           "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1", "--samples", str(args.per_call),
           "--seed", "1", "--json"]
    p1 = wall(one + ["--jobs", "1"], max(1, args.repeat - 1))
    p2 = wall(one + ["--jobs", "2"], max(1, args.repeat - 1))
    print(f"one-release-per-call target, --samples {args.per_call:.0e}: --jobs 1 {p1:.2f} s, --jobs 2 {p2:.2f} s, "
          f"speed-up {p1 / p2:.2f}x")

    import dpaudit

    rng = np.random.default_rng(0)
    t = time.perf_counter()
    rng.laplace(size=2 * n)
    raw = 2 * n / (time.perf_counter() - t)
    t = time.perf_counter()
    dpaudit.audit("laplace", [1], [0], epsilon=1.0, samples=n, seed=1)
    rate = 2 * n / (time.perf_counter() - t)
    print(f"in-process: audit {rate / 1e6:.1f} M samples/s vs raw numpy Laplace {raw / 1e6:.1f} M draws/s "
          f"(ratio {rate / raw:.2f})")


if __name__ == "__main__":
    main()
