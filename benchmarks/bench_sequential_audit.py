"""Samples and time to a verdict: sequential audits against fixed-size ones, on broken mechanisms.

Run: ``.venv/bin/python benchmarks/bench_sequential_audit.py`` (``--quick``: one seed per case
and a fixed audit of 10^5 instead of 10^6 for vectorised targets; ``--seeds K`` for more;
``--only CASE``, repeatable: only the cases whose label contains CASE).

Cases: every broken built-in of ``dpaudit list`` (its own pair and claim, default attack), and
three user targets with a gross flaw (``tests/auditor/user_targets.py``: an unclipped sum, a wrong
randomized-response probability, a noise scale of epsilon instead of 1/epsilon; audited with
``ideal=True`` so that the distribution flaw, not their numpy float noise, is what is found), plus
the unclipped sum called once per release with a 1 ms sleep per call.

Each case is audited sequentially (default budget: 10^6 releases per side for a vectorised
target, 20,000 for a per-call one) with seeds 1..K, and once with a fixed size equal to that
budget (``--samples``).  Printed per case: the median samples per side and median time to the
sequential verdict, the fixed audit's, and the ratios fixed / sequential (the target of the
issue: a median of at most 10^5 samples per side across the broken cases).  Timings share the
machine with whatever else runs: compare ratios, not seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
USER_TARGETS = HERE.parent / "tests" / "auditor" / "user_targets.py"


def cases(quick: bool):
    """(label, target, dataset, neighbor, epsilon, delta, ideal, fixed samples)."""
    import dpaudit.mechanisms  # noqa: F401 - registers the built-ins
    from dpaudit.auditor.pipeline import DEFAULT_SAMPLES_PER_CALL, DEFAULT_SAMPLES_VECTORISED
    from dpaudit.mechanisms import REGISTRY, get_mechanism

    sys.path.insert(0, str(USER_TARGETS.parent))
    import user_targets as ut

    vec = 100_000 if quick else DEFAULT_SAMPLES_VECTORISED
    out = []
    for name in REGISTRY:
        mech = get_mechanism(name)
        if getattr(mech, "broken", False):
            out.append((name, name, None, None, mech.claim.point_epsilon, mech.claim.point_delta, False, vec))
    for name, (d, d2, claim, _true) in ut.GROSS.items():
        out.append((f"user: {name}", f"{USER_TARGETS}:{name}", d, d2, claim, 0.0, True, vec))
    d, d2, claim, _ = ut.GROSS["unclipped_sum"]
    out.append(("user: slow_unclipped_sum (1 ms/call)", f"{USER_TARGETS}:slow_unclipped_sum", d, d2, claim, 0.0,
                True, DEFAULT_SAMPLES_PER_CALL))
    return out


def run(target, d, d2, *, epsilon, delta, ideal, seed, samples=None):
    import dpaudit

    t = time.perf_counter()
    r = dpaudit.audit(target, d, d2, epsilon=epsilon, delta=delta, ideal=ideal, seed=seed, samples=samples,
                      progress=False)
    return r, time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=None, help="sequential audits per case (default 5, 1 with --quick)")
    ap.add_argument("--only", action="append", default=None, metavar="CASE",
                    help="run only the cases whose label contains CASE (repeatable), e.g. to add a new broken built-in")
    args = ap.parse_args(argv)
    seeds = args.seeds or (1 if args.quick else 5)
    import dpaudit

    dpaudit.audit("laplace", epsilon=1.0, max_samples=2000, seed=0)  # imports and warm-up outside the timings
    # The classifier distinguishers import scikit-learn on first use (seconds, far more under load): without
    # this, the first case that needs one (svt34_parallel) charged the import to its sequential audits only.
    import sklearn.linear_model  # noqa: F401
    header = (f"{'case':40s} {'seq n (median)':>14s} {'seq s':>7s} {'verdicts':>9s} {'fixed n':>9s} {'fixed s':>8s} "
              f"{'fixed':>9s} {'n ratio':>8s} {'t ratio':>8s}")
    print(f"sequential: {seeds} seed(s) per case; fixed: one audit of the sequential budget\n{header}")
    all_n, failures = [], 0
    for label, target, d, d2, eps, delta, ideal, fixed_n in cases(args.quick):
        if args.only and not any(key in label for key in args.only):
            continue
        ns, ts, verdicts = [], [], 0
        for seed in range(1, seeds + 1):
            r, sec = run(target, d, d2, epsilon=eps, delta=delta, ideal=ideal, seed=seed)
            ns.append(r.samples)
            ts.append(sec)
            verdicts += r.verdict == "violation"
        rf, tf = run(target, d, d2, epsilon=eps, delta=delta, ideal=ideal, seed=1, samples=fixed_n)
        n_med, t_med = statistics.median(ns), statistics.median(ts)
        all_n.extend(ns)
        failures += seeds - verdicts
        print(f"{label:40s} {n_med:>14,.0f} {t_med:>7.2f} {verdicts:>4d}/{seeds:<4d} {rf.samples:>9,d} {tf:>8.2f} "
              f"{'violation' if rf.verdict == 'violation' else 'missed':>9s} {rf.samples / n_med:>8.0f} "
              f"{tf / t_med:>8.1f}", flush=True)
    print(f"\nmedian samples per side to a verdict over all {len(all_n)} sequential audits: "
          f"{statistics.median(all_n):,.0f} (target <= 100,000); sequential audits that missed: {failures}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
