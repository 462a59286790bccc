"""Releases per second of every built-in mechanism at 10^7 releases, against the raw numpy draw of the same noise.

Run: ``python benchmarks/bench_mechanisms.py [--n 10000000] [--repeat 3]``

The ratio is mechanism time / raw numpy time (best of ``--repeat``); the
target is a ratio <= 2 for laplace, gaussian, geometric and randomized
response (issue 3).  Mechanisms whose noise has no single raw equivalent are
compared with the closest draw (e.g. n x k Laplace for report-noisy-max) and
reported without a target.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from dpaudit.mechanisms import REGISTRY, get_mechanism
from dpaudit.adapters import ADAPTERS

TARGETS = {"laplace", "gaussian", "gaussian_analytic", "geometric", "randomized_response"}


def raw_draw(name: str, m, n: int, rng: np.random.Generator):
    """The raw numpy draw of the noise a mechanism adds, or None when there is none to compare with."""
    if name in ("laplace", "unclipped_sum"):
        return lambda: rng.laplace(0.0, 1.0 / m.epsilon, n)
    if name in ("gaussian", "gaussian_analytic"):
        return lambda: rng.normal(0.0, m.sigma, n)
    if name == "geometric":
        p = 1 - m.alpha
        return lambda: rng.geometric(p, n) - rng.geometric(p, n)
    if name == "randomized_response":
        return lambda: rng.random(n) < 0.75
    if name in ("report_noisy_max_laplace", "report_noisy_max_with_value"):
        return lambda: rng.laplace(0.0, 1.0, (n, m.n_candidates))
    if name == "report_noisy_max_exponential":
        return lambda: rng.exponential(1.0, (n, m.n_candidates))
    if name == "exponential":
        return lambda: rng.random(n)
    if name in ("noisy_histogram", "histogram_replace_one_bug"):
        return lambda: rng.laplace(0.0, 1.0, (n, m.n_bins))
    if name.startswith("svt") or name == "sparse_vector":
        return lambda: rng.laplace(0.0, 1.0, (n, m.n_queries))
    if name == "float_laplace_mironov":
        return lambda: rng.laplace(0.0, 1.0, n)
    if name == "compose":
        return lambda: rng.laplace(0.0, 1.0, (n, 2))
    if name == "subsample":
        return lambda: rng.laplace(0.0, 1.0, n)
    return None


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000_000, help="releases per measurement (default 1e7)")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--only", nargs="*", help="benchmark only these registry names")
    args = parser.parse_args(argv)
    names = [nm for nm in REGISTRY if nm not in ADAPTERS]
    if args.only:
        names = [nm for nm in names if nm in args.only]
    print(f"{'mechanism':30s} {'releases/s':>12s} {'raw numpy/s':>12s} {'ratio':>6s}  target")
    failed = []
    for name in names:
        m = get_mechanism(name)
        d, _ = m.neighbouring_pair()
        rng = np.random.default_rng(0)
        n = args.n
        t_mech = best_of(lambda: m(d, size=n, rng=rng), args.repeat)
        raw = raw_draw(name, m, n, rng)
        t_raw = best_of(raw, args.repeat) if raw else float("nan")
        ratio = t_mech / t_raw
        goal = ""
        if name in TARGETS:
            ok = ratio <= 2.0
            goal = "<= 2 ok" if ok else "<= 2 MISSED"
            if not ok:
                failed.append(name)
        print(f"{name:30s} {n / t_mech:12.3g} {n / t_raw:12.3g} {ratio:6.2f}  {goal}", flush=True)
    if failed:
        print(f"missed the 2x target: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
