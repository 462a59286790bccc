"""Every exit-2 message names the offending argument or file (defect D of the outside review)."""

import numpy as np
import pytest

from dpaudit._validation import check_real
from dpaudit.exceptions import ParameterValueError

LAP = '''
import numpy as np


def lap_ok(d, rng=None, size=None):
    return float(np.clip(np.asarray(d, float), 0, 1).sum()) + rng.laplace(0, 1.0, size=size)
'''


def cli(capsys, *args):
    from dpaudit.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def one_error(capsys, *args) -> str:
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == "", err
    assert err.startswith("dpaudit: error: ") and err.strip().count("\n") == 0, err
    return err


@pytest.mark.parametrize("flag", ["--samples", "--max-samples"])
def test_sample_sizes_have_a_documented_limit(flag, tmp_path, capsys):
    path = tmp_path / "t.py"
    path.write_text(LAP)
    err = one_error(capsys, "audit", f"{path}:lap_ok", "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
                    flag, "1e19")
    assert f"{flag} must be an integer in" in err and "1e+15" in err and "lam" not in err
    from dpaudit.params import AUDIT_OPTIONS, MAX_SAMPLES

    assert MAX_SAMPLES == 10**15 and "at most 1e15" in AUDIT_OPTIONS[flag[2:].replace("-", "_")].help


