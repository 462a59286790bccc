"""Attack power and cost on DP-Sniper's table: our bound beside the published one, audit time / draw time.

For every row of DP-Sniper's table (Bichsel et al., IEEE S&P 2021; each
mechanism claims epsilon = 0.1, confidence 0.9, audited as mathematics with
``ideal=True``) this prints

* the bound a fixed-size ``auto`` audit certifies, the published bound and
  whether ours reaches it;
* the attack ``auto`` chose on the selection split;
* audit time / the time the mechanism itself takes to draw the same releases
  (both sides, same chunk size): what scoring, fitting and selecting cost on
  top of drawing.  1.0 would mean the attack is free.

Rows come from ``configs/dp_sniper.yaml`` (each built-in with DP-Sniper's
parameters) for the built-ins that exist; ``--targets FILE.py`` adds or
replaces rows from a file defining ``TABLE = [(label, callable, dataset,
neighbor, published), ...]`` (for instance wrappers of DP-Sniper's own
mechanism code, kept outside the repository).

    python benchmarks/bench_attack_power.py [--samples 1e7] [--only SVT] [--targets FILE.py] [--seed 0]

Timings depend on the machine's load; read the ratio, not the seconds.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

import dpaudit  # noqa: E402
from dpaudit.auditor import DEFAULT_CHUNK_SIZE  # noqa: E402

# DP-Sniper's published bounds (eps_lcb in eval_sp2021/reference-results/dd_search_reg_data.log of
# eth-sri/dp-sniper, 2 x 10^8 final samples), used when configs/dp_sniper.yaml is not there.
FALLBACK = [
    ("LaplaceMechanism", "laplace", {"epsilon": 0.1}, [1.0], [2.0], 0.0968),
    ("NoisyHist1", "noisy_histogram", {"epsilon": 0.1, "n_bins": 5}, None, None, 0.0978),
    ("ReportNoisyMax1", "report_noisy_max_laplace", {"epsilon": 0.1}, None, None, 0.0923),
    ("ReportNoisyMax2", "report_noisy_max_exponential", {"epsilon": 0.1}, None, None, 0.0975),
    ("SVT1", "sparse_vector", {"epsilon": 0.1, "c": 1, "threshold": 0.5, "n_queries": 10}, None, None, 0.0858),
    ("SVT3", "svt_lyu_alg3", {"epsilon": 0.1, "c": 1, "threshold": 1.0, "n_queries": 10}, None, None, 0.1716),
    ("SVT4", "svt_lyu_alg4", {"epsilon": 0.1, "c": 1, "threshold": 1.0, "n_queries": 10}, None, None, 0.1687),
    ("SVT5", "svt_lyu_alg5", {"epsilon": 0.1, "c": 1, "threshold": 1.0, "n_queries": 10}, None, None, 1.7612),
    ("SVT6", "svt_lyu_alg6", {"epsilon": 0.1, "c": 1, "threshold": 1.0, "n_queries": 10}, None, None, 0.2720),
]


PUBLISHED = {
    "LaplaceMechanism": 0.0968, "TruncatedGeometric": 0.1156, "NoisyHist1": 0.0978, "NoisyHist2": 4.602,
    "ReportNoisyMax1": 0.0923, "ReportNoisyMax2": 0.0975, "ReportNoisyMax3": 0.2478, "ReportNoisyMax4": 0.3463,
    "SVT1": 0.0858, "SVT2": 0.0859, "SVT3": 0.1716, "SVT4": 0.1687, "SVT5": 1.7612, "SVT6": 0.2720,
    "Rappor": 0.2930, "OneTimeRappor": 0.5978, "LaplaceParallel": 0.0350, "SVT34Parallel": 0.2610,
    "PrefixSum": 0.5040, "NumericalSVT": 0.0343,
}


def builtin_rows():
    """(label, target, dataset, neighbor, published) for the rows whose built-in exists."""
    from dpaudit.mechanisms import get_mechanism

    path = os.path.join(ROOT, "configs", "dp_sniper.yaml")
    entries = []
    if os.path.exists(path):
        import yaml

        for e in yaml.safe_load(open(path))["mechanisms"]:
            ref = e.get("reference") or {}
            label = e.get("label") or ref.get("paper") or e["mechanism"]
            published = ref.get("published", PUBLISHED.get(label.split(" ")[0]))
            entries.append((label, e["mechanism"], e.get("params", {}), None, None, published))
    else:
        entries = FALLBACK
    rows = []
    for label, name, params, d, d2, published in entries:
        try:
            mech = get_mechanism(name, **params)
        except Exception as exc:  # noqa: BLE001 - a row whose built-in is missing is reported, not fatal
            print(f"{label:20s} skipped: {exc}", file=sys.stderr)
            continue
        if d is None:
            d, d2 = mech.neighbouring_pair()
        rows.append((label, mech, d, d2, published))
    return rows


def file_rows(path):
    spec = importlib.util.spec_from_file_location("bench_targets", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [tuple(r) for r in mod.TABLE]


def draw_seconds(target, d, d2, n):
    """The mechanism's own time for n releases per side, in the audit's chunk size."""
    t = time.perf_counter()
    for side in (d, d2):
        rng = np.random.default_rng(0)
        for start in range(0, n, DEFAULT_CHUNK_SIZE):
            target(np.asarray(side), size=min(DEFAULT_CHUNK_SIZE, n - start), rng=rng)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=float, default=1e6, help="releases per side (fixed-size audit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--confidence", type=float, default=0.9)
    ap.add_argument("--only", default=None, help="rows whose label contains this (comma-separated)")
    ap.add_argument("--targets", default=None, help="a .py file with TABLE rows (label, fn, D, D', published)")
    args = ap.parse_args()
    n = int(args.samples)
    rows = {r[0]: r for r in builtin_rows()}
    if args.targets:
        rows.update({r[0]: r for r in file_rows(args.targets)})
    only = args.only.split(",") if args.only else None
    print(f"{n:.0e} releases per side, confidence {args.confidence}, ideal audits; attack = auto")
    print(f"{'mechanism':20s} {'ours':>8s} {'published':>9s} {'>=':>3s}  {'attack':20s} {'audit/draw':>10s}"
          f" {'audit s':>8s}")
    reached = total = 0
    for label, target, d, d2, published in rows.values():
        if only and not any(o in label for o in only):
            continue
        t_draw = draw_seconds(target, d, d2, n)
        t = time.perf_counter()
        r = dpaudit.audit(target, d, d2, epsilon=0.1, samples=n, confidence=args.confidence, seed=args.seed,
                          ideal=True)
        t_audit = time.perf_counter() - t
        ok = published is not None and r.epsilon_lower_bound >= published
        reached += ok
        total += 1
        pub = f"{published:9.4f}" if published is not None else f"{'?':>9s}"
        print(f"{label:20s} {r.epsilon_lower_bound:8.4f} {pub} {'yes' if ok else 'no':>3s}  {r.attack:20s}"
              f" {t_audit / t_draw:10.2f} {t_audit:8.1f}", flush=True)
    print(f"{reached} of {total} rows reach DP-Sniper's published bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
