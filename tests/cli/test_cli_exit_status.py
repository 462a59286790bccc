"""Exit status 2 only for bad input, 3 for a bug in dpaudit (a plotting bug once said ``dpaudit: error: math domain
error``, exit 2, as if the user had erred).

Exit 2 comes from dpaudit's own errors (:class:`~dpaudit.exceptions.DPAuditError`) and argparse; a plain
``ValueError`` or ``TypeError`` reaching the command line is an internal error.  So every path where user input
used to raise a raw one is converted here to a dpaudit error naming the argument or file.
"""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _cli import cli, one_line
from dpaudit.cli import main


# --------------------------------------------------------------------------- a bug inside dpaudit: exit 3
@pytest.mark.parametrize("exc", [ValueError("boom"), TypeError("boom"), ZeroDivisionError("boom")])
def test_an_internal_value_or_type_error_exits_3_naming_its_type(monkeypatch, capsys, exc):
    import dpaudit.auditor

    def broken(*args, **kwargs):
        raise exc

    monkeypatch.delenv("DPAUDIT_DEBUG", raising=False)
    monkeypatch.setattr(dpaudit.auditor, "audit", broken)
    code, out, err = cli(capsys, "audit", "laplace", "--epsilon", "1", "--samples", "200", "--seed", "1")
    line = one_line(err)
    assert code == 3 and out == ""
    assert line == f"dpaudit: internal error: {type(exc).__name__}: boom (set DPAUDIT_DEBUG=1 for a traceback)"


def test_a_plotting_bug_is_an_internal_error(monkeypatch, capsys, tmp_path):
    import math

    import dpaudit.plots

    monkeypatch.delenv("DPAUDIT_DEBUG", raising=False)
    monkeypatch.setattr(dpaudit.plots, "draw_figures", lambda *a, **k: math.log(0))
    code, _, err = cli(capsys, "plot", tmp_path)
    assert code == 3 and one_line(err).startswith("dpaudit: internal error: ValueError: math domain error")


def test_debug_shows_the_traceback_of_an_internal_error(monkeypatch):
    import dpaudit.auditor

    monkeypatch.setenv("DPAUDIT_DEBUG", "1")
    monkeypatch.setattr(dpaudit.auditor, "audit", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        main(["audit", "laplace", "--epsilon", "1", "--samples", "200"])


# --------------------------------------------------------------------------- user input once a raw error: exit 2
LONG = "x" * 5000  # longer than any file name the OS takes: OSError "File name too long"


@pytest.mark.parametrize("args, needle", [
    (["audit", "laplace", "--epsilon", "1", "--dataset", LONG, "--neighbor", "[0]"], "--dataset: cannot use"),
    (["audit", "laplace", "--epsilon", "1", "--dataset", "[0]", "--neighbor", LONG], "--neighbor: cannot use"),
    (["scores", LONG, "{csv}", "--epsilon", "1"], "IN (xxx"),
    (["one-run", "{csv}", LONG, "--epsilon", "1"], "INCLUDED (xxx"),
    (["audit", "laplace", "--epsilon", "1", "--dataset", "[" * 5000, "--neighbor", "[0]"],
     "--dataset: invalid JSON array literal: nested too deeply"),
    (["audit", "laplace", "--epsilon", "1", "--samples", "200", "--param", "epsilon=1" + "0" * 400],
     "argument --param epsilon: must be finite"),
    (["search", "laplace", "--epsilon", "1", "--size", "1e200", "--low", "0", "--high", "1"],
     "--size must be an integer in [1, 1e+07]"),
    (["run", "bad\x01name\x00.yaml"], "cannot read the config"),
    (["plot", LONG], "cannot read the results folder"),
])
def test_user_input_that_raised_a_raw_error_exits_2_naming_it(capsys, tmp_path, args, needle):
    csv = tmp_path / "s.csv"
    csv.write_text("0\n1\n" * 20)
    code, out, err = cli(capsys, *[a.replace("{csv}", str(csv)) for a in args])
    assert code == 2 and out == ""
    line = one_line(err)
    assert line.startswith("dpaudit: error: ") and needle in line, line


@pytest.mark.parametrize("files, needle", [
    ({"config.resolved.yaml": "name: x\n", "summary.json": "{not json"}, "summary.json: cannot read"),
    ({"config.resolved.yaml": "name: [unclosed\n"}, "config.resolved.yaml: cannot read"),
    ({"config.resolved.yaml": "- a list\n"}, "config.resolved.yaml: not a config written by dpaudit run"),
    ({"config.resolved.yaml": "plot: 3\n"}, "config.resolved.yaml: not a config written by dpaudit run"),
    ({"config.resolved.yaml": b"\xff\xfe"}, "config.resolved.yaml: cannot read: not UTF-8"),
])
def test_plot_on_a_damaged_results_folder_names_the_file(capsys, tmp_path, files, needle):
    for name, text in files.items():
        (tmp_path / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    code, _, err = cli(capsys, "plot", tmp_path)
    assert code == 2 and needle in one_line(err)


def test_resume_on_a_damaged_saved_config_names_it(capsys, tmp_path):
    cfg = {"name": "tiny", "seed": 3, "trials": 1,
           "attack": {"name": "rr_tradeoff", "params": {"repetitions": 20, "epsilon": 1.0}}}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    (tmp_path / "out" / "tiny").mkdir(parents=True)
    (tmp_path / "out" / "tiny" / "config.resolved.yaml").write_text("seed: [unclosed\n")
    code, _, err = cli(capsys, "run", path, "--out", tmp_path / "out", "--resume", "--no-plots")
    assert code == 2 and "--resume:" in one_line(err) and "config.resolved.yaml" in err


def test_a_yaml_number_too_large_for_a_float_names_the_key(capsys, tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("name: big\nattack: {name: rr_tradeoff, params: {epsilon: 1.0, true_fraction: 1" + "0" * 400 + "}}\n")
    code, _, err = cli(capsys, "run", path, "--out", tmp_path / "out")
    assert code == 2 and "attack.params.true_fraction" in one_line(err)


# --------------------------------------------------------------------------- fuzz: malformed input is never exit 3
JUNK = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e400", "-1e400", "1" + "0" * 400, "1,2", "0x10", "[]", "{}",
                     "[1", "null", "true", "1e-400", "..", "~nobody/x", "\x00", "x" * 300]),
)
OPTIONS = ["--epsilon", "--delta", "--samples", "--max-samples", "--confidence", "--seed", "--time-budget",
           "--timeout", "--claim", "--attack", "--estimator", "--backend"]
