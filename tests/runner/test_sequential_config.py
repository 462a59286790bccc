"""YAML audits: ``audit.samples: auto`` (sequential, within ``max_samples`` / ``time_budget``) or an integer (fixed)."""

from __future__ import annotations

import json

import pytest

from dpaudit.exceptions import ConfigError
from dpaudit.runner import load_config, run_experiment

QUIET = dict(echo=lambda s: None, progress=False, draw=False)


def _cfg(audit):
    return {"name": "seq", "seed": 1, "trials": 1, "mechanisms": [{"mechanism": "unclipped_sum"}], "audit": audit}


def test_samples_defaults_to_auto_and_accepts_integer_forms():
    assert load_config(_cfg({})).resolved["audit"] == {"samples": "auto", "max_samples": None, "time_budget": None,
                                                       "keep_drawing": False, "attack": "auto", "ideal": False,
                                                       "claim": None, "grey_box": False, "traces": 1000,
                                                       "stopping": "planned"}
    assert load_config(_cfg({"samples": "1e4"})).resolved["audit"]["samples"] == 10_000  # YAML reads 1e4 as text
    assert load_config(_cfg({"samples": None, "max_samples": 5000})).resolved["audit"]["max_samples"] == 5000


@pytest.mark.parametrize("audit, key_path, words", [
    ({"samples": 1000, "max_samples": 5000}, "audit.max_samples", "fixed-size audit (samples: 1000) takes no"),
    ({"samples": 1000, "time_budget": 10}, "audit.time_budget", "takes no time_budget"),
    ({"samples": 1000, "keep_drawing": True}, "audit.keep_drawing", "takes no keep_drawing"),
    ({"samples": "lots"}, "audit.samples", "expected 'auto' or an integer in [20, 1e+15], got 'lots'"),
    ({"samples": 10**16}, "audit.samples", "expected 'auto' or an integer in [20, 1e+15], got 10000000000000000"),
    ({"max_samples": 10}, "audit.max_samples", "an integer in [40, 1e+15], got 10"),
    ({"time_budget": 0}, "audit.time_budget", "> 0"),
])
def test_bad_sample_settings_name_their_key(audit, key_path, words):
    with pytest.raises(ConfigError) as info:
        load_config(_cfg(audit))
    assert str(info.value).startswith(key_path) and words in str(info.value)


@pytest.mark.parametrize("value", ["lots", 5, 10**16])
def test_yaml_samples_states_the_range_the_command_line_states(value, capsys):
    from dpaudit.cli import main

    assert main(["audit", "laplace", "--epsilon", "1", "--samples", "5"]) == 2
    cli_range = capsys.readouterr().err.split("must be an integer ")[1].split(";")[0]
    with pytest.raises(ConfigError) as info:
        load_config(_cfg({"samples": value}))
    assert cli_range == "in [20, 1e+15]" and f"an integer {cli_range}, got " in str(info.value)


def test_auto_runs_a_sequential_audit_and_an_integer_a_fixed_one(tmp_path):
    seq = run_experiment(_cfg({"samples": "auto", "max_samples": 20_000, "time_budget": 60}), out=tmp_path / "a",
                         **QUIET)
    fixed = run_experiment(_cfg({"samples": 4000}), out=tmp_path / "b", **QUIET)
    (t_seq,) = [json.loads(line)["result"] for line in (seq.directory / "trials.jsonl").read_text().splitlines()]
    (t_fix,) = [json.loads(line)["result"] for line in (fixed.directory / "trials.jsonl").read_text().splitlines()]
    # The unclipped sum (true epsilon 5, claim 1) is flagged in the first round of 2,000 per side.
    assert (t_seq["stopping_reason"], t_seq["samples"], t_seq["max_samples"]) == ("violation", 2000, 20_000)
    assert (t_fix["stopping_reason"], t_fix["samples"], t_fix["rounds"]) == ("fixed", 4000, 1)


def test_keep_drawing_runs_a_violating_trial_to_its_budget(tmp_path):
    # The unclipped sum is flagged in the first round; with keep_drawing it draws on to max_samples.
    out = run_experiment(_cfg({"max_samples": 8000, "keep_drawing": True}), out=tmp_path, **QUIET)
    (t,) = [json.loads(line)["result"] for line in (out.directory / "trials.jsonl").read_text().splitlines()]
    assert (t["stopping_reason"], t["samples"], t["verdict"]) == ("budget", 8000, "violation")
