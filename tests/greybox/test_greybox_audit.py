"""Grey-box audits end to end: the verdict, the witness audits, the JSON, the command line, assert_dp, YAML."""

import json
import math

import numpy as np
import pytest

import greybox_mechanisms as M
from _cli import cli, one_line

import dpaudit
from dpaudit.greybox import GreyBoxError
from dpaudit.testing import assert_dp

FAST = dict(samples=4_000, ideal=True, traces=100)


def test_an_exact_upper_bound_above_the_claim_is_a_grey_box_violation():
    r = dpaudit.audit(M.laplace_sum_105, [1.05], [0.0], epsilon=1.0, grey_box=True, sensitivity=1.0, seed=1, **FAST)
    assert r.verdict == "violation" and r.violation_source == "grey-box"
    assert r.epsilon_lower_bound < 1.0  # the black-box bound of this size does not see it
    gb = r.grey_box
    assert gb["exact"] and math.isclose(gb["epsilon_upper_bound"], 1.05) and gb["traces"] == 100
    assert [f["kind"] for f in gb["findings"]] == ["sensitivity"]
    text = r.summary()
    assert "<= epsilon = 1.05 on this pair (exact)" in text and "violation from the grey-box exact value" in text


def test_a_correct_mechanism_is_bracketed_without_violation():
    r = dpaudit.audit(M.laplace_sum, [1.0], [0.0], epsilon=1.0, grey_box=True, seed=2, **FAST)
    assert r.verdict == "no violation found" and r.violation_source is None
    assert r.grey_box["findings"] == [] and math.isclose(r.grey_box["epsilon_upper_bound"], 1.0)
    assert r.epsilon_lower_bound <= 1.0


def test_a_leak_outside_the_noise_is_certified_through_its_witness():
    r = dpaudit.audit(M.count_beside_sum, [1.0, 0.0], [0.0], epsilon=1.0, grey_box=True, seed=3, **FAST)
    assert r.verdict == "violation" and r.violation_source == "black-box"
    (w,) = r.grey_box["witness_audits"]
    assert w["coordinates"] == [1] and w["kinds"] == ["leak-outside-noise"] and w["verdict"] == "violation"
    # two audits share the failure probability: each at 0.975, together at 0.95
    assert r.confidence == 0.95 and any("together at 0.95" in n for n in r.notes)


def test_noise_skipped_on_an_empty_bin_is_certified_through_the_bin():
    r = dpaudit.audit(M.histogram_skips_empty, [0, 1, 2, 3], [0, 1, 2], epsilon=1.0, grey_box=True, seed=4, **FAST)
    assert [f["kind"] for f in r.grey_box["findings"]] == ["control-flow"]
    assert r.verdict == "violation" and r.violation_source == "black-box"
    assert r.grey_box["witness_audits"][0]["coordinates"] == [3]


def test_a_data_dependent_scale_is_found_and_the_pair_audit_certifies_it():
    r = dpaudit.audit(M.scale_from_data, [0.0, 1.0], [0.0, 0.0], epsilon=1.0, grey_box=True, seed=5, **FAST)
    assert [f["kind"] for f in r.grey_box["findings"]] == ["data-dependent-noise"]
    assert r.verdict == "violation" and r.violation_source == "black-box"


def test_a_finding_alone_is_not_a_violation():
    def declared_too_small(data, size=None, rng=None):  # correct for sensitivity 1, declared 0.5: a finding only
        return float(np.clip(np.sum(data), 0, 1)) + rng.laplace(0.0, 1.0, size=size)

    r = dpaudit.audit(declared_too_small, [1.0], [0.0], epsilon=1.0, grey_box=True, sensitivity=0.5, seed=6, **FAST)
    assert [f["kind"] for f in r.grey_box["findings"]] == ["sensitivity"]
    assert r.verdict == "no violation found"


def test_a_target_without_rng_is_refused_in_one_line():
    def unseeded(data):
        return float(np.sum(data))

    with pytest.raises(GreyBoxError, match="takes no rng keyword"):
        dpaudit.audit(unseeded, [1.0], [0.0], epsilon=1.0, grey_box=True, samples=100)


