"""What the figures draw, checked on their data: every round of every trial, both loops, the one-run audit.

Results folders are written by hand (config, trials, summary, as the runner leaves them) so that the
counts are known; the one-run configs shipped in configs/ are run for real (they take a second).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpaudit.plots import FIGURES
from dpaudit.plots.style import paper_style
from dpaudit.results import load_results

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path, cfg, records, groups, sweep_paths):
    (tmp_path / "config.resolved.yaml").write_text(yaml.safe_dump(cfg))
    (tmp_path / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "summary.json").write_text(json.dumps({"groups": groups, "sweep": {"parameters": sweep_paths}}))
    return load_results(tmp_path)


def _draw(name, results, **kw):
    with paper_style():
        fig = FIGURES[name](results, size="one-column", **kw)
        fig.canvas.draw()
    return fig


def _search_like(tmp_path):
    """configs/search.yaml's shape: two targets swept, two trials each; the broken one stops in round 1."""
    rounds = {"laplace": [[2000, 4000, 8000, 16000, 20000], [2000, 4000, 8000, 16000]],
              "unclipped_sum": [[2000], [2000]]}
    records, groups = [], []
    for p, (target, trials) in enumerate(rounds.items()):
        sweep = {"attack.params.target": target}
        for j, samples in enumerate(trials):
            bounds = np.linspace(0.5, 0.9, len(samples)) if target == "laplace" else [5.2]
            records.append({"index": len(records), "point": p, "repetition": j, "mechanism": None, "sweep": sweep,
                            "result": {"target": target, "claimed_epsilon": 1.0, "claimed_delta": 0.0,
                                       "confidence": 0.95, "epsilon_lower_bound": float(bounds[-1]),
                                       "stopping_reason": "budget" if target == "laplace" else "violation",
                                       "trajectory": {"samples": samples, "epsilon_lower_bound": list(map(float, bounds))}}})
        groups.append({"point": p, "sweep": sweep, "mechanism": None, "n_trials": len(trials)})
    cfg = {"name": "search", "attack": {"name": "search", "params": {}}, "plot": {"figures": ["trajectory"]},
           "sweep": {"mode": "grid", "parameters": {"attack.params.target": list(rounds)}}}
    return _write(tmp_path, cfg, records, groups, ["attack.params.target"]), rounds


def _drawn_rounds(fig) -> list[int]:
    return [len(line.get_xdata()) for line in fig.axes[0].get_lines() if line.get_gid() == "trajectory"]


def test_the_search_trajectory_draws_every_round_of_every_trial(tmp_path):
    results, rounds = _search_like(tmp_path)
    fig = _draw("trajectory", results)
    expected = [len(s) for trials in rounds.values() for s in trials]
    assert sorted(_drawn_rounds(fig)) == sorted(expected)  # 5 + 4 + 1 + 1 rounds, one marker each
    assert all(line.get_marker() not in (None, "None", "") for line in fig.axes[0].get_lines()
               if line.get_gid() == "trajectory")
    left, right = fig.axes[0].get_xlim()
    assert left <= 0 and right >= 20000  # not the +-5% axis around 2000 that one point gave
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert any("laplace" in t for t in labels) and any("unclipped_sum" in t for t in labels), labels
    # --point draws one sweep point, named in the title
    fig = _draw("trajectory", results, point=2)
    assert sorted(_drawn_rounds(fig)) == [1, 1]
    assert "sweep point 2 of 2: target = unclipped_sum" in fig.axes[0].get_title(loc="left").replace("\n", " ")


def test_a_broken_loop_and_the_correct_one_against_one_claim_are_drawn_together(tmp_path):
    # configs/training.yaml: the sweep is over the loop; both are audited against one accountant curve.
    spec = "dpsgd:noise=2.385,rate=0.5,steps=4"
    deltas = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1]
    records, groups = [], []
    for p, (variant, level) in enumerate([("correct", 0.7), ("batch-clip", 1.8)]):
        sweep = {"attack.params.variant": variant}
        records.append({"index": p, "point": p, "repetition": 0, "mechanism": None, "sweep": sweep, "result": {
            "claim": spec, "claimed_epsilon": 1.0, "claimed_delta": 0.03, "confidence": 0.95, "samples": 20000,
            "privacy_profile": {"delta": deltas, "epsilon": [level] * len(deltas), "confidence": 0.95},
            "claim_curve": {"delta": deltas, "claimed_epsilon": [2.4, 2.0, 1.7, 1.3, 0.8, 0.2]}}})
        groups.append({"point": p, "sweep": sweep, "mechanism": None, "n_trials": 1,
                       "broken": variant != "correct"})
    cfg = {"name": "training", "attack": {"name": "training", "params": {}}, "plot": {"figures": ["privacy_profile"]},
           "sweep": {"mode": "grid", "parameters": {"attack.params.variant": ["correct", "batch-clip"]}}}
    results = _write(tmp_path, cfg, records, groups, ["attack.params.variant"])
    fig = _draw("privacy_profile", results)
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert any("correct" in t for t in labels) and any("batch-clip" in t for t in labels), labels
    assert sum("claimed curve" in t for t in labels) == 1  # the shared claim once
    levels = {round(float(line.get_ydata()[0]), 6) for line in fig.axes[0].get_lines()
              if len(line.get_ydata()) == len(deltas) and line.get_linestyle() == "-"}
    assert {0.7, 1.8} <= levels
    # --point 1 draws the correct loop alone
    fig = _draw("privacy_profile", results, point=1)
    assert "variant = correct" in fig.axes[0].get_title(loc="left")
    levels = {round(float(line.get_ydata()[0]), 6) for line in fig.axes[0].get_lines()
              if len(line.get_ydata()) == len(deltas) and line.get_linestyle() == "-"}
    assert levels == {0.7}


