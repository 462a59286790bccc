"""dpaudit one-run, dpaudit.audit_one_run and the dpaudit.one_run harness: formats, errors, JSON, verdicts."""

import json

import numpy as np
import pytest

import dpaudit
from dpaudit.cli import main
from dpaudit.exceptions import DatasetError, ParameterValueError

FIELDS = {"epsilon_lower_bound", "claimed_epsilon", "claimed_delta", "confidence", "canaries", "guesses", "correct",
          "verdict", "claim", "curve_violation", "ceiling", "guess_rule", "grid", "counts"}


def strong_scores(m=1000, seed=0):
    """Scores that leak a lot: each is its bit plus Laplace(1/3) noise, so 3-DP per canary."""
    rng = np.random.default_rng(seed)
    inc = rng.integers(0, 2, m)
    return inc + rng.laplace(0.0, 1.0 / 3.0, m), inc


@pytest.fixture
def files(tmp_path):
    s, inc = strong_scores()
    np.save(tmp_path / "s.npy", s)
    np.save(tmp_path / "i.npy", inc)
    (tmp_path / "s.csv").write_text("score\n" + "\n".join(repr(float(x)) for x in s) + "\n")
    (tmp_path / "i.csv").write_text("\n".join(str(int(x)) for x in inc) + "\n")
    (tmp_path / "s.json").write_text(json.dumps(s.tolist()))
    (tmp_path / "i.json").write_text(json.dumps(inc.tolist()))
    return tmp_path


