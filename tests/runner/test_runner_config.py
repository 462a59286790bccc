"""Config validation: every error names its key path and the expectation (docs/experiments.md)."""

from __future__ import annotations

import copy

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.exceptions import ConfigError
from dpaudit.runner import load_config, resolve_config

BASE = {
    "name": "tiny",
    "seed": 1,
    "trials": 2,
    "attack": {"name": "rr_tradeoff", "params": {"epsilon": 1.0, "n": 50, "repetitions": 20}},
}


def with_(path: str, value):
    """BASE with ``path`` (dotted) set to ``value``; value ``...`` deletes the key."""
    cfg = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    node = cfg
    for p in parents:
        node = node.setdefault(p, {})
    if value is ...:
        node.pop(last, None)
    else:
        node[last] = value
    return cfg


BAD = [
    # (config, key path named, words the message must contain)
    (with_("attack.params.repetitions", "many"), "attack.params.repetitions", "expected an integer >= 1, got 'many'"),
    (with_("attack.params.repetitions", 0), "attack.params.repetitions", "integer >= 1"),
    (with_("attack.params.repetitions", 2.5), "attack.params.repetitions", "integer"),
    (with_("attack.params.repetitions", True), "attack.params.repetitions", "integer"),
    (with_("attack.params.n", -3), "attack.params.n", ">= 1"),
    (with_("attack.params.epsilon", "one"), "attack.params.epsilon", "number > 0"),
    (with_("attack.params.epsilon", 0), "attack.params.epsilon", "number > 0"),
    (with_("attack.params.true_fraction", 1.5), "attack.params.true_fraction", "in [0, 1]"),
    (with_("attack.params.second_coin", "biased"), "attack.params.second_coin", "one of ['fair', 'p']"),
    (with_("attack.params.queries", 4), "attack.params.queries", "unknown key"),
    (with_("attack.params", [1, 2]), "attack.params", "mapping"),
    (with_("attack.name", "nope"), "attack.name", "expected one of"),
    (with_("attack.name", ...), "attack.name", "required"),
    (with_("attack.extra", 1), "attack.extra", "unknown key"),
    (with_("bogus", 1), "bogus", "unknown key"),
    (with_("name", ...), "name", "required"),
    (with_("name", "../x"), "name", "no path separators"),
    (with_("name", "/abs"), "name", "no path separators"),
    (with_("name", "a/b"), "name", "no path separators"),
    (with_("name", "a\\b"), "name", "no path separators"),
    (with_("name", ".."), "name", "no path separators"),
    (with_("name", 5), "name", "plain name"),
    (with_("seed", -1), "seed", ">= 0"),
    (with_("seed", "abc"), "seed", "integer"),
    (with_("trials", 0), "trials", "integer in [1, 100000]"),
    (with_("trials", "3"), "trials", "integer"),
    (with_("estimator.confidence", 1.5), "estimator.confidence", "in (0, 1)"),
    (with_("estimator.confidence", 0), "estimator.confidence", "in (0, 1)"),
    (with_("estimator.delta", 1.0), "estimator.delta", "in [0, 1)"),
    (with_("estimator.selection", "split"), "estimator.selection", "unknown key; expected one of ['confidence', 'delta', 'name']"),
    (with_("estimator.alpha", 0.1), "estimator.alpha", "unknown key"),
    (with_("sweep.mode", "cartesian"), "sweep.mode", "one of ['grid', 'zip']"),
    (with_("sweep.parameters", {"attack.params.n": 5}), "sweep.parameters.attack.params.n", "non-empty list"),
    (with_("sweep.parameters", {"attack.params.n": []}), "sweep.parameters.attack.params.n", "non-empty list"),
    (with_("sweep.parameters", {"attack.params.nope": [1]}), "sweep.parameters.attack.params.nope", "no such parameter"),
    (with_("sweep.parameters", {"os.system": [1]}), "sweep.parameters.os.system", "expected a path under"),
    (with_("sweep.parameters", {"attack.name": ["tracing"]}), "sweep.parameters.attack.name", "one kind"),
    (with_("sweep.parameters", {"attack.params.n": [10, "x"]}), "attack.params.n", "sweep point 1"),
    (with_("sweep.parameters", {"attack.params.n": [1, 2], "attack.params.epsilon": [1.0]}) | {"sweep": {"mode": "zip", "parameters": {"attack.params.n": [1, 2], "attack.params.epsilon": [1.0]}}}, "sweep.parameters", "equal length"),
    (with_("sweep.extra", 1), "sweep.extra", "unknown key"),
    (with_("plot.size", "huge"), "plot.size", "one-column"),
    (with_("plot.figures", ["pie"]), "plot.figures[0]", "expected one of"),
    (with_("plot.figures", "roc"), "plot.figures", "list"),
    (with_("plot.dpi", 5), "plot.dpi", "integer in [50, 1200]"),
    (with_("plot.colour", "red"), "plot.colour", "unknown key"),
    (with_("plot.point", 0), "plot.point", "integer >= 1"),  # sweep points are numbered from 1, as figures show
    (with_("plot.point", 2), "plot.point", "expected a sweep point from 1 to 1, got 2"),
    (with_("mechanisms", [{"mechanism": "laplace"}]), "mechanisms", "only used by the audit kind"),
]


