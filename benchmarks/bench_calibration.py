"""The cost of an audit of a wide vector release, phase by phase, next to LDP-Auditor's measured time.

Run: ``.venv/bin/python benchmarks/bench_calibration.py [CELL ...] [--repeats R] [--jobs J]``, a cell
being ``PROTOCOL:K:EPSILON`` in LDP-Auditor's names (default: the unary-encoding cells where dpaudit
was not faster, ``SUE:200:4 ASUE:200:4 OUE:200:4 SUE:100:6 ASUE:100:6 OUE:150:2``).

Each run is one audit as ``experiments/ldp_auditor/run.py`` makes it (10^6 releases per side, 10%
calibration, confidence 0.99, seed 0, ``ideal=True``) in a fresh process, after a small warm-up audit
so that imports are paid before the clock starts.  Printed per cell: the median seconds of the
repeats, the phases of the last run (draws of the calibration pool, each candidate's fit and
selection scores, choosing, held-out counting), and the ratio to LDP-Auditor's seconds for the same
cell recorded in ``experiments/ldp_auditor/results/ldp_auditor_measured.json`` (< 1: dpaudit faster).
Timing wants an idle machine: do not run it beside other work.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ("SUE:200:4", "ASUE:200:4", "OUE:200:4", "SUE:100:6", "ASUE:100:6", "OUE:150:2")

CHILD = r"""
import functools, json, sys, time
import dpaudit
import dpaudit.auditor.calibrate as C
import dpaudit.auditor.track as T
import dpaudit.sampling as S
from dpaudit.mechanisms import get_mechanism
name, k, eps, delta, jobs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
kw = {"delta": delta} if delta else {}
mech = get_mechanism(name, k=k, epsilon=eps, **kw)
dpaudit.audit(mech, epsilon=eps, delta=delta, samples=20_000, seed=1, ideal=True, n_jobs=jobs)
phases = {}
def timed(owner, attr, label):
    f = getattr(owner, attr)
    @functools.wraps(f)
    def g(*a, **kw):
        t0 = time.perf_counter()
        try:
            return f(*a, **kw)
        finally:
            key = label(a) if callable(label) else label
            phases[key] = phases.get(key, 0.0) + time.perf_counter() - t0
    setattr(owner, attr, g)
timed(S.Sampler, "draw", "draw calibration pool")
timed(T, "calibrate", "calibrate (fit, choose)")
timed(T, "count_held_out", "held-out counting")
timed(C, "_selection_scores", lambda a: "  candidate " + a[0])
t0 = time.perf_counter()
r = dpaudit.audit(mech, epsilon=eps, delta=delta, samples=10**6, confidence=0.99, seed=0, ideal=True,
                  calibration_fraction=0.1, n_jobs=jobs)
print(json.dumps({"seconds": time.perf_counter() - t0, "bound": r.epsilon_lower_bound, "attack": r.attack,
                  "phases": phases}))
"""


def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT / "experiments" / "ldp_auditor"))
    from run import ALL, APPROX_DELTA, APPROXIMATE

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cells", nargs="*", default=list(DEFAULT))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    theirs = {(d["protocol"], d["k"], d["epsilon"]): d.get("ldp_auditor_seconds") for d in json.loads(
        (ROOT / "experiments/ldp_auditor/results/ldp_auditor_measured.json").read_text()) if d.get("seed", 0) == 0}
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    print(f"{'cell':12s} {'dpaudit s':>10s} {'LDP-Auditor s':>14s} {'ratio':>6s}  bound, attack")
    for cell in a.cells:
        proto, k, eps = cell.split(":")
        delta = APPROX_DELTA if proto in APPROXIMATE else 0.0
        runs = []
        for _ in range(a.repeats):
            out = subprocess.run([sys.executable, "-c", CHILD, ALL[proto], k, eps, str(delta), str(a.jobs)],
                                 capture_output=True, text=True, env=env, cwd=ROOT)
            if out.returncode:
                print(out.stderr[-2000:], file=sys.stderr)
                return 1
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        med = statistics.median(r["seconds"] for r in runs)
        ref = theirs.get((proto, int(k), float(eps)))
        ratio = f"{med / ref:6.2f}" if ref else "     -"
        each = ", ".join(f"{r['seconds']:.2f}" for r in runs)
        print(f"{cell:12s} {med:10.2f} {ref or float('nan'):14.1f} {ratio}  {runs[-1]['bound']:.6f}, "
              f"{runs[-1]['attack']}  (runs: {each})", flush=True)
        for label, sec in runs[-1]["phases"].items():
            print(f"    {label:34s} {sec:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
