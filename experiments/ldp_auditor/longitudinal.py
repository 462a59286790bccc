"""dpaudit beside LDP-Auditor on its longitudinal and multidimensional studies (its experiment_4 and _5).

Longitudinal: ``tau`` independent reports of one value by GRR, SUE or OUE, each at ``epsilon``, claimed
``tau * epsilon`` (sequential composition; dpaudit's ``ldp_repeat``).  Multidimensional: RS+FD with GRR
or unary encoding on zero fake data, ``d`` attributes, claimed ``epsilon`` (dpaudit's ``rsfd``), on
LDP-Auditor's pair (all attributes 0 against all ``k - 1``), where the release's true epsilon is
``ln(d (e^epsilon - 1) + 1)`` (``dpaudit/mechanisms/ldp_multidim.py``).  Same trials (10^6 per side)
and alpha (0.01) as LDP-Auditor; dpaudit with ``attack="auto"``, 10% of the trials choosing the event.

    PYTHONPATH=. python experiments/ldp_auditor/longitudinal.py [--ldp-auditor PATH] [--out DIR]

With ``--ldp-auditor PATH`` (a checkout with its ``.venv``, as ``run.py`` creates) LDP-Auditor's own
``LongitudinalLDPAuditor`` / ``MultidimensionalLDPAuditor`` run the same cells in that environment.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

LONGITUDINAL = {"GRR": "grr", "SUE": "sue", "OUE": "oue"}
MULTIDIM = {"RS+FD[GRR]": "grr", "RS+FD[SUE-z]": "sue", "RS+FD[OUE-z]": "oue"}

DRIVER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from ldp_audit.longitudinal_auditor import LongitudinalLDPAuditor
from ldp_audit.multidimensional_auditor import MultidimensionalLDPAuditor
for c in json.loads(sys.argv[2]):
    common = dict(nb_trials=int(c["trials"]), alpha=0.01, epsilon=c["epsilon"], delta=0.0, k=c["k"],
                  random_state=c["seed"], n_jobs=int(sys.argv[3]))
    aud = LongitudinalLDPAuditor(tau=c["tau"], **common) if c["study"] == "longitudinal" \
        else MultidimensionalLDPAuditor(d=c["d"], **common)
    t = time.perf_counter()
    eps = aud.run_audit(c["protocol"])
    print(json.dumps({**c, "ldp_auditor": float(eps), "ldp_auditor_seconds": time.perf_counter() - t}), flush=True)
"""


def cells(trials: int, seed: int) -> list[dict]:
    out = [dict(study="longitudinal", protocol=p, k=2, epsilon=0.5, tau=tau, d=1, trials=trials, seed=seed)
           for tau in (5, 10) for p in LONGITUDINAL]
    out += [dict(study="multidimensional", protocol=p, k=2, epsilon=1.0, tau=1, d=d, trials=trials, seed=seed)
            for d in (2, 10) for p in MULTIDIM]
    return out


def run_dpaudit(c: dict) -> None:
    import dpaudit
    from dpaudit.mechanisms import get_mechanism

    if c["study"] == "longitudinal":
        m = get_mechanism("ldp_repeat", protocol=LONGITUDINAL[c["protocol"]], epsilon=c["epsilon"], k=c["k"],
                          tau=c["tau"])
    else:
        m = get_mechanism("rsfd", protocol=MULTIDIM[c["protocol"]], epsilon=c["epsilon"], k=c["k"], d=c["d"])
    t = time.perf_counter()
    r = dpaudit.audit(m, epsilon=m.claim.point_epsilon, samples=c["trials"], confidence=0.99, seed=c["seed"], ideal=True,
                      calibration_fraction=0.1)
    c.update(claimed=m.claim.point_epsilon, true_epsilon=m.true_epsilon(), dpaudit=r.epsilon_lower_bound,
             dpaudit_seconds=time.perf_counter() - t, attack=r.attack, verdict=r.verdict)


def run_ldp_auditor(path: Path, todo: list[dict], jobs: int) -> None:
    python = path / ".venv" / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"{python} not found: run experiments/ldp_auditor/run.py --ldp-auditor {path} once to create it")
    env = {**os.environ, "PYTHONPATH": str(path)}
    out = subprocess.run([str(python), "-c", DRIVER, str(path), json.dumps(todo), str(jobs)], capture_output=True,
                         text=True, cwd=str(path), env=env)
    got = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    for c, d in zip(todo, got):
        c.update(ldp_auditor=d["ldp_auditor"], ldp_auditor_seconds=d["ldp_auditor_seconds"])
    if out.returncode:
        print(f"LDP-Auditor stopped after {len(got)} cells: {out.stderr.strip().splitlines()[-1:]}")


def table(rows: list[dict]) -> str:
    both = any("ldp_auditor" in c for c in rows)
    head = "| study | protocol | k | eps | tau | d | claimed | true | dpaudit | s |" + (" LDP-Auditor | s |" if both else "")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for c in rows:
        line = (f"| {c['study']} | {c['protocol']} | {c['k']} | {c['epsilon']:g} | {c['tau']} | {c['d']} | "
                f"{c['claimed']:.3f} | {c['true_epsilon']:.3f} | {c['dpaudit']:.3f} | {c['dpaudit_seconds']:.1f} |")
        if both:
            line += f" {c.get('ldp_auditor', float('nan')):.3f} | {c.get('ldp_auditor_seconds', float('nan')):.1f} |"
        lines.append(line)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("results/ldp_auditor_longitudinal"))
    ap.add_argument("--trials", type=float, default=1e6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="cores LDP-Auditor's ray may use")
    ap.add_argument("--ldp-auditor", type=Path, default=None, help="a checkout of LDP-Auditor to run beside dpaudit")
    args = ap.parse_args()
    rows = cells(int(args.trials), args.seed)
    for c in rows:
        run_dpaudit(c)
        print(f"{c['study']:16s} {c['protocol']:13s} tau {c['tau']:2d} d {c['d']:2d}: dpaudit {c['dpaudit']:.3f} "
              f"(claimed {c['claimed']:.3f}, true {c['true_epsilon']:.3f}, {c['dpaudit_seconds']:.1f} s)", flush=True)
    if args.ldp_auditor is not None:
        run_ldp_auditor(args.ldp_auditor.resolve(), rows, args.jobs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
