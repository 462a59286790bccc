"""``dpaudit run``: a trial's bad input exits 2, a bug inside a trial exits 3, in process and in loky workers.

Every exception in a trial once became a TrialError (a DPAuditError), so a bug of ours read as "bad input".
"""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest
import yaml

from _cli import cli, one_line
from dpaudit.cli import main
from dpaudit.exceptions import DPAuditError, ParameterValueError
from dpaudit.runner import ExperimentConfig, TrialError, TrialInternalError
from dpaudit.runner.kinds import get_kind
from dpaudit.runner.kinds.base import KINDS


def _trials(directory) -> list[int]:
    lines = (directory / "trials.jsonl").read_text().splitlines()
    return sorted(json.loads(line)["index"] for line in lines if line.strip())


def _third_trial_raises(monkeypatch, exc):
    """rr_tradeoff's run_trial, raising ``exc`` on its third call (trials 0 and 1 finish first, serially)."""
    kind = get_kind("rr_tradeoff")
    calls = []

    def run_trial(config, mechanism, seed):
        calls.append(1)
        if len(calls) == 3:
            raise exc
        return kind.run_trial(config, mechanism, seed)

    monkeypatch.setitem(KINDS, "rr_tradeoff", dataclasses.replace(kind, run_trial=run_trial))


def test_a_bug_in_a_trial_exits_3_naming_the_trial_and_keeps_the_trials_before(monkeypatch, capsys, tmp_path,
                                                                               tiny_yaml):
    monkeypatch.delenv("DPAUDIT_DEBUG", raising=False)
    _third_trial_raises(monkeypatch, ZeroDivisionError("division by zero"))
    cfg = tiny_yaml()
    code, out, err = cli(capsys, "run", cfg, "--out", tmp_path, "--no-plots")
    line = one_line(err)
    assert code == 3 and out == ""
    assert line.startswith("dpaudit: internal error: TrialInternalError: trial 2 (attack.params.epsilon=")
    assert line.endswith("failed: ZeroDivisionError: division by zero (set DPAUDIT_DEBUG=1 for a traceback)")
    assert _trials(tmp_path / "tiny") == [0, 1]
    monkeypatch.undo()  # the bug fixed: --resume runs the other ten
    code, out, _ = cli(capsys, "run", cfg, "--out", tmp_path, "--no-plots", "--resume")
    assert code == 0 and "(10 run, 2 resumed)" in out


def test_bad_input_in_a_trial_still_exits_2(monkeypatch, capsys, tmp_path, tiny_yaml):
    monkeypatch.delenv("DPAUDIT_DEBUG", raising=False)
    _third_trial_raises(monkeypatch, ParameterValueError("n: expected at most 10"))
    code, out, err = cli(capsys, "run", tiny_yaml(), "--out", tmp_path, "--no-plots")
    line = one_line(err)
    assert code == 2 and out == "" and line.startswith("dpaudit: error: trial 2 (")
    assert line.endswith("failed: ParameterValueError: n: expected at most 10")
    assert _trials(tmp_path / "tiny") == [0, 1]


def test_debug_reaches_the_traceback_of_a_bug_in_a_trial(monkeypatch, tmp_path, tiny_yaml):
    monkeypatch.setenv("DPAUDIT_DEBUG", "1")
    _third_trial_raises(monkeypatch, ZeroDivisionError("division by zero"))
    with pytest.raises(TrialInternalError, match="^trial 2 ") as info:
        main(["run", str(tiny_yaml()), "--out", str(tmp_path), "--no-plots"])
    assert isinstance(info.value.__cause__, ZeroDivisionError) and info.value.__cause__.__traceback__ is not None


def test_a_users_target_that_raises_is_bad_input(capsys, tmp_path):
    # The sampler wraps whatever a user's target raises as a TargetError: the trial's error is the user's.
    (tmp_path / "mech.py").write_text("def release(data, rng):\n    raise ValueError('my bug')\n")
    cfg = {"name": "user", "seed": 1, "mechanisms": [{"target": "mech.py:release", "epsilon": 1.0,
                                                      "dataset": [0, 1], "neighbor": [0]}],
           "audit": {"samples": 200}}
    (tmp_path / "user.yaml").write_text(yaml.safe_dump(cfg))
    code, _, err = cli(capsys, "run", tmp_path / "user.yaml", "--out", tmp_path / "out", "--no-plots")
    line = one_line(err)
    assert code == 2 and line.startswith("dpaudit: error: trial 0 (no sweep, mechanism 'mech.py:release') failed: "
                                         "TargetError")
    assert "raised ValueError: my bug" in line


def test_both_statuses_come_back_from_loky_workers(monkeypatch, capsys, tmp_path, tiny_yaml):
    # Trial 5's task is spoiled in this process and fails in a worker; the exception crosses the pickle.
    monkeypatch.delenv("DPAUDIT_DEBUG", raising=False)
    task = ExperimentConfig.task

    def spoiled(spoil):
        def make(self, trial):
            out = task(self, trial)
            if trial.index == 5:
                out = copy.deepcopy(out)
                spoil(out["config"]["attack"]["params"])
            return out
        return make

    cfg = tiny_yaml()
    # a config value no validated config holds: a KeyError inside the kind, ours to fix
    monkeypatch.setattr(ExperimentConfig, "task", spoiled(lambda params: params.pop("repetitions")))
    code, _, err = cli(capsys, "run", cfg, "--out", tmp_path / "a", "--no-plots", "--jobs", "2")
    assert code == 3 and one_line(err).startswith("dpaudit: internal error: TrialInternalError: trial 5 (")
    assert "failed: KeyError: 'repetitions'" in err
    # the kind's own check of the value (a ConfigError) in the worker: bad input
    monkeypatch.setattr(ExperimentConfig, "task", spoiled(lambda params: params.update(epsilon=None, p=None)))
    code, _, err = cli(capsys, "run", cfg, "--out", tmp_path / "b", "--no-plots", "--jobs", "2")
    assert code == 2 and one_line(err).startswith("dpaudit: error: trial 5 (")
    assert "failed: ConfigError: attack.params.epsilon: expected a number > 0" in err


def test_the_trial_errors_pickle_as_they_were():
    import pickle

    for exc in (TrialError("trial 1 (no sweep) failed: X: y"), TrialInternalError("trial 1 (no sweep) failed: X")):
        again = pickle.loads(pickle.dumps(exc))
        assert type(again) is type(exc) and str(again) == str(exc)
    assert not isinstance(TrialInternalError("x"), DPAuditError)  # so the command line exits 3
