"""Anytime-valid audits on the published sequential-auditing cases: releases to a violation, and type-I error.

    PYTHONPATH=. python experiments/sequential/run.py                  # 200 seeds per violation, 1000 per correct case
    PYTHONPATH=. python experiments/sequential/run.py --seeds 100 --null-seeds 1000 --out results.json

Each case runs many seeded audits at once (one array row per seed) through the package's own stream
(:func:`dpaudit.auditor.anytime.run_stream`) with the scalar witnesses ``dpaudit.audit(..., stopping="anytime")``
uses: batches of 10 per side, a look after each.  Violation cases stop at the first look that certifies a
violation (budget 5,000 per side); correct cases run to 2,000 per side, and a run errs when its bound ever
exceeds the claim at some look (the first look that rejects, which is also the look where a peeking user
would stop, since the bound is a running maximum: the adversarial stop).  The seeds (base 2026) are not
those the design was tuned on (base 1).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import cases, correct_cases  # noqa: E402

from dpaudit.auditor.anytime import ScalarWitnesses, curve_points, run_stream  # noqa: E402
from dpaudit.claims import as_claim  # noqa: E402

SEED = 2026


def run_case(case, runs: int, max_pairs: int, full_grid: bool = True, chunk: int = 250) -> dict:
    claim = as_claim(case.claim)
    eps, deltas = curve_points(claim)
    first, worst = [], []
    t0 = time.process_time()
    for lo in range(0, runs, chunk):
        r = min(chunk, runs - lo)
        rng = np.random.default_rng([SEED, lo])
        res = run_stream(lambda look, m: case.draw(rng, r, m), ScalarWitnesses(), epsilons=eps, deltas=deltas,
                         runs=r, max_pairs=max_pairs, full_grid=full_grid, track=not case.violation)
        first.append(res.first_violation)
        if not case.violation:
            # The bound at every look: the most a peeking user could read, against the claim at each point.
            path = np.stack(res.trajectory["epsilon_lower_bound"])  # (looks, runs, families)
            worst.append(np.max(path - eps[None, None, :], axis=(0, 2)))
            del path
    first = np.concatenate(first)
    out = {"case": case.name, "claim": case.claim, "runs": runs, "max_pairs": max_pairs,
           "points_tested": len(eps), "cpu_seconds": round(time.process_time() - t0, 1)}
    found = first > 0
    out["found"] = float(found.mean())
    if case.violation:
        capped = np.where(found, first, max_pairs)
        out.update(mean=float(capped.mean()), median=float(np.median(capped)),
                   p90=float(np.percentile(capped, 90)))
    else:
        worst = np.concatenate(worst)
        out.update(type_one_first_look=float(found.mean()), type_one_peeking=float(np.mean(worst > 0)),
                   se=float(np.sqrt(max(found.mean(), 1e-9) * (1 - found.mean()) / runs)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--null-seeds", type=int, default=1000)
    ap.add_argument("--max", type=int, default=5000, help="budget per side of the violation cases")
    ap.add_argument("--null-max", type=int, default=2000, help="budget per side of the correct cases")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--only", default=None, help="substring of the case names to run")
    ap.add_argument("--kind", choices=("all", "violations", "correct"), default="all")
    args = ap.parse_args(argv)
    rows = []
    t0 = time.time()
    chosen = {"all": cases() + correct_cases(), "violations": cases(), "correct": correct_cases()}[args.kind]
    for case in chosen:
        if args.only and args.only not in case.name:
            continue
        # A type-I check needs the claim's point and the one above it only (the verdict and every bound above
        # the claim are decided there); the violation cases carry the whole confidence-sequence grid.
        row = run_case(case, args.seeds if case.violation else args.null_seeds,
                       args.max if case.violation else args.null_max, full_grid=case.violation)
        row.update(gonzalez=case.gonzalez, apt=case.apt, apt_target=case.apt_target, apt_stat=case.apt_stat,
                   dpaudit_today=case.dpaudit_today)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"wall {time.time() - t0:.0f} s", file=sys.stderr)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
