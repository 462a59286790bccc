"""Wall time of the L1 reconstruction LP per solver path, k = 4n random subset queries.

Each (solver, n) runs in a fresh subprocess with a wall-time cap; a path that
exceeds the cap is reported as "> cap" and skipped at larger n.  The answers
carry Laplace noise of scale 1 (``--noise-scale 0`` for exact answers).

    python benchmarks/bench_reconstruction.py                 # all paths, cap 120 s
    python benchmarks/bench_reconstruction.py --cap 300 --sizes 250 500 1000 2000

``auto`` resolves to ``dense-ipm`` for the L1 LP at these sizes (see
``dpaudit.attacks.reconstruction``); ``--solvers dense-ipm`` names it directly.

Time includes building the model (pulp's is a large share) and solving; the
queries and answers are generated outside the timer.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

SOLVERS = ("auto", "dense-ipm", "highs", "scipy", "pulp-highs", "pulp-cbc")
DEFAULT_SOLVERS = ("auto", "highs", "scipy", "pulp-highs", "pulp-cbc")  # auto is dense-ipm here


def one(solver: str, n: int, noise_scale: float, seed: int) -> dict:
    import numpy as np

    from dpaudit.attacks.reconstruction import random_queries, reconstruct

    g = np.random.default_rng(seed)
    x = g.integers(0, 2, size=n).astype(float)
    F = random_queries(n, 4 * n, rng=g)
    a = F @ x + (g.laplace(0.0, noise_scale, size=4 * n) if noise_scale > 0 else 0.0)
    t0 = time.perf_counter()
    x_hat = reconstruct(F, a, norm="l1", solver=solver)
    seconds = time.perf_counter() - t0
    return {"solver": solver, "n": n, "seconds": seconds, "recovered": float(np.mean((x_hat >= 0.5) == (x == 1)))}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    p.add_argument("--solvers", nargs="+", default=list(DEFAULT_SOLVERS), choices=SOLVERS)
    p.add_argument("--cap", type=float, default=120.0, help="wall-time cap per (solver, n) in seconds")
    p.add_argument("--noise-scale", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--one", nargs=2, metavar=("SOLVER", "N"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args.noise_scale, args.seed)))
        return

    print(f"L1 reconstruction LP, k = 4n random queries, Laplace noise scale {args.noise_scale}, cap {args.cap:g} s")
    print(f"{'n':>6} " + " ".join(f"{s:>22}" for s in args.solvers))
    skipped: set[str] = set()
    for n in args.sizes:
        cells = []
        for solver in args.solvers:
            if solver in skipped:
                cells.append("skipped (cap)")
                continue
            cmd = [sys.executable, __file__, "--one", solver, str(n), "--noise-scale", str(args.noise_scale),
                   "--seed", str(args.seed)]
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.cap, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                cells.append(f"{r['seconds']:8.2f} s ({r['recovered']:.3f})")
            except subprocess.TimeoutExpired:
                cells.append(f"> {args.cap:g} s")
                skipped.add(solver)
            except subprocess.CalledProcessError as exc:
                cells.append("error")
                print(exc.stderr.strip().splitlines()[-1:], file=sys.stderr)
        print(f"{n:>6} " + " ".join(f"{c:>22}" for c in cells), flush=True)
    print("(cell: wall seconds, fraction of bits recovered in parentheses)")


if __name__ == "__main__":
    main()
