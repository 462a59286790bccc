"""Audits against claimed curves: the JSON, the verdict over the whole curve, the stop, the CLI, soundness."""

import json

import numpy as np
import pytest

import dpaudit
from dpaudit.claims import ProfileClaim
from dpaudit.cli import main

DPSGD = "dpsgd:noise=1,rate=0.1,steps=10"


def gaussian_count(dataset, size=None, rng=None):
    """Exactly 1-GDP on neighbours differing by one record of value 1 (as mathematics: audited ideal)."""
    return float(np.sum(dataset)) + rng.normal(0.0, 1.0, size=size)


def laplace_profile(epsilon=1.0, n=41) -> ProfileClaim:
    # The Laplace mechanism's exact profile: delta(e) = 1 - exp((e - epsilon) / 2) for 0 <= e <= epsilon.
    return ProfileClaim(tuple((e, 1.0 - np.exp((e - epsilon) / 2)) for e in np.linspace(0.0, epsilon, n)))


def _consistent(r):
    """The contract's invariants between the verdict, the top-level point and curve_violation."""
    assert (r.verdict == "violation") == (r.epsilon_lower_bound > r.claimed_epsilon)
    assert (r.curve_violation is not None) == r.violation
    if r.violation:
        cv = r.curve_violation
        assert cv["delta"] == r.claimed_delta and cv["claimed_epsilon"] == r.claimed_epsilon
        assert cv["epsilon_lower_bound"] == r.epsilon_lower_bound > cv["claimed_epsilon"]
    if r.stopping_reason != "fixed":
        assert (r.stopping_reason == "violation") == r.violation


def test_point_spec_gives_the_point_audit():
    a = dpaudit.audit("laplace", epsilon=0.9, seed=3, max_samples=50_000).to_dict()
    b = dpaudit.audit("laplace", claim="eps:0.9", seed=3, max_samples=50_000).to_dict()
    assert a.pop("claim") is None and b.pop("claim") == "eps:0.9"
    for d in (a, b):
        d.pop("elapsed_seconds")
    assert a == b and a["verdict"] == "violation"


def test_dpsgd_view_against_its_accountant_curve():
    ok = dpaudit.audit("subsampled_gaussian_steps", claim=DPSGD, samples=100_000, seed=1)
    assert ok.verdict == "no violation found" and ok.claim == DPSGD and ok.curve_violation is None
    bad = dpaudit.audit(dpaudit.get_mechanism("subsampled_gaussian_steps", noise=0.8), claim=DPSGD, samples=100_000,
                        seed=1)
    assert bad.verdict == "violation"
    _consistent(ok)
    _consistent(bad)
    assert bad.curve_violation["points_tested"] > 100  # the whole grid, at one confidence


def test_gdp_claims_on_a_gaussian():
    for mu, expected in ((1.0, "no violation found"), (0.5, "violation")):
        r = dpaudit.audit(gaussian_count, [0, 1], [0], claim=f"gdp:mu={mu}", max_samples=100_000, seed=2, ideal=True)
        assert r.verdict == expected
        _consistent(r)
        curve = r.claim_curve
        assert len(curve["delta"]) > 10 and np.all(np.diff(curve["delta"]) > 0)


def test_sequential_stop_matches_the_verdict_near_the_curve():
    # Claims around the mechanism's own mu: the stop says "violation" exactly when the verdict does.
    for seed, mu in enumerate((0.9, 0.95, 1.0, 1.05)):
        r = dpaudit.audit(gaussian_count, [0, 1], [0], claim=f"gdp:mu={mu}", max_samples=40_000, seed=seed,
                          ideal=True)
        _consistent(r)