@pytest.mark.parametrize("cfg, key_path, words", BAD, ids=[f"{i}-{b[1]}" for i, b in enumerate(BAD)])
def test_bad_config_names_key_path(cfg, key_path, words):
    with pytest.raises(ConfigError) as info:
        resolve_config(cfg)
    assert info.value.key_path == key_path
    assert str(info.value).startswith(f"{key_path}: ")
    assert words in str(info.value)


def test_error_is_a_value_error_with_one_line():
    with pytest.raises(ValueError) as info:
        resolve_config(with_("attack.params.repetitions", "many"))
    assert "\n" not in str(info.value)


AUDIT_BAD = [
    ({"mechanisms": None}, "mechanisms", "required"),
    ({"mechanisms": []}, "mechanisms", "non-empty list"),
    ({"mechanisms": [{"params": {}}]}, "mechanisms[0]", "exactly one of"),
    ({"mechanisms": [{"mechanism": "laplace", "target": "a:b"}]}, "mechanisms[0]", "exactly one of"),
    ({"mechanisms": [{"target": "nocolon", "epsilon": 1, "dataset": [0], "neighbor": [1]}]}, "mechanisms[0].target", "module:attr"[:6]),
    ({"mechanisms": [{"target": "a:b", "dataset": [0], "neighbor": [1]}]}, "mechanisms[0].epsilon", "number"),
    ({"mechanisms": [{"target": "a:b", "epsilon": 1, "neighbor": [1]}]}, "mechanisms[0].dataset", "required"),
    ({"mechanisms": [{"mechanism": "laplace", "epsilon": 2}]}, "mechanisms[0].epsilon", "only for 'target'"),
    ({"mechanisms": [{"mechanism": "laplace", "colour": 2}]}, "mechanisms[0].colour", "unknown key"),
    ({"mechanisms": [{"mechanism": "laplace"}, {"mechanism": "laplace"}]}, "mechanisms[1].label", "duplicate"),
    ({"mechanisms": [{"mechanism": "laplace", "label": "a/b"}]}, "mechanisms[0].label", "short label"),
    ({"mechanisms": ["laplace"], "audit": {"samples": 0}}, "audit.samples", "'auto' or an integer in [20, 1e+15]"),
    ({"mechanisms": ["laplace"], "audit": {"sample": 10}}, "audit.sample", "unknown key"),
    ({"mechanisms": ["laplace"], "audit": {"ideal": "yes"}}, "audit.ideal", "true or false"),
    ({"mechanisms": ["laplace"], "attack": {"name": "rr_tradeoff"}}, "attack", "not both"),
    # A floating-point attack asked for beside ideal (which turns them off) was run, and its float bound was
    # reported as the distribution's.
    ({"mechanisms": ["laplace"], "audit": {"ideal": True, "attack": "float-lsb"}}, "audit.attack",
     "floating-point attack"),
]


