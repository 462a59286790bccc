"""One-run audits of curve claims: how often the point tests and the f-DP test flag, and their cost.

Run: ``.venv/bin/python benchmarks/bench_one_run_fdp.py [--seeds K] [--canaries M]``.

Power: canary scores N(mu * included, 1) (the release of a mu-GDP mechanism) against the claim
``gdp:mu=1``, for true mu from 1 (the claim holds) to 4.  Per row, out of K seeded audits: how
many the point tests flag (Steinke, Nasr and Jagielski 2023 at deltas 0..1e-3, 25% of the failure
probability), how many the f-DP test rejects as a whole curve (Mahloujifar, Melis and Chaudhuri
2025, the other 75%: ``FDP_SHARE``), in how many of those the same counts cross a named point of the claim
(the claim's grid, each point's curve), and the audit's verdict (a named point crossed by either).  Validity: the same counts on correct
mechanisms at their own curves (the rows ``soundness``), which must stay at or below 5%.
Cost: seconds per audit with and without the f-DP test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "auditor"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--canaries", type=int, default=1000)
    args = ap.parse_args(argv)
    import dpaudit
    import test_one_run_audit as t

    m, k = args.canaries, args.seeds
    cases = [(f"power   true mu {mu:g} vs gdp:mu=1", lambda s, mu=mu: t._gauss_canaries(mu, m, s), "gdp:mu=1")
             for mu in (1.0, 1.5, 2.0, 2.5, 3.0, 4.0)]
    cases += [("soundness  gauss mu 2 vs gdp:mu=2", lambda s: t._gauss_canaries(2.0, m, s), "gdp:mu=2"),
              ("soundness  laplace 2 vs its profile", lambda s: t._laplace_canaries(2.0, m, s), t._laplace_profile(2.0)),
              ("soundness  rr 2 vs its profile", lambda s: t._rr_canaries(2.0, m, s), t._rr_profile(2.0)),
              ("soundness  dp-sgd view vs accountant", lambda s: t._dpsgd_canaries(s, m),
               "dpsgd:noise=1,rate=0.1,steps=10")]
    print(f"{m} canaries, {k} seeds per row")
    print(f"{'case':40s} {'point':>6s} {'whole':>6s} {'named':>6s} {'verdict':>7s} {'s/audit':>8s}")
    for label, make, claim in cases:
        point = fdp = named = either = 0
        t0 = time.perf_counter()
        for seed in range(k):
            r = dpaudit.audit_one_run(*make(seed), claim=claim)
            point += max(x["epsilon_lower_bound"] - x["claimed_epsilon"] for x in r.tests) > 0
            fdp += r.curve_rejected
            named += any(x["pair"] for x in r.fdp_tests)
            either += r.violation
        print(f"{label:40s} {point:6d} {fdp:6d} {named:6d} {either:7d} {(time.perf_counter() - t0) / k:8.3f}",
              flush=True)
    scores, inc = t._gauss_canaries(1.0, m, 0)
    for name, kw in (("point claim eps:4,delta=1e-5", {"epsilon": 4.0, "delta": 1e-5}),
                     ("curve claim gdp:mu=1", {"claim": "gdp:mu=1"})):
        dpaudit.audit_one_run(scores, inc, **kw)
        t0 = time.perf_counter()
        for _ in range(5):
            dpaudit.audit_one_run(scores, inc, **kw)
        print(f"cost    {name:32s} {(time.perf_counter() - t0) / 5:.3f} s per audit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
