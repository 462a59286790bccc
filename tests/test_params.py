"""One table of options per entry point: a rule written once reaches the command line, Python and YAML."""

import dataclasses
import json

import pytest

import dpaudit
from dpaudit.cli import main
from dpaudit.exceptions import ConfigError, ParameterTypeError, ParameterValueError
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
        if option.flag is not None and name not in ("dataset", "neighbor"):  # the pair a search finds itself
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


def _scores_config(**params):
    return {"name": "sc", "seed": 1, "attack": {"name": "scores", "params": {
        "in_scores": list(range(40)), "out_scores": list(range(40)), **params}}}


def test_one_cross_option_rule_changed_in_the_table_changes_cli_python_and_yaml(monkeypatch, capsys):
    # A rule between options is one entry of RULES; each front end says it with its own names.
    from dpaudit.param_rules import RULES

    monkeypatch.setitem(RULES, "one_claim", dataclasses.replace(RULES["one_claim"],
                                                                message="{claim} stands alone; drop {other}"))
    code, err = _cli(capsys, "audit", "laplace", "--claim", "gdp:mu=1", "--epsilon", "1")
    assert code == 2 and err.strip() == "dpaudit: error: argument --claim: --claim stands alone; drop --epsilon"
    code, err = _cli(capsys, "search", "laplace", "--claim", "gdp:mu=1", "--delta", "1e-5", "--size", "2")
    assert code == 2 and "argument --claim: --claim stands alone; drop --delta" in err
    for call in (lambda: dpaudit.audit("laplace", claim="gdp:mu=1", epsilon=1.0),
                 lambda: dpaudit.search("laplace", claim="gdp:mu=1", epsilon=1.0, size=2, low=0, high=1),
                 lambda: dpaudit.audit_scores([0.0] * 40, [0.0] * 40, claim="gdp:mu=1", epsilon=1.0),
                 lambda: dpaudit.audit_one_run([0.0] * 40, [0, 1] * 20, claim="gdp:mu=1", epsilon=1.0)):
        with pytest.raises(ParameterValueError, match="^claim: claim stands alone; drop epsilon$"):
            call()
    with pytest.raises(ConfigError, match=r"^attack\.params\.claim: claim stands alone; drop epsilon$"):
        load_config(_scores_config(claim="gdp:mu=1", epsilon=1.0))
    with pytest.raises(ConfigError, match=r"^attack\.params\.claim: claim stands alone; drop epsilon$"):
        load_config(_search_config(claim="gdp:mu=1", epsilon=1.0, size=2, low=0, high=1))

    # The fixed-size rule made to bind samples to time_budget alone: max_samples beside samples is accepted
    # everywhere, time_budget still refused, in each front end's words.
    monkeypatch.setitem(RULES, "fixed_size", dataclasses.replace(RULES["fixed_size"], second=("time_budget",)))
    code, err = _cli(capsys, "audit", "laplace", "--epsilon", "1", "--samples", "1000", "--max-samples", "5000",
                     "--seed", "1", "--ideal")
    assert code in (0, 1), err
    assert dpaudit.audit("laplace", epsilon=1.0, samples=1000, max_samples=5000, seed=1, ideal=True).samples == 1000
    load_config(_audit_config(samples=1000, max_samples=5000))
    code, err = _cli(capsys, "audit", "laplace", "--epsilon", "1", "--samples", "1000", "--time-budget", "5")
    assert code == 2 and "argument --time-budget: a fixed-size audit (--samples 1000) takes no --time-budget" in err
    with pytest.raises(ParameterValueError, match=r"^time_budget: a fixed-size audit \(samples=1000\) takes no "):
        dpaudit.audit("laplace", epsilon=1.0, samples=1000, time_budget=5.0)
    with pytest.raises(ConfigError, match=r"^audit\.time_budget: a fixed-size audit \(samples: 1000\) takes no "):
        load_config(_audit_config(samples=1000, time_budget=5))


