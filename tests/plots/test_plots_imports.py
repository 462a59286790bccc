"""``dpaudit.plots`` reads saved results without importing the runner (no import circle through it)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_importing_plots_and_drawing_from_saved_results_do_not_import_the_runner(tmp_path):
    # One fresh interpreter for both checks (a start costs seconds on a loaded machine): the modules
    # loaded after importing the plots, then after drawing from a minimal results folder written by hand.
    (tmp_path / "config.resolved.yaml").write_text("name: x\nplot: {figures: [roc, privacy_profile]}\n")
    (tmp_path / "summary.json").write_text(json.dumps({"groups": []}))
    code = (
        "import json, sys\n"
        "def loaded():\n"
        "    return sorted(m for m in sys.modules if m.startswith('dpaudit'))\n"
        "import dpaudit.plots, dpaudit.plots.figures, dpaudit.plots.style\n"
        "after_import = loaded()\n"
        "from dpaudit.plots import draw_figures\n"
        f"assert draw_figures({str(tmp_path)!r}) == []\n"
        "print(json.dumps([after_import, loaded()]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    after_import, after_drawing = (set(m) for m in json.loads(proc.stdout.strip().splitlines()[-1]))
    assert "dpaudit.plots.figures" in after_import  # the check itself sees what was imported
    assert "dpaudit.results" in after_drawing
    for loaded in (after_import, after_drawing):
        assert not any(m == "dpaudit.runner" or m.startswith("dpaudit.runner.") for m in loaded), sorted(loaded)
