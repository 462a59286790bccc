"""Run DP-Sniper's table and write it beside the published bounds.

    python experiments/dp_sniper/reproduce.py                      # 10^6, 10^7, 2 x 10^7 per side
    python experiments/dp_sniper/reproduce.py --sizes 1e6 --jobs 2 # the quick version
    python experiments/dp_sniper/reproduce.py --sizes 1e7 --runs 5 --jobs 2  # five seeds, shares of the ceilings
    python experiments/dp_sniper/reproduce.py --sizes 1e7 --rows SVT3 --runs 3  # one row, three seeds

It runs ``dp_sniper.yaml`` through the experiment runner (so the results are
the runner's: ``results/<name>/trials.jsonl``, ``summary.json`` and the
``epsilon_vs_claimed`` figure; an interrupted run resumes), with the sample
sizes of ``--sizes`` in place of the YAML's sweep, then writes a Markdown table
(``--table``, default ``results/<name>/table.md``) and prints it: for each of
the 20 rows, our mechanism, DP-Sniper's published bound, and at each size our
bound, the verdict and the wall time of the audit, with a last line counting
the rows at or above the published bound.

``--runs R`` repeats the experiment with seeds ``--seed``, ``--seed + 1``, ...
(each run in its own folder, ``<name>_seed<seed>``) and writes a ``table.md``
in ``<name>_shares_<size>`` beside them: per row, its ceiling at that size (the YAML's
``reference.ceiling_<size>``, from ``ceiling.py``), each run's bound and its
share of the ceiling, the mean share, how many runs reach 98% of it, and the
wall time of each run.

``--rows`` keeps only the rows with these labels (the YAML's ``label``), in
folders of their own (``<name>_<labels>_<size>``), to measure one row quickly.  A
trial's seed follows its place in the list, so a row alone draws other
releases than in the whole table: the same law, another draw.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

import yaml

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "dp_sniper.yaml"


def _size(text: str) -> int:
    value = float(text)
    if not value.is_integer() or value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of samples >= 1, got {text!r}")
    return int(value)


def _fmt_size(n: int) -> str:
    exp = int(round(math.log10(n)))
    mant = n / 10 ** exp
    if mant == 1:
        return f"10^{exp}"
    return f"{mant:g}x10^{exp}"


def _params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def table(config: dict, directory: Path) -> str:
    """The Markdown table of a finished (or partial) run in ``directory``."""
    from dpaudit.mechanisms import get_mechanism

    trials = [json.loads(line) for line in (directory / "trials.jsonl").read_text().splitlines() if line.strip()]
    sizes = sorted({t["result"]["samples"] for t in trials})
    by_key = {(t["mechanism"], t["result"]["samples"]): t for t in trials}
    head = ["DP-Sniper row", "our mechanism (params)", "pair", "true eps", "published"]
    for n in sizes:
        head += [f"ours {_fmt_size(n)}", "verdict", "s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    reached = {n: 0 for n in sizes}
    seconds = {n: 0.0 for n in sizes}
    for entry in config["mechanisms"]:
        mech = get_mechanism(entry["mechanism"], **entry["params"])
        d, d2 = mech.neighbouring_pair()
        true = mech.true_epsilon()
        published = entry["reference"]["published"]
        row = [entry["reference"]["paper"], f"`{entry['mechanism']}` ({_params(entry['params'])})",
               f"{d.tolist()} vs {d2.tolist()}".replace(".0,", ",").replace(".0]", "]"),
               "inf" if math.isinf(true) else f"{true:.4g}", f"{published:.4f}"]
        for n in sizes:
            t = by_key.get((entry["label"], n))
            if t is None:
                row += ["-", "-", "-"]
                continue
            lb = t["result"]["epsilon_lower_bound"]
            reached[n] += lb >= published
            seconds[n] += t["elapsed_seconds"]
            mark = "**" if lb >= published else ""
            row += [f"{mark}{lb:.4f}{mark}", t["result"]["verdict"], f"{t['elapsed_seconds']:.0f}"]
        lines.append("| " + " | ".join(row) + " |")
    n_rows = len(config["mechanisms"])
    foot = ["rows >= published", "", "", "", ""]
    for n in sizes:
        foot += [f"{reached[n]} of {n_rows}", "", f"{seconds[n]:.0f}"]
    lines.append("| " + " | ".join(foot) + " |")
    return "\n".join(lines) + "\n"


def shares(config: dict, runs: list[tuple[Path, float]], n: int) -> str:
    """The Markdown table of several runs at one size ``n``: each row's bound per run beside its ceiling."""
    key = f"ceiling_{n:.0e}".replace("+0", "").replace("+", "")
    per_run = []
    for directory, _ in runs:
        trials = [json.loads(line) for line in (directory / "trials.jsonl").read_text().splitlines() if line.strip()]
        per_run.append({t["mechanism"]: t for t in trials if t["result"]["samples"] == n})
    head = ["row", "published", "ceiling"] + [f"run {i + 1}" for i in range(len(runs))] + [
        "mean share", "runs >= 98%"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for entry in config["mechanisms"]:
        ceiling = entry["reference"].get(key)
        bounds = [r[entry["label"]]["result"]["epsilon_lower_bound"] if entry["label"] in r else None
                  for r in per_run]
        cells = [entry["label"], f"{entry['reference']['published']:.4f}",
                 "-" if ceiling is None else f"{ceiling:.4f}"]
        for b in bounds:
            if b is None:
                cells.append("-")
            else:
                cells.append(f"{b:.4f}" + ("" if ceiling is None else f" ({100 * b / ceiling:.0f}%)"))
        done = [b for b in bounds if b is not None]
        if ceiling is None or not done:
            cells += ["-", "-"]
        else:
            cells += [f"{100 * np.mean(done) / ceiling:.1f}%", f"{sum(b >= 0.98 * ceiling for b in done)} of {len(done)}"]
        lines.append("| " + " | ".join(cells) + " |")
    seconds = ["wall s", "", ""] + [f"{w:.0f}" for _, w in runs] + ["", ""]
    lines.append("| " + " | ".join(seconds) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=_size, nargs="+", default=None,
                    help="releases per side, e.g. 1e6 1e7 2e7 (default: the YAML's sweep)")
    ap.add_argument("--out", default="results", help="results folder (default results/)")
    ap.add_argument("--jobs", type=int, default=1, help="trials run in parallel (the results do not depend on it)")
    ap.add_argument("--table", default=None, help="where to write the Markdown table (default results/<name>/table.md)")
    ap.add_argument("--runs", type=int, default=1, help="runs with seeds --seed, --seed + 1, ... (default 1)")
    ap.add_argument("--seed", type=int, default=None, help="seed of the first run (default: the YAML's, 2021)")
    ap.add_argument("--rows", nargs="+", default=None, help="only the rows with these labels (e.g. SVT3 RNM4)")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error(f"--runs must be at least 1; got {args.runs}")

    from dpaudit.runner import run_experiment

    config = yaml.safe_load(CONFIG.read_text())
    if args.rows:
        labels = [e["label"] for e in config["mechanisms"]]
        unknown = [r for r in args.rows if r not in labels]
        if unknown:
            ap.error(f"--rows: unknown label(s) {', '.join(unknown)}; the labels are {', '.join(labels)}")
        config["mechanisms"] = [e for e in config["mechanisms"] if e["label"] in args.rows]
        config["name"] = f"{config['name']}_{'-'.join(args.rows)}"
    if args.sizes:
        config["sweep"] = {"parameters": {"audit.samples": list(args.sizes)}}
        if len(args.sizes) == 1:
            config["name"] = f"{config['name']}_{args.sizes[0]:.0e}".replace("+0", "").replace("+", "")
    seed = config["seed"] if args.seed is None else args.seed
    base = config["name"]
    runs = []
    for r in range(args.runs):
        config["seed"] = seed + r
        if args.runs > 1 or args.seed is not None:
            config["name"] = f"{base}_seed{seed + r}"
        directory = Path(args.out) / config["name"]
        start = time.perf_counter()
        outcome = run_experiment(config, out=args.out, n_jobs=args.jobs, resume=directory.exists())
        runs.append((outcome.directory, time.perf_counter() - start))
        text = table(config, outcome.directory)
        target = Path(args.table) if args.table and args.runs == 1 else outcome.directory / "table.md"
        target.write_text(text)
        print(text)
        print(f"(table written to {target}; {runs[-1][1]:.0f} s of wall time)", file=sys.stderr)
    sizes = sorted({int(n) for n in config["sweep"]["parameters"]["audit.samples"]})
    for n in sizes:
        text = shares(config, runs, n)
        target = Path(args.out) / f"{base}_shares_{n:.0e}".replace("+0", "").replace("+", "") / "table.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        print(text)
        print(f"(shares written to {target})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
