"""One-run audits: known answers, validity over many seeds, the harness on a user's training function."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpaudit
from dpaudit.exceptions import DatasetError, ParameterValueError
from dpaudit.stats.one_run import counts_for_guesses
from _array_likes import GradTensor, Unreadable


def _rr_canaries(eps, m, seed):
    """Scores of an eps-DP canary test: each canary's bit reported through randomized response (tight)."""
    rng = np.random.default_rng(seed)
    inc = rng.integers(0, 2, m)
    flip = rng.random(m) < 1 / (1 + math.exp(eps))
    return np.where(flip, 1 - inc, inc) + rng.random(m) * 1e-3, inc


def _rr_hard_labels(eps, m, seed):
    """As :func:`_rr_canaries` without the jitter: 0/1 scores, so about half of them tie at the median."""
    scores, inc = _rr_canaries(eps, m, seed)
    return np.round(scores), inc


def _laplace_canaries(eps, m, seed):
    rng = np.random.default_rng(seed)
    inc = rng.integers(0, 2, m)
    return inc + rng.laplace(0, 1 / eps, m), inc


def test_all_right_guesses_reach_the_theorems_ceiling():
    inc = np.random.default_rng(0).integers(0, 2, 1000)
    r = dpaudit.audit_one_run(inc.astype(float), inc, epsilon=1.0, guesses=1000)
    q = 0.05 ** (1 / 1000)
    assert (r.guesses, r.correct) == (1000, 1000)
    assert r.epsilon_lower_bound == pytest.approx(math.log(q / (1 - q)), abs=1e-6) == pytest.approx(5.809, abs=1e-3)
    assert r.verdict == "violation" and r.ceiling == pytest.approx(r.epsilon_lower_bound)


@pytest.mark.parametrize("included", [400, 600])
def test_hard_label_scores_are_guessed_as_they_read_whichever_label_is_rarer(included):
    # A hard-label attack's 0/1 scores with fewer 1s than 0s have median 0: every 0 was guessed "included"
    # (score >= median), so a perfect attack certified 3.91 with 400 canaries included and 5.31 with 600.
    inc = np.r_[np.ones(included, int), np.zeros(1000 - included, int)]
    q = 0.05 ** (1 / 1000)
    r = dpaudit.audit_one_run(inc.astype(float), inc, epsilon=1.0, guesses=1000, seed=0)
    assert (r.guesses, r.correct) == (1000, 1000)
    assert r.epsilon_lower_bound == pytest.approx(math.log(q / (1 - q)), abs=1e-6)


@pytest.mark.parametrize("scale", [1.0, 1.7e308])
def test_huge_finite_scores_are_guessed_as_they_read(scale):
    # Scores near the float maximum (finite, so legal): the median of two 1.7e308 was inf, every canary sat
    # "below" it, and a perfect attack read as 463 of 1000 right and certified nothing.
    inc = np.random.default_rng(0).integers(0, 2, 1000)
    scores = np.where(inc == 1, scale, -scale)
    q = 0.05 ** (1 / 1000)
    r = dpaudit.audit_one_run(scores, inc, epsilon=1.0, guesses=1000, seed=0)
    assert (r.guesses, r.correct) == (1000, 1000)
    assert r.epsilon_lower_bound == pytest.approx(math.log(q / (1 - q)), abs=1e-6)
    # the farthest score from the median is guessed first even where both distances overflow a float
    s = [-1.7e308, -1.5e308, 0.9e308, 0.9e308, 0.9e308]
    assert counts_for_guesses(s, [0, 1, 1, 1, 1], [1], ties=np.array([1, 0, 2, 3, 4])) == [(1, 1)]


def _alarms(make, eps, seeds, **kw):
    return sum(dpaudit.audit_one_run(*make(eps, 1000, s), epsilon=eps, **kw).epsilon_lower_bound > eps
               for s in seeds)


def test_validity_on_eps_dp_canaries_quick():
    # 40 seeds of each tight eps-DP canary score; at the 5% the confidence allows, 7 or more alarms in 40 has
    # probability 0.014; the Bonferroni grid keeps the real rate far below.
    assert _alarms(_rr_canaries, 2.0, range(40)) <= 6
    assert _alarms(_rr_canaries, 1.0, range(40), guesses=1000) <= 6


