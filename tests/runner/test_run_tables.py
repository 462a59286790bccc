"""The table ``dpaudit run`` prints fits 100 columns and shows counts as whole numbers (issue 44, item 8).

The search, training, scores and tracing kinds printed 15 to 23 columns, about 280 characters, with counts such
as ``fn 4.122e+04`` and ``tp 998.5`` (the mean of two trials' 1000 and 997).  Each kind runs here on a small
config shaped like its shipped one (a sweep, several trials); counts above 10^4, which took e-notation, are
checked on a summary of known values (they cost seconds to draw).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from dpaudit.runner import run_experiment
from dpaudit.runner._table import TABLE_WIDTH
from dpaudit.runner.summary import format_table

ROOT = Path(__file__).resolve().parents[2]
QUIET = dict(echo=lambda s: None, progress=False, draw=False)

_rng = np.random.default_rng(3)
SMALL = {
    "scores": {"trials": 2, "attack": {"name": "scores", "params": {
        "in_scores": (_rng.normal(size=4000) + 1).tolist(), "out_scores": _rng.normal(size=4000).tolist(),
        "claim": "gdp:mu=0.5"}}},
    "search": {"trials": 2, "attack": {"name": "search", "params": {"target": "laplace", "size": 3, "low": 0,
                                                                  "high": 10,
                                                                  "max_samples": 4000}},
               "sweep": {"parameters": {"attack.params.target": ["laplace", "unclipped_sum"]}}},
    "tracing": {"trials": 2, "attack": {"name": "tracing", "params": {"n": 20, "n_targets": 40, "noise": "gaussian",
                                                                    "threshold": "calibrated"}},
                "sweep": {"mode": "grid", "parameters": {"attack.params.d": [30, 100],
                                                          "attack.params.alpha": [0.05, 0.2]}}},
    # One trial (about 3 s of CPU); its metrics alone made the 285-character table.
    "training": {"trials": 1, "attack": {"name": "training", "params": {"epsilon": 2, "samples": 2000,
                                                                      "variant": "batch-clip"}}},
}


def _whole(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer() for v in values)


@pytest.mark.parametrize("kind", sorted(SMALL))
def test_the_table_fits_100_columns_and_counts_are_whole(kind, tmp_path):
    out = run_experiment({"name": f"t_{kind}", "seed": 7, **SMALL[kind]}, out=tmp_path, **QUIET)
    lines = out.table.splitlines()
    assert max(map(len, lines)) <= TABLE_WIDTH, out.table
    assert not re.search(r"\d[eE][+]\d", out.table), out.table  # no 4.122e+04
    # The table it replaced was wider: the columns left out are still in summary.json.
    full = format_table(out.summary, json.loads(json.dumps(out.summary)) and _config(out), width=None)
    assert max(map(len, full.splitlines())) > TABLE_WIDTH
    # Every count (whole numbers in every trial, some above 1) is shown as a whole number.
    results = [json.loads(line)["result"] for line in (out.directory / "trials.jsonl").read_text().splitlines()]
    header, _, *rows = lines
    names = header.split()
    counts = [k for k in names if k in results[0] and _whole(r.get(k) for r in results)
              and max(r[k] for r in results) > 1]
    for name in counts:
        at = re.search(rf"(?<!\S){re.escape(name)}(?!\S)", header).start()  # the column, not a substring
        for row in rows:
            assert re.fullmatch(r"\d+", row[at:].split()[0]), (name, row)
    # What a reader needs first: the bound and the claim.
    assert "eps_lower_bound" in names and "claimed_eps" in names


def _config(outcome) -> dict:
    import yaml

    return yaml.safe_load((outcome.directory / "config.resolved.yaml").read_text())


def test_a_mean_of_counts_is_rounded_to_a_count():
    # search's two trials of unclipped_sum: 1000 and 997 true positives were printed "tp 998.5"; training's
    # 41220 false negatives "fn 4.122e+04".
    summary = {"kind": "rr_tradeoff", "confidence": 0.95, "sweep": {"parameters": []}, "groups": [
        {"n_trials": 2, "sweep": {}, "metrics": {"tp": {"mean": 998.5, "min": 997.0, "max": 1000.0},
                                                 "fn": {"mean": 41220.0, "min": 41220.0, "max": 41220.0},
                                                 "tpr": {"mean": 0.5, "min": 0.0, "max": 1.0}},
         "rmse": 0.1, "rmse_low": 0.05, "rmse_high": 0.2}]}
    table = format_table(summary, {})
    row = table.splitlines()[2].split()
    assert row[:4] == ["2", "998", "41220", "0.5"], table
