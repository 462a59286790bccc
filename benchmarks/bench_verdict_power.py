"""Power of sequential audits on targets just above their claim: how many seeded audits flag them.

Run: ``.venv/bin/python benchmarks/bench_verdict_power.py [--seeds K]``.

Cases: the unary-encoding client that keeps its true bit too often (true epsilon 1.71 against a
claim of 1, one release per call, default budget), and the near-claim settings of
``tests/auditor/test_sequential_verdict.py`` with true epsilon 1.05 and 1.1 times the claim
(budget 20,000 per side).  Printed per case: audits flagged out of K, and how many stopped on
"violation" without reporting one (must be 0).  Comparing two commits on the same seeds shows
whether a change to the stopping rules costs power.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "auditor"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=64)
    args = ap.parse_args(argv)
    import dpaudit
    import test_sequential_verdict as tv
    import user_targets as ut

    cases = [("unary encoding, true 1.71", ut.unary_encoding_kept_bit, [0], [1], True, 0.0, None)]
    for name, factory, d, d2, ideal, delta in tv.SETTINGS:
        for ratio in (1.05, 1.1):
            cases.append((f"{name}, true {ratio:g}", factory(ratio), d, d2, ideal, delta, 20_000))
    print(f"{'case':34s} {'flagged':>9s} {'lost':>5s}")
    for label, target, d, d2, ideal, delta, max_samples in cases:
        flagged = lost = 0
        for seed in range(args.seeds):
            r = dpaudit.audit(target, d, d2, epsilon=1.0, delta=delta, max_samples=max_samples, seed=seed,
                              ideal=ideal)
            flagged += r.verdict == "violation"
            lost += r.stopping_reason == "violation" and r.verdict != "violation"
        print(f"{label:34s} {flagged:>4d}/{args.seeds:<4d} {lost:>5d}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