CLAIMS = ["gdp:mu={}", "eps:{}", "eps:1,delta={}", "dpsgd:noise={},rate=0.1,steps=10", "dpsgd:noise=1,rate={},steps=10",
          "dpsgd:noise=1,rate=0.1,steps={}", "profile:{}", "{}"]
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def assert_exit_2(code, err):
    assert code == 2, (code, err)
    assert one_line(err).startswith("dpaudit: error: "), err


def assert_never_3(code, err):
    """A value that happens to be valid runs (0 or 1); anything else is bad input: exit 2 and one line."""
    if code not in (0, 1):
        assert_exit_2(code, err)


def _is_valid(option: str, value: str) -> bool:
    """Whether ``value`` happens to be a valid value of ``option`` (then the audit would run: skip it)."""
    from dpaudit.exceptions import DPAuditError
    from dpaudit.params import AUDIT_OPTIONS

    row = next(o for o in AUDIT_OPTIONS.values() if o.flag == option)
    try:
        row.parse(value, option)
    except DPAuditError:
        return False
    return True


@FUZZ
@given(option=st.sampled_from(OPTIONS), value=JUNK)
def test_fuzz_audit_options(capsys, option, value):
    if value.startswith("-") or _is_valid(option, value):
        return  # argparse reads a leading '-' as a flag (still exit 2, tested elsewhere); a valid value audits
    args = ["audit", "laplace", "--samples", "200", "--seed", "1"]
    args += [option, value] if option in ("--epsilon", "--claim") else ["--epsilon", "1", option, value]
    if option in ("--samples", "--seed"):
        args = ["audit", "laplace", "--epsilon", "1", option, value]
    assert_exit_2(*cli(capsys, *args)[::2])


@FUZZ
@given(template=st.sampled_from(CLAIMS), value=JUNK)
def test_fuzz_claim_specs(capsys, template, value):
    spec = template.format(value)
    if spec.startswith("-") or _is_valid("--claim", spec):
        return
    code, _, err = cli(capsys, "scores", "[1,2,3,4,5,6,7,8,9,10]", "[1,2,3,4,5,6,7,8,9,10]", "--claim", spec)
    assert_exit_2(code, err)


@FUZZ
@given(which=st.sampled_from(["--dataset", "--neighbor", "--param", "IN", "SCORES", "INCLUDED", "CONFIG", "PLOT"]),
       value=st.one_of(JUNK, st.sampled_from(["[[1,2],[3]]", "[\"a\"]", "[1e400]", "[[]]", "[[[1]]]", "{csv}",
                                              "{bad_csv}", "{empty}", "{dir}", "[true, 1]", "1"])))
