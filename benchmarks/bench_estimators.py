"""Time the statistics core on large score arrays, as ratios to numpy's sort.

Speed is measured as a ratio, never as a timed test: the reference
is ``np.sort`` of each side's scores, which any threshold estimator must at
least match in cost to be worth a cleverer path.

    python benchmarks/bench_estimators.py            # 10^7 scores per side
    python benchmarks/bench_estimators.py --n 1000000 --repeat 3

Scores are Laplace (epsilon 1 mechanism: D ~ 1 + Lap(1), D' ~ Lap(1)).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpaudit.stats import bound_from_scores, gdp_mu_lower_bound, privacy_profile


def _best_time(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7, help="scores per side (default 10^7)")
    parser.add_argument("--repeat", type=int, default=1, help="repetitions; the best time is kept")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    s0 = 1.0 + rng.laplace(size=args.n)
    s1 = rng.laplace(size=args.n)
    grid = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])

    def sort_both():
        return np.sort(s0), np.sort(s1)

    cases = [
        ("bound_from_scores split", lambda: bound_from_scores(s0, s1).epsilon_lower_bound),
        ("bound_from_scores bonferroni (5 thr.)",
         lambda: bound_from_scores(s0, s1, selection="bonferroni", candidates=grid).epsilon_lower_bound),
        ("privacy_profile (9 deltas)", lambda: privacy_profile(s0, s1).epsilons[0]),
        ("gdp_mu_lower_bound (mu, not eps)", lambda: gdp_mu_lower_bound(s0, s1).mu_lower_bound),
    ]
    # The reference is re-timed next to each estimator and the best kept, so
    # that a busy machine inflates both sides of the ratio alike.
    sort_times, rows = [], []
    for name, fn in cases:
        sort_times.append(_best_time(sort_both, args.repeat)[0])
        rows.append((name, *_best_time(fn, args.repeat)))
    sort_time = min(sort_times)
    print(f"n = {args.n:,} scores per side, best of {args.repeat}")
    print(f"{'np.sort (both sides)':40s} {sort_time:8.3f} s   1.00x   (reference)")
    for name, t, value in rows:
        print(f"{name:40s} {t:8.3f} s {t / sort_time:6.2f}x   result {value:.4f}")


if __name__ == "__main__":
    main()
