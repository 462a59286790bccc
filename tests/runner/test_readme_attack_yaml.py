"""The README says the attacks have no command of their own and shows them as a YAML experiment: that YAML is valid."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from dpaudit.runner import load_config

ROOT = Path(__file__).resolve().parents[2]


def test_the_readmes_differencing_experiment_validates():
    readme = (ROOT / "README.md").read_text()
    assert "no `dpaudit attack`" in readme
    blocks = [b for b in re.findall(r"^```yaml\n(.*?)^```", readme, re.S | re.M) if "name: differencing" in b]
    assert len(blocks) == 1
    config = load_config(yaml.safe_load(blocks[0]))
    assert config.kind.name == "differencing" and len(config.trials) == 6
    for name in ("tracing", "reconstruction"):
        assert f"dpaudit run configs/{name}.yaml" in readme and (ROOT / "configs" / f"{name}.yaml").is_file()