def test_assert_dp_fails_on_the_exact_value():
    with pytest.raises(AssertionError, match=r"exact epsilon on this pair is 1\.05"):
        assert_dp(M.laplace_sum_105, [1.05], [0.0], epsilon=1.0, grey_box=True, **FAST)


def test_the_command_line_reports_the_bracket_in_json(capsys):
    target = f"{M.__file__}:laplace_sum_105"
    code, out, err = cli(capsys, *["audit", target, "--dataset", "[1.05]", "--neighbor", "[0]", "--epsilon", "1",
                              "--grey-box", "--traces", "100", "--sensitivity", "1", "--samples", "4000", "--ideal",
                              "--seed", "1", "--json"])
    assert code == 1
    d = json.loads(out)
    assert d["violation_source"] == "grey-box" and d["grey_box"]["exact"] is True
    assert {"traces", "findings", "epsilon_upper_bound", "exact"} <= set(d["grey_box"])
    assert "grey-box" in err


def test_the_command_line_refuses_a_target_without_rng(capsys, tmp_path):
    path = tmp_path / "mech.py"
    path.write_text("def release(data):\n    return float(sum(data))\n")
    code, out, err = cli(capsys, *["audit", f"{path}:release", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                              "--grey-box", "--samples", "100"])
    assert code == 2 and out == "" and "takes no rng keyword" in one_line(err)


def test_the_guide_example_runs(tmp_path, monkeypatch):
    from test_docs_examples import run_blocks

    monkeypatch.chdir(tmp_path)
    space, library, auto = run_blocks("docs/grey_box.md", tmp_path)
    assert space["report"].violation_source == "grey-box" and space["gb"]["exact"]
    assert library["var"] and "sensitivity" in [f["kind"] for f in library["report"].grey_box["findings"]]
    assert auto["report"].grey_box is None and auto["report"].notes[-1].startswith("grey-box: not possible")


def test_yaml_audit_grey_box_runs_each_trial_grey_box(tmp_path):
    from dpaudit.runner import run_experiment

    cfg = {"name": "tiny_grey", "seed": 5, "trials": 1, "mechanisms": [{"mechanism": "laplace"}],
           "audit": {"samples": 4_000, "grey_box": True, "traces": 20, "ideal": True}}
    out = run_experiment(cfg, out=tmp_path, echo=lambda s: None, progress=False, draw=False)
    (trial,) = [json.loads(line) for line in (out.directory / "trials.jsonl").read_text().splitlines()]
    gb = trial["result"]["grey_box"]
    assert gb["traces"] == 20 and gb["exact"] and math.isclose(gb["epsilon_upper_bound"], 1.0)


@pytest.mark.slow
def test_the_same_seed_gives_the_same_grey_box_json_for_every_jobs():
    kw = dict(epsilon=1.0, grey_box=True, traces=30, samples=20_000, ideal=True, seed=9)
    one = dpaudit.audit(M.laplace_sum_105, [1.05], [0.0], n_jobs=1, **kw).to_dict()
    two = dpaudit.audit(M.laplace_sum_105, [1.05], [0.0], n_jobs=2, **kw).to_dict()
    for d in (one, two):
        d.pop("elapsed_seconds")
    assert one == two


@pytest.mark.parametrize("name", sorted(M.CORRECT))
def test_correct_mechanisms_are_no_violation(name):
    # seeded: the black-box side's false alarm has probability <= 5% per audit over seeds, and this seed passes
    fn, d1, d2, delta, true, exact = M.CORRECT[name]
    eps = max(M.EPSILON, true)  # each one's own claim: epsilon 1, randomized response's ln 3
    r = dpaudit.audit(fn, d1, d2, epsilon=eps, delta=delta, grey_box=True, sensitivity=1.0, seed=11,
                      samples=4_000, ideal=True, traces=50)
    assert r.verdict == "no violation found" and r.grey_box["findings"] == []
    assert r.grey_box["exact"] == exact and r.grey_box["epsilon_upper_bound"] >= true * (1 - 1e-9)


