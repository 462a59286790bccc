"""dpaudit on LDP-Auditor's main table: the pure LDP protocols, their domain sizes and epsilons, 10^6 trials, alpha 0.01.

    PYTHONPATH=. python experiments/ldp_auditor/run.py --out results/ldp_auditor            # a subset: k 25, 4 epsilons
    PYTHONPATH=. python experiments/ldp_auditor/run.py --full                               # the paper's whole grid
    PYTHONPATH=. python experiments/ldp_auditor/run.py --ldp-auditor ~/src/ldp-audit        # both tools, side by side

LDP-Auditor (Arcolezi and Gambs 2024; github.com/hharcolezi/ldp-audit) audits each protocol with
a hand-written attack on 10^6 trials per audit and Clopper-Pearson intervals at alpha = 0.01; its
main table (experiment_1.py) covers GRR, SS, SUE, OUE, THE, SHE, BLH and OLH for k in {25, 50, 100,
150, 200} and epsilon in {0.25, 0.5, 0.75, 1, 2, 4, 6, 10}, five seeds.  Here each protocol is a
dpaudit built-in audited by ``auto`` (no per-protocol attack) with the same trials (10^6 releases
per side: 10% choose the event, 90% certify it) and confidence 0.99.

With ``--ldp-auditor PATH`` (a checkout of LDP-Auditor; it is not on the package index and its code
never enters dpaudit) the script creates ``PATH/.venv`` from its requirements.txt if needed and runs
its ``LDPAuditor.run_audit`` on the same cells in that interpreter, timing each call, so both bounds
and both wall times are printed side by side.  Writes ``results.json``, ``table.md`` and
``figure.png`` (estimated against theoretical epsilon) under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

PROTOCOLS = {"GRR": "grr", "SS": "ss", "SUE": "sue", "OUE": "oue", "THE": "the", "SHE": "she", "BLH": "blh",
             "OLH": "olh"}
#: LDP-Auditor's approximate table (experiment_1.py, second half): delta = 1e-5.
APPROXIMATE = {"AGRR": "agrr", "ASUE": "asue", "ABLH": "ablh", "AOLH": "aolh", "GM": "gm", "AGM": "agm"}
ALL = {**PROTOCOLS, **APPROXIMATE}
APPROX_DELTA = 1e-5
FULL_K = (25, 50, 100, 150, 200)
#: Share of the trials that choose the event (the rest certify it).  These protocols' best events are
#: common, so 10% chooses them as well as half does (k 25, epsilon 4: SUE 3.97 vs 3.98, THE 2.836 vs
#: 2.852, SS 3.963 vs 3.967) at a third of the time.
CALIBRATION = 0.1
FULL_EPS = (0.25, 0.5, 0.75, 1, 2, 4, 6, 10)

DRIVER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from ldp_audit.base_auditor import LDPAuditor
cells = json.loads(sys.argv[2])
aud = LDPAuditor(nb_trials=int(cells[0]["trials"]), alpha=0.01, epsilon=cells[0]["epsilon"], delta=0.0,
                 k=cells[0]["k"], random_state=0, n_jobs=int(sys.argv[3]))
# Untimed warm-up, one small audit per protocol: Ray starts its workers and numba compiles each
# protocol's sampler on first use, once per process, as dpaudit's warm-up pays its imports and pool.
full = aud.lst_trial_per_core
aud.lst_trial_per_core = [1000] * len(full)
for c in {c["protocol"]: c for c in cells}.values():
    aud.set_params(epsilon=c["epsilon"], k=c["k"], random_state=c["seed"], delta=c["delta"])
    aud.run_audit(c["protocol"])
aud.lst_trial_per_core = full
for c in cells:
    aud.set_params(epsilon=c["epsilon"], k=c["k"], random_state=c["seed"], delta=c["delta"])
    t = time.perf_counter()
    eps = aud.run_audit(c["protocol"])
    print(json.dumps({**c, "ldp_auditor": float(eps), "ldp_auditor_seconds": time.perf_counter() - t}), flush=True)
"""


