"""dpaudit.search: user-style targets with a declared domain, the returned pair, and soundness.

Failure probabilities.  A verdict of "no violation found" on a correct target
fails only if the final audit's bound exceeds the true epsilon, probability
<= 5% per search by construction (the bound holds at 95% whatever the search
did); the seeds below were fixed in advance, not searched for.  The flagged
targets leak far more than the ceiling of their final audit needs (measured
bounds 1.7 to 11.8 against claims of 1 and ln 3), so missing them would take
many-sigma deviations.  The soundness runs count exceedances over many seeds
and allow what the stated confidence allows.
"""

import math
import os

import numpy as np
import pytest

import dpaudit
from dpaudit.exceptions import ParameterValueError
from dpaudit.pairs import Domain, compare_pair, is_neighbouring
from dpaudit.pair_search import SearchReport, screen_pair, search

import user_domain_targets as U

HERE = os.path.dirname(os.path.abspath(__file__))


def _run(name, **kw):
    n, lo, hi, integer, rel, _ = U.DOMAINS[name]
    return search(getattr(U, name), epsilon=U.CLAIMS[name], size=n, low=lo, high=hi, integer=integer,
                  relation=rel, **kw)


def _check_pair(name, report):
    n, lo, hi, integer, rel, _ = U.DOMAINS[name]
    domain = Domain(n, lo, hi, integer=integer, relation=rel)
    assert domain.contains(report.dataset) and domain.contains(report.neighbor)
    assert is_neighbouring(report.dataset, report.neighbor, rel)


SCALAR = ["unclipped_sum", "clipped_sum", "rare_leak", "no_leak"]
VECTOR = ["histogram_scale_1", "histogram_scale_2", "rr_wrong_p", "rr_right_p"]


@pytest.mark.parametrize("name", SCALAR)
def test_scalar_targets_flagged_with_defaults_iff_broken(name):
    report = _run(name, seed=101)
    assert report.violation == U.DOMAINS[name][-1], report.summary()
    _check_pair(name, report)


# histogram_scale_2 (correct, so it runs to its budget: ~6 s) runs in `make soundness`; rr_right_p keeps
# a correct vector target in `make test`.
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "histogram_scale_2" else n
                                  for n in VECTOR])
def test_vector_targets_flagged_iff_broken(name):
    # 100,000 releases per side keep the normal suite short; the defaults run in the soundness suite.
    report = _run(name, seed=102, max_samples=100_000)
    broken = U.DOMAINS[name][-1]
    if broken:
        assert report.violation, report.summary()
    else:
        # A correct target at the edge of its claim (randomized response's outcomes have a ratio of
        # exactly e^eps) is flagged by a valid 95% bound in up to 5% of searches; the audit's exact
        # Poisson test spends up to 2.5% there (seed 102 is one such search).  So three seeds: two
        # or more flagged has probability 3 * 0.025^2 < 0.002 for a sound search.
        reports = [report] + [_run(name, seed=s, max_samples=100_000) for s in (104, 105)]
        assert sum(r.violation for r in reports) <= 1, [r.epsilon_lower_bound for r in reports]
    _check_pair(name, report)


@pytest.mark.soundness
@pytest.mark.parametrize("name", VECTOR)
def test_vector_targets_flagged_with_defaults_iff_broken(name):
    report = _run(name, seed=103)
    assert report.violation == U.DOMAINS[name][-1], report.summary()
    _check_pair(name, report)


def test_unclipped_sum_is_caught_on_an_outlier_pair():
    report = _run("unclipped_sum", seed=104, max_samples=100_000)
    a, b = np.array(report.dataset), np.array(report.neighbor)
    assert np.max(np.abs(a - b)) >= 50  # in-range pairs hide the missing clip; an outlier shows it
    assert report.epsilon_lower_bound > 5


