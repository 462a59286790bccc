"""Soundness suite (issue 7): ``make soundness`` or ``python benchmarks/soundness.py [--seeds N]``.

Audits every correct built-in under many seeds and prints, per mechanism, how
often the certified bound exceeded the mechanism's true epsilon.  Each audit
is allowed to fail with probability 1 - confidence = 0.05; the table also
gives the one-sided binomial allowance: the count above which soundness is
rejected at level 1e-3 (scipy.stats.binom.ppf(1 - 1e-3, seeds, 0.05)).
A reduced version runs in CI (tests/auditor/test_builtins.py).
"""

from __future__ import annotations

import argparse
import time

import dpaudit
from dpaudit.mechanisms import get_mechanism, list_mechanisms

CORRECT_DEFAULT = None  # every non-broken registry entry that audits on its own pair


def main() -> int:
    from scipy.stats import binom

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=200, help="audits per mechanism (default 200)")
    ap.add_argument("--samples", type=int, default=50_000, help="releases per side per audit")
    ap.add_argument("--confidence", type=float, default=0.95)
    args = ap.parse_args()
    alpha = 1 - args.confidence
    allowance = int(binom.ppf(1 - 1e-3, args.seeds, alpha))
    print(f"{'mechanism':32} {'true eps':>9} {'mean bound':>11} {'max bound':>10} {'exceed':>7} "
          f"{'allowed':>8}  verdict")
    worst = True
    t0 = time.perf_counter()
    for name, _desc, *_ in list_mechanisms():
        try:
            m = get_mechanism(name)
        except Exception as exc:  # adapters without their library
            print(f"{name:32} skipped: {exc}")
            continue
        if m.broken or "." in name:
            continue
        true = m.true_epsilon(m.claim.point_delta)
        d, d2 = m.neighbouring_pair()
        bounds = [dpaudit.audit(m, d, d2, epsilon=m.claim.point_epsilon, delta=m.claim.point_delta, samples=args.samples,
                                seed=s, confidence=args.confidence).epsilon_lower_bound
                  for s in range(args.seeds)]
        exceed = sum(b > true + 1e-9 for b in bounds)
        ok = exceed <= allowance
        worst &= ok
        print(f"{name:32} {true:9.4f} {sum(bounds) / len(bounds):11.4f} {max(bounds):10.4f} {exceed:7d} "
              f"{allowance:8d}  {'ok' if ok else 'UNSOUND?'}")
    print(f"({args.seeds} seeds x {args.samples} samples per side, {time.perf_counter() - t0:.0f} s)")
    return 0 if worst else 1


if __name__ == "__main__":
    raise SystemExit(main())