def run_dpaudit(cells, log, save=lambda: None, jobs: int = 1):
    import dpaudit
    from dpaudit.mechanisms import get_mechanism

    # Modules the audits import on first use are imported before any clock starts, as LDP-Auditor's
    # driver imports its package before timing: otherwise the first vector cell pays ~2 s of imports.
    import scipy.stats  # noqa: F401
    import sklearn.linear_model  # noqa: F401

    def mechanism(c):
        return get_mechanism(ALL[c["protocol"]], epsilon=c["epsilon"], k=c["k"],
                             **({"delta": c["delta"]} if c["delta"] else {}))

    # Untimed warm-up, one small audit per protocol (the worker pool, first use of each code path), as
    # LDP-Auditor's driver warms up Ray and numba: a tool's start-up is not charged to its first cell.
    for c in {c["protocol"]: c for c in cells if "dpaudit" not in c}.values():
        dpaudit.audit(mechanism(c), epsilon=c["epsilon"], delta=c["delta"], samples=20_000, seed=1, ideal=True,
                      n_jobs=jobs)
    for c in cells:
        if "dpaudit" in c:  # measured by an earlier, interrupted run (--resume)
            continue
        m = mechanism(c)
        t = time.perf_counter()
        r = dpaudit.audit(m, epsilon=c["epsilon"], delta=c["delta"], samples=c["trials"], confidence=0.99,
                          seed=c["seed"], ideal=True, calibration_fraction=CALIBRATION, n_jobs=jobs)
        c.update(dpaudit=r.epsilon_lower_bound, dpaudit_seconds=time.perf_counter() - t, attack=r.attack,
                 true_epsilon=m.true_epsilon(c["delta"]))
        log(f"{c['protocol']:4s} k {c['k']:3d} eps {c['epsilon']:5g}: dpaudit {c['dpaudit']:.3f} "
            f"(true {c['true_epsilon']:.3f}, {r.attack}, {c['dpaudit_seconds']:.1f} s)")
        save()


def run_ldp_auditor(path: Path, cells, log, jobs: int = 2):
    """LDP-Auditor's own estimates of the same cells, in its own virtual environment (created if absent)."""
    venv = path / ".venv"
    python = venv / "bin" / "python"
    if not python.exists():
        # Its pins (pure-ldp 1.1.2, ray 2.20, numba 0.59) are not all installable on Python 3.11 today:
        # the same packages unpinned, plus the two its code needs that the file leaves out or outgrew
        # (xxhash < 3.1 hashes str, as its run_audit does; pure-ldp imports scikit-learn).
        reqs = [line.split("==")[0].strip() for line in (path / "requirements.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
        reqs = [r for r in reqs if r != "xxhash"] + ["xxhash<3.1", "scikit-learn"]
        log(f"creating {venv} with {', '.join(reqs)} (minutes)")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *reqs], check=True)
    # Ray's workers import ldp_audit too: they get the checkout as working directory and on PYTHONPATH.
    env = {**os.environ, "PYTHONPATH": str(path)}
    out = subprocess.run([str(python), "-c", DRIVER, str(path), json.dumps(cells), str(jobs)], capture_output=True,
                         text=True, cwd=str(path), env=env)
    by_key = {(d["protocol"], d["k"], d["epsilon"], d["seed"]): d
              for d in map(json.loads, [line for line in out.stdout.splitlines() if line.startswith("{")])}
    for c in cells:
        d = by_key.get((c["protocol"], c["k"], c["epsilon"], c["seed"]))
        if d is not None:
            c.update(ldp_auditor=d["ldp_auditor"], ldp_auditor_seconds=d["ldp_auditor_seconds"])
    if out.returncode:  # keep what it measured before failing, and say why
        log(f"LDP-Auditor failed in {venv} after {len(by_key)} cells: {out.stderr.strip().splitlines()[-1:]}")


