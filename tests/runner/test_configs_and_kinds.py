"""Every shipped config validates, and every experiment kind runs end to end on a tiny config."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import numpy as np
import pytest
import yaml

from dpaudit.exceptions import ConfigError
from dpaudit.runner import list_kinds, load_config, run_experiment

ROOT = Path(__file__).resolve().parents[2]
#: Experiment configs: the YAML files with a ``name`` (a survey catalogue, which ``dpaudit survey`` reads, is
#: checked in tests/survey; the survey's witness notes are read by its witness writer).
CONFIGS = sorted(p for p in [*ROOT.glob("configs/*.yaml"), *ROOT.glob("experiments/*/*.yaml")]
                 if "name" in (d := yaml.safe_load(p.read_text()) or {}) and "libraries" not in d)
QUIET = dict(echo=lambda s: None, progress=False, draw=False)


def test_there_are_configs_to_check():
    assert len(CONFIGS) >= 8 and any("experiments" in str(p) for p in CONFIGS)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_config_validates(path):
    # Validation builds every mechanism at every sweep point; nothing is run.  A library adapter
    # ("opendp.laplace") needs its optional extra, the library of the same name.
    raw = yaml.safe_load(path.read_text())
    for entry in raw.get("mechanisms") or []:
        name = entry.get("mechanism", "") if isinstance(entry, dict) else str(entry)
        library, dot, _ = name.partition(".")
        if dot and library.isidentifier() and ":" not in name:
            pytest.importorskip(library)
    cfg = load_config(path)
    assert cfg.trials and cfg.name
    assert cfg.name == raw["name"]


# One tiny experiment per kind: (config, what a trial's result must hold).
TINY = {
    "audit": ({"mechanisms": [{"mechanism": "laplace"}, {"mechanism": "randomized_response", "params": {"p": 0.5}}],
               "audit": {"samples": 4000}},
              {"epsilon_lower_bound", "ceiling", "verdict", "true_epsilon"}),
    "differencing": ({"attack": {"name": "differencing", "params": {"n_people": 50, "epsilon": 1.0, "trials": 20}}},
                     {"epsilon_lower_bound"}),
    "reconstruction": ({"attack": {"name": "reconstruction",
                                   "params": {"n": 20, "k": 40, "noise": "laplace", "noise_scale": 0.5, "trials": 2}}},
                       {"epsilon_lower_bound"}),
    "tracing": ({"attack": {"name": "tracing", "params": {"n": 20, "d": 50, "n_targets": 40}}},
                {"epsilon_lower_bound"}),
    "rr_tradeoff": ({"attack": {"name": "rr_tradeoff", "params": {"n": 50, "epsilon": 1.0, "repetitions": 100}}},
                    {"rmse"}),
    "search": ({"attack": {"name": "search", "params": {"target": "laplace", "size": 3, "low": 0, "high": 10,
                                                        "max_samples": 2000}}},
               {"epsilon_lower_bound", "dataset", "neighbor", "candidates_screened", "stopping_reason",
                "trajectory"}),
    "scores": ({"attack": {"name": "scores", "params": {"in_scores": [float(i % 7) for i in range(200)],
                                                        "out_scores": [float(i % 5) for i in range(200)],
                                                        "epsilon": 1.0}}},
               {"epsilon_lower_bound", "verdict", "n_test", "privacy_profile"}),
    "one_run": ({"attack": {"name": "one_run", "params": {"scores": [float(i % 2) for i in range(100)],
                                                          "included": [i % 2 for i in range(100)],
                                                          "claim": "eps:1"}}},
                {"epsilon_lower_bound", "guesses", "correct", "canaries", "verdict", "curve_violation"}),
    "training": ({"attack": {"name": "training", "params": {"epsilon": 2, "samples": 4000}}},
                 {"epsilon_lower_bound", "claim", "curve_violation", "accountant_epsilon", "strongest", "dpsgd"}),
}
# Kinds with a second shape worth running (a dict literal would silently keep only one entry per kind):
# a sequential audit beside the fixed one, the search kind's fixed-size final audit beside its sequential one.
TINY_MORE = {
    "audit (sequential)": ({"mechanisms": [{"mechanism": "laplace"}], "audit": {"samples": "auto", "max_samples": 4000}},
                           {"epsilon_lower_bound", "stopping_reason", "trajectory", "rounds", "max_samples"}),
    "search (fixed)": ({"attack": {"name": "search", "params": {"target": "laplace", "epsilon": 1.0, "size": 3,
                                                                "low": 0, "high": 1, "samples": 4000,
                                                                "screen_samples": 1000, "relation": "replace-one"}}},
                       {"epsilon_lower_bound", "dataset", "neighbor", "stopping_reason"}),
}


def test_every_kind_has_a_runner_test():
    assert set(TINY) == {name for name, _ in list_kinds()}


@pytest.mark.parametrize("case", sorted({**TINY, **TINY_MORE}))
def test_each_kind_runs_and_summarises(case, tmp_path):
    body, keys = {**TINY, **TINY_MORE}[case]
    kind = case.split(" ")[0]
    cfg = {"name": f"tiny_{kind}", "seed": 5, "trials": 2, **body}
    out = run_experiment(cfg, out=tmp_path, **QUIET)
    assert out.summary["complete"] and out.summary["kind"] == kind
    trials = [json.loads(line) for line in (out.directory / "trials.jsonl").read_text().splitlines()]
    assert len(trials) == out.summary["trials_expected"] and trials
    for t in trials:
        assert keys <= set(t["result"]), sorted(t["result"])
    assert out.table.splitlines()[1].startswith("-")  # a header and a rule, then rows
    assert max(map(len, out.table.splitlines())) <= 100  # a terminal's width (tests/runner/test_run_tables.py)
    # Every file the run writes gets the same permissions (atomic writes must not make them private).
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.directory.iterdir()}
    assert len(set(modes.values())) == 1, modes


def test_yaml_target_paths_resolve_against_the_config_file(tmp_path):
    sub = tmp_path / "exp"
    sub.mkdir()
    (sub / "mech.py").write_text(
        "import numpy as np\n"
        "def release(dataset, size=None, rng=None):\n"
        "    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)\n")
    (sub / "d.json").write_text("[0, 1]")
    cfg = {"name": "own", "seed": 1, "audit": {"samples": 2000},
           "mechanisms": [{"target": "mech.py:release", "epsilon": 1.0, "dataset": "d.json", "neighbor": [0]}]}
    path = sub / "own.yaml"
    path.write_text(yaml.safe_dump(cfg))
    loaded = load_config(path)  # run from any working directory: mech.py is found beside own.yaml
    assert loaded.resolved["mechanisms"][0]["target"] == f"{sub / 'mech.py'}:release"
    out = run_experiment(path, out=tmp_path / "res", **QUIET)
    assert out.summary["complete"]



def test_a_yaml_target_takes_its_claim_from_audit_claim(tmp_path):
    # A user's own training code audited against a curve once needed a dummy epsilon: audit.claim "replaces every
    # mechanism's own (epsilon, delta)" (docs/claims.md), yet a target without epsilon was refused at validation.
    (tmp_path / "mech.py").write_text(
        "def release(dataset, size=None, rng=None):\n"
        "    return float(len(dataset)) + rng.normal(0.0, 0.25, size=size)\n")   # 4-GDP
    target = {"target": "mech.py:release", "dataset": [0], "neighbor": []}
    cfg = {"name": "own", "seed": 1, "mechanisms": [target], "audit": {"samples": 2000, "claim": "gdp:mu=1"}}
    (tmp_path / "own.yaml").write_text(yaml.safe_dump(cfg))
    out = run_experiment(tmp_path / "own.yaml", out=tmp_path / "res", **QUIET)
    trial = json.loads((out.directory / "trials.jsonl").read_text().splitlines()[0])["result"]
    # Seeded; a mean shift of 4 noise sds against the 1-GDP curve is certified at 2,000 releases by a wide margin.
    assert trial["claim"] == "gdp:mu=1" and trial["verdict"] == "violation"
    # The table states where on the curve it compares: a claimed eps alone read as a wrong number.
    header, _, row = out.table.splitlines()[:3]
    assert "claimed eps  at delta" in header and f"{trial['claimed_delta']:.4g}" in row.split()
    # A sweep may give the claim point by point; a point without any claim for the target names the point.
    cfg["audit"] = {"samples": 2000}
    cfg["sweep"] = {"parameters": {"audit.claim": ["gdp:mu=1", "eps:2,delta=1e-5"]}}
    (tmp_path / "own.yaml").write_text(yaml.safe_dump(cfg))
    assert [p["audit"]["claim"] for p in load_config(tmp_path / "own.yaml").point_configs] == \
        ["gdp:mu=1", "eps:2,delta=1e-5"]
    cfg["sweep"]["parameters"]["audit.claim"] = ["gdp:mu=1", None]
    (tmp_path / "own.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "own.yaml")
    assert info.value.key_path == "mechanisms[0].epsilon"
    assert "or audit.claim" in str(info.value) and "at sweep point 1" in str(info.value)


@pytest.mark.parametrize("patch, needle", [
    ({"mechanisms": [{"mechanism": "lapalce"}]}, "mechanisms[0].mechanism: unknown mechanism 'lapalce' (did you mean 'laplace'?)"),
    ({"audit": {"sampels": 10}}, "audit.sampels: unknown key; expected one of ['"),
    ({"audit": {"sampels": 10}}, "(did you mean 'samples'?)"),
])
def test_misspelt_yaml_values_get_a_did_you_mean(patch, needle):
    cfg = {"name": "x", "seed": 1, "mechanisms": [{"mechanism": "laplace"}], "audit": {"samples": 100}, **patch}
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert needle in str(info.value)


def test_table_shows_every_metric_under_distinct_names(tmp_path):
    cfg = {"name": "tbl", "seed": 2, "trials": 2,
           "attack": {"name": "rr_tradeoff", "params": {"n": 50, "repetitions": 100}},
           "sweep": {"parameters": {"attack.params.epsilon": [0.5, 1.0]}}}
    out = run_experiment(cfg, out=tmp_path, **QUIET)
    header = [h for h in out.table.splitlines()[0].split("  ") if h.strip()]
    header = [h.strip() for h in header]
    assert len(header) == len(set(header)), header
    metrics = {k for g in out.summary["groups"] for k in g["metrics"]}
    shown = {h.split(" (")[0] for h in header}
    # Every metric is a column, except the per-trial rmse that the pooled rmse column replaces and the
    # sum_* fields, which are that pooled rmse's ingredients.
    metrics = {m for m in metrics if not m.startswith("sum_")}
    assert metrics - {"rmse"} <= shown, (metrics, shown)
    assert sum(h.startswith("rmse") for h in header) == 1


def test_interrupt_prints_how_to_resume(monkeypatch, capsys):
    import argparse

    from dpaudit.runner import cli_commands, execution

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(execution, "run_experiment", interrupted)
    args = argparse.Namespace(config="configs/x.yaml", out="results", jobs=2, backend="loky", scheduler=None,
                              resume=False, progress=None, plots=True)
    assert cli_commands.cmd_run(args) == 130
    err = capsys.readouterr().err
    assert "dpaudit run configs/x.yaml --out results --jobs 2 --resume" in err


def test_yaml_takes_a_claimed_curve_for_audit_and_search(tmp_path):
    # The built-in Gaussian (epsilon 0.5, delta 1e-5, classic calibration) is mu = 0.103 Gaussian DP: the
    # claim gdp:mu=0.05 is false, and the audit kind says so from YAML (seeded: 0.043 certified against 0.018
    # at delta 0.012 with 2x10^5 releases); the search kind reads the same key.
    cfg = {"name": "curve", "seed": 3, "trials": 1, "mechanisms": [{"mechanism": "gaussian"}],
           "audit": {"samples": 200_000, "claim": "gdp:mu=0.05"}}
    out = run_experiment(cfg, out=tmp_path / "a", **QUIET)
    trial = json.loads((out.directory / "trials.jsonl").read_text().splitlines()[0])["result"]
    assert trial["claim"] == "gdp:mu=0.05" and trial["verdict"] == "violation"
    # Its true epsilon is read at the reported delta (0.066 at 0.017), not at its own claim's 1e-5 (0.353).
    from dpaudit import get_mechanism

    assert trial["claimed_delta"] != 1e-5
    assert trial["true_epsilon"] == get_mechanism("gaussian").true_epsilon(trial["claimed_delta"]) < 0.35
    cfg = {"name": "curve_search", "seed": 3, "trials": 1,
           "attack": {"name": "search", "params": {"target": "laplace", "size": 3, "low": 0, "high": 1,
                                                   "max_samples": 2000, "claim": "eps:5"}}}
    out = run_experiment(cfg, out=tmp_path / "s", **QUIET)
    trial = json.loads((out.directory / "trials.jsonl").read_text().splitlines()[0])["result"]
    assert trial["claim"] == "eps:5" and trial["verdict"] == "no violation found"


@pytest.mark.parametrize("body, path", [
    ({"mechanisms": [{"mechanism": "laplace"}], "audit": {"claim": "gdp:mu=x"}}, "audit.claim"),
    ({"attack": {"name": "search", "params": {"target": "laplace", "size": 3, "low": 0, "high": 1,
                                              "claim": "gdp:mu=1", "epsilon": 1}}}, "attack.params.claim"),
])
def test_a_bad_yaml_claim_names_its_key(body, path):
    with pytest.raises(ConfigError, match=path.replace(".", r"\.")):
        load_config({"name": "bad", "seed": 1, "trials": 1, **body})


def test_score_and_one_run_trials_count_violations():
    # The summary table shows numbers only; a trial's verdict is also recorded as 0/1 so that it has a column.
    from dpaudit.runner.kinds.scores import _record

    class _Report:
        violation = True

        def to_dict(self):
            return {"verdict": "violation", "elapsed_seconds": 0.1}

    assert _record(_Report) == {"verdict": "violation", "violations": 1}


def _column(table: str, name: str) -> list[str]:
    header, _, *rows = table.splitlines()
    at = header.index(name)
    return [row[at:].split()[0] for row in rows]


def test_the_table_counts_the_trials_that_flagged(tmp_path):
    # "violations" was the mean of a per-trial 0/1: configs/scores.yaml, three trials all flagged, printed
    # "violations 1"; and the training and search kinds, whose count is in their aggregate, had no such column
    # although configs/training.yaml and configs/search.yaml say their table shows the violation.
    rng = np.random.default_rng(5)
    cfg = {"name": "count", "seed": 1, "trials": 3,
           "attack": {"name": "scores", "params": {"in_scores": (rng.normal(size=500) + 3).tolist(),
                                                   "out_scores": rng.normal(size=500).tolist(), "epsilon": 0.5}}}
    out = run_experiment(cfg, out=tmp_path, **QUIET)
    assert out.summary["groups"][0]["metrics"]["violations"]["mean"] == 1.0   # every trial flagged (seeded)
    assert _column(out.table, "violations") == ["3"]
    search = {"name": "srch", "seed": 1, "trials": 2,
              "attack": {"name": "search", "params": {"target": "unclipped_sum", "size": 3, "low": 0, "high": 10,
                                                      "max_samples": 2000}}}
    out = run_experiment(search, out=tmp_path, **QUIET)
    assert out.summary["groups"][0]["violations"] == 2 and _column(out.table, "violations") == ["2"]


def test_one_run_curve_config_shows_what_its_comments_say(tmp_path):
    # configs/one_run_curve.yaml is about gdp:mu=1 rejected as a whole curve with no point crossed; the table showed
    # only "violations", so that rejection (a boolean per trial) was nowhere in what the run printed.
    out = run_experiment(ROOT / "configs" / "one_run_curve.yaml", out=tmp_path, **QUIET)
    assert _column(out.table, "claim") == ["gdp:mu=0.8", "gdp:mu=1", "gdp:mu=4"]
    assert _column(out.table, "violations") == ["1", "0", "0"]
    assert _column(out.table, "curve_rejections") == ["1", "1", "0"]


def test_a_trials_seed_is_no_metric(tmp_path):
    # The one_run kind records each trial's seed (a 128-bit integer): it was averaged into the summary and
    # shown as a column of the table ("seed 2.489e+38"), a number that measures nothing.

    outcome = run_experiment(ROOT / "configs" / "one_run.yaml", out=tmp_path)
    trials = [json.loads(line) for line in (outcome.directory / "trials.jsonl").read_text().splitlines()]
    assert all("seed" in t["result"] for t in trials)  # still recorded per trial
    assert all("seed" not in g.get("metrics", {}) for g in outcome.summary["groups"])
    assert "seed" not in outcome.table.splitlines()[0].split()


def test_a_curve_claims_trials_are_summarised_at_one_delta(tmp_path):
    # Each trial of a curve claim reports at its own delta (its largest margin). The group once took the first
    # trial's claimed epsilon and delta beside the median of every trial's bound, each at its own delta: a 1-GDP
    # release against gdp:mu=0.8 showed "claimed eps 0.1426 at 0.2631, bound 0.1564 [0.1266, 0.1696]", a bound
    # below the claim in a group of four violations. Seeded; every trial certifies above the curve at 0.31.
    from dpaudit import parse_claim

    (tmp_path / "mech.py").write_text("def release(dataset, size=None, rng=None):\n"
                                      "    return float(len(dataset)) + rng.normal(0.0, 1.0, size=size)\n")
    cfg = {"name": "agg", "seed": 1, "trials": 4,
           "mechanisms": [{"target": "mech.py:release", "dataset": [0], "neighbor": []}],
           "audit": {"samples": 4000, "ideal": True, "claim": "gdp:mu=0.8"}}
    (tmp_path / "agg.yaml").write_text(yaml.safe_dump(cfg))
    out = run_experiment(tmp_path / "agg.yaml", out=tmp_path / "res", **QUIET)
    trials = [json.loads(line)["result"] for line in (out.directory / "trials.jsonl").read_text().splitlines()]
    assert all(t["verdict"] == "violation" for t in trials) and len({t["claimed_delta"] for t in trials}) > 1
    g = out.summary["groups"][0]
    assert g["claimed_epsilon"] == pytest.approx(float(parse_claim("gdp:mu=0.8").epsilon(g["claimed_delta"])))
    j = trials[0]["claim_curve"]["delta"].index(g["claimed_delta"])
    at = sorted(t["claim_curve"]["epsilon_lower_bound"][j] for t in trials)
    assert [g["epsilon_lower_bound_min"], g["epsilon_lower_bound_max"]] == [at[0], at[-1]]
    assert g["epsilon_lower_bound_median"] == pytest.approx((at[1] + at[2]) / 2)
    assert g["epsilon_lower_bound_min"] > g["claimed_epsilon"] and g["verdict"] == "violation"


def test_a_builtins_true_epsilon_follows_the_groups_point_of_the_curve(tmp_path):
    # The group's common point may be none of its trials' own; its true epsilon is read there too.
    from dpaudit import get_mechanism

    cfg = {"name": "agg2", "seed": 1, "trials": 3, "mechanisms": [{"mechanism": "gaussian"}],
           "audit": {"samples": 20000, "claim": "gdp:mu=0.05"}}
    out = run_experiment(cfg, out=tmp_path, **QUIET)
    trials = [json.loads(line)["result"] for line in (out.directory / "trials.jsonl").read_text().splitlines()]
    assert len({t["claimed_delta"] for t in trials}) > 1
    g = out.summary["groups"][0]
    assert g["true_epsilon"] == pytest.approx(get_mechanism("gaussian").true_epsilon(g["claimed_delta"]))


def test_profile_claims_and_score_files_are_read_beside_the_config(tmp_path, monkeypatch):
    # dataset: paths and file.py targets were read beside the config, a profile: claim and a score audit's files
    # where dpaudit ran: run from another directory, the config found its target but not its claimed profile.
    # Now beside the config when the file is there, else where dpaudit runs (configs written so keep working).
    import numpy as np

    folder, elsewhere = tmp_path / "exp", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / "prof.json").write_text("[[1.0, 0.0]]")
    rng = np.random.default_rng(0)
    np.save(folder / "in.npy", rng.normal(1.0, 1.0, 2000))
    np.save(folder / "out.npy", rng.normal(0.0, 1.0, 2000))
    (folder / "mech.py").write_text("def release(dataset, size=None, rng=None):\n"
                                    "    return float(len(dataset)) + rng.laplace(0.0, 1.0, size=size)\n")
    audit = {"name": "prof", "seed": 1, "audit": {"samples": 2000, "ideal": True, "claim": "profile:prof.json"},
             "mechanisms": [{"target": "mech.py:release", "dataset": [0], "neighbor": []}]}
    scores = {"name": "sc", "seed": 1, "attack": {"name": "scores", "params": {
        "in_scores": "in.npy", "out_scores": "out.npy", "claim": "profile:prof.json"}}}
    monkeypatch.chdir(elsewhere)
    for body in (audit, scores):
        (folder / "exp.yaml").write_text(yaml.safe_dump(body))
        outcome = run_experiment(folder / "exp.yaml", out=tmp_path / "results", **QUIET)
        trial = json.loads((outcome.directory / "trials.jsonl").read_text().splitlines()[0])["result"]
        assert trial["claim"] == f"profile:{folder / 'prof.json'}", trial.get("claim")
    # A config written for the working directory: the files are not beside it, so they are read from there.
    monkeypatch.chdir(folder)
    (elsewhere / "exp.yaml").write_text(yaml.safe_dump(scores))
    cfg = load_config(elsewhere / "exp.yaml")
    assert cfg.point_configs[0]["attack"]["params"]["in_scores"] == "in.npy"


def test_a_one_run_trial_orders_tied_scores_from_its_own_seed(tmp_path):
    # audit_one_run orders tied scores at random from its seed; the one_run kind passed none, so each run drew
    # one: the same config and seed gave other bounds on every run (and after --resume), and a trial's recorded
    # seed differed between --jobs 1 and 2. Now the trial's seed, so the runs agree and the seed is the trial's.
    import numpy as np

    rng = np.random.default_rng(0)
    included = rng.integers(0, 2, 400)
    scores = np.round(included + rng.normal(0.0, 0.7, 400))  # a few distinct values: many ties
    cfg = {"name": "ties", "seed": 5, "trials": 3,
           "attack": {"name": "one_run", "params": {"scores": scores.tolist(), "included": included.tolist(),
                                                    "epsilon": 1.0, "guesses": 150}}}
    runs = [run_experiment(cfg, out=tmp_path / str(i), **QUIET) for i in range(2)]
    results = [[json.loads(line)["result"] for line in (r.directory / "trials.jsonl").read_text().splitlines()]
               for r in runs]
    assert results[0] == results[1] and runs[0].summary == runs[1].summary
    assert len({r["epsilon_lower_bound"] for r in results[0]}) > 1  # the trials differ in how ties are broken


def test_a_scores_tables_claimed_point_is_a_range_when_its_trials_differ(tmp_path):
    # A curve claim's trials each report at their own delta: the table showed the mean of their claimed epsilons
    # and deltas, a point of no claim.  Now the range; equal ones (a point claim) keep the one number.
    cfg = {"name": "sc", "seed": 11, "trials": 3, "attack": {"name": "scores", "params": {
        "in_scores": str(ROOT / "configs/data/mia_in.npy"), "out_scores": str(ROOT / "configs/data/mia_out.npy"),
        "claim": "gdp:mu=0.5"}}}
    outcome = run_experiment(cfg, out=tmp_path, **QUIET)
    trials = [json.loads(line)["result"] for line in (outcome.directory / "trials.jsonl").read_text().splitlines()]
    deltas = [t["claimed_delta"] for t in trials]
    assert len(set(deltas)) > 1  # seed 11: the three splits report at three deltas
    row = outcome.table.splitlines()[2]
    assert f"{min(deltas):.4g} to {max(deltas):.4g}" in row
    cfg["attack"]["params"].pop("claim")
    cfg["attack"]["params"].update(epsilon=1.0, delta=1e-5)
    row = run_experiment(cfg, out=tmp_path / "point", **QUIET).table.splitlines()[2]
    assert " to " not in row and "1e-05" in row
