"""dpaudit.audit(..., stopping="anytime"): the report, the stops (violation, budget, time, Ctrl-C) and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpaudit
from _cli import cli
from dpaudit.exceptions import ParameterValueError


def non_dp_mean(dataset, size=None, rng=None):
    """DP-Auditorium's non_private_mean_v1 at epsilon 0.1: noise scaled by the true count (not DP at all)."""
    n = len(dataset)
    return float(np.sum(np.clip(dataset, 0, 1))) / n + rng.laplace(0.0, 1.0 / (0.1 * n), size=size)


def laplace_sum(dataset, size=None, rng=None):
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)


def test_a_broken_mean_is_caught_within_a_few_hundred_releases():
    r = dpaudit.audit(non_dp_mean, [0], [0, 1], epsilon=0.1, seed=3, stopping="anytime")
    assert r.verdict == "violation" and r.stopping_reason == "violation"
    assert r.epsilon_lower_bound > 0.1 and r.samples <= 500
    assert r.stopping == "anytime" and r.anytime["valid_at_any_time"] and r.anytime["releases_seen"] == r.samples
    assert r.anytime["e_value"] >= r.anytime["threshold"]
    assert "anytime-valid" in r.summary()
    json.dumps(r.to_dict(), allow_nan=False)


def test_a_correct_mechanism_runs_to_its_budget_with_a_valid_bound():
    r = dpaudit.audit(laplace_sum, [0, 1], [0, 0], epsilon=1.0, seed=4, stopping="anytime", max_samples=5000)
    assert r.verdict == "no violation found" and r.stopping_reason == "budget" and r.samples == 5000
    assert 0.0 <= r.epsilon_lower_bound <= 1.0


def test_samples_and_anytime_exclude_each_other():
    with pytest.raises(ParameterValueError, match="stopping"):
        dpaudit.audit(laplace_sum, [0, 1], [0, 0], epsilon=1.0, samples=1000, stopping="anytime")


def test_interrupt_reports_the_looks_done():
    calls = {"n": 0}

    def flaky(dataset, rng=None):
        calls["n"] += 1
        if calls["n"] > 120:
            raise KeyboardInterrupt
        return float(np.sum(dataset)) + rng.laplace(0.0, 1.0)

    with pytest.raises(KeyboardInterrupt) as info:
        dpaudit.audit(flaky, [0, 1], [0, 0], epsilon=1.0, seed=5, stopping="anytime")
    rep = info.value.audit_report
    assert rep is not None and rep.interrupted and rep.stopping_reason == "budget"
    assert 0 < rep.samples < 60 and rep.anytime["releases_seen"] == rep.samples


def test_cli_flag_and_json(capsys):
    code, out, err = cli(capsys, "audit", "tests/auditor/test_anytime_audit.py:non_dp_mean", "--dataset", "[0]",
                         "--neighbor", "[0,1]", "--epsilon", "0.1", "--seed", "3", "--stopping", "anytime", "--json")
    assert code == 1, err
    d = json.loads(out)
    assert d["verdict"] == "violation" and d["stopping"] == "anytime" and d["anytime"]["looks"] >= 1
    for key in ("epsilon_lower_bound", "claimed_epsilon", "claimed_delta", "confidence", "samples", "floating_point",
                "stopping_reason", "attack", "seed", "ceiling"):
        assert key in d


def test_score_stream_from_an_iterator_stops_on_the_violation():
    rng = np.random.default_rng(0)

    def pairs():
        while True:  # an endless stream: the audit must stop by itself
            yield rng.normal(1.0, 1.0), rng.normal(0.0, 1.0)

    r = dpaudit.audit_scores(pairs(), claim="gdp:mu=0.5", seed=1)
    assert r.verdict == "violation" and r.stopping == "anytime" and r.samples < 2000
    assert r.samples_in == r.samples_out == r.samples
    # The curve's violation is reported as every certificate reports one: its witness and the whole grid's margin.
    v = r.curve_violation
    assert v["epsilon_lower_bound"] == r.epsilon_lower_bound > v["claimed_epsilon"] == r.claimed_epsilon
    assert v["delta"] == r.claimed_delta and v["margin"] >= r.epsilon_lower_bound - r.claimed_epsilon > 0
    assert v["points_tested"] >= 2 and v["certified_delta"] >= v["delta"]