def table(cells) -> str:
    both = any("ldp_auditor" in c for c in cells)
    head = "| protocol | k | epsilon | true epsilon | dpaudit | dpaudit s |" + (" LDP-Auditor | LDP-Auditor s |" if both
                                                                               else "")
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    for c in cells:
        row = (f"| {c['protocol']} | {c['k']} | {c['epsilon']:g} | {c['true_epsilon']:.3f} | {c['dpaudit']:.3f} | "
               f"{c['dpaudit_seconds']:.1f} |")
        if both:
            row += f" {c.get('ldp_auditor', float('nan')):.3f} | {c.get('ldp_auditor_seconds', float('nan')):.1f} |"
        rows.append(row)
    return "\n".join(rows)


def summary(cells) -> str:
    """How many cells dpaudit's bound is at least LDP-Auditor's and its wall time lower, and which are not."""
    both = [c for c in cells if "ldp_auditor" in c and "dpaudit" in c]
    if not both:
        return ""
    below = [c for c in both if c["dpaudit"] < c["ldp_auditor"]]
    slower = [c for c in both if c["dpaudit_seconds"] >= c["ldp_auditor_seconds"]]

    def name(c):
        return f"{c['protocol']} k {c['k']} eps {c['epsilon']:g}"

    lines = [f"\nbound >= LDP-Auditor's in {len(both) - len(below)} of {len(both)} cells"]
    lines += [f"  below: {name(c)}: {c['dpaudit']:.4f} vs {c['ldp_auditor']:.4f} (true {c['true_epsilon']:.4f})"
              for c in below]
    lines.append(f"less wall time in {len(both) - len(slower)} of {len(both)} cells "
                 f"({sum(c['dpaudit_seconds'] for c in both):.0f} s vs {sum(c['ldp_auditor_seconds'] for c in both):.0f} s)")
    lines += [f"  not faster: {name(c)}: {c['dpaudit_seconds']:.1f} s vs {c['ldp_auditor_seconds']:.1f} s" for c in slower]
    return "\n".join(lines) + "\n"


