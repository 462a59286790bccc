"""``dpaudit survey`` on a small local catalogue: a stand-in library run by this interpreter (no network).

``data/toylib.py`` has a correct Laplace mean, a mean whose noise is a tenth of what its claim needs, and a
mechanism class; ``data/catalogue.yaml`` lists them.  Seeded: each row's verdict is a fixed function of the
survey seed.  The correct rows' bounds stay below their claims except with probability < 0.05 each (the
audits' confidence is 0.95); the buggy mean's true epsilon is 10, far above what 2,000 releases certify.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from _cli import cli, one_line
from dpaudit.exceptions import ConfigError
from dpaudit.survey import load_catalogue, run_survey

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def _catalogue(tmp_path: Path, **changes) -> Path:
    """The local catalogue copied beside toylib, with ``changes`` applied to its top level."""
    raw = yaml.safe_load((DATA / "catalogue.yaml").read_text())
    raw["defaults"]["max_samples"] = 2000
    raw.update(changes)
    shutil.copy(DATA / "toylib.py", tmp_path / "toylib.py")
    path = tmp_path / "catalogue.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _comparable(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        r.pop("seconds")
    return rows


@pytest.fixture(scope="module")
def surveyed(tmp_path_factory):
    """The local catalogue surveyed once with --jobs 1 (seed 3)."""
    tmp = tmp_path_factory.mktemp("survey")
    cat = _catalogue(tmp)
    outcome = run_survey(cat, out=tmp / "j1", seed=3, n_jobs=1, draw=False)
    return cat, tmp, outcome


def test_survey_finds_the_buggy_mean_and_passes_the_correct_ones(surveyed):
    _, tmp, outcome = surveyed
    rows = {r["entry"]: r for r in outcome.rows}
    assert set(rows) == {"mean", "mean_buggy", "laplace"}
    for entry in ("mean", "laplace"):
        for key in ("ideal", "implementation"):
            assert rows[entry][key]["verdict"] == "no violation found", rows[entry]
    buggy = rows["mean_buggy"]
    assert buggy["ideal"]["verdict"] == buggy["implementation"]["verdict"] == "violation"
    assert buggy["ideal"]["epsilon_lower_bound"] > 2.0
    for r in outcome.rows:
        assert {"library", "version", "function", "claimed_epsilon", "claimed_delta", "relation", "ideal",
                "implementation", "dataset", "neighbor", "parameters", "reproduce"} <= set(r)
        assert r["status"] == "done" and r["seeded"] is True
        assert r["reproduce"].startswith("dpaudit survey ") and f"--entry {r['entry']}" in r["reproduce"]
    assert rows["laplace"]["relation"] == "add-remove" and rows["laplace"]["neighbor"] == [1.0, 1.0]
    assert rows["mean"]["candidates_screened"] > 1 and rows["mean"]["domain"]["size"] == 2
    summary = (tmp / "j1" / "summary.md").read_text()
    assert "mean_buggy" in summary.split("## Violations")[1]


def test_jobs_do_not_change_the_rows(surveyed):
    cat, tmp, _ = surveyed
    run_survey(cat, out=tmp / "j2", seed=3, n_jobs=2, draw=False)
    assert _comparable(tmp / "j2" / "survey.jsonl") == _comparable(tmp / "j1" / "survey.jsonl")


def test_a_row_reproduces_alone(surveyed):
    """The `reproduce` command's selection (library==version, the entry, the seed) gives the same row."""
    cat, tmp, outcome = surveyed
    row = next(r for r in outcome.rows if r["entry"] == "mean_buggy")
    again = run_survey(cat, out=tmp / "one", seed=3, libraries=["toylib==local"], entries=["mean_buggy"],
                       draw=False)
    assert len(again.rows) == 1
    assert {k: v for k, v in again.rows[0].items() if k != "seconds"} == {k: v for k, v in row.items()
                                                                         if k != "seconds"}


def test_resume_keeps_finished_rows_and_runs_the_rest(surveyed):
    """Killed after its first row, the survey resumes without redoing it and ends with the same rows."""
    cat, tmp, _ = surveyed
    out = tmp / "killed"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "dpaudit", "survey", str(cat), "--out", str(out), "--seed", "3"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows_file = out / "survey.jsonl"
    deadline = time.monotonic() + 120
    while not (rows_file.exists() and rows_file.read_text().count("\n") >= 1):
        assert proc.poll() is None and time.monotonic() < deadline, "the survey ended before it could be killed"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = [json.loads(line) for line in rows_file.read_text().splitlines() if line.strip()]
    assert 1 <= len(first) < 3
    outcome = run_survey(cat, out=out, seed=3, resume=True, draw=False)
    assert outcome.resumed == len(first) and len(outcome.ran) == 3 - len(first)
    final = [json.loads(line) for line in rows_file.read_text().splitlines()]
    for row in first:  # kept as written, its timing included: not run again
        assert row in final
    assert _comparable(rows_file) == _comparable(tmp / "j1" / "survey.jsonl")


def test_resume_reruns_a_row_whose_entry_changed(surveyed):
    """A catalogue edit (here the laplace entry's sensitivity) invalidates that row only."""
    cat, tmp, _ = surveyed
    out = tmp / "edited"
    shutil.copytree(tmp / "j1", out)
    raw = yaml.safe_load(cat.read_text())
    raw["libraries"][0]["entries"][2]["params"]["sensitivity"] = 2.0
    edited = tmp / "edited.yaml"
    edited.write_text(yaml.safe_dump(raw))
    outcome = run_survey(edited, out=out, seed=3, resume=True, draw=False)
    assert [r["entry"] for r in outcome.ran] == ["laplace"] and outcome.resumed == 2
    assert {r["entry"]: r["parameters"] for r in outcome.rows}["laplace"]["sensitivity"] == 2.0