def test_the_ceiling_still_works_at_the_sample_limit():
    # What the limit guards: at 1e15 per side the certificate's numbers are sound; at 1e18 the ceiling is 0.
    from dpaudit.stats.bounds import ceiling, epsilon_lower_bound

    n = 10**15
    assert ceiling(n, n) > 30
    assert epsilon_lower_bound(int(0.7 * n), int(0.3 * n), n // 4, 3 * n // 4).epsilon_lower_bound == \
        pytest.approx(np.log(0.7 / 0.25), rel=1e-6)


@pytest.mark.parametrize("flag", ["--time-budget", "--timeout"])
@pytest.mark.parametrize("value", ["-1", "inf"])
def test_the_range_in_the_message_is_the_rule(flag, value, capsys):
    err = one_error(capsys, "audit", "laplace", "--epsilon", "1", flag, value)
    assert flag in err and "(0, inf)" in err and "inf]" not in err


def test_finite_ranges_are_open_at_infinity():
    with pytest.raises(ParameterValueError, match=r"x must be in \(0, inf\); got -1.0"):
        check_real(-1, "x", low=0, low_inclusive=False, finite=True)
    with pytest.raises(ParameterValueError, match=r"x must be in \(0, inf\]; got -1.0"):
        check_real(-1, "x", low=0, low_inclusive=False)  # infinity allowed: the range says so


@pytest.mark.parametrize("command", [["audit", "laplace", "--epsilon", "1"],
                                     ["search", "laplace", "--epsilon", "1", "--size", "2", "--low", "0",
                                      "--high", "1"]])
def test_a_bad_param_names_param(command, capsys):
    err = one_error(capsys, *command, "--param", "epsilon=abc")
    assert "argument --param epsilon: must be a real number" in err and "'abc'" in err
    err = one_error(capsys, *command, "--param", "nosuch=1")
    assert "argument --param" in err and "'nosuch'" in err


def test_scores_errors_name_in_or_out_and_the_file(tmp_path, capsys):
    few, many = tmp_path / "few.npy", tmp_path / "many.npy"
    np.save(few, np.arange(3.0))
    np.save(many, np.arange(100.0))
    err = one_error(capsys, "scores", str(few), str(many), "--epsilon", "1")
    assert f"IN ({few}): 3 scores; at least 20" in err and "in_scores" not in err
    err = one_error(capsys, "scores", str(many), str(few), "--epsilon", "1")
    assert f"OUT ({few}): 3 scores" in err and "out_scores" not in err
    spaces = tmp_path / "spaces.csv"
    spaces.write_text(" 1 \n 2\n\n3\n")
    assert f"IN ({spaces}): 3 scores" in one_error(capsys, "scores", str(spaces), str(many), "--epsilon", "1")


def test_a_lone_line_read_as_a_header_is_explained(tmp_path, capsys):
    semi, many = tmp_path / "semi.csv", tmp_path / "many.npy"
    semi.write_text("1;2\n")
    np.save(many, np.arange(100.0))
    err = one_error(capsys, "scores", str(semi), str(many), "--epsilon", "1")
    assert f"IN ({semi})" in err and "no numeric values" in err and "'1;2'" in err and "header" in err
    assert "one value (or record) per line" in err and "empty" not in err


def test_one_run_guesses_error_names_the_flag(tmp_path, capsys):
    scores, included = tmp_path / "s.npy", tmp_path / "i.npy"
    np.save(scores, np.arange(100.0))
    np.save(included, np.arange(100) % 2)
    err = one_error(capsys, "one-run", str(scores), str(included), "--epsilon", "1", "--guesses", "500")
    assert "argument --guesses" in err and f"SCORES ({scores})" in err


def test_one_run_help_states_the_guessing_rule(capsys):
    # The rule of dpaudit.stats.one_run.guess_counts: farthest from the median, in the scores' proportion.
    from dpaudit.cli import main

    with pytest.raises(SystemExit):
        main(["one-run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "half 'included'" not in text and "farthest from the median" in text
    assert "in the proportion the scores show" in text


@pytest.mark.parametrize("args, needle", [
    (["--claim", "gdp:mu=1_0"], "claim 'gdp:mu=1_0': mu must be a number, written without '_'"),
    (["--claim", "dpsgd:noise=1,rate=0.1,steps=1_000"], "steps must be a number, written without '_'"),
    (["--claim", "eps:1,delta=1_0e-5"], "delta must be a number, written without '_'"),
    (["--epsilon", "1_0"], "argument --epsilon: expected a number, written without '_'"),
    (["--epsilon", "1", "--confidence", "0_9"], "argument --confidence: expected a number, written without '_'"),
    (["--epsilon", "1", "--seed", "1_0"], "argument --seed: expected an integer (1e6 is allowed), written without"),
])
def test_a_number_with_an_underscore_is_refused_not_read_as_grouped_digits(args, needle, tmp_path, capsys):
    # Python's float('1_0') is 10: --claim gdp:mu=1_0 audited mu = 10, --confidence 0_9 was 9.0.
    scores = tmp_path / "s.csv"
    scores.write_text("0\n1\n" * 20)
    err = one_error(capsys, "scores", str(scores), str(scores), *args)
    assert needle in err and "got '" in err


def test_an_underscore_in_an_integer_flag_is_refused_and_scientific_notation_still_works(capsys):
    err = one_error(capsys, "audit", "laplace", "--epsilon", "1", "--samples", "1_000")
    assert "argument --samples: expected an integer (1e6 is allowed), written without '_'" in err and "'1_000'" in err
    from dpaudit.params import AUDIT_OPTIONS

    assert AUDIT_OPTIONS["samples"].parse("1e6", "--samples") == 10**6
    assert AUDIT_OPTIONS["seed"].parse("12345678901234567890123", "--seed") == 12345678901234567890123  # exact


@pytest.mark.parametrize("spec, needle", [
    ("gdp:mu=inf", "mu must be in (0, 1e+06]"), ("gdp:mu=nan", "mu must not be NaN"),
    ("dpsgd:noise=Infinity,rate=0.1,steps=1", "noise must be finite"), ("eps:inf", "epsilon must be finite"),
    ("dpsgd:noise=1,rate=0.1,steps=inf", "steps must be an integer"), ("eps:1,delta=nan", "delta must not be NaN"),
])
def test_infinity_and_nan_spellings_are_refused_in_claims(spec, needle, capsys):
    err = one_error(capsys, "audit", "laplace", "--claim", spec)
    assert needle in err


def test_an_integer_domain_without_integers_names_its_arguments(tmp_path, capsys):
    # `search --integer --low 0.5 --high 0.7` said "[low, high] = [0.5, 0.7] holds no integer", naming no argument.
    path = tmp_path / "t.py"
    path.write_text(LAP)
    err = one_error(capsys, "search", f"{path}:lap_ok", "--epsilon", "1", "--size", "3", "--low", "0.5",
                    "--high", "0.7", "--integer")
    assert "argument --integer: [--low, --high] = [0.5, 0.7] holds no integer" in err