def test_json_and_exit_status_from_the_cli(capsys):
    code = main(["audit", "laplace", "--claim", "gdp:mu=0.5", "--seed", "1", "--max-samples", "50000", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["claim"] == "gdp:mu=0.5" and out["curve_violation"]["delta"] == out["claimed_delta"]
    code = main(["audit", "laplace", "--epsilon", "1", "--seed", "1", "--max-samples", "20000", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["claim"] is None and out["curve_violation"] is None


@pytest.mark.parametrize("argv, needle", [
    (["--claim", "gdp:mu=1", "--epsilon", "1"], "argument --claim: give either --claim or --epsilon/--delta"),
    (["--claim", "gdp:mu=1", "--delta", "1e-5"], "argument --claim: give either"),
    ([], "argument --epsilon: required (or --claim for a claimed curve)"),
    (["--claim", "gdp:mu=x"], "argument --claim: claim 'gdp:mu=x': mu must be a number"),
    (["--claim", "dpsgd:noise=1,rate=0.1"], "missing steps"),
])
def test_cli_claim_usage_errors(argv, needle, capsys):
    assert main(["audit", "laplace", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def _replaced_record_notes(report):
    return [n for n in report.notes if "add/remove" in n and "replaced record" in n]


def test_an_accountants_curve_on_a_replaced_record_is_noted():
    # DP-SGD's curve is accounted for add/remove neighbours; a correct DP-SGD audited on a pair that replaces one
    # record (twice the sensitivity when the two records' gradients oppose) was called a "violation" of that curve
    # with nothing said.  The pair is the user's choice, so the audit runs and says why its bound may exceed.
    kw = dict(samples=2000, seed=0, ideal=True)
    replaced = dpaudit.audit(gaussian_count, [1.0, 0.0], [1.0, 1.0], claim=DPSGD, **kw)
    assert len(_replaced_record_notes(replaced)) == 1 and DPSGD in _replaced_record_notes(replaced)[0]
    assert not _replaced_record_notes(dpaudit.audit(gaussian_count, [1.0, 0.0], [1.0], claim=DPSGD, **kw))
    # A curve or point that names no relation is not second-guessed.
    assert not _replaced_record_notes(dpaudit.audit(gaussian_count, [1.0, 0.0], [1.0, 1.0], claim="gdp:mu=1", **kw))
    assert not _replaced_record_notes(dpaudit.audit(gaussian_count, [1.0, 0.0], [1.0, 1.0], epsilon=1.0, **kw))


def test_the_cli_warns_of_an_accountants_curve_on_a_replaced_record(capsys):
    argv = ["audit", "gaussian", "--claim", DPSGD, "--samples", "2000", "--seed", "0", "--ideal", "--json"]
    assert main([*argv, "--dataset", "[1, 0]", "--neighbor", "[1, 1]"]) in (0, 1)
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "add/remove" in warnings[0] and "replaced record" in warnings[0]
    assert main([*argv, "--dataset", "[1, 0]", "--neighbor", "[1]"]) in (0, 1)
    assert not [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]


def test_search_takes_a_claim():
    r = dpaudit.search("unclipped_sum", claim="gdp:mu=1", size=3, low=0, high=10, max_samples=20_000, seed=1)
    assert r.verdict == "violation" and r.audit.claim == "gdp:mu=1"
    _consistent(r.audit)


def test_python_claim_conflicts_name_the_parameter():
    with pytest.raises(dpaudit.ParameterValueError, match="not both"):
        dpaudit.audit("laplace", epsilon=1.0, claim="gdp:mu=1", samples=1000)
    with pytest.raises(dpaudit.ParameterValueError, match="estimator 'gdp'"):
        dpaudit.audit("laplace", claim="gdp:mu=1", estimator="gdp", samples=1000)


# ----------------------------------------------------------------------------- soundness
# Correct mechanisms against their own curves, sequential audits at small budgets: a violation is a
# false alarm, at most 5% per audit by the stated confidence.  Over 200 seeds, 10 is 5%; the tests
# allow no more (a method at exactly 5% would fail one run in two, a sound one almost never).
def _alarms(run, seeds):
    alarms = 0
    for seed in seeds:
        r = run(seed)
        _consistent(r)
        alarms += r.violation
    return alarms


@pytest.mark.soundness
def test_soundness_gaussian_against_gdp_over_200_seeds():
    def run(s):
        return dpaudit.audit(gaussian_count, [0, 1], [0], claim="gdp:mu=1", max_samples=20_000,
                                      seed=s, ideal=True)
    assert _alarms(run, range(200)) <= 10


@pytest.mark.soundness
def test_soundness_subsampled_gaussian_against_its_accountant_over_200_seeds():
    def run(s):
        return dpaudit.audit("subsampled_gaussian_steps", claim=DPSGD, max_samples=8_000,
                                      seed=s, ideal=True)
    assert _alarms(run, range(200)) <= 10


@pytest.mark.soundness
def test_soundness_laplace_against_its_profile_over_200_seeds():
    claim = laplace_profile()
    def run(s):
        return dpaudit.audit("laplace", claim=claim, max_samples=20_000, seed=s)
    assert _alarms(run, range(200)) <= 10


def test_sequential_curve_audit_tracks_the_certified_value(monkeypatch):
    # The tracker must see what each round certified at its point of the curve, never the claim itself
    # (see tests/stats/test_curves.py): a correct mechanism's tracked bound stays below the claim.
    from dpaudit.auditor import pipeline

    seen = []
    track = pipeline._Run._track

    def spy(self, *a, **k):
        out = track(self, *a, **k)
        seen.append((self.tracker.epsilon, self.tracker.epsilon_lower_bound, out))
        return out

    monkeypatch.setattr(pipeline._Run, "_track", spy)
    dpaudit.audit("subsampled_gaussian_steps", claim=DPSGD, max_samples=64_000, seed=1)
    assert seen and all(bound < eps for eps, bound, _ in seen)
    assert seen[-1][2] == "budget"