def run(argv, capsys):
    code = main(["one-run", *map(str, argv)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize("ext", ["npy", "csv", "json"])
def test_every_file_format_gives_the_same_json(files, ext, capsys):
    code, out, _ = run([files / f"s.{ext}", files / f"i.{ext}", "--epsilon", "1", "--json"], capsys)
    d = json.loads(out)
    assert code == 1 and d["verdict"] == "violation" and FIELDS <= set(d)
    ref = dpaudit.audit_one_run(*strong_scores(), epsilon=1.0).to_dict()
    assert d == json.loads(json.dumps(ref))
    assert d["canaries"] == 1000 and d["claimed_epsilon"] == 1.0 and d["claimed_delta"] == 0.0
    assert d["confidence"] == 0.95 and d["claim"] is None and d["epsilon_lower_bound"] > 1.0


def test_exit_zero_and_human_output(files, capsys):
    code, out, err = run([files / "s.npy", files / "i.npy", "--epsilon", "3", "--delta", "1e-5"], capsys)
    assert code == 0 and err == ""
    assert "NO VIOLATION FOUND" in out and "delta = 1e-05" in out and "Bonferroni" in out and "ceiling" in out


def test_guesses_fixes_the_number_of_guesses(files, capsys):
    code, out, _ = run([files / "s.npy", files / "i.npy", "--epsilon", "1", "--guesses", "200", "--json"], capsys)
    d = json.loads(out)
    assert d["guesses"] == 200 and d["guess_rule"] == "fixed" and d["grid"] == [200]
    assert d["grid_confidence"] == pytest.approx(0.95)
    top = np.argsort(-strong_scores()[0], kind="stable")
    inc = strong_scores()[1]
    expected = int(inc[top[:100]].sum() + (1 - inc[top[-100:]]).sum())
    assert d["correct"] == expected
    assert d["epsilon_lower_bound"] == pytest.approx(dpaudit.stats.one_run_epsilon(1000, 200, expected), abs=1e-12)


def test_claim_gives_claim_and_curve_violation(files, capsys):
    code, out, _ = run([files / "s.npy", files / "i.npy", "--claim", "gdp:mu=0.5", "--json"], capsys)
    d = json.loads(out)
    assert code == 1 and d["claim"] == "gdp:mu=0.5"
    cv = d["curve_violation"]
    assert cv["delta"] == d["claimed_delta"] and cv["epsilon_lower_bound"] == d["epsilon_lower_bound"]
    assert cv["claimed_epsilon"] == d["claimed_epsilon"] < d["epsilon_lower_bound"]
    code, out, _ = run([files / "s.npy", files / "i.npy", "--claim", "gdp:mu=10", "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["curve_violation"] is None and d["verdict"] == "no violation found"


def test_a_point_claim_spec_is_the_epsilon_flags(files, capsys):
    _, a, _ = run([files / "s.npy", files / "i.npy", "--epsilon", "2", "--delta", "1e-5", "--json"], capsys)
    _, b, _ = run([files / "s.npy", files / "i.npy", "--claim", "eps:2,delta=1e-5", "--json"], capsys)
    a, b = json.loads(a), json.loads(b)
    assert a.pop("claim") is None and b.pop("claim") == "eps:2,delta=1e-5" and a == b


@pytest.mark.parametrize("make,argv_tail,needle", [
    (lambda p: p.joinpath("x.txt").write_text("1\n2\n"), ["x.txt", "i.npy"], "SCORES: 'x.txt'"),
    (None, ["missing.npy", "i.npy"], "SCORES: file not found"),
    (lambda p: np.save(p / "short.npy", np.zeros(999)), ["short.npy", "i.npy"], "lengths differ (999 scores, 1000"),
    (lambda p: np.save(p / "two.npy", np.r_[np.zeros(999, int), 2]), ["s.npy", "two.npy"],
     "INCLUDED 'two.npy': values must be 0 or 1 (whether each canary was included); got 2 at index 999"),
    (lambda p: p.joinpath("nan.csv").write_text("s\n1\nnan\n"), ["nan.csv", "i.npy"], "NaN"),
    (lambda p: np.save(p / "m.npy", np.zeros((10, 100))), ["m.npy", "i.npy"], "SCORES: expected one value per"),
    (lambda p: p.joinpath("bad.json").write_text("{oops"), ["bad.json", "i.npy"], "SCORES: 'bad.json': cannot read"),
])
def test_bad_inputs_exit_2_with_one_line_naming_the_file(files, make, argv_tail, needle, capsys, monkeypatch):
    monkeypatch.chdir(files)
    if make is not None:
        make(files)
    code, out, err = run([*argv_tail, "--epsilon", "1"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dpaudit: error: ") and "Traceback" not in err
    assert needle in err, err


@pytest.mark.parametrize("argv,needle", [
    ([], "--epsilon (or --claim"),
    (["--epsilon", "1", "--claim", "gdp:mu=1"], "not both"),
    (["--epsilon", "1", "--guesses", "1001"], "--guesses: must be at most the number of canaries (1000)"),
    (["--epsilon", "1", "--guesses", "0"], "guesses"),
    (["--epsilon", "-1"], "--epsilon"),
    (["--epsilon", "1", "--confidence", "1.5"], "--confidence"),
    (["--claim", "gdp:mu=-1"], "--claim"),
])
def test_usage_errors_exit_2(files, argv, needle, capsys):
    code, out, err = run([files / "s.npy", files / "i.npy", *argv], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and needle in err, err


# ----------------------------------------------------------------------------- Python
def test_python_report_object():
    s, inc = strong_scores()
    r = dpaudit.audit_one_run(s, inc, epsilon=1.0, confidence=0.9)
    assert isinstance(r, dpaudit.OneRunReport) and r.violation and r.confidence == 0.9
    d = r.to_dict()
    assert FIELDS <= set(d) and all(getattr(r, k) == d[k] for k in FIELDS)
    assert "scores" not in d and r.scores.shape == (1000,) and r.inclusion.sum() == d["included"]
    assert "VIOLATION" in str(r) and str(r) == r.summary()
    json.dumps(d)


def test_python_accepts_files_and_names_the_keyword(files):
    a = dpaudit.audit_one_run(str(files / "s.csv"), files / "i.json", epsilon=1.0)
    assert a.to_dict() == dpaudit.audit_one_run(*strong_scores(), epsilon=1.0).to_dict()
    with pytest.raises(DatasetError, match="^included: values must be 0 or 1"):
        dpaudit.audit_one_run([0.1, 0.2], [0, 3], epsilon=1.0)
    with pytest.raises(DatasetError, match="^scores and included: lengths differ"):
        dpaudit.audit_one_run([0.1, 0.2, 0.3], [0, 1], epsilon=1.0)
    with pytest.raises(ParameterValueError, match="guesses must be at most"):
        dpaudit.audit_one_run([0.1, 0.2], [0, 1], epsilon=1.0, guesses=3)
    with pytest.raises(ParameterValueError, match="not both"):
        dpaudit.audit_one_run([0.1, 0.2], [0, 1], epsilon=1.0, claim="gdp:mu=1")
    with pytest.raises(ParameterValueError, match="epsilon is required"):
        dpaudit.audit_one_run([0.1, 0.2], [0, 1])


# ----------------------------------------------------------------------------- the harness
class NoisySum:
    """A user-style training function: the sum of the records plus N(0, sigma^2) noise per coordinate.

    A canary is a Dirac vector e_i (one coordinate per canary), so each canary moves only its own
    coordinate by 1: the release is (1/sigma)-GDP in each canary.  Records the harness adds along axis 0.
    """

    def __init__(self, sigma):
        self.sigma, self.calls, self.rows = sigma, 0, []

    def __call__(self, data, rng):
        self.calls += 1
        self.rows.append(len(data))
        return data.sum(axis=0) + rng.normal(0.0, self.sigma, data.shape[1])


def score(model, canary):
    return float(model @ canary)


def test_one_run_harness_on_a_noisy_sum():
    m, n = 1000, 50
    canaries = np.eye(m)
    dataset = np.random.default_rng(9).integers(0, 2, (n, m)).astype(float) * 0.0  # public records: no signal
    train = NoisySum(sigma=0.5)
    r = dpaudit.one_run(train, dataset, canaries, score, epsilon=1.0, seed=3)
    assert train.calls == 1 and train.rows == [n + r.included]
    assert r.seed == 3 and r.canaries == m and r.verdict == "violation" and r.epsilon_lower_bound > 1.0
    again = dpaudit.one_run(NoisySum(sigma=0.5), dataset, canaries, score, epsilon=1.0, seed=3)
    assert again.to_dict() == r.to_dict()
    # The same release against its own curve (2-GDP): no violation.
    ok = dpaudit.one_run(NoisySum(sigma=0.5), dataset, canaries, score, claim="gdp:mu=2", seed=3)
    assert ok.verdict == "no violation found" and ok.epsilon_lower_bound == pytest.approx(
        ok.counts[ok.grid.index(ok.guesses)]["epsilon_lower_bound"])


def test_one_run_draws_and_reports_a_seed_and_checks_its_inputs():
    r = dpaudit.one_run(NoisySum(1.0), np.zeros((0, 20)), np.eye(20), score, epsilon=1.0)
    assert isinstance(r.seed, int)
    r2 = dpaudit.one_run(NoisySum(1.0), np.zeros((0, 20)), np.eye(20), score, epsilon=1.0, seed=r.seed)
    assert r2.to_dict() == r.to_dict()
    with pytest.raises(ParameterValueError, match="canaries must have the records' shape"):
        dpaudit.one_run(NoisySum(1.0), np.zeros((3, 5)), np.eye(20), score, epsilon=1.0)
    with pytest.raises(ParameterValueError, match="must return a number"):
        dpaudit.one_run(NoisySum(1.0), np.zeros((0, 20)), np.eye(20), lambda mdl, c: "x", epsilon=1.0)
