"""Soundness of a survey row (search + ideal audit) on correct mechanisms wrapped as library entries.

A row's two verdicts each hold at the row's confidence (0.95 here): for a mechanism that keeps its claim,
each says "violation" with probability at most 0.05.  Over 200 seeded rows of each correct entry, the count
of violations must stay within the binomial(200, 0.05) allowance at level 1e-3 (21); in practice it is near 0,
since the searched pairs' true epsilon is at most the claim.  Every entry releases floats, so each row's
implementation verdict is the search's audit and the float pass (:mod:`dpaudit.survey.float_pass`) at half the
failure probability each.  The rows run in this process
(:func:`dpaudit.survey.worker.run_task`, what each worker runs), not in subprocesses, to keep the cost to the
audits themselves.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy import stats

from dpaudit.survey.worker import run_task

DATA = str(Path(__file__).parent / "data")
SEEDS = 200
ALLOWANCE = int(stats.binom.ppf(1 - 1e-3, SEEDS, 0.05))

CORRECT = {
    "mean": {"function": "toylib.mean", "call": {}, "params": {"epsilon": 1.0, "bounds": [0, 1]},
             "relation": "replace-one"},
    "laplace": {"function": "toylib.Laplace", "call": {"method": "randomise", "statistic": "sum"},
                "params": {"epsilon": 1.0, "sensitivity": 1.0}, "relation": "add-remove"},
    # Exact float arithmetic on a grid: the float pass runs (float releases) and must keep its share.
    "grid_sum": {"function": "toylib.grid_sum", "call": {}, "params": {"epsilon": 1.0}, "relation": "add-remove"},
}


def _task(entry: dict, seed: int) -> dict:
    case = dict(entry, epsilon=1.0, delta=0.0, domain={"size": 2, "low": 0.0, "high": 1.0, "integer": False},
                dataset=None, neighbor=None, max_samples=2000, confidence=0.95)
    return {"case": case, "seed": seed, "paths": [DATA]}


def test_one_seeded_row_of_a_correct_entry_passes():
    out = run_task(_task(CORRECT["mean"], 11))
    assert out["error"] is None
    assert out["ideal"]["verdict"] == out["implementation"]["verdict"] == "no violation found"


@pytest.mark.soundness
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_entries_rarely_flagged_over_200_seeds(name):
    flagged = {"ideal": 0, "implementation": 0}
    for seed in range(SEEDS):
        out = run_task(_task(CORRECT[name], seed))
        assert out["error"] is None, out["error"]
        for key in flagged:
            flagged[key] += out[key]["verdict"] == "violation"
    print(f"{name}: flagged {flagged} of {SEEDS} rows (allowed {ALLOWANCE} each)")
    assert flagged["ideal"] <= ALLOWANCE and flagged["implementation"] <= ALLOWANCE, (flagged, ALLOWANCE)
