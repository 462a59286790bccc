"""The ``search`` experiment kind and configs/search.yaml (issue 13).

The run checks verdicts of a correct and a broken sum over three trials: the
broken one leaks 100x its claim on the outlier pairs the search tries first
(missing it would take a many-sigma deviation); the correct one is flagged
with probability <= 5% per trial by construction, so two or more flags of
three happen with probability <= 0.0073 (a single trial, at 5%, was flagged
at seed 5 once the search chose a different worst-case pair: 1.024 > 1).
"""

from pathlib import Path

import pytest
import yaml

from dpaudit.exceptions import ConfigError
from dpaudit.runner import run_experiment
from dpaudit.runner.schema import load_config

ROOT = Path(__file__).resolve().parents[2]
QUIET = {"progress": False, "echo": lambda *_: None}


def _config(**params):
    base = {"target": "laplace", "size": 4, "low": 0, "high": 100, "max_samples": 20000}
    base.update(params)
    return {"name": "search-test", "seed": 5, "trials": 3, "attack": {"name": "search", "params": base},
            "sweep": {"parameters": {"attack.params.target": ["laplace", "unclipped_sum"]}}}


def test_shipped_config_validates():
    cfg = load_config(ROOT / "configs" / "search.yaml")
    assert cfg.kind.name == "search"
    assert cfg.resolved["attack"]["params"]["size"] == 5


def test_search_kind_runs_and_flags_the_broken_sum(tmp_path):
    out = run_experiment(_config(), out=tmp_path, draw=False, **QUIET)
    groups = {g["sweep"]["attack.params.target"]: g for g in out.summary["groups"]}
    assert groups["unclipped_sum"]["violations"] == 3
    assert groups["laplace"]["violations"] <= 1
    dataset, neighbor = groups["unclipped_sum"]["pairs"][0]
    assert len(dataset) == 4 and len(neighbor) == 3  # add/remove: the built-in's own relation
    trial = [t for t in (tmp_path / "search-test" / "trials.jsonl").read_text().splitlines()][0]
    assert '"candidates_screened"' in trial and '"timing"' in trial


@pytest.mark.parametrize("params, key", [
    ({"size": None, "target": "tests/nowhere.py:f"}, "attack.params.target"),
    ({"size": None, "target": str(ROOT / "tests" / "search" / "user_domain_targets.py") + ":clipped_sum"},
     "attack.params.size"),  # a user target declares no domain (a built-in may: input_domain())
    ({"high": -1}, "attack.params.high"),
    ({"relation": "swap"}, "attack.params.relation"),
    ({"finalists": 0}, "attack.params.finalists"),
])
def test_bad_search_configs_name_the_key(params, key, tmp_path):
    cfg = _config(**params)
    cfg["sweep"] = {}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    with pytest.raises(ConfigError, match=f"^{key}"):
        load_config(path)
