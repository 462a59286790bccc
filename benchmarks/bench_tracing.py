"""Timing of the tracing statistic <a - p, z - p> and of a whole tracing simulation.

    python benchmarks/bench_tracing.py            # n = 1000, d = 10000, 2000 targets

Prints the median of ``--repeats`` runs for (1) the statistic for 2000 targets
against one release (one matrix product), (2) the same per release (one
release per target, row-wise), and (3) ``run_tracing`` end to end
(IN, OUT and calibration games, Gaussian noise).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> None:
    from dpaudit.attacks.tracing import run_tracing, tracing_scores

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--d", type=int, default=10000)
    p.add_argument("--targets", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)

    g = np.random.default_rng(0)
    pop = g.random(args.d)
    z = g.random((args.targets, args.d), dtype=np.float32) < pop.astype(np.float32)
    a = pop + g.normal(0, 0.01, args.d)
    A = pop + g.normal(0, 0.01, (args.targets, args.d))

    def timed(fn):
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return float(np.median(times))

    zf = z.astype(float)
    t_one = timed(lambda: tracing_scores(a, zf, pop))
    t_rows = timed(lambda: tracing_scores(A, zf, pop))
    t_run = timed(lambda: run_tracing(n=args.n, d=args.d, noise="gaussian", alpha=0.01,
                                      n_targets=args.targets // 2, rng=1))
    print(f"tracing, n = {args.n}, d = {args.d}, {args.targets} targets (median of {args.repeats})")
    print(f"  statistic, one release x {args.targets} targets (matrix product): {t_one * 1e3:8.1f} ms")
    print(f"  statistic, one release per target (row-wise):          {t_rows * 1e3:8.1f} ms")
    print(f"  run_tracing end to end ({args.targets // 2} IN + {args.targets} OUT games):   {t_run:8.2f} s")


if __name__ == "__main__":
    main()