def test_report_carries_audit_fields_pair_and_screening():
    report = _run("clipped_sum", seed=105, max_samples=20_000)
    d = report.to_dict()
    for key in ("epsilon_lower_bound", "claimed_epsilon", "claimed_delta", "confidence", "samples", "attack",
                "seed", "ceiling", "verdict", "dataset", "neighbor", "candidates_screened"):
        assert key in d
    assert d["candidates_screened"] == report.candidates_screened >= 15
    assert d["dataset"] == report.dataset and isinstance(d["dataset"][0], float)
    assert d["search"]["screening"][0]["score"] >= d["search"]["screening"][-1]["score"]
    assert report.verdict == report.audit.verdict and report.samples <= 20_000
    assert isinstance(report, SearchReport) and "candidate pairs screened" in report.summary()


def test_same_seed_same_result():
    a = _run("rare_leak", seed=7, max_samples=20_000).to_dict()
    b = _run("rare_leak", seed=7, max_samples=20_000).to_dict()
    for d in (a, b):
        d.pop("elapsed_seconds")
        d["search"].pop("search_seconds")
    assert a == b


def test_the_reported_seed_is_the_searchs_and_reproduces_it():
    # The JSON's seed must reproduce the run (given or drawn): it used to be the final audit's derived seed,
    # with which a second search screened other pairs.  Each finalist's own audit seed stays in the details.
    given = _run("rare_leak", seed=7, max_samples=20_000).to_dict()
    assert given["seed"] == 7
    drawn = _run("rare_leak", max_samples=20_000).to_dict()
    again = _run("rare_leak", seed=drawn["seed"], max_samples=20_000).to_dict()
    for d in (given, drawn, again):
        d.pop("elapsed_seconds")
        d["search"].pop("search_seconds")
    assert drawn == again
    assert all(f["seed"] != drawn["seed"] for f in drawn["search"]["finalists"])


def test_finalists_split_the_confidence():
    report = _run("clipped_sum", seed=8, max_samples=20_000, finalists=3)
    assert len(report.finalists) == 3
    assert math.isclose(report.finalist_confidence, 1 - 0.05 / 3)
    assert report.confidence == 0.95 and math.isclose(report.audit.confidence, 1 - 0.05 / 3)
    assert report.epsilon_lower_bound == max(f["epsilon_lower_bound"] for f in report.finalists)
    # Each finalist is audited with its own seed, none of them the search's.
    assert len({f["seed"] for f in report.finalists}) == 3


def test_budget_stops_the_screening():
    report = _run("clipped_sum", seed=9, max_samples=1_000_000, budget=0.05)
    assert report.stopping == "budget"
    assert report.candidates_screened < 40
    assert any("budget" in n for n in report.to_dict()["notes"])


def test_screen_pair_scores_leaks_not_noise():
    """A pair with no difference scores about 0, a large leak far above: P(fail) < 1e-6 at these sizes."""
    same = screen_pair(U.clipped_sum, [0.0] * 3, [0.0] * 3, n_samples=4000, rng=1)["score"]
    leak = screen_pair(U.unclipped_sum, [0.0] * 3, [100.0, 0, 0], n_samples=4000, rng=1)["score"]
    assert same < 0.3 < 4 < leak