# Each run draws and saves its figure (PDF and PNG): seconds; the default suite runs the curve claims'.
@pytest.mark.parametrize("config", [pytest.param("one_run.yaml", marks=pytest.mark.slow), "one_run_curve.yaml"])
def test_the_one_run_configs_write_a_figure_of_their_guesses(config, tmp_path, monkeypatch):
    from dpaudit.runner import run_experiment

    monkeypatch.chdir(ROOT)  # the configs name their score files from the repository's root
    outcome = run_experiment(str(ROOT / "configs" / config), out=tmp_path, echo=lambda s: None, progress=False)
    png = [p for p in outcome.figures if p.suffix == ".png"]
    assert [p.name for p in png] == ["one_run.png"] and png[0].stat().st_size > 1000
    fig = _draw("one_run", load_results(outcome.directory))
    ax_precision, ax_bound = fig.axes
    records = [json.loads(line)["result"] for line in (outcome.directory / "trials.jsonl").read_text().splitlines()]
    tests = sorted({(row["guesses"], row["correct"]) for row in records[0]["tests"]})
    (bars,) = ax_precision.containers  # one precision series: the scores are the same for every claim
    x, y = bars.lines[0].get_data()
    assert sorted(zip(x, np.round(y, 9))) == [(g, round(c / g, 9)) for g, c in tests]
    stars = [line for line in ax_bound.get_lines() if line.get_marker() == "*" and len(line.get_xdata()) == 1]
    reported = sorted((r["guesses"], round(r["epsilon_lower_bound"], 9)) for r in records)
    assert sorted((s.get_xdata()[0], round(s.get_ydata()[0], 9)) for s in stars) == reported
    labels = " ".join(t.get_text() for leg in fig.legends for t in leg.get_texts()).replace("\n", " ")
    for r in records:  # every claim and its verdict is named
        assert ("violation" if r["verdict"] == "violation" else "no violation") in labels


def test_the_reconstruction_panels_do_not_share_a_colour(tmp_path):
    records, groups = [], []
    for p, (b, k) in enumerate([(b, k) for b in (0.5, 1.0, 2.5, 5.0, 10.0) for k in (100, 200, 400)]):
        sweep = {"attack.params.noise_scale": b, "attack.params.k": k}
        metric = {"mean": 0.9, "ci_low": 0.85, "ci_high": 0.95}
        groups.append({"point": p, "sweep": sweep, "mechanism": None, "n_trials": 2,
                       "metrics": {"accuracy": metric}})
    cfg = {"name": "reconstruction", "attack": {"name": "reconstruction", "params": {
        "n": 100, "noise": "laplace", "noise_scale": 1.0, "k": 100}}, "plot": {"figures": ["reconstruction"]},
        "sweep": {"mode": "grid", "parameters": {}}}
    results = _write(tmp_path, cfg, records, groups, ["attack.params.noise_scale", "attack.params.k"])
    fig = _draw("reconstruction", results)
    colours = [{c.lines[0].get_color() for c in ax.containers} for ax in fig.axes[:2]]
    assert len(colours[0]) == 3 and len(colours[1]) == 5
    assert not colours[0] & colours[1]  # a colour means queries in one panel and noise in the other: never both


def test_a_mechanism_drawn_at_several_sweep_points_is_told_apart(tmp_path):
    # An audit sweep over epsilon: "laplace (stopped: budget)" three times over, in one colour, named nothing.
    records, groups = [], []
    for p, eps in enumerate([0.5, 1.0, 2.0]):
        sweep = {"mechanisms.laplace.params.epsilon": eps}
        records.append({"index": p, "point": p, "repetition": 0, "mechanism": "laplace", "sweep": sweep, "result": {
            "claimed_epsilon": eps, "claimed_delta": 0.0, "confidence": 0.95, "stopping_reason": "budget",
            "trajectory": {"samples": [2000, 4000], "epsilon_lower_bound": [0.5 * eps, 0.8 * eps]}}})
        groups.append({"point": p, "sweep": sweep, "mechanism": "laplace", "n_trials": 1})
    cfg = {"name": "seq", "mechanisms": [{"label": "laplace", "mechanism": "laplace"}], "plot": {},
           "sweep": {"mode": "zip", "parameters": {"mechanisms.laplace.params.epsilon": [0.5, 1.0, 2.0]}}}
    fig = _draw("trajectory", _write(tmp_path, cfg, records, groups, ["mechanisms.laplace.params.epsilon"]))
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts() if t.get_text().startswith("laplace")]
    assert labels == [f"laplace (epsilon={e}; stopped: budget)" for e in ("0.5", "1", "2")]
    colours = {line.get_color() for line in fig.axes[0].get_lines() if line.get_gid() == "trajectory"}
    assert len(colours) == 3