@pytest.mark.soundness
@pytest.mark.parametrize("make, eps, kw", [(_rr_canaries, 1.0, {}), (_rr_canaries, 2.0, {"guesses": 1000}),
                                           (_laplace_canaries, 2.0, {}), (_rr_canaries, 3.0, {"delta": 1e-5}),
                                           (_rr_hard_labels, 1.0, {}), (_rr_hard_labels, 3.0, {"delta": 1e-5})])
def test_soundness_over_200_seeds(make, eps, kw):
    # At most 5% of 200 (failure probability of this check under a valid method: about 0.4).  Hard labels
    # put the median-tie rule (the thinner side) to the test: 6 and 7 alarms measured on seeds 0-199.
    assert _alarms(make, eps, range(200), **kw) <= 10


def test_one_run_harness_on_a_user_training_function():
    # A noisy sum of the records (Gaussian noise, sigma 1): each Dirac canary moves one coordinate by 1,
    # so the release is mu = 1 Gaussian DP, not 1-DP at any delta <= 1e-5.  One call, one training run.
    calls = []

    def train(data, rng):
        calls.append(len(data))
        return data.sum(axis=0) + rng.normal(0.0, 1.0, data.shape[1])

    r = dpaudit.one_run(train, np.zeros((20, 1000)), np.eye(1000), lambda model, c: float(model @ c),
                        epsilon=1.0, delta=1e-5, seed=3)
    assert len(calls) == 1 and calls[0] == 20 + r.included
    assert r.verdict == "violation" and 1.0 < r.epsilon_lower_bound < 5.809
    again = dpaudit.one_run(train, np.zeros((20, 1000)), np.eye(1000), lambda model, c: float(model @ c),
                            epsilon=1.0, delta=1e-5, seed=3)
    assert again.to_dict() | {"elapsed_seconds": 0} == r.to_dict() | {"elapsed_seconds": 0}


def _noisy_sum(data, rng):
    return data.sum(axis=0) + rng.normal(0.0, 1.0, data.shape[1])


@pytest.mark.parametrize("score, match", [
    (lambda model, c: model * c, r"score returned an array of shape \(50,\) for canary 0; expected one number"),
    (lambda model, c: None, "score returned None for canary 0"),
    (lambda model, c: "high", "score returned 'high' for canary 0"),
    (lambda model, c: float("nan") if c[3] else 1.0, "score returned nan for canary 3; expected a finite number"),
])
def test_the_harness_names_a_bad_score_and_its_canary(score, match):
    # A scorer returning an array, None, text or NaN once surfaced as numpy's message (or "scores: array: NaN").
    from dpaudit.exceptions import TargetError

    with pytest.raises(TargetError, match=match):
        dpaudit.one_run(_noisy_sum, np.zeros((5, 50)), np.eye(50), score, epsilon=1.0, seed=0)


def test_inclusion_bits_no_fair_coin_gives_are_noted():
    # All 1,000 canaries excluded once gave "epsilon >= 0.061" with nothing said; the bound assumes fair coins.
    rng = np.random.default_rng(0)
    scores = rng.normal(size=1000)
    for bits in (np.zeros(1000, int), np.ones(1000, int), np.r_[np.ones(900, int), np.zeros(100, int)]):
        r = dpaudit.audit_one_run(scores, bits, epsilon=1.0, seed=0)
        assert len(r.notes) == 1 and "probability 1/2" in r.notes[0] and r.notes[0] in str(r)
    # Fair coins: a note at most once in 10^6 runs (INCLUSION_NOTE_P); none over these 50 seeds.
    assert not any(dpaudit.audit_one_run(scores, np.random.default_rng(s).integers(0, 2, 1000), epsilon=1.0,
                                         seed=0).notes for s in range(50))
    assert dpaudit.audit_one_run([0.2, 0.1], [1, 1], epsilon=1.0, seed=0).notes == []   # m = 2: p = 0.5