def test_coupled_screening_draws_both_sides_from_one_stream():
    """Coupled, an additive mechanism's two sides differ by the data change alone; uncoupled they do not."""
    seen = []

    def recording_sum(dataset, size=None, rng=None):
        out = float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)
        seen.append(np.array(out, copy=True))
        return out

    for coupled in (True, False):
        seen.clear()
        screen_pair(recording_sum, [0.0, 0.0], [1.0, 0.0], n_samples=400, rng=3, coupled=coupled)
        x0, x1 = np.concatenate(seen[: len(seen) // 2]), np.concatenate(seen[len(seen) // 2:])
        assert np.allclose(x0 + 1.0, x1) == coupled


def test_coupled_screening_ranks_a_weak_leak_by_the_pair_not_by_luck():
    """SVT (Lyu et al.'s Algorithm 2) at epsilon 0.1: the x-shape pair leaks about twice what all-below does.

    Ideal bounds from exact outcome probabilities at 5 x 10^5 held-out releases
    are 0.066 and 0.035.  At 20,000 releases per side, 12 seeded screenings:
    coupled, x-shape's mean score is above all-below's (measured difference
    0.010, standard error 0.0015: failure probability < 1e-6), and the scores
    vary less than half as much as uncoupled ones (measured 4.6x less; an F
    ratio that large by chance has probability < 1%).
    """
    from dpaudit.mechanisms import get_mechanism

    mech = get_mechanism("svt_lyu_alg2", epsilon=0.1, c=1, threshold=1.0, n_queries=10, answers=True)
    x_shape = (np.r_[[1.0] * 5, [0.0] * 5], np.r_[[0.0] * 5, [1.0] * 5])
    all_below = (np.ones(10), np.zeros(10))

    def scores(pair, coupled):
        return np.array([screen_pair(mech, *pair, n_samples=20_000, project_to=500_000, rng=k,
                                     coupled=coupled)["score"] for k in range(12)])

    sx, sb = scores(x_shape, True), scores(all_below, True)
    assert sx.mean() > sb.mean()
    assert sx.std() < scores(x_shape, False).std() / 2


def test_cheap_screening_leaves_out_the_structure_learners_and_still_sees_a_gross_leak():
    from dpaudit.pair_search import STRUCTURE_ATTACKS

    def leaky_histogram(dataset, size=None, rng=None):  # noise for a sensitivity 20 times too small
        counts = np.bincount(np.asarray(dataset, dtype=int), minlength=5).astype(float)
        return counts + rng.laplace(0.0, 0.1, size=(size, 5))

    full = screen_pair(leaky_histogram, [0, 1, 2, 3, 4], [4, 1, 2, 3, 4], n_samples=1000, rng=2)
    cheap = screen_pair(leaky_histogram, [0, 1, 2, 3, 4], [4, 1, 2, 3, 4], n_samples=1000, rng=2, cheap=True)
    assert cheap["attack"] not in STRUCTURE_ATTACKS
    assert cheap["bound"] > 3 and full["bound"] > 3


def test_errors_name_the_parameter():
    with pytest.raises(ParameterValueError, match="^high must be > low"):
        search(U.clipped_sum, epsilon=1, size=3, low=1, high=0)
    with pytest.raises(ParameterValueError, match="^finalists"):
        search(U.clipped_sum, epsilon=1, size=3, low=0, high=1, finalists=0)
    with pytest.raises(ParameterValueError, match="^budget"):
        search(U.clipped_sum, epsilon=1, size=3, low=0, high=1, budget=-1)
    with pytest.raises(ParameterValueError, match="^attack"):
        search(U.clipped_sum, epsilon=1, size=3, low=0, high=1, attack="psychic")


def test_search_is_public():
    assert dpaudit.search is search and "search" in dpaudit.__all__


# ----------------------------------------------------------------------------- soundness
CORRECT = [("clipped_sum", 1.0), ("rr_right_p", math.log(3.0)), ("no_leak", 1.0)]


def _exceedances(n_seeds, confidence, max_samples, first_seed, targets=CORRECT):
    over = 0
    for i in range(n_seeds):
        name, true_eps = targets[i % len(targets)]
        r = _run(name, seed=first_seed + i, max_samples=max_samples, confidence=confidence)
        over += r.epsilon_lower_bound > true_eps + 1e-9
    return over


def test_soundness_small_seeded():
    """8 searches at confidence 0.999 on correct scalar targets whose searched pair can reach the true epsilon.

    Each bound exceeds the true epsilon with probability <= 0.001, so this
    fails with probability <= 0.8% (the seeds are fixed).
    """
    assert _exceedances(8, 0.999, 20_000, first_seed=1000, targets=CORRECT[::2]) == 0


@pytest.mark.soundness
def test_soundness_over_240_seeded_searches():
    """240 searches at 95% on correct targets (the pairs the search finds are tight: the true epsilon is reached).

    Exceedances are Binomial(240, p) with p <= 0.05 whatever the search
    did; we require at most 5% (12).  Clopper-Pearson bounds are conservative,
    so p is well below 0.05 (measured 0 and 1 of 240 in two runs); were p = 0.03, the test would
    fail with probability about 5%.
    """
    over = _exceedances(240, 0.95, 20_000, first_seed=5000)
    assert over <= 12, f"{over} of 240 bounds exceed the true epsilon"


def test_a_gross_violation_stops_the_screening_early_and_a_fixed_audit_does_not():
    quick = _run("unclipped_sum", seed=12)
    assert quick.stopping == "exceeded" and quick.violation
    assert all(r["stage"] == "quick" for r in quick.screening)
    fixed = _run("unclipped_sum", seed=12, samples=50_000)
    assert fixed.stopping == "candidates" and fixed.samples == 50_000 and fixed.violation
    with pytest.raises(ParameterValueError, match=r"^max_samples: a fixed-size audit \(samples=1000\) takes no max_samples"):
        _run("unclipped_sum", samples=1000, max_samples=2000)


def test_a_tiny_budget_still_audits_one_pair():
    report = _run("clipped_sum", seed=13, max_samples=2000, budget=1e-9)
    assert report.candidates_screened == 1 and report.stopping == "budget"
    _check_pair("clipped_sum", report)



def _wide_sum(dataset, size=None, rng=None):
    """A sum of records in [0, 20] with Laplace(1) noise, claimed 1-DP: one outlier moves it by 20."""
    return float(np.sum(np.clip(dataset, 0.0, 20.0))) + rng.laplace(0.0, 1.0, size=size)


def test_the_quick_look_stops_at_the_first_pattern_it_separates():
    """Shifted by 20, a Laplace(1) release separates the sides of 1,000 releases (overlap prob. < 1e-5)."""
    from dpaudit.pairs import candidate_pairs

    report = search(_wide_sum, epsilon=1.0, size=5, low=0, high=20, seed=3)
    quick = report.screening
    assert report.stopping == "exceeded" and all(r["stage"] == "quick" for r in quick)
    assert len(quick) < len(candidate_pairs(Domain(5, 0, 20)))  # it stopped before the last pattern
    assert compare_pair(report.dataset, report.neighbor).linf == 20
    assert report.violation


def _laplace_scale_too_small(dataset, size=None, rng=None):
    """A clipped count with Laplace noise of scale 1/1.6: epsilon 1.6, claimed 1 (no pattern separates it fully)."""
    return float(np.sum(np.clip(dataset, 0, 1))) + rng.laplace(0.0, 1 / 1.6, size=size)


def test_the_final_audit_is_sequential_even_when_a_violation_is_expected():
    # Without samples the final audit is sequential, as dpaudit audit's: --max-samples caps it and it may stop
    # early.  When the screening expected a violation it used to draw max_samples at once ("fixed", max_samples
    # null); a cap meant as "no limit" never ended.  Now it stops only on a violation or its budget.
    r = search(_laplace_scale_too_small, epsilon=1.0, size=2, low=0, high=1, integer=True, max_samples=100_000,
               seed=3, ideal=True)
    assert (r.verdict, r.stopping_reason, r.max_samples) == ("violation", "violation", 100_000)
    assert r.samples < 100_000
    fixed = search(_laplace_scale_too_small, epsilon=1.0, size=2, low=0, high=1, integer=True, samples=20_000,
                   seed=3, ideal=True)
    assert (fixed.stopping_reason, fixed.samples) == ("fixed", 20_000)