@pytest.mark.parametrize("extra, key_path, words", AUDIT_BAD, ids=[b[1] for b in AUDIT_BAD])
def test_bad_audit_config_names_key_path(extra, key_path, words):
    cfg = {"name": "a", "seed": 0, "audit": {}}
    cfg.update(extra)
    with pytest.raises(ConfigError) as info:
        resolve_config(cfg)
    assert info.value.key_path == key_path, str(info.value)
    assert words in str(info.value)


def test_a_config_without_a_section_names_the_audit_section():
    # It named 'attack' and a 'kind' section, keys the config did not use.
    with pytest.raises(ConfigError) as info:
        resolve_config({"name": "a", "mechanisms": ["laplace"]})
    assert info.value.key_path == "audit" and "an 'audit' section" in str(info.value)


def test_a_target_parameter_it_does_not_take_names_its_key(tmp_path):
    # It failed in the first trial, as a TypeError of a target called 'partial'.
    from dpaudit.runner import run_experiment

    (tmp_path / "mech.py").write_text("import numpy as np\n"
                                      "def noisy(data, scale=1.0, size=None, rng=None):\n"
                                      "    return float(np.sum(data)) + rng.laplace(0.0, scale, size=size)\n")
    cfg = {"name": "p", "seed": 1, "audit": {"samples": 200}, "mechanisms": [
        {"target": f"{tmp_path / 'mech.py'}:noisy", "label": "noisy", "params": {"scal": 2.0}, "dataset": [1], "neighbor": [0],
         "epsilon": 1.0}]}
    with pytest.raises(ConfigError) as info:
        run_experiment(cfg, out=tmp_path / "out")
    assert info.value.key_path == "mechanisms[0].params.scal", str(info.value)
    assert "did you mean 'scale'" in str(info.value)
    cfg["mechanisms"][0]["params"] = {"scale": 2.0}
    run_experiment(cfg, out=tmp_path / "out2")


def test_defaults_filled_and_seed_drawn_when_absent():
    cfg = resolve_config(with_("seed", ...))
    r = cfg.resolved
    assert isinstance(r["seed"], int) and r["seed"] >= 0 and not cfg.seed_given
    assert r["estimator"] == {"name": "clopper-pearson", "confidence": 0.95, "delta": None}
    assert r["sweep"] == {"mode": "grid", "parameters": {}}
    assert r["plot"]["size"] == "one-column" and r["plot"]["figures"] == ["rr_tradeoff"]
    assert r["attack"]["params"]["true_fraction"] == 0.3
    # the resolved config is plain YAML and reloads to itself
    assert resolve_config(yaml.safe_load(yaml.safe_dump(r))).resolved == r


def test_grid_and_zip_sweeps():
    grid = with_("sweep", {"parameters": {"attack.params.n": [10, 20], "attack.params.epsilon": [0.5, 1.0, 2.0]}})
    cfg = resolve_config(grid)
    assert len(cfg.points) == 6 and len(cfg.trials) == 12
    assert cfg.point_configs[5]["attack"]["params"] | {} == cfg.point_configs[5]["attack"]["params"]
    assert cfg.point_configs[5]["attack"]["params"]["n"] == 20
    assert cfg.point_configs[5]["attack"]["params"]["epsilon"] == 2.0
    z = with_("sweep", {"mode": "zip", "parameters": {"attack.params.n": [10, 20], "attack.params.epsilon": [0.5, 1.0]}})
    assert [p["attack.params.n"] for p in resolve_config(z).points] == [10, 20]
    assert len(resolve_config(z).trials) == 4