# --------------------------------------------------------------------------- grey_box="auto": black-box when it must
def _no_rng(data, size=None):
    return float(np.sum(data)) + np.random.default_rng().laplace(0.0, 1.0, size=size)


def test_auto_falls_back_to_the_black_box_audit_with_a_note():
    kw = dict(epsilon=1.0, samples=4_000, ideal=True, seed=12)
    r = dpaudit.audit(_no_rng, [1.0], [0.0], grey_box="auto", **kw)
    assert r.grey_box is None and r.violation_source is None
    (note,) = [n for n in r.notes if n.startswith("grey-box: not possible")]
    assert "takes no rng keyword" in note and "grey_box='auto'" in note
    plain = dpaudit.audit(_no_rng, [1.0], [0.0], **kw)
    assert r.to_dict()["grey_box"] is None and {k for k in plain.to_dict()} == {k for k in r.to_dict()}


def test_auto_falls_back_when_the_noise_comes_from_another_generator():
    def seeds_only(data, size=None, rng=None):  # the rng only seeds the generator that draws the noise
        return float(np.sum(data)) + np.random.default_rng(int(rng.integers(2**62))).laplace(0.0, 1.0, size=size)

    with pytest.raises(GreyBoxError, match="draws only seeds"):
        dpaudit.audit(seeds_only, [1.0], [0.0], epsilon=1.0, grey_box=True, **FAST)
    r = dpaudit.audit(seeds_only, [1.0], [0.0], epsilon=1.0, grey_box="auto", seed=13, **FAST)
    assert r.grey_box is None and any("draws only seeds" in n for n in r.notes)


def test_auto_on_a_recordable_target_is_the_grey_box_audit():
    strict = dpaudit.audit(M.laplace_sum_105, [1.05], [0.0], epsilon=1.0, grey_box=True, sensitivity=1.0, seed=1,
                           **FAST).to_dict()
    auto = dpaudit.audit(M.laplace_sum_105, [1.05], [0.0], epsilon=1.0, grey_box="auto", sensitivity=1.0, seed=1,
                         **FAST).to_dict()
    for d in (strict, auto):
        d.pop("elapsed_seconds", None)
    assert auto == strict


@pytest.mark.parametrize("value, message", [("yes", "grey_box must be true, false or 'auto'; got 'yes'"),
                                            ("Auto", "did you mean 'auto'")])
def test_grey_box_takes_a_bool_or_auto(value, message):
    with pytest.raises(dpaudit.exceptions.ParameterValueError, match=message):
        dpaudit.audit(M.laplace_sum, [1.0], [0.0], epsilon=1.0, grey_box=value, samples=100)


