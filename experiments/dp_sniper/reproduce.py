"""Run DP-Sniper's table and write it beside the published bounds.

    python experiments/dp_sniper/reproduce.py                      # 10^6, 10^7, 2 x 10^7 per side
    python experiments/dp_sniper/reproduce.py --sizes 1e6 --jobs 2 # the quick version

It runs ``dp_sniper.yaml`` through the experiment runner (so the results are
the runner's: ``results/<name>/trials.jsonl``, ``summary.json`` and the
``epsilon_vs_claimed`` figure; an interrupted run resumes), with the sample
sizes of ``--sizes`` in place of the YAML's sweep, then writes a Markdown table
(``--table``, default ``results/<name>/table.md``) and prints it: for each of
the 20 rows, our mechanism, DP-Sniper's published bound, and at each size our
bound, the verdict and the wall time of the audit, with a last line counting
the rows at or above the published bound.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=_size, nargs="+", default=None,
                    help="releases per side, e.g. 1e6 1e7 2e7 (default: the YAML's sweep)")
    ap.add_argument("--out", default="results", help="results folder (default results/)")
    ap.add_argument("--jobs", type=int, default=1, help="trials run in parallel (the results do not depend on it)")
    ap.add_argument("--table", default=None, help="where to write the Markdown table (default results/<name>/table.md)")
    args = ap.parse_args(argv)

    from dpaudit.runner import run_experiment

    config = yaml.safe_load(CONFIG.read_text())
    if args.sizes:
        config["sweep"] = {"parameters": {"audit.samples": list(args.sizes)}}
        if len(args.sizes) == 1:
            config["name"] = f"{config['name']}_{args.sizes[0]:.0e}".replace("+0", "").replace("+", "")
    directory = Path(args.out) / config["name"]
    outcome = run_experiment(config, out=args.out, n_jobs=args.jobs, resume=directory.exists())
    text = table(config, outcome.directory)
    target = Path(args.table) if args.table else outcome.directory / "table.md"
    target.write_text(text)
    print(text)
    print(f"(table written to {target})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
