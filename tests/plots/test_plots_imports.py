"""``dpaudit.plots`` reads saved results without importing the runner (no import circle through it)."""

from __future__ import annotations

import json
import subprocess
import sys


def _modules_after(statement: str) -> set[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('dpaudit'))))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_importing_plots_does_not_import_the_runner():
    loaded = _modules_after("import dpaudit.plots, dpaudit.plots.figures, dpaudit.plots.style")
    assert "dpaudit.plots.figures" in loaded  # the check itself sees what was imported
    assert not any(m == "dpaudit.runner" or m.startswith("dpaudit.runner.") for m in loaded), sorted(loaded)


def test_drawing_from_saved_results_does_not_import_the_runner(tmp_path):
    # a minimal results folder written by hand: the config, no trials, an empty summary
    (tmp_path / "config.resolved.yaml").write_text("name: x\nplot: {figures: [roc, privacy_profile]}\n")
    (tmp_path / "summary.json").write_text(json.dumps({"groups": []}))
    loaded = _modules_after(f"from dpaudit.plots import draw_figures\nassert draw_figures({str(tmp_path)!r}) == []")
    assert "dpaudit.results" in loaded
    assert not any(m.startswith("dpaudit.runner") for m in loaded), sorted(loaded)