def figure(cells, stem: Path):
    """One panel per protocol: dpaudit's and LDP-Auditor's 99% lower bounds against the theoretical epsilon."""
    from matplotlib.figure import Figure

    from dpaudit.plots.style import paper_style, save_figure

    names = [n for n in ALL if any(c["protocol"] == n for c in cells)]
    with paper_style():
        cols = min(4, len(names))
        rows = -(-len(names) // cols)
        fig = Figure(figsize=(1.75 * cols, 1.9 * rows + 0.6), layout="constrained")
        axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False).ravel()
        eps = sorted({c["epsilon"] for c in cells})
        for ax, name in zip(axes, names):
            ax.plot(eps, eps, color="0.6", lw=0.8, label="claimed epsilon")
            # One line per domain size (the same protocol at several k would otherwise zig-zag).
            for i, k in enumerate(sorted({c["k"] for c in cells if c["protocol"] == name})):
                sel = sorted((c for c in cells if c["protocol"] == name and c["k"] == k), key=lambda c: c["epsilon"])
                first = i == 0
                ax.plot([c["epsilon"] for c in sel], [c["true_epsilon"] for c in sel], color="0.2", lw=0.8,
                        ls="--", marker="_", ms=9, label="true epsilon" if first else None)  # a tick: one epsilon shows too
                ax.plot([c["epsilon"] for c in sel], [c["dpaudit"] for c in sel], marker="o", ms=3, color="C0",
                        label="dpaudit" if first else None)
                if any("ldp_auditor" in c for c in sel):
                    ax.plot([c["epsilon"] for c in sel], [c.get("ldp_auditor", float("nan")) for c in sel],
                            marker="x", ms=3, ls=":", color="C3", label="LDP-Auditor" if first else None)
            ax.set_title(name, fontsize=8, loc="left")
        for ax in axes[len(names):]:
            ax.set_visible(False)
        for ax in axes[(rows - 1) * cols:len(names)]:
            ax.set_xlabel("claimed epsilon", fontsize=8)
        fig.supylabel("certified epsilon (99%)", fontsize=8)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncol=4, frameon=False, fontsize=7)
        return save_figure(fig, stem)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/ldp_auditor")
    ap.add_argument("--full", action="store_true", help="the paper's grid: 5 domain sizes x 8 epsilons x 5 seeds")
    ap.add_argument("--k", default="25", help="domain sizes (comma-separated)")
    ap.add_argument("--epsilons", default="0.5,1,2,4")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--protocols", default=",".join(ALL), help="LDP-Auditor's names (comma-separated); default all 14")
    ap.add_argument("--jobs", type=int, default=2,
                    help="cores each tool may use (dpaudit's n_jobs, LDP-Auditor's ray); the bounds do not depend on it")
    ap.add_argument("--resume", action="store_true", help="keep the cells already in --out's results.json")
    ap.add_argument("--report-only", action="store_true",
                    help="no audits: the table and figure of the cells already in --out's results.json")
    ap.add_argument("--ldp-auditor-json", type=Path, default=None,
                    help="LDP-Auditor's figures for some cells (a results.json of an earlier --ldp-auditor run)")
    ap.add_argument("--cells-from", type=Path, default=None,
                    help="audit exactly the cells of this JSON (e.g. results/ldp_auditor_measured.json), seed included")
    ap.add_argument("--trials", type=float, default=1e6)
    ap.add_argument("--ldp-auditor", type=Path, default=None, help="a checkout of LDP-Auditor to run beside dpaudit")
    a = ap.parse_args(argv)
    ks = FULL_K if a.full else tuple(int(x) for x in a.k.split(","))
    epss = FULL_EPS if a.full else tuple(float(x) for x in a.epsilons.split(","))
    seeds = range(5) if a.full else tuple(int(x) for x in a.seeds.split(","))
    names = ALL if a.full else a.protocols.split(",")
    cells = [{"protocol": p, "k": k, "epsilon": float(e), "seed": s, "trials": int(a.trials),
              "delta": APPROX_DELTA if p in APPROXIMATE else 0.0}
             for s in seeds for k in ks for e in epss for p in names]
    if a.cells_from is not None:
        keys = sorted({(d["k"], d["epsilon"], d.get("seed", 0), d["protocol"]) for d in json.loads(a.cells_from.read_text())},
                      key=lambda t: (t[0], t[1], t[2], list(ALL).index(t[3])))
        cells = [{"protocol": p, "k": k, "epsilon": float(e), "seed": sd, "trials": int(a.trials),
                  "delta": APPROX_DELTA if p in APPROXIMATE else 0.0} for k, e, sd, p in keys]

    def log(s):
        print(s, file=sys.stderr, flush=True)

    log(f"{len(cells)} audits; about {len(cells) * 40 / 60:.0f} min for dpaudit on 2 shared cores (10^6 per side)")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    saved = out / "results.json"
    if a.resume and saved.exists():
        done = {(d["protocol"], d["k"], d["epsilon"], d["seed"]): d for d in json.loads(saved.read_text())}
        cells = [done.get((c["protocol"], c["k"], c["epsilon"], c["seed"]), c) for c in cells]
    if a.report_only:
        cells = [c for c in json.loads(saved.read_text()) if "dpaudit" in c]
    else:
        run_dpaudit(cells, log, lambda: saved.write_text(json.dumps(cells, indent=1)), a.jobs)
    if a.ldp_auditor_json is not None:
        theirs = {(d["protocol"], d["k"], d["epsilon"], d["seed"]): d for d in json.loads(a.ldp_auditor_json.read_text())
                  if "ldp_auditor" in d}
        for c in cells:
            d = theirs.get((c["protocol"], c["k"], c["epsilon"], c["seed"]))
            if d is not None:
                c.update(ldp_auditor=d["ldp_auditor"], ldp_auditor_seconds=d["ldp_auditor_seconds"])
    saved.write_text(json.dumps(cells, indent=1))
    if a.ldp_auditor is not None:
        run_ldp_auditor(a.ldp_auditor.expanduser(), cells, log, a.jobs)
        (out / "results.json").write_text(json.dumps(cells, indent=1))
    (out / "table.md").write_text(table(cells) + "\n" + summary(cells))
    print(table(cells))
    print(summary(cells), end="")
    figure(cells, out / "figure")


if __name__ == "__main__":
    main()
