"""Survey witnesses: the leak printer (:mod:`dpaudit.survey.witness`) and the script writer
(``experiments/library_survey/witness.py``) on the local catalogue's buggy mean (no network).

Seeded; the buggy mean's true epsilon is 10 (its noise is a tenth of what the claim needs), so its witness's
audit certifies a violation except with probability below the audit's 0.05 at this seed.
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import numpy as np

from dpaudit.stats.verdict import Verdict
from dpaudit.survey.witness import show_leak

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def _writer():
    spec = importlib.util.spec_from_file_location("survey_witness", ROOT / "experiments/library_survey/witness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_show_leak_names_the_float_lattice_only_one_side_reaches():
    # At loc 1 about 13% of Laplace(1) doubles are odd multiples of 2^-53; at loc 2 none is (Mironov 2012).
    rng = np.random.default_rng(0)
    x0, x1 = 1.0 + rng.laplace(size=(4000, 1)), 2.0 + rng.laplace(size=(4000, 1))
    lines = []
    show_leak(x0, x1, "float-lsb", out=lines.append)
    assert any(line.split()[:1] == ["-53"] and line.endswith("only on D") for line in lines), lines
    assert any("never produced" in line for line in lines)


def test_show_leak_on_outcomes_and_thresholds():
    rng = np.random.default_rng(1)
    lines = []
    show_leak(rng.integers(0, 2, (500, 1)).astype(float), np.zeros((500, 1)), None, out=lines.append)
    assert any(line.strip().startswith("(1.0,)") and line.endswith("only on D") for line in lines), lines
    lines = []
    show_leak(rng.uniform(1, 2, (500, 1)), rng.uniform(0, 1, (500, 1)), None, out=lines.append)
    assert lines[0].startswith("threshold events") and any("only on D" in line for line in lines[2:]), lines


def _row(**changes) -> dict:
    row = {"library": "toylib", "version": "local", "entry": "mean_buggy", "function": "toylib.mean_buggy",
           "claimed_epsilon": 1.0, "claimed_delta": 0.0, "relation": "replace-one",
           "ideal": {"verdict": "violation", "epsilon_lower_bound": 2.5},
           "implementation": {"verdict": "violation", "epsilon_lower_bound": 2.4, "attack": "threshold",
                              "floating_point": None},
           "dataset": [0.0, 0.0], "neighbor": [1.0, 0.0], "parameters": {"epsilon": 1.0, "bounds": [0, 1]},
           "reproduce": "dpaudit survey ...", "seed": 12345, "status": "done"}
    row.update(changes)
    return row


def test_witness_script_quotes_the_source_and_certifies(tmp_path):
    writer = _writer()
    notes = [{"library": "toylib", "entries": ["mean_*"], "kind": "bug", "cause": "a tenth of the noise",
              "true_epsilon": "10", "docs": "the docstring claims epsilon-DP",
              "source": [{"object": "toylib.mean_buggy", "lines": ["10 * len(x)"]}]}]
    quiet = {"verdict": str(Verdict.NO_VIOLATION), "epsilon_lower_bound": 0.5}
    clean = _row(version="later", ideal=quiet, implementation=quiet)
    written = writer.generate([_row(), _row(entry="mean"), clean], str(DATA / "catalogue.yaml"), notes, tmp_path)
    assert [p.name for p, _, _ in written] == ["toylib-local-mean_buggy.py", "toylib-local-mean.py"]
    script, python, paths = written[0]
    text = script.read_text()
    assert "toylib.py (toylib.mean_buggy, from line" in text
    assert "value = x.mean() + _noise((hi - lo) / (10 * len(x) * epsilon), random_state)" in text
    assert "Later surveyed versions" not in text  # "later" is not a version the catalogue lists
    env = writer._worker_env(paths)
    env["PYTHONPATH"] += f":{ROOT}"
    done = subprocess.run([python, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "audit: violation" in done.stdout and "one call on D'" in done.stdout
    assert "Source lines responsible: not identified" in written[1][0].read_text()


def test_later_versions_reads_the_rows():
    writer = _writer()
    rows = [_row(version="1"), _row(version="2", ideal={"verdict": str(Verdict.NO_VIOLATION), "epsilon_lower_bound": 0.4})]
    assert writer.later_versions(rows, rows[0], ["1", "2"]).startswith("Later surveyed versions: 2: not flagged")
    assert writer.later_versions(rows, rows[1], ["1", "2"]) == "No later version of this entry was surveyed."


def test_a_float_pass_finding_gets_a_witness_that_runs_the_float_pass(tmp_path):
    writer = _writer()
    catalogue = tmp_path / "catalogue.yaml"
    catalogue.write_text(
        f"seed: 3\ndefaults: {{max_samples: 2000, confidence: 0.99}}\nlibraries:\n  - name: toylib\n"
        f"    path: [{str(DATA)!r}]\n    versions: [{{version: local, python: current}}]\n    entries:\n"
        "      - {id: gauss_sum, function: toylib.gauss_sum, params: {epsilon: 1.0, delta: 0.00001},\n"
        "         relation: add-remove, domain: {size: 2, low: 0, high: 1}}\n")
    passed = {"verdict": "violation", "epsilon_lower_bound": 2.3, "attack": "float-lsb", "confidence": 0.995,
              "event": "lowest set bit exponent of coordinate 0 in [-54] (likelier on D')",
              "counts": {"D": 0, "D'": 80, "held_out_per_side": 1500}, "samples": 2000}
    row = _row(entry="gauss_sum", function="toylib.gauss_sum", claimed_delta=1e-5, relation="add-remove",
               ideal={"verdict": str(Verdict.NO_VIOLATION), "epsilon_lower_bound": 0.1},
               implementation={"verdict": "violation", "epsilon_lower_bound": 2.3, "attack": "float-lsb",
                               "floating_point": None, "search_epsilon_lower_bound": 0.2, "float_pass": passed},
               dataset=[1.0, 0.0], neighbor=[0.0], parameters={"epsilon": 1.0, "delta": 1e-5}, seed=7)
    (script, python, paths), = writer.generate([row], str(catalogue), [], tmp_path / "w")
    text = script.read_text()
    assert "float_pass=True" in text and "float pass: lowest set bit exponent" in text
    env = writer._worker_env(paths)
    env["PYTHONPATH"] += f":{ROOT}"
    done = subprocess.run([python, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "float pass: violation" in done.stdout and "-54" in done.stdout


def test_compiled_source_is_printed_as_the_note_quotes_it_and_not_inspected():
    # OpenDP's noise is Rust compiled into its wheel: inspect cannot read it, so the note quotes the tag's lines.
    writer = _writer()
    compiled = {"file": "rust/src/samplers.rs", "repository": "owner/lib", "tag": "v0.4.0",
                "quote": [[482, "let value = T::from_internal(value) * scale;"]]}
    note = {"library": "toylib", "entries": ["mean_*"], "kind": "limitation", "cause": "rounding",
            "true_epsilon": "infinite", "docs": "warned", "source": [compiled]}
    assert writer.quote_sources("python-that-is-never-started", [note]) == {}
    header = writer._header(_row(), note, {}, "No later version of this entry was surveyed.", "key")
    assert "rust/src/samplers.rs (owner/lib at v0.4.0: compiled into the installed wheel):" in header
    assert "    482: let value = T::from_internal(value) * scale;" in header