def test_trial_seeds_are_spawned_children():
    import numpy as np

    cfg = resolve_config(BASE)
    children = np.random.SeedSequence(cfg.seed).spawn(len(cfg.trials))
    for t in cfg.trials:
        assert cfg.seed_sequence(t.index).generate_state(4).tolist() == children[t.index].generate_state(4).tolist()


def test_yaml_is_loaded_safely(tmp_path):
    bad = tmp_path / "evil.yaml"
    bad.write_text("name: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(ConfigError) as info:
        load_config(bad)
    assert "not valid YAML" in str(info.value)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="line"):
        load_config(broken)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_top_level_must_be_a_mapping(tmp_path):
    f = tmp_path / "list.yaml"
    f.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_config(f)


# -- property-based ---------------------------------------------------------------------------

plain = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(["n", "epsilon", "repetitions", "true_fraction", "second_coin", "p"]), value=plain)
def test_any_value_is_accepted_or_rejected_with_its_key(key, value):
    cfg = with_(f"attack.params.{key}", value)
    try:
        out = resolve_config(cfg)
    except ConfigError as exc:
        assert exc.key_path.startswith("attack.params."), exc.key_path
        assert "\n" not in str(exc)
    else:
        assert out.resolved["attack"]["params"][key] is not None or value is None


@settings(max_examples=60, deadline=None)
@given(doc=st.dictionaries(st.text(min_size=1, max_size=8), plain, max_size=4))
def test_arbitrary_top_level_never_crashes(doc):
    try:
        resolve_config(doc)
    except ConfigError as exc:
        assert isinstance(exc.key_path, str)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 10_000), eps=st.floats(0.01, 10), reps=st.integers(1, 1000), trials=st.integers(1, 20))
def test_valid_configs_round_trip(n, eps, reps, trials):
    cfg = with_("attack.params", {"n": n, "epsilon": eps, "repetitions": reps})
    cfg["trials"] = trials
    r = resolve_config(cfg).resolved
    assert r["attack"]["params"]["n"] == n and r["trials"] == trials
    assert resolve_config(yaml.safe_load(yaml.safe_dump(r))).resolved == r


def test_a_config_without_a_sweep_names_no_sweep_point():
    # Once "... (at sweep point 0: )": a point of a sweep the config does not have, with nothing after the colon.
    cfg = {"name": "a", "seed": 0, "mechanisms": [{"mechanism": "laplace"}],
           "audit": {"samples": 2000, "claim": "gdp:mu=-1"}}
    with pytest.raises(ConfigError) as info:
        resolve_config(cfg)
    assert info.value.key_path == "audit.claim" and "sweep point" not in str(info.value)
    assert str(info.value).endswith("mu must be in (0, 1e+06]; got -1.0")



def test_a_claim_split_by_a_yaml_flow_list_says_to_quote_it():
    # [dpsgd:noise=1,rate=0.1,steps=10, gdp:mu=1] is five YAML strings; the first, 'dpsgd:noise=1', once failed
    # with "missing rate, steps" alone, which does not say that the spec was cut at its commas.
    text = ("name: a\nseed: 0\nmechanisms: [laplace]\naudit: {samples: 2000}\n"
            "sweep:\n  parameters:\n    audit.claim: [dpsgd:noise=1,rate=0.1,steps=10, gdp:mu=1]\n")
    with pytest.raises(ConfigError) as info:
        resolve_config(yaml.safe_load(text))
    assert info.value.key_path == "audit.claim"
    assert "missing rate, steps; in a YAML list [a, b], quote a spec that has commas" in str(info.value)
    quoted = text.replace("[dpsgd:noise=1,rate=0.1,steps=10,", '["dpsgd:noise=1,rate=0.1,steps=10",')
    assert len(resolve_config(yaml.safe_load(quoted)).point_configs) == 2