def test_a_curve_claim_is_tested_at_each_small_delta():
    scores, inc = _laplace_canaries(8.0, 1000, 1)
    r = dpaudit.audit_one_run(scores, inc, claim="gdp:mu=0.5")
    assert r.verdict == "violation" and r.curve_violation["claimed_epsilon"] < r.epsilon_lower_bound
    assert {t["delta"] for t in r.tests} == {1e-6, 1e-5, 1e-4, 1e-3}  # delta 0: gdp promises nothing finite


@pytest.mark.parametrize("scores, included, match", [
    ([0.1, 0.2, 0.3], [1, 0], "3 scores"), ([0.1, 0.2], [1, 2], "0 or 1"), ([0.1, float("nan")], [1, 0], "NaN")])
def test_bad_inputs_are_named(scores, included, match):
    with pytest.raises(DatasetError, match=match):
        dpaudit.audit_one_run(scores, included, epsilon=1.0)


def test_more_guesses_than_canaries_is_refused():
    with pytest.raises(ParameterValueError, match="at most the number of canaries"):
        dpaudit.audit_one_run([0.1, 0.2, 0.3], [1, 0, 1], epsilon=1.0, guesses=4)


def _rr_profile(eps):
    """Randomized response's exact privacy profile at one run's deltas: delta(e) = (e^eps - e^e) / (1 + e^eps)."""
    from dpaudit.claims import ProfileClaim

    return ProfileClaim(((eps, 0.0),) + tuple((math.log(math.exp(eps) - d * (1 + math.exp(eps))), d)
                                              for d in (1e-6, 1e-5, 1e-4, 1e-3)))


def _gauss_canaries(mu, m, seed):
    rng = np.random.default_rng(seed)
    inc = rng.integers(0, 2, m)
    return mu * inc + rng.normal(0, 1, m), inc


def test_a_curve_claims_deltas_share_their_guess_count_level():
    # One count of correct guesses per k: every delta's p-value bounds its one tail, so the deltas need no split.
    # A curve claim gives 75% of the failure probability to the f-DP tests, 25% to these.
    from dpaudit.stats.one_run import one_run_epsilon_bound

    scores, inc = _laplace_canaries(8.0, 1000, 1)
    r = dpaudit.audit_one_run(scores, inc, claim="gdp:mu=0.5")
    level = 1 - 0.05 * 0.25 / len(r.guesses_tried)
    assert len(r.tests) == 4 * len(r.guesses_tried)
    for t in r.tests:
        assert t["epsilon_lower_bound"] == one_run_epsilon_bound(1000, t["guesses"], t["correct"], delta=t["delta"],
                                                                 confidence=level)


def _curve_alarms(make, claim, seeds):
    return sum(dpaudit.audit_one_run(*make(s), claim=claim).violation for s in seeds)


def test_curve_validity_quick():
    # Randomized response against its own exact profile (tight at delta 0): 40 seeds, as the point test above.
    assert _curve_alarms(lambda s: _rr_canaries(2.0, 1000, s), _rr_profile(2.0), range(40)) <= 6


def _laplace_profile(eps, points=41):
    """The Laplace mechanism's exact privacy profile: delta(e) = 1 - exp((e - eps) / 2) for e in [0, eps]."""
    from dpaudit.claims import ProfileClaim

    return ProfileClaim(tuple((float(e), float(-math.expm1((e - eps) / 2))) for e in np.linspace(0, eps, points)))


def _dpsgd_canaries(seed, m=1000, noise=1.0, rate=0.1, steps=10):
    """A canary's view of DP-SGD (Poisson rate, Gaussian noise): the optimal score, its log-likelihood ratio."""
    rng = np.random.default_rng(seed)
    inc = rng.integers(0, 2, m)
    x = (rng.random((m, steps)) < rate) * inc[:, None] + rng.normal(0, noise, (m, steps))
    return np.log1p(rate * np.expm1((x - 0.5) / noise ** 2)).sum(axis=1), inc


