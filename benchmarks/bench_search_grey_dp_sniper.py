"""Screening draws of ``search(grey_box=True)`` against the black-box screening, on DP-Sniper's 20 mechanisms.

``python benchmarks/bench_search_grey_dp_sniper.py [--samples 1e5] [--only SVT]``: for every row of
``configs/dp_sniper.yaml`` (each built-in with DP-Sniper's parameters, claimed epsilon 0.1), both searches over the
built-in's declared input domain with the same seed, ``ideal=True``, confidence 0.9 and final audits of
``--samples`` releases per side: the releases the black-box screening drew (both sides), the grey-box screening's
target calls (one release each) plus the releases of the pairs it screened black-box because three traces did
not settle them exactly, the pairs found and the final verdicts.  The same measurement on ``search``'s own
benchmarks is ``bench_search_grey.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT]

import yaml  # noqa: E402

import dpaudit  # noqa: E402
from dpaudit.mechanisms import get_mechanism  # noqa: E402


def draws(report) -> tuple[int, int]:
    """(releases the black-box screenings drew, both sides; target calls of the grey-box screenings)."""
    d = report.to_dict()["search"]["screening_draws"]
    return 2 * d["releases_per_side"], d["grey_box_calls"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=float, default=1e5, help="releases per side of the final audits")
    ap.add_argument("--seed", type=int, default=2021)
    ap.add_argument("--only", default=None, help="rows whose label contains this")
    args = ap.parse_args()
    cfg = yaml.safe_load(open(os.path.join(ROOT, "configs", "dp_sniper.yaml")))
    print("| mechanism | black-box screening draws | grey-box: calls + black-box draws | ratio | verdicts (black / grey) "
          "| pair (black / grey) | seconds (black / grey) |\n|---|---|---|---|---|---|---|")
    for i, entry in enumerate(cfg["mechanisms"]):
        if args.only and args.only not in entry["label"]:
            continue
        mech = get_mechanism(entry["mechanism"], **entry["params"])
        claim = mech.claim  # the claim's point: point_epsilon/point_delta where claims are curves
        epsilon, delta = ((claim.point_epsilon, claim.point_delta) if hasattr(claim, "point_epsilon")
                          else (claim.epsilon, claim.delta))
        reps, secs = [], []
        for grey in (False, True):
            t0 = time.perf_counter()
            reps.append(dpaudit.search(mech, epsilon=epsilon, delta=delta,
                                       samples=int(args.samples), confidence=0.9, seed=args.seed + 100 + i,
                                       ideal=True, grey_box=grey, **dict(mech.input_domain())))
            secs.append(time.perf_counter() - t0)
        (b, _), (g_black, g_calls) = draws(reps[0]), draws(reps[1])
        g = g_black + g_calls
        pairs = " / ".join(str(r.difference).split(";")[0] for r in reps)
        print(f"| {entry['label']} | {b:,} | {g_calls:,} + {g_black:,} | {g / b:.4f} | {reps[0].verdict} / "
              f"{reps[1].verdict} | {pairs} | {secs[0]:.0f} / {secs[1]:.0f} |", flush=True)


if __name__ == "__main__":
    main()