def test_the_command_line_auto_runs_black_box_with_a_note(capsys, tmp_path):
    path = tmp_path / "mech.py"
    path.write_text("import numpy as np\n\ndef release(data):\n    return float(sum(data)) + "
                    "np.random.default_rng().laplace()\n")
    # The target draws from fresh entropy, so --seed cannot fix its releases: a claim of twice its true epsilon 1
    # keeps "no violation found" from being a 5% coin (2,000 releases per side certify about 0.7).
    args = ["audit", f"{path}:release", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "2", "--samples", "2000",
            "--ideal", "--seed", "3", "--json"]
    code, out, err = cli(capsys, *args[:-1], "--grey-box", "auto", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["grey_box"] is None and any("grey-box: not possible" in n for n in d["notes"])
    code, out, err = cli(capsys, *args[:-1], "--grey-box", "--json")  # the strict form: one line, exit 2
    assert code == 2 and out == "" and "takes no rng keyword" in one_line(err)
    code, out, err = cli(capsys, *args[:-1], "--grey-box=sometimes", "--json")
    assert code == 2 and "--grey-box must be true, false or 'auto'; got 'sometimes'" in one_line(err)


def test_yaml_grey_box_auto_and_its_check(tmp_path):
    from dpaudit.exceptions import ConfigError
    from dpaudit.runner import run_experiment

    cfg = {"name": "tiny_auto", "seed": 5, "trials": 1, "mechanisms": [{"target": f"{__file__}:_no_rng", "label": "no_rng",
                                                                         "epsilon": 1.0, "dataset": [1.0],
                                                                         "neighbor": [0.0]}],
           "audit": {"samples": 2_000, "grey_box": "auto", "traces": 20, "ideal": True}}
    out = run_experiment(cfg, out=tmp_path, echo=lambda s: None, progress=False, draw=False)
    (trial,) = [json.loads(line) for line in (out.directory / "trials.jsonl").read_text().splitlines()]
    assert trial["result"]["grey_box"] is None
    assert any(n.startswith("grey-box: not possible") for n in trial["result"]["notes"])
    cfg["audit"]["grey_box"] = "maybe"
    with pytest.raises(ConfigError, match=r"audit\.grey_box: expected true, false or 'auto', got 'maybe'"):
        run_experiment(cfg, out=tmp_path / "bad", echo=lambda s: None, progress=False, draw=False)


def test_assert_dp_with_auto_passes_on_the_black_box_audit():
    report = assert_dp(_no_rng, [1.0], [0.0], epsilon=1.0, grey_box="auto", samples=2_000, ideal=True)
    assert report.grey_box is None and any(n.startswith("grey-box: not possible") for n in report.notes)


def test_the_flag_before_the_target_reads_the_target_as_the_target(capsys):
    """``--grey-box TARGET``: the flag takes a value only when it is one of its own (``auto``), so the target
    that follows it is never read as the flag's value; ``=true`` / ``=false`` spell the plain forms."""
    base = ["--epsilon", "1", "--samples", "2000", "--traces", "100", "--ideal", "--seed", "3", "--json"]
    code, out, err = cli(capsys, "audit", "--grey-box", "laplace", *base)
    first = json.loads(out)
    assert code in (0, 1) and first["target"] == "laplace" and first["grey_box"]["traces"] == 100
    for spelled in (["laplace", "--grey-box=true"], ["laplace", "--grey-box", "auto"], ["--grey-box=auto", "laplace"]):
        code, out, err = cli(capsys, "audit", *spelled, *base)
        again = json.loads(out)
        again.pop("elapsed_seconds"), first.pop("elapsed_seconds", None)
        assert again == first, spelled
    code, out, err = cli(capsys, "audit", "laplace", "--grey-box=false", *base)
    assert json.loads(out)["grey_box"] is None


def _raises(data, rng):
    rng.laplace()
    raise ValueError("target exploded")


def _nan(data, rng):
    rng.laplace()
    return float("nan")


@pytest.mark.parametrize("fn, words", [(_raises, "raised ValueError: target exploded"), (_nan, "returned NaN")])
def test_a_target_that_fails_in_a_trace_is_named_as_in_a_black_box_audit(fn, words):
    # Both were dpaudit's own error: "internal error: ValueError" (exit 3), and NaN read as "released different
    # values from the same recorded draws".
    with pytest.raises(dpaudit.exceptions.TargetError, match=f"target '.*' {words} in a grey-box trace"):
        dpaudit.audit(fn, [1.0], [0.0], epsilon=1.0, grey_box=True, samples=200, seed=1, ideal=True)


def test_a_certified_lower_bound_above_the_claim_names_the_black_box_as_the_source():
    # Laplace noise of scale 1/2 on a count claimed at 0.5 (true 2): the black-box bound clears the claim, and the
    # exact upper bound 2 does too; the certified bound, which assumes least, is named (it was "grey-box").
    def scale_half(data, size=None, rng=None):
        return float(np.clip(np.sum(data), 0.0, 1.0)) + rng.laplace(0.0, 0.5, size=size)

    r = dpaudit.audit(scale_half, [1.0], [0.0], epsilon=0.5, grey_box=True, samples=5000, seed=1, ideal=True)
    assert r.epsilon_lower_bound > 0.5 and r.grey_box["exact"] and r.grey_box["epsilon_upper_bound"] > 0.5
    assert r.verdict == "violation" and r.violation_source == "black-box"