def test_the_e_process_certificate_decides_by_the_curve_rules():
    from dpaudit.stats.anytime import EProcess, EProcessBounds

    claim = "gdp:mu=1"
    held = EProcessBounds(epsilons=(2.0, 1.0, 0.0), deltas=(1e-6, 1e-3, 0.2), certified=(1.5, 0.5, 0.0), ceiling=3.0)
    r = EProcess().certify(held, claim, confidence=0.9)
    assert not r.violation and r.margin == 0.0 and r.ceiling == 3.0 and r.method == "e-process"
    assert r.witness == (1.5, 1e-6)  # no violation: the closest approach (largest certified / claimed)
    crossed = EProcessBounds(epsilons=(2.0, 1.0, 0.0), deltas=(1e-6, 1e-3, 0.2), certified=(1.5, 1.2, 0.0),
                             ceiling=3.0)
    r = EProcess().certify(crossed, claim, confidence=0.9)
    assert r.violation and r.witness == (1.2, 1e-3) and abs(r.margin - 0.2) < 1e-12
    with pytest.raises(dpaudit.exceptions.ParameterTypeError, match="EProcessBounds"):
        EProcess().certify(object(), claim, confidence=0.9)


def test_score_arrays_as_a_stream_and_bad_input():
    rng = np.random.default_rng(1)
    r = dpaudit.audit_scores(rng.normal(1, 1, 2000), rng.normal(0, 1, 2500), claim="gdp:mu=1", seed=2,
                             stopping="anytime")
    assert r.verdict == "no violation found" and r.samples == 2000 and r.stopping_reason == "budget"
    with pytest.raises(ParameterValueError, match="out_scores"):
        dpaudit.audit_scores(rng.normal(0, 1, 100), epsilon=1.0)
    with pytest.raises(ParameterValueError, match="max_samples"):
        dpaudit.audit_scores(rng.normal(0, 1, 100), rng.normal(0, 1, 100), epsilon=1.0, max_samples=50)


def test_cli_scores_anytime(capsys, tmp_path):
    rng = np.random.default_rng(3)
    np.save(tmp_path / "in.npy", rng.normal(1, 1, 3000))
    np.save(tmp_path / "out.npy", rng.normal(0, 1, 3000))
    code, out, err = cli(capsys, "scores", tmp_path / "in.npy", tmp_path / "out.npy", "--claim", "gdp:mu=0.5",
                         "--stopping", "anytime", "--seed", "1", "--json")
    assert code == 1, err
    d = json.loads(out)
    assert d["verdict"] == "violation" and d["anytime"]["valid_at_any_time"] and d["samples"] < 3000


def test_time_budget_keeps_every_finished_look():
    import time as _time

    def slow(dataset, rng=None):
        _time.sleep(0.002)
        return float(np.sum(dataset)) + rng.laplace(0.0, 1.0)

    r = dpaudit.audit(slow, [0, 1], [0, 0], epsilon=1.0, seed=6, stopping="anytime", time_budget=0.5)
    assert r.stopping_reason == "budget" and 0 < r.samples < 20_000 and r.time_budget == 0.5
    assert r.anytime["releases_seen"] == r.samples and r.epsilon_lower_bound <= 1.0


def test_yaml_audit_stopping_anytime(tmp_path):
    from dpaudit.results import TRIALS_FILE, read_trials
    from dpaudit.runner import run_experiment

    cfg = {"name": "a", "seed": 3, "mechanisms": ["histogram_scale_bug"],
           "audit": {"stopping": "anytime", "max_samples": 5000, "ideal": True}}
    out = run_experiment(cfg, out=tmp_path, draw=False, echo=lambda s: None)
    (trial,) = read_trials(out.directory / TRIALS_FILE)
    r = trial["result"]
    assert r["stopping"] == "anytime" and r["verdict"] == "violation" and r["samples"] <= 5000


def test_vector_releases_use_fitted_witnesses():
    # svt_lyu_alg5 (no query noise, no cutoff) releases a vector; the planned audit needs its first round of 2,000.
    r = dpaudit.audit("svt_lyu_alg5", epsilon=1.0, seed=2, stopping="anytime", max_samples=20_000)
    assert r.verdict == "violation" and r.output_kind == "vector" and r.samples <= 500
