"""Cohen and Nissim (2018): n = 100 bits, L1 LP reconstruction from rounded Gaussian answers, beside the paper.

    dpaudit-venv$ python experiments/cohen_nissim/reproduce.py [--jobs 2] [--out results]

Runs ``cohen_nissim.yaml`` (next to this file) through the experiment runner,
so this script and ``dpaudit run experiments/cohen_nissim/cohen_nissim.yaml``
are one computation with one seed and print the same numbers.  It then prints
the mean fraction of bits recovered for every k (random subset queries) and
sigma (noise round(N(0, sigma^2))), Cohen and Nissim's published means for the
same grid, and the difference.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dpaudit.runner import run_experiment

CONFIG = Path(__file__).with_name("cohen_nissim.yaml")

#: Cohen and Nissim (2018), mean fraction of the n = 100 bits recovered by the L1 LP over 10 trials,
#: from the data published with the paper (github.com/journalprivacyconfidentiality/Linear-Program-Reconstruction).
PAPER = {
    250: {2: 0.947, 4: 0.782, 6: 0.678, 8: 0.632},
    550: {2: 0.983, 4: 0.873, 6: 0.771, 8: 0.717},
    1050: {2: 1.000, 4: 0.928, 6: 0.852, 8: 0.779},
    1950: {2: 1.000, 4: 0.984, 6: 0.935, 8: 0.850},
    2950: {2: 1.000, 4: 0.996, 6: 0.959, 8: 0.908},
}


def table(summary: dict) -> dict:
    """``{k: {sigma: (mean fraction recovered, number of databases)}}`` from a run's summary."""
    out: dict = {}
    for group in summary["groups"]:
        k = int(group["sweep"]["attack.params.k"])
        sigma = float(group["sweep"]["attack.params.noise_scale"])
        metric = group["metrics"]["fraction_recovered"]
        out.setdefault(k, {})[int(sigma) if sigma.is_integer() else sigma] = metric["mean"]
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="results", help="where the run's results go (default: results)")
    p.add_argument("--jobs", type=int, default=1, help="parallel workers; the numbers do not depend on it")
    p.add_argument("--resume", action="store_true", help="reuse finished trials of an earlier run")
    p.add_argument("--overwrite", action="store_true",
                   help="start again; an earlier run's folder is moved to <name>.previous first")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    outcome = run_experiment(CONFIG, out=args.out, n_jobs=args.jobs, resume=args.resume, overwrite=args.overwrite,
                             draw=False, echo=lambda s: None)
    ours = table(outcome.summary)
    sigmas = sorted(PAPER[250])
    print("mean fraction of 100 bits recovered (L1 LP, rounded Gaussian noise, 10 databases per cell)")
    print("ours / Cohen-Nissim 2018 / difference")
    print(f"{'k':>6} " + " ".join(f"{'sigma=' + str(s):>22}" for s in sigmas))
    for k in sorted(PAPER):
        cells = [f"{ours[k][s]:.3f} / {PAPER[k][s]:.3f} / {ours[k][s] - PAPER[k][s]:+.3f}" for s in sigmas]
        print(f"{k:>6} " + " ".join(f"{c:>22}" for c in cells))
    diffs = [abs(ours[k][s] - PAPER[k][s]) for k in PAPER for s in sigmas]
    print(f"largest |difference| {max(diffs):.3f}; mean |difference| {sum(diffs) / len(diffs):.3f}")
    print(f"results: {outcome.directory} ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