def test_the_fdp_test_rejects_a_curve_the_point_tests_cannot():
    # Scores N(3 * included, 1) against gdp:mu=1 at 1,000 canaries: the whole curve is rejected in 10 of 10 seeds;
    # the point tests at deltas 0..1e-3 cross it in 1 of 10 (measured), one run's delta term being 2 m delta.
    reports = [dpaudit.audit_one_run(*_gauss_canaries(3.0, 1000, s), claim="gdp:mu=1") for s in range(10)]
    assert sum(r.curve_rejected for r in reports) >= 9
    assert sum(max(t["epsilon_lower_bound"] - t["claimed_epsilon"] for t in r.tests) > 0 for r in reports) <= 3
    assert all(r.curve_rejected == any(t["rejected"] for t in r.fdp_tests) for r in reports)
    assert all(1.0 < r.gdp_mu_lower_bound < 3.0 for r in reports)


def _check_verdict_names_a_point(r, claim):
    """The contract: "violation" exactly when the top-level bound exceeds the claimed epsilon, at a named delta."""
    from dpaudit.claims import as_claim

    assert r.violation == (r.epsilon_lower_bound > r.claimed_epsilon)
    assert r.claimed_epsilon == pytest.approx(float(as_claim(claim).epsilon(r.claimed_delta)), rel=1e-9)
    assert r.ceiling >= r.epsilon_lower_bound
    if r.violation:
        cv = r.curve_violation
        assert cv["epsilon_lower_bound"] == r.epsilon_lower_bound and cv["claimed_epsilon"] == r.claimed_epsilon
        assert cv["delta"] == r.claimed_delta and cv["test"] in ("f-dp", "steinke-nasr-jagielski")
    else:
        assert r.curve_violation is None


@pytest.mark.parametrize("mu, claim, least", [(2.5, "gdp:mu=1", 3), (3.0, "gdp:mu=1", 8), (4.0, "gdp:mu=1", 10),
                                              (1.0, "gdp:mu=1", 0), (2.0, "gdp:mu=1.5", 0)])
def test_a_violation_names_the_crossed_point(mu, claim, least):
    # A rejected whole curve says the run breaks the claim somewhere; the verdict names a point, so the audit looks
    # for one the same count crosses (the claim's grid, the f-DP test at each point's curve).  Measured (of whole
    # rejections, how many name a point), seeds 0-199: true mu 2.5 40 of 166, 3 166 of 200, 4 200 of 200 (with
    # FDP_SHARE 0.75; 4, 102, 199 at one half); seeds 0-9 (these): 3 of 9, 8 of 10, 10 of 10.
    reports = [dpaudit.audit_one_run(*_gauss_canaries(mu, 1000, s), claim=claim) for s in range(10)]
    for r in reports:
        _check_verdict_names_a_point(r, claim)
        pairs = [t["pair"] for t in r.fdp_tests if t["pair"]]
        assert all(t["rejected"] for t in r.fdp_tests if t["pair"])
        for p in pairs:  # each named point is certified as fdp_one_run_epsilon_bound certifies it
            from dpaudit.stats.one_run import fdp_one_run_epsilon_bound

            level = 1 - 0.05 * 0.75 / len(r.guesses_tried)
            assert p["epsilon_lower_bound"] == pytest.approx(fdp_one_run_epsilon_bound(
                1000, p["guesses"], p["correct"], delta=p["delta"], confidence=level), rel=3e-9)
            assert p["epsilon_lower_bound"] > p["claimed_epsilon"]
    assert sum(r.violation for r in reports) >= least


def test_epsilon_and_its_eps_spec_give_the_same_report():
    # The contract: eps:EPS,delta=DELTA is the same claim as epsilon/delta.  A violation of a point given as
    # numbers once left curve_violation None, where audit and audit_scores name the crossed point either way.
    scores, inc = _gauss_canaries(4.0, 1000, 0)
    by_numbers = dpaudit.audit_one_run(scores, inc, epsilon=1.0, delta=1e-5, seed=1).to_dict()
    by_spec = dpaudit.audit_one_run(scores, inc, claim="eps:1,delta=1e-5", seed=1).to_dict()
    assert by_numbers["verdict"] == "violation"
    _check_verdict_names_a_point(dpaudit.audit_one_run(scores, inc, epsilon=1.0, delta=1e-5), "eps:1,delta=1e-5")
    for key in set(by_numbers) - {"claim", "elapsed_seconds"}:
        assert by_numbers[key] == by_spec[key], key


