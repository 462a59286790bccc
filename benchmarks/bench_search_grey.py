"""Screening draws of ``search(grey_box=True)`` against today's black-box screening, on bench_search.py's cases.

``python benchmarks/bench_search_grey.py [--only NAME]``: for each case of ``bench_search.py`` (and the two
broken twins of its targets), both searches with their defaults, the same seed, ``ideal=True``: the releases
the black-box screening drew (both sides), the target calls the grey-box screening made (one release each)
plus the releases of pairs it screened black-box because a few traces did not settle them exactly, the
pair found, and the final verdicts.  Target: a tenth of the draws or less, with the same verdicts.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), "tests", "search")]

import dpaudit  # noqa: E402
import user_domain_targets as U  # noqa: E402
from bench_search import CASES  # noqa: E402

EXTRA = [("unclipped_sum", U.unclipped_sum, U.DOMAINS["unclipped_sum"], 1.0),
         ("histogram_scale_1 (broken)", U.histogram_scale_1, U.DOMAINS["histogram_scale_1"], 1.0)]


def draws(report) -> int:
    d = report.to_dict()["search"]["screening_draws"]
    return 2 * d["releases_per_side"] + d["grey_box_calls"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=None)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"{'target':32s} {'black draws':>12s} {'grey draws':>11s} {'ratio':>7s}  verdicts (black / grey)")
    for name, fn, (n, lo, hi, integer, rel, _), eps in [c for c in CASES if "unclipped" not in c[0]] + EXTRA:
        if args.only and args.only not in name:
            continue
        reps = [dpaudit.search(fn, epsilon=eps, size=n, low=lo, high=hi, integer=integer, relation=rel,
                               seed=args.seed, ideal=True, grey_box=gb) for gb in (False, True)]
        b, g = draws(reps[0]), draws(reps[1])
        print(f"{name:32s} {b:12d} {g:11d} {g / b:7.4f}  {reps[0].verdict} / {reps[1].verdict}; pairs "
              f"{reps[0].difference} / {reps[1].difference}", flush=True)


if __name__ == "__main__":
    main()