def test_a_table_that_disagrees_with_its_signature_fails_at_import():
    from dpaudit.params import Option, OptionTable

    table = OptionTable([Option("x", "int", 1), Option("y", "real", 0.5)])

    def right(x=1, *, y=0.5):
        return x, y

    assert table.validates(right)(2.0, y=1) == (2, 1.0)  # checked and canonical: 2.0 is the integer 2
    with pytest.raises(ParameterTypeError, match=r"^x must be an integer; got .a."):
        table.validates(right)("a")

    def other_default(x=2, *, y=0.5):
        return x

    with pytest.raises(TypeError, match="x defaults to 2 in the signature but 1 in the option table"):
        table.validates(other_default)

    def missing_row(x=1, *, y=0.5, z=None):
        return x

    with pytest.raises(TypeError, match=r"differ in \['z'\]"):
        table.validates(missing_row)


def test_the_kind_section_and_its_old_spelling_read_the_same():
    # `kind:` is the section of a non-audit kind; `attack:` (a word configs also use for audit.attack) is still read.
    new = {"name": "k", "seed": 1, "kind": {"name": "rr_tradeoff", "params": {"epsilon": 1.0}},
           "sweep": {"parameters": {"kind.params.n": [10, 20]}}}
    old = {"name": "k", "seed": 1, "attack": {"name": "rr_tradeoff", "params": {"epsilon": 1.0}},
           "sweep": {"parameters": {"attack.params.n": [10, 20]}}}
    assert load_config(new).resolved == load_config(old).resolved  # results store the section as before
    with pytest.raises(ConfigError, match=r"^kind\.params\.n: expected an integer >= 1"):
        load_config({"name": "k", "kind": {"name": "rr_tradeoff", "params": {"epsilon": 1.0, "n": 0}}})
    with pytest.raises(ConfigError, match=r"^attack\.params\.n: expected an integer >= 1"):
        load_config({"name": "k", "attack": {"name": "rr_tradeoff", "params": {"epsilon": 1.0, "n": 0}}})
    with pytest.raises(ConfigError, match=r"^kind: give the 'kind' section alone"):
        load_config({"name": "k", "kind": {"name": "rr_tradeoff"}, "attack": {"name": "rr_tradeoff"}})


def test_training_reads_accountant_and_its_old_spelling_claim():
    cfg = {"name": "t", "seed": 1, "kind": {"name": "training", "params": {"accountant": "point"}}}
    assert load_config(cfg).resolved["attack"]["params"]["accountant"] == "point"
    cfg["kind"]["params"] = {"claim": "point"}
    assert load_config(cfg).resolved["attack"]["params"]["accountant"] == "point"
    cfg["kind"]["params"] = {"claim": "point", "accountant": "curve"}
    with pytest.raises(ConfigError, match=r"^kind\.params\.claim: the old spelling of accountant"):
        load_config(cfg)
    cfg["kind"]["params"] = {"samples": 1000, "time_budget": 5}
    with pytest.raises(ConfigError, match=r"^kind\.params\.time_budget: a fixed-size audit \(samples: 1000\)"):
        load_config(cfg)


def test_a_floating_point_attack_beside_ideal_is_refused_everywhere(capsys):
    # It ran, and its float bound was reported as the distribution's ("distribution_epsilon_lower_bound").
    for command in (["audit", "laplace"], ["search", "laplace", "--size", "2", "--low", "0", "--high", "1"]):
        code, err = _cli(capsys, *command, "--epsilon", "1", "--ideal", "--attack", "float-lsb")
        assert code == 2 and "argument --attack: a floating-point attack (--attack float-lsb) beside --ideal" in err
    with pytest.raises(ParameterValueError, match="floating-point attack"):
        dpaudit.audit("laplace", epsilon=1.0, samples=50, ideal=True, attack="float-lattice")
    code, err = _cli(capsys, "audit", "laplace", "--epsilon", "1", "--attack", "float-lsb", "--samples", "200",
                     "--seed", "1")
    assert code in (0, 1), err