def test_fuzz_dataset_and_file_arguments(capsys, tmp_path_factory, which, value):
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "s.csv").write_text("score\n" + "0\n1\n" * 20)
    (folder / "bad.csv").write_text("a,b\n1\n2,x\n")
    (folder / "empty.json").write_text("")
    for slot, path in (("{csv}", folder / "s.csv"), ("{bad_csv}", folder / "bad.csv"),
                       ("{empty}", folder / "empty.json"), ("{dir}", folder)):
        value = value.replace(slot, str(path)) if value == slot else value
    if value.startswith("-"):
        return
    csv = str(folder / "s.csv")
    args = {"--dataset": ["audit", "laplace", "--epsilon", "1", "--samples", "200", "--dataset", value,
                          "--neighbor", "[0]"],
            "--neighbor": ["audit", "laplace", "--epsilon", "1", "--samples", "200", "--dataset", "[0]",
                           "--neighbor", value],
            "--param": ["audit", "laplace", "--epsilon", "1", "--samples", "200", "--param", f"epsilon={value}"],
            "IN": ["scores", value, csv, "--epsilon", "1"],
            "SCORES": ["one-run", value, csv, "--epsilon", "1"],
            "INCLUDED": ["one-run", csv, value, "--epsilon", "1"],
            "CONFIG": ["run", value, "--out", folder / "out"],
            "PLOT": ["plot", value]}[which]
    assert_never_3(*cli(capsys, *args)[::2])


YAML_JUNK = st.one_of(st.none(), st.booleans(), st.integers(min_value=-10**500, max_value=10**500),
                      st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
                      st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
YAML_KEYS = [("trials",), ("seed",), ("name",), ("attack", "name"), ("attack", "params", "epsilon"),
             ("attack", "params", "n"), ("attack", "params", "repetitions"), ("attack", "params", "true_fraction"),
             ("attack", "params", "second_coin"), ("estimator",), ("plot",), ("sweep",), ("attack", "params")]


@FUZZ
@given(key=st.sampled_from(YAML_KEYS), value=YAML_JUNK)
def test_fuzz_yaml_configs_with_wrong_types(capsys, tmp_path_factory, key, value):
    from dpaudit.runner.schema import load_config

    folder = tmp_path_factory.mktemp("yaml")
    cfg = {"name": "fz", "seed": 3, "trials": 1,
           "attack": {"name": "rr_tradeoff", "params": {"repetitions": 20, "epsilon": 1.0}}}
    node = cfg
    for part in key[:-1]:
        node = node[part]
    node[key[-1]] = value
    path = folder / "fz.yaml"
    path.write_text(yaml.safe_dump(cfg))
    try:
        load_config(path)
    except Exception:  # noqa: BLE001 - only an invalid config is run below
        code, _, err = cli(capsys, "run", path, "--out", folder / "out", "--no-plots")
        assert_exit_2(code, err)


def test_scores_json_is_still_one_object(capsys):
    # The narrowing leaves successful commands alone.
    code, out, _ = cli(capsys, "scores", json.dumps(list(range(40))), json.dumps(list(range(40))), "--epsilon", "1",
                       "--json", "--seed", "1")
    assert code in (0, 1) and json.loads(out)["verdict"]


# --------------------------------------------------------------------------- extreme but well-formed values: exit 2
@pytest.mark.parametrize("args, named", [
    (["--claim", "gdp:mu=1e300"], "mu must be in (0, 1e+06]"),
    (["--claim", "dpsgd:noise=1e-300,rate=1,steps=1000"],  # the spec, as every claim's message names it
     "claim 'dpsgd:noise=1e-300,rate=1,steps=1000': dp_accounting cannot compute the curve"),
    (["--claim", "dpsgd:noise=1e-300,rate=1,steps=1000000000"],
     "steps must be an integer in [1, 1e+07]; got 1000000000"),
    (["--epsilon", "1", "--jobs", "99999999999"], "--jobs must be an integer in [-1, 100000]"),
])
def test_extreme_values_are_bad_input_not_internal_errors(monkeypatch, capsys, args, named):
    """Each used to end in an internal error (IndexError, OverflowError in dp_accounting or in the process pool),
    or in numpy's warnings before the error line."""
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", "off")
    code, out, err = cli(capsys, "audit", "laplace", "--samples", "2000", "--seed", "1", *args)
    assert code == 2 and out == "" and named in one_line(err)