def test_a_profile_finite_only_above_the_curve_deltas_is_still_audited(tmp_path):
    # [[1, 0.01]] was audited at its point, but [[1, 0.01], [0.5, 0.1]] (finite at no delta <= 1e-3) was refused
    # with "a one-run audit cannot test it", though its first point is the same test and the f-DP test reads it whole.
    scores, inc = _gauss_canaries(3.0, 1000, 0)
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text("[[1, 0.01]]")
    two.write_text("[[1, 0.01], [0.5, 0.1]]")
    r1 = dpaudit.audit_one_run(scores, inc, claim=f"profile:{one}", seed=0)
    r2 = dpaudit.audit_one_run(scores, inc, claim=f"profile:{two}", seed=0)
    assert {t["delta"] for t in r2.tests} == {0.01} and r2.claimed_delta == r1.claimed_delta == 0.01
    assert r2.fdp_tests and r2.curve_rejected is not None
    _check_verdict_names_a_point(r2, f"profile:{two}")


def test_a_point_claim_is_not_tested_as_a_curve():
    r = dpaudit.audit_one_run(*_laplace_canaries(2.0, 1000, 0), epsilon=2.0)
    assert r.fdp_tests == [] and r.gdp_mu_lower_bound is None


def test_curve_validity_quick_gaussian():
    # 1-GDP canary scores against gdp:mu=1, 40 seeds: as the randomized-response check above.
    assert _curve_alarms(lambda s: _gauss_canaries(1.0, 1000, s), "gdp:mu=1", range(40)) <= 6


@pytest.mark.soundness
@pytest.mark.parametrize("make, claim", [
    (lambda s: _rr_canaries(2.0, 1000, s), _rr_profile(2.0)),
    (lambda s: _gauss_canaries(1.0, 1000, s), "gdp:mu=1"),
    (lambda s: _gauss_canaries(2.0, 1000, s), "gdp:mu=2"),
    (lambda s: _laplace_canaries(2.0, 1000, s), _laplace_profile(2.0)),
    (_dpsgd_canaries, "dpsgd:noise=1,rate=0.1,steps=10")])
def test_curve_soundness_over_200_seeds(make, claim):
    # Every curve claim is tested by the point tests and the f-DP test together; at most 5% of 200 alarms
    # (failure probability of this check under a valid method at most 0.42).  Measured, seeds 0-199, in the
    # order above: 4, 0, 0, 5, 0 (FDP_SHARE 0.75; 1, 0, 0, 4, 0 at one half; docs/decisions/one-run-fdp.md).
    assert _curve_alarms(make, claim, range(200)) <= 10


def test_every_curve_audit_keeps_the_contract():
    # Random canary counts, scores and curves (GDP, DP-SGD, profiles of 2-5 points): the verdict is "violation"
    # exactly when the top-level bound exceeds the claim at the reported delta, and the ceiling is never below it.
    from dpaudit.claims import ProfileClaim

    rng = np.random.default_rng(0)
    kinds = [lambda: f"gdp:mu={rng.uniform(0.05, 4):.3f}",
             lambda: f"dpsgd:noise={rng.uniform(0.5, 3):.2f},rate={rng.uniform(0.01, 1):.2f},steps={rng.integers(1, 50)}",
             lambda: ProfileClaim(tuple(sorted({(float(rng.uniform(0, 5)), float(10 ** rng.uniform(-9, -3)))
                                                for _ in range(int(rng.integers(2, 6)))})))]
    violations = 0
    for i in range(60):
        m = int(rng.choice([2, 10, 37, 200, 1000]))
        inc = rng.integers(0, 2, m)
        claim = kinds[i % 3]()
        r = dpaudit.audit_one_run(rng.uniform(0, 6) * inc + rng.normal(0, 1, m), inc, claim=claim)
        _check_verdict_names_a_point(r, claim)
        violations += r.violation
    assert 5 <= violations <= 55  # both verdicts were checked


