"""What a curve claim costs next to a point claim on the same audit.

The same fixed-size audit (same target, pair, seed and releases) is run with a
point claim and with a curve claim; the ratio of wall times is printed (the
target: at most 1.2x).  The curve's own computation (dp-accounting's import and
PLD, once per event and process, then cached) is printed apart, since a
program that audits many times pays it once.

    python benchmarks/bench_claims.py [--samples 200000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np


def gaussian_count(dataset, size=None, rng=None):
    return float(np.sum(dataset)) + rng.normal(0.0, 1.0, size=size)


def laplace_profile(epsilon=1.0):
    """The Laplace mechanism's exact profile, delta(e) = 1 - exp((e - epsilon) / 2), as a 41-point claim."""
    from dpaudit.claims import ProfileClaim

    return ProfileClaim(tuple((e, 1.0 - np.exp((e - epsilon) / 2)) for e in np.linspace(0.0, epsilon, 41)),
                        spec="profile:laplace(1)")


def _best(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    t = time.perf_counter()
    from dpaudit.claims import parse_claim

    parse_claim("dpsgd:noise=1,rate=0.1,steps=10")
    first = time.perf_counter() - t
    import dpaudit

    print(f"first dpsgd claim in this process (import dp-accounting, compose, grid): {first:.2f} s; cached after")
    cases = [
        ("subsampled_gaussian_steps", "subsampled_gaussian_steps", None, None, {"epsilon": 2.855, "delta": 1e-5},
         "dpsgd:noise=1,rate=0.1,steps=10", {}),
        ("gaussian (user function)", gaussian_count, [0, 1], [0], {"epsilon": 3.139, "delta": 1e-3}, "gdp:mu=1",
         {"ideal": True}),
        ("laplace", "laplace", None, None, {"epsilon": 1.0}, laplace_profile(), {}),
    ]
    print(f"{'audit':<28} {'point s':>8} {'curve s':>8} {'ratio':>6}  claim")
    for name, target, d, d2, point, curve, extra in cases:
        kw = dict(samples=args.samples, seed=1, **extra)
        dpaudit.audit(target, d, d2, **point, **kw)  # warm: imports, caches
        tp = _best(partial(dpaudit.audit, target, d, d2, **point, **kw), args.repeats)
        tc = _best(partial(dpaudit.audit, target, d, d2, claim=curve, **kw), args.repeats)
        print(f"{name:<28} {tp:>8.3f} {tc:>8.3f} {tc / tp:>6.2f}  {curve} vs {point}")


if __name__ == "__main__":
    main()
