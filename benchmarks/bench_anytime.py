"""Anytime against planned-looks sequential audits, side by side: releases to a violation, bound at the budget.

    PYTHONPATH=. python benchmarks/bench_anytime.py                 # 5 seeds, budget 100,000 per side
    PYTHONPATH=. python benchmarks/bench_anytime.py --seeds 3 --budget 20000

Both audits run through ``dpaudit.audit`` on the same targets and seeds (``stopping="planned"``, today's
default, and ``stopping="anytime"``), with ``ideal=True`` so that both see the distribution only.  Broken
targets report the releases per side each drew until it certified the violation; correct ones the bound
at the budget (both must stay below the true epsilon) and the releases drawn.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dpaudit


def non_dp_mean(eps):
    def f(dataset, size=None, rng=None):
        n = len(dataset)
        return float(np.sum(np.clip(dataset, 0, 1))) / n + rng.laplace(0.0, 1.0 / (eps * n), size=size)
    return f


def gauss_sum(dataset, size=None, rng=None):
    return float(np.sum(dataset)) + rng.normal(0.0, 1.0, size=size)


def laplace_sum(scale):
    def f(dataset, size=None, rng=None):
        return float(np.sum(dataset)) + rng.laplace(0.0, scale, size=size)
    return f


def rr(p):
    def f(dataset, size=None, rng=None):
        bit = int(np.sum(dataset) > 0)
        keep = rng.random(size) < p
        return np.where(keep, bit, 1 - bit).astype(float)
    return f


ZEROS = [0.0] * 10
ONE = [0.0] * 9 + [1.0]
CASES = [  # name, target, dataset, neighbor, claim keywords, true epsilon (None: violation case)
    ("NonDPLaplace1 eps 0.1", non_dp_mean(0.1), [0], [0, 1], {"epsilon": 0.1}, None),
    ("Gaussian mu=1 vs gdp:mu=0.5", gauss_sum, ZEROS, ONE, {"claim": "gdp:mu=0.5"}, None),
    ("randomized response ln 9 vs 1", rr(0.9), [1], [0], {"epsilon": 1.0}, None),
    ("Laplace eps 1.2 vs 1", laplace_sum(1 / 1.2), [1], [0], {"epsilon": 1.0}, None),
    ("Laplace eps 1, claim 1", laplace_sum(1.0), [1], [0], {"epsilon": 1.0}, 1.0),
    ("randomized response ln 3, claim ln 3", rr(0.75), [1], [0], {"epsilon": float(np.log(3))}, float(np.log(3))),
]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget", type=int, default=100_000)
    args = ap.parse_args(argv)
    print(f"{'case':40s} {'stopping':9s} {'flagged':>8s} {'median n':>9s} {'bound':>8s} {'seconds':>8s}")
    for name, target, d, d2, claim, truth in CASES:
        for stopping in ("planned", "anytime"):
            ns, bounds, flagged, secs = [], [], 0, []
            for seed in range(1, args.seeds + 1):
                t = time.perf_counter()
                r = dpaudit.audit(target, d, d2, **claim, seed=seed, ideal=True, max_samples=args.budget,
                                  stopping=stopping)
                secs.append(time.perf_counter() - t)
                ns.append(r.samples)
                bounds.append(r.epsilon_lower_bound)
                flagged += r.verdict == "violation"
                if truth is not None and r.epsilon_lower_bound > truth:
                    print(f"  BOUND ABOVE THE TRUTH: seed {seed}: {r.epsilon_lower_bound} > {truth}")
            print(f"{name:40s} {stopping:9s} {flagged:>4d}/{args.seeds:<3d} {statistics.median(ns):>9,.0f} "
                  f"{statistics.median(bounds):>8.4f} {statistics.median(secs):>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