def _uninformative(kind, m, rng):
    """Scores that carry nothing about inclusion, with heavy ties, and the bits listed included-first."""
    inc = np.sort(rng.integers(0, 2, m))[::-1]  # the file's order follows the bits: the worst order for ties
    scores = {"constant": np.zeros(m), "binary": rng.integers(0, 2, m).astype(float),
              "coarse": np.round(rng.normal(size=m))}[kind]
    return scores, inc


@pytest.mark.parametrize("kind", ["constant", "binary", "coarse"])
def test_tied_scores_never_certify_from_the_files_order(kind):
    # Ties used to be broken by position: all-equal scores with the included canaries first certified 4.6 from
    # 1,000 canaries.  Scores independent of the bits make the truth 0, so a bound above 0.5 (point claim) or a
    # violation of gdp:mu=0.5 needs a 95%-level test to fail far beyond its level: at most 2 of 60 seeds each
    # (Binomial(60, 0.05) exceeds 2 with probability 0.58 only at the tests' own level; here they sit far below it).
    rng = np.random.default_rng(41)
    hits = 0
    for seed in range(60):
        s, inc = _uninformative(kind, 1000, rng)
        point = dpaudit.audit_one_run(s, inc, epsilon=0.5, seed=seed)
        curve = dpaudit.audit_one_run(s, inc, claim="gdp:mu=0.5", seed=seed)
        hits += point.violation + curve.violation
    assert hits <= 2, hits


def test_ties_are_drawn_from_the_seed_and_reported():
    s, inc = _uninformative("binary", 400, np.random.default_rng(2))
    a = dpaudit.audit_one_run(s, inc, epsilon=1.0, seed=7)
    assert a.seed == dpaudit.audit_one_run(s, inc, epsilon=1.0, seed=a.seed).seed
    assert a.to_dict() | {"elapsed_seconds": 0} == dpaudit.audit_one_run(s, inc, epsilon=1.0, seed=7).to_dict() | {
        "elapsed_seconds": 0}
    drawn = dpaudit.audit_one_run(s, inc, epsilon=1.0)
    again = dpaudit.audit_one_run(s, inc, epsilon=1.0, seed=drawn.seed)
    assert drawn.seed is not None and drawn.to_dict() | {"elapsed_seconds": 0} == again.to_dict() | {
        "elapsed_seconds": 0}
    untied = np.random.default_rng(3).normal(size=400) + inc  # no ties: the seed changes nothing
    assert {dpaudit.audit_one_run(untied, inc, epsilon=1.0, seed=k).epsilon_lower_bound for k in range(4)} == {
        dpaudit.audit_one_run(untied, inc, epsilon=1.0, seed=0).epsilon_lower_bound}


def test_the_one_run_summary_words_its_verdict_as_the_audits_do():
    # "no violation found" in lower case here, "NO VIOLATION FOUND" in dpaudit audit's and dpaudit scores' summaries.
    rng = np.random.default_rng(0)
    inc = rng.integers(0, 2, 1000)
    r = dpaudit.audit_one_run(inc + rng.laplace(0, 1, 1000), inc, epsilon=4.0, seed=1)
    assert r.summary().startswith("verdict     NO VIOLATION FOUND: epsilon >= ")


def test_the_harness_reads_a_score_that_requires_grad_and_names_one_numpy_cannot_read():
    # A scorer returning `model(x)` as a tensor that requires grad once raised numpy's RuntimeError
    # ("Can't call numpy() on Tensor that requires grad") with no word of the score or the canary.
    from dpaudit.exceptions import TargetError

    plain = dpaudit.one_run(_noisy_sum, np.zeros((5, 50)), np.eye(50), lambda m, c: float(m @ c), epsilon=1.0, seed=0)
    held = dpaudit.one_run(_noisy_sum, np.zeros((5, 50)), np.eye(50), lambda m, c: GradTensor(m @ c), epsilon=1.0,
                           seed=0)
    assert held.correct == plain.correct and held.guesses == plain.guesses
    with pytest.raises(TargetError, match=r"score returned a Unreadable that numpy cannot read for canary 0 "
                                          r"\(TypeError: Got unsupported ScalarType BFloat16\); expected one number"):
        dpaudit.one_run(_noisy_sum, np.zeros((5, 50)), np.eye(50), lambda m, c: Unreadable(), epsilon=1.0, seed=0)
