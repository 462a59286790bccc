"""Seeded JSON of every entry point, recorded once and compared after a change.

``python benchmarks/golden_json.py record`` runs each command below and writes its JSON (timing
fields dropped) to ``benchmarks/golden/<name>.json``; ``python benchmarks/golden_json.py check``
runs them again and prints, per command, ``same`` or the keys whose values differ.  A refactor of the
audit core must leave every file identical, or explain each difference.  ``--only NAME`` runs one.

Why: the JSON is the public contract; unit tests pin a few keys, this pins all of them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "benchmarks" / "golden"
DATA = "configs/data"

#: Keys whose values measure time or the machine, not the audit.
VOLATILE = ("time", "elapsed", "seconds", "duration", "wall", "cpu", "started", "finished", "version", "path")

A = ["audit", "--seed", "1", "--json"]
S = ["--samples", "100000"]
COMMANDS: dict[str, list[str]] = {
    "audit_laplace_fixed": A + ["laplace", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1"] + S,
    "audit_laplace_ideal_violation": A + ["laplace", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "0.5",
                                          "--ideal"] + S,
    "audit_laplace_sequential": A + ["laplace", "--epsilon", "1", "--ideal", "--max-samples", "200000"],
    "audit_gaussian": A + ["gaussian", "--epsilon", "0.5", "--delta", "1e-5", "--ideal"] + S,
    "audit_gaussian_analytic": A + ["gaussian_analytic", "--epsilon", "1", "--delta", "1e-5", "--ideal"] + S,
    "audit_rr": A + ["randomized_response", "--epsilon", "1.0986"] + S,
    "audit_geometric": A + ["geometric", "--epsilon", "1"] + S,
    "audit_exponential": A + ["exponential", "--epsilon", "1"] + S,
    "audit_rnm": A + ["report_noisy_max_laplace", "--epsilon", "1", "--ideal"] + S,
    "audit_histogram": A + ["noisy_histogram", "--epsilon", "1", "--ideal"] + S,
    "audit_sparse_vector": A + ["sparse_vector", "--epsilon", "1", "--ideal", "--samples", "50000"],
    "audit_grr": A + ["grr", "--epsilon", "1"] + S,
    "audit_oue": A + ["oue", "--epsilon", "1"] + S,
    "audit_curve_dpsgd": A + ["subsampled_gaussian_steps", "--param", "noise=0.9", "--claim",
                              "dpsgd:noise=1,rate=0.1,steps=10"],
    "audit_curve_gdp": A + ["gaussian_analytic", "--claim", "gdp:mu=0.5", "--ideal"] + S,
    "audit_curve_eps": A + ["laplace", "--claim", "eps:0.8", "--ideal"] + S,
    "audit_anytime_point": A + ["laplace", "--epsilon", "0.5", "--ideal", "--stopping", "anytime", "--max-samples",
                                "20000"],
    "audit_anytime_curve": A + ["gaussian_analytic", "--claim", "gdp:mu=0.5", "--ideal", "--stopping", "anytime",
                                "--max-samples", "20000"],
    # 10^7 per side: the held-out set is 9 times the calibration pool, so nested events are certified.
    "audit_laplace_nested": A + ["laplace", "--epsilon", "1", "--ideal", "--samples", "10000000"],
    "scores_point": ["scores", f"{DATA}/mia_in.npy", f"{DATA}/mia_out.npy", "--epsilon", "1", "--delta", "1e-5",
                     "--seed", "1", "--json"],
    "scores_curve": ["scores", f"{DATA}/mia_in.npy", f"{DATA}/mia_out.npy", "--claim", "gdp:mu=1",
                     "--seed", "1", "--json"],
    "one_run_point": ["one-run", f"{DATA}/canary_scores.npy", f"{DATA}/canary_included.npy", "--epsilon", "1",
                      "--json"],
    "one_run_curve": ["one-run", f"{DATA}/canary_gdp3_scores.npy", f"{DATA}/canary_gdp3_included.npy",
                      "--claim", "gdp:mu=1", "--json"],
    "search_replace_one": ["search", "laplace", "--epsilon", "1", "--size", "3", "--low", "0", "--high", "1",
                           "--ideal", "--max-samples", "100000", "--seed", "1", "--json"],
    "search_add_remove": ["search", "laplace", "--param", "epsilon=1.3", "--epsilon", "1", "--size", "3",
                          "--low", "0", "--high", "1", "--relation", "add-remove", "--ideal",
                          "--max-samples", "100000", "--seed", "1", "--json"],
}
#: YAML kinds: their summary.json.
CONFIGS = ["quickstart", "scores", "one_run", "one_run_curve", "search", "training", "reconstruction",
           "tracing", "rr_tradeoff", "roc", "privacy_profile"]


def _clean(obj):
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items() if not any(w in k.lower() for w in VOLATILE)}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def _run_command(args: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-m", "dpaudit", *args], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        return {"error": proc.stderr.strip().splitlines()[-1:], "exit": proc.returncode}
    out = _clean(json.loads(proc.stdout))
    if "--seed" not in args:  # an unseeded command (one-run) saves fresh entropy: not part of the result
        out.pop("seed", None)
    return {"exit": proc.returncode, "json": out}


def _run_config(name: str) -> dict:
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([sys.executable, "-m", "dpaudit", "run", f"configs/{name}.yaml", "--out", out],
                              cwd=ROOT, capture_output=True, text=True)
        summary = Path(out) / name / "summary.json"
        if not summary.is_file():
            return {"error": proc.stderr.strip().splitlines()[-1:], "exit": proc.returncode}
        return {"exit": proc.returncode, "json": _clean(json.loads(summary.read_text()))}


def _jobs() -> dict:
    jobs = {name: (lambda a=args: _run_command(a)) for name, args in COMMANDS.items()}
    jobs.update({f"run_{c}": (lambda c=c: _run_config(c)) for c in CONFIGS})
    return jobs


def _differences(old, new, path="") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        out = [f"{path}.{k}: only before" for k in old.keys() - new.keys()]
        out += [f"{path}.{k}: only after" for k in new.keys() - old.keys()]
        for k in old.keys() & new.keys():
            out += _differences(old[k], new[k], f"{path}.{k}")
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for i, (a, b) in enumerate(zip(old, new)) for d in _differences(a, b, f"{path}[{i}]")]
    return [] if old == new else [f"{path}: {str(old)[:60]} -> {str(new)[:60]}"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["record", "check"])
    p.add_argument("--only", action="append", help="run only this command (repeatable)")
    args = p.parse_args()
    GOLDEN.mkdir(exist_ok=True)
    changed = 0
    for name, job in _jobs().items():
        if args.only and name not in args.only:
            continue
        result = job()
        file = GOLDEN / f"{name}.json"
        if args.mode == "record":
            file.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
            print(f"{name}: recorded (exit {result.get('exit')})", flush=True)
            continue
        diffs = _differences(json.loads(file.read_text()), result)
        changed += bool(diffs)
        print(f"{name}: " + ("same" if not diffs else f"{len(diffs)} differences"), flush=True)
        for d in diffs[:20]:
            print(f"    {d}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
