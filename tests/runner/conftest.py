"""Shared fixtures: tiny configs of the cheap rr_tradeoff kind (no dependency on unfinished pieces)."""

from __future__ import annotations

import pytest
import yaml


def tiny_config(name="tiny", trials=3, repetitions=200, seed=11):
    return {
        "name": name,
        "seed": seed,
        "trials": trials,
        "attack": {"name": "rr_tradeoff", "params": {"repetitions": repetitions}},
        "sweep": {"parameters": {"attack.params.n": [10, 1000], "attack.params.epsilon": [0.5, 2.0]}},
    }


@pytest.fixture(name="tiny_config")
def _tiny_config():
    return tiny_config


@pytest.fixture
def tiny_yaml(tmp_path):
    def make(**kw):
        cfg = tiny_config(**kw)
        path = tmp_path / f"{cfg['name']}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        return path

    return make
