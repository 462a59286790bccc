"""One table of options per entry point: a rule written once reaches the command line, Python and YAML."""

import dataclasses
import json

import pytest

import dpaudit
from dpaudit.cli import main
from dpaudit.exceptions import ConfigError, ParameterValueError
from dpaudit.params import AUDIT_OPTIONS, SEARCH_OPTIONS
from dpaudit.runner import load_config, run_experiment


def _audit_config(**audit):
    return {"name": "t", "seed": 1, "mechanisms": ["laplace"], "audit": {"ideal": True, **audit}}


def _search_config(**params):
    return {"name": "s", "seed": 1, "attack": {"name": "search", "params": {"target": "laplace", **params}}}


def _cli(capsys, *args):
    code = main(list(args))
    return code, capsys.readouterr().err


def test_one_rule_changed_in_the_table_changes_cli_python_and_yaml(monkeypatch, capsys):
    # samples >= 20 today: 50 is accepted everywhere.
    code, err = _cli(capsys, "audit", "laplace", "--epsilon", "1", "--samples", "50", "--seed", "1", "--ideal")
    assert code in (0, 1), err
    assert dpaudit.audit("laplace", epsilon=1.0, samples=50, seed=1, ideal=True).samples == 50
    load_config(_audit_config(samples=50))
    load_config(_search_config(samples=50))

    monkeypatch.setitem(AUDIT_OPTIONS, "samples", dataclasses.replace(AUDIT_OPTIONS["samples"], low=100))

    code, err = _cli(capsys, "audit", "laplace", "--epsilon", "1", "--samples", "50")
    assert code == 2 and "--samples must be an integer in [100, 1e+15]; got 50" in err
    code, err = _cli(capsys, "search", "laplace", "--epsilon", "1", "--samples", "50")
    assert code == 2 and "--samples must be an integer in [100, 1e+15]; got 50" in err
    with pytest.raises(ParameterValueError, match=r"samples must be an integer in \[100, 1e\+15\]; got 50"):
        dpaudit.audit("laplace", epsilon=1.0, samples=50)
    with pytest.raises(ParameterValueError, match=r"samples must be an integer in \[100, 1e\+15\]; got 50"):
        dpaudit.search("laplace", epsilon=1.0, size=2, low=0, high=1, samples=50)
    with pytest.raises(ConfigError, match=r"audit\.samples: expected 'auto' or an integer in \[100, 1e\+15\], got 50"):
        load_config(_audit_config(samples=50))
    with pytest.raises(ConfigError, match=r"attack\.params\.samples: expected 'auto' or an integer in \[100, 1e\+15\]"):
        load_config(_search_config(samples=50))


def test_search_takes_every_audit_option_with_the_same_rule():
    for name, option in AUDIT_OPTIONS.items():
        if option.flag is not None:
            assert SEARCH_OPTIONS[name] == option, name


@pytest.mark.parametrize("args, needle", [
    (["--attack", "nope"], "--attack must be one of"),
    (["--jobs", "0"], "--jobs must be >= 1 or -1"),
    (["--backend", "spark"], "--backend must be one of ['loky', 'dask']"),
    (["--estimator", "bayes"], "--estimator must be one of"),
    (["--max-samples", "39"], "--max-samples must be an integer in [40, 1e+15]"),
])
def test_audit_and_search_flags_share_their_messages(args, needle, capsys):
    for command in (["audit", "laplace"], ["search", "laplace", "--size", "2", "--low", "0", "--high", "1"]):
        code, err = _cli(capsys, *command, "--epsilon", "1", *args)
        assert code == 2 and err.startswith("dpaudit: error: ") and needle in err, err


def test_yaml_chooses_the_gdp_estimator(tmp_path):
    cfg = {"name": "g", "seed": 2, "mechanisms": ["gaussian_analytic"],
           "audit": {"samples": 20_000, "ideal": True}, "estimator": {"name": "gdp"}}
    out = run_experiment(cfg, out=tmp_path, draw=False, echo=lambda s: None)
    from dpaudit.results import TRIALS_FILE, read_trials

    (trial,) = read_trials(out.directory / TRIALS_FILE)
    assert trial["result"]["estimator"] == "gdp"
    assert any("Gaussian" in note for note in trial["result"]["notes"])


def test_yaml_rejects_an_unknown_estimator_and_one_for_a_kind_without_audits():
    with pytest.raises(ConfigError, match=r"estimator\.name: expected one of \['clopper-pearson', 'gdp'\]"):
        load_config(dict(_audit_config(), estimator={"name": "bayes"}))
    with pytest.raises(ConfigError, match=r"estimator\.name: only audit and search"):
        load_config({"name": "r", "attack": {"name": "rr_tradeoff"}, "estimator": {"name": "gdp"}})


def test_relation_aliases_are_read_as_the_canonical_spelling(capsys):
    # One relation enum: add-remove is canonical, add/remove an alias, on the command line and in YAML.
    code = main(["search", "laplace", "--epsilon", "1", "--size", "2", "--low", "0", "--high", "1",
                 "--relation", "add/remove", "--max-samples", "2000", "--seed", "1", "--json"])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    report = json.loads(captured.out)
    assert report["search"]["domain"]["relation"] == "add-remove"
    assert abs(len(report["dataset"]) - len(report["neighbor"])) == 1
    load_config(_search_config(relation="add/remove", size=2, low=0, high=1))
    with pytest.raises(ConfigError, match=r"attack\.params\.relation"):
        load_config(_search_config(relation="swap", size=2, low=0, high=1))


def test_a_new_estimator_certifies_itself_not_reported_as_another(monkeypatch):
    # The audit asks the named certificate for its result; one that cannot certify fails loudly instead of
    # the audit silently reporting Clopper-Pearson's bound under its name.
    from dpaudit.stats.estimators import ESTIMATORS, Estimator

    class Third(Estimator):
        name = "third"

        def _certify(self, evidence, claim, *, confidence, delta):
            raise NotImplementedError("third certifies nothing")

    monkeypatch.setitem(ESTIMATORS, "third", Third())
    with pytest.raises(NotImplementedError, match="third certifies nothing"):
        dpaudit.audit("laplace", epsilon=1.0, samples=1000, seed=1, estimator="third")