def test_resume_with_another_seed_is_refused(surveyed):
    cat, tmp, _ = surveyed
    with pytest.raises(ValueError, match="seed 3, not 4"):
        run_survey(cat, out=tmp / "j1", seed=4, resume=True, draw=False)


@pytest.mark.slow
def test_dask_gives_the_same_rows(surveyed):
    pytest.importorskip("distributed")
    cat, tmp, _ = surveyed
    run_survey(cat, out=tmp / "dask", seed=3, n_jobs=2, backend="dask", draw=False)
    assert _comparable(tmp / "dask" / "survey.jsonl") == _comparable(tmp / "j1" / "survey.jsonl")


@pytest.mark.parametrize("change, path", [
    ({"libraries": [{"name": "x", "versions": [{"version": "1", "python": "current"}],
                     "entries": [{"id": "a", "function": "m.f", "params": {"epsilon": 1}, "domian": {}}]}]},
     "libraries[0].entries[0].domian"),
    ({"libraries": [{"name": "x", "versions": [{"version": "1", "python": "current"}],
                     "entries": [{"id": "a", "function": "m.f", "params": {"epsilon": 1},
                                  "domain": {"low": "zero"}}]}]},
     "libraries[0].entries[0].domain.low"),
    ({"libraries": [{"name": "x", "versions": [{"version": "1"}],
                     "entries": [{"id": "a", "function": "m.f", "params": {"epsilon": 1}}]}]},
     "libraries[0].versions[0].requirements"),
    ({"libraries": [{"name": "x", "versions": [{"version": "1", "python": "current"}],
                     "entries": [{"id": "a", "function": "m.f", "relation": "bounded", "params": {"epsilon": 1}}]}]},
     "libraries[0].entries[0].relation"),
    ({"libraries": [{"name": "x", "versions": [{"version": "1", "python": "current"}],
                     "entries": [{"id": "a", "function": "m.f", "params": {}}]}]},
     "libraries[0].entries[0].epsilon"),
    ({"libraries": [{"name": "x", "versions": [{"version": "1", "python": "current"}],
                     "entries": [{"id": "a", "function": "m.f", "params": {"epsilon": 1},
                                  "call": {"seed": "os"}}]}]},
     "libraries[0].entries[0].call.seed"),
    ({"libraries": [{"name": "x", "versions": [{"version": "1", "python": "current"}],
                     "entries": [{"id": "a", "function": "m.f", "params": {"epsilon": 1},
                                  "search": {"screen_samples": 10}}]}]},
     "libraries[0].entries[0].search.screen_samples"),
])
def test_a_bad_catalogue_exits_2_naming_the_key_path(tmp_path, capsys, change, path):
    cat = _catalogue(tmp_path, **change)
    with pytest.raises(ConfigError) as info:
        load_catalogue(cat)
    assert info.value.key_path == path
    code, _, err = cli(capsys, "survey", cat, "--out", tmp_path / "out")
    assert code == 2 and one_line(err).startswith(f"dpaudit: error: {path}: ")


def test_a_bad_selection_exits_2(tmp_path, capsys):
    cat = _catalogue(tmp_path)
    code, _, err = cli(capsys, "survey", cat, "--library", "nolib", "--out", tmp_path / "o")
    assert code == 2 and "--library" in one_line(err) and "nolib" in err
    code, _, err = cli(capsys, "survey", cat, "--library", "toylib==9", "--out", tmp_path / "o")
    assert code == 2 and "no version '9'" in one_line(err)


def test_cases_grid_and_relations_expand_to_rows(tmp_path):
    cat = _catalogue(tmp_path, libraries=[{
        "name": "x", "versions": [{"version": "1", "python": "current"}, {"version": "2", "python": "current"}],
        "entries": [{"id": "a", "function": "m.f", "params": {"epsilon": 1, "b": [0, 1]},
                     "grid": {"epsilon": [0.5, 2]}, "relation": ["replace-one", "add-remove"],
                     "cases": [{"label": "wide", "params": {"b": [-1, 1]}, "domain": {"low": -1}}],
                     "versions": ["2"]}]}])
    lib = load_catalogue(cat).libraries[0]
    ids = [c.case_id for c in lib.cases]
    assert ids == ["a[epsilon=0.5,wide,replace-one]", "a[epsilon=0.5,wide,add-remove]",
                   "a[epsilon=2,wide,replace-one]", "a[epsilon=2,wide,add-remove]"]
    case = lib.cases[0]
    assert case.params == {"epsilon": 0.5, "b": [-1, 1]} and case.epsilon == 0.5 and case.domain["low"] == -1
    assert case.domain["high"] == 1.0 and [lib.applies(case, v) for v in lib.versions] == [False, True]


def test_survey_help_has_examples(capsys):
    from dpaudit.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["survey", "--help"])
    out = capsys.readouterr().out
    assert exit_info.value.code == 0 and "examples:" in out and "--resume" in out and "--library" in out


def test_the_shipped_catalogue_loads():
    """The project's own catalogue passes the checks a user's gets (no environment is built)."""
    from dpaudit.survey.catalogue import load_catalogue

    cat = load_catalogue(Path(__file__).resolve().parents[2] / "experiments" / "library_survey" / "catalogue.yaml")
    assert len(cat.libraries) >= 6
