"""Cohen and Nissim (2018) setting: n = 100 bits, LP (L1) reconstruction from rounded Gaussian answers.

    .venv/bin/python experiments/cohen_nissim/reproduce.py [--trials 10] [--seed 2018]

Prints the mean fraction of bits recovered (over ``--trials`` databases) for
k in {250, 550, 1050, 1950, 2950} random subset queries and noise
round(N(0, sigma^2)), sigma in {2, 4, 6, 8}.
"""

from __future__ import annotations

import argparse
import time

from dpaudit.attacks.reconstruction import run_reconstruction

QUERIES = (250, 550, 1050, 1950, 2950)
SIGMAS = (2, 4, 6, 8)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("--seed", type=int, default=2018)
    p.add_argument("--solver", default="auto")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    print(f"mean fraction of {args.n} bits recovered, L1 LP, rounded Gaussian noise, {args.trials} trials")
    print(f"{'k':>6} " + " ".join(f"{'sigma=' + str(s):>10}" for s in SIGMAS))
    for k in QUERIES:
        row = [
            run_reconstruction(n=args.n, k=k, noise="rounded_gaussian", noise_scale=s, solver=args.solver,
                               trials=args.trials, rng=args.seed * 100003 + k * 31 + s).fraction_recovered
            for s in SIGMAS
        ]
        print(f"{k:>6} " + " ".join(f"{v:>10.3f}" for v in row), flush=True)
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
