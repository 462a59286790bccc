"""Search plus audit against the final audit alone, at default settings (issue 13): ``python benchmarks/bench_search.py``.

For each target, ``dpaudit.search`` with its defaults (screening, local search,
refinement, then one audit of the winner at the audit's default sample size)
is timed in-process, and so is ``dpaudit.audit`` alone on the pair the search
returned, with the same sample size.  The ratio search+audit / audit is the
price of not knowing the pair.  Target: <= 3x.

Targets (the user-style ones of the tests, vectorised; and one called once per
release): a clipped sum (scalar output), an unclipped one (violation: the
audit is the same size), a 5-bin histogram (vector output), randomized
response on 5 bits (discrete vector output), a Laplace sum without ``size``
(one Python call per release).  Medians of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "tests", "search")]

import dpaudit  # noqa: E402
import user_domain_targets as U  # noqa: E402


def laplace_per_call(dataset, rng=None):
    """One release per call (no ``size``): the audit default is 20,000 releases per side."""
    return float(np.sum(np.clip(np.rint(dataset), 0.0, 1.0)) + U.discrete_laplace(1.0, None, rng))


CASES = [
    ("clipped_sum", U.clipped_sum, U.DOMAINS["clipped_sum"], 1.0),
    ("unclipped_sum", U.unclipped_sum, U.DOMAINS["unclipped_sum"], 1.0),
    ("histogram (vector)", U.histogram_scale_2, U.DOMAINS["histogram_scale_2"], 1.0),
    ("rr 5 bits (discrete vector)", U.rr_right_p, U.DOMAINS["rr_right_p"], float(np.log(3))),
    ("laplace, one call per release", laplace_per_call, (10, 0, 100, True, "replace-one", False), 1.0),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=None, help="run only the cases whose name contains this")
    args = ap.parse_args()
    print(f"{'target':32s} {'search+audit s':>14s} {'audit s':>8s} {'ratio':>6s}  verdict  (candidates)")
    ratios = []
    for name, fn, (n, lo, hi, integer, rel, _), eps in CASES:
        if args.only and args.only not in name:
            continue
        t_search, t_audit = [], []
        for r in range(args.repeat):
            t = time.perf_counter()
            rep = dpaudit.search(fn, epsilon=eps, size=n, low=lo, high=hi, integer=integer, relation=rel,
                                 seed=100 + r)
            t_search.append(time.perf_counter() - t)
            t = time.perf_counter()
            dpaudit.audit(fn, rep.dataset, rep.neighbor, epsilon=eps, seed=200 + r)
            t_audit.append(time.perf_counter() - t)
        s, a = statistics.median(t_search), statistics.median(t_audit)
        ratios.append(s / a)
        print(f"{name:32s} {s:14.2f} {a:8.2f} {s / a:6.2f}  {rep.verdict} ({rep.candidates_screened})", flush=True)
    print(f"\nlargest ratio {max(ratios):.2f} (target <= 3)")


if __name__ == "__main__":
    main()
