"""Sequential audits end to end: ``dpaudit.audit`` without ``samples``.

What is checked: the bound stays valid under optional stopping (many seeded
audits of correct mechanisms whose true epsilon equals the claim), gross
flaws are flagged after few samples, a slow per-call target stops early,
``samples=N`` is exactly the fixed-size audit, results do not depend on
``n_jobs``, and a correct mechanism's sequential bound is within 5% of the
fixed-size bound at the same number of samples.

Soundness allowance.  Every audit's bound exceeds the true epsilon with
probability p <= 1 - confidence = 0.05, whatever round it stopped in.  Over
``n`` seeded audits the number of exceedances X is Binomial(n, p), and the
tests allow X <= 5% of n (10 of 200 in the soundness suite).  A method at the
worst p the guarantee allows (0.05) fails that with probability
P(Bin(200, 0.05) > 10) = 0.42, so the test asks for more than the bare
guarantee: it relies on the slack of the union bound and Clopper-Pearson,
whose per-audit exceedance rate the statistics core measured at 0.05%-1.2%
(tests/stats/test_sequential.py).  At p = 0.012 the failure probability is
P(Bin(200, 0.012) > 10) = 3.6e-5, at p = 0.02 it is 2.5e-3.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpaudit
from dpaudit.exceptions import MissingExtraError
from dpaudit.mechanisms import REGISTRY, get_mechanism

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import user_targets as ut  # noqa: E402

TARGETS = str(HERE / "user_targets.py")

#: Correct built-ins whose true epsilon on their own stress pair equals the claim (all float-safe).
CORRECT = ("laplace", "randomized_response", "noisy_histogram")
#: The broken built-ins; the two SVTs that need 8,000-32,000 per side take ~10 s under load and run in
#: the soundness suite (`make soundness`), the others in the normal one.
def _broken(name):
    """Whether the built-in ``name`` is a known-buggy variant; an adapter whose library is not installed is not."""
    try:
        return getattr(get_mechanism(name), "broken", False)
    except MissingExtraError:
        return False


BROKEN = tuple(
    pytest.param(name, marks=pytest.mark.soundness) if name in ("svt_lyu_alg3", "svt_lyu_alg4") else name
    for name in REGISTRY if _broken(name))


def _claim_and_truth(name):
    mech = get_mechanism(name)
    return mech.claim.point_epsilon, float(mech.true_epsilon(mech.claim.point_delta))


def _exceedances(name, seeds, *, max_samples, stop_when_converged=True):
    eps, true_eps = _claim_and_truth(name)
    assert math.isclose(eps, true_eps, rel_tol=1e-12)  # the claim is tight: any bound above it is wrong
    bounds, reasons = [], []
    for seed in seeds:
        r = dpaudit.audit(name, epsilon=eps, max_samples=max_samples, seed=seed,
                          stop_when_converged=stop_when_converged)
        assert r.stopping_reason in (("converged",) if stop_when_converged else ()) + ("budget", "violation")
        assert r.samples <= max_samples
        bounds.append(r.epsilon_lower_bound)
        reasons.append(r.stopping_reason)
    return int(np.sum(np.asarray(bounds) > true_eps)), bounds, reasons


# ----------------------------------------------------------------------------- soundness
@pytest.mark.parametrize("name", CORRECT)
def test_sequential_audit_of_a_tight_mechanism_stays_below_its_true_epsilon(name):
    """Four seeded sequential audits (budget 4,000 per side) per correct mechanism; none exceeds the truth.

    Failure probability (over the choice of seeds): each audit exceeds with
    p <= 0.05 by the guarantee; the 600 audits of the soundness suite below
    measured 1 (laplace 0/200, randomized response 1/200, noisy histogram
    0/200), and the statistics core's simulations at most 1.2%, so 4 audits
    with an exceedance happen with probability <= 4.7% at that rate (18.5%
    at the bare guarantee).
    """
    exceed, bounds, _ = _exceedances(name, range(4), max_samples=4_000)
    assert exceed == 0, bounds
    assert max(bounds) > 0.5  # the audits found the mechanism's leak, not nothing


@pytest.mark.soundness
@pytest.mark.parametrize("name", CORRECT)
def test_sequential_audits_are_sound_under_optional_stopping_200_seeds(name):
    """200 sequential audits (seeds 0-199, budget 20,000 per side, confidence 0.95) per mechanism.

    Allowed: at most 10 (5%) bounds above the true epsilon (module docstring:
    a sound method fails with probability 0.42 at the worst p = 0.05 the
    guarantee allows, 3.6e-5 at the measured p <= 1.2%).
    """
    exceed, bounds, reasons = _exceedances(name, range(200), max_samples=20_000)
    print(f"{name}: {exceed}/200 above the true epsilon; bounds median {statistics.median(bounds):.4f}, "
          f"max {max(bounds):.4f}; stops {sorted((r, reasons.count(r)) for r in set(reasons))}")
    assert exceed <= 10


def test_an_audit_that_never_stops_as_converged_keeps_its_bound():
    """``stop_when_converged=False`` (a search's final audit when it expects a violation): only "violation" or
    "budget" stops it.  Four seeded audits per correct mechanism at 4,000 per side: none exceeds the truth (the
    same failure probability as the test above: each stopping rule is one of the rounds' anytime-valid bounds)."""
    for name in CORRECT:
        exceed, bounds, reasons = _exceedances(name, range(4), max_samples=4_000, stop_when_converged=False)
        assert exceed == 0, (name, bounds)
        assert set(reasons) == {"budget"}, (name, reasons)


@pytest.mark.soundness
@pytest.mark.parametrize("name", CORRECT)
def test_never_converged_audits_are_sound_200_seeds(name):
    """As the 200-seed test above, with ``stop_when_converged=False``: at most 10 of 200 above the truth."""
    exceed, bounds, reasons = _exceedances(name, range(200), max_samples=20_000, stop_when_converged=False)
    print(f"{name}: {exceed}/200 above the true epsilon; stops {sorted((r, reasons.count(r)) for r in set(reasons))}")
    assert exceed <= 10


# ----------------------------------------------------------------------------- gross flaws
@pytest.mark.parametrize("name", sorted(ut.GROSS))
def test_user_targets_with_a_gross_flaw_are_flagged_in_the_first_round(name):
    """An unclipped sum, a wrong randomized-response probability, a noise scale of epsilon: flagged at 2,000.

    ``ideal=True``: the targets use numpy float noise, which the float attacks
    would flag on its own; here the flaw in the distribution is what must be
    found.  Deterministic given the seed; the bound is also checked to stay
    below the true epsilon (a sound bound fails that with probability <= 5%).
    """
    d, d2, claim, true_eps = ut.GROSS[name]
    r = dpaudit.audit(getattr(ut, name), d, d2, epsilon=claim, seed=1, ideal=True)
    assert (r.verdict, r.stopping_reason) == ("violation", "violation")
    assert r.samples == 2_000 and r.rounds == 1  # measured; far below the 10^5 allowed
    assert claim < r.epsilon_lower_bound <= true_eps


@pytest.mark.parametrize("name", BROKEN)
def test_broken_builtins_are_flagged_with_at_most_1e5_samples(name):
    """Every broken built-in of ``dpaudit list`` is flagged sequentially, seed 1, with <= 10^5 per side.

    Measured samples per side (seed 1): 2,000 for all but svt_lyu_alg3
    (8,000) and svt_lyu_alg4 (32,000); docs/sequential.md has the table over
    five seeds.  Each below 10^5, so the median is too.
    """
    mech = get_mechanism(name)
    r = dpaudit.audit(name, epsilon=mech.claim.point_epsilon, delta=mech.claim.point_delta, seed=1)
    assert (r.verdict, r.stopping_reason) == ("violation", "violation")
    assert r.samples <= 100_000
    assert len(r.trajectory["samples"]) == r.rounds and r.trajectory["samples"][-1] == r.samples


def test_a_slow_per_call_target_with_a_gross_flaw_stops_after_the_first_round():
    """1 ms per call: the first round (200 per side, 400 calls, 0.4 s of sleep) flags it.

    A fixed audit of the per-call default (20,000 per side) would sleep 40 s;
    benchmarks/bench_sequential_audit.py times both.  Deterministic given the seed.
    """
    d, d2, claim, _ = ut.GROSS["unclipped_sum"]
    r = dpaudit.audit(ut.slow_unclipped_sum, d, d2, epsilon=claim, seed=1, ideal=True)
    assert (r.verdict, r.stopping_reason, r.samples, r.rounds) == ("violation", "violation", 200, 1)
    assert r.max_samples == 20_000


# ----------------------------------------------------------------------------- fixed size
def _json(report) -> dict:
    out = report.to_dict()
    out.pop("elapsed_seconds")
    return json.loads(json.dumps(out))


@pytest.mark.parametrize("name, n, expected", [
    # samples=N must keep giving the same audit.  Recorded before sequential rounds ran on the statistics
    # core (aaac02b) and unchanged by them; laplace's moved from 0.9621754871534527 when the built-in
    # moved to the DP-Sniper-compatible float-safe grid (the mechanism changed, not the audit), then from
    # 0.9633778148992963 when the threshold (nothing to fit) began choosing its event on the whole
    # calibration pool at the pool's own precision (the audit changed on purpose; same samples); then
    # both (from 0.9641558902785257 and 1.0751252400409448) when the Poisson certificate began to certify
    # the event when calibration prefers it (a Poisson-sized prefix of the same held-out releases).
    ("laplace", 50_000, 0.9695934820028398),
    ("randomized_response", 20_000, 1.072807539706051),
])
def test_samples_gives_exactly_the_fixed_audit(name, n, expected):
    eps, _ = _claim_and_truth(name)
    first = _json(dpaudit.audit(name, epsilon=eps, samples=n, seed=3))
    assert first == _json(dpaudit.audit(name, epsilon=eps, samples=n, seed=3))
    assert first["epsilon_lower_bound"] == expected
    assert (first["stopping_reason"], first["rounds"], first["samples"], first["max_samples"]) == ("fixed", 1, n, None)
    assert first["trajectory"] == {"samples": [n], "epsilon_lower_bound": [expected]}
    assert first["n_calibration"] + first["n_test"] == n


def test_cli_samples_is_the_fixed_audit():
    fixed = subprocess.run([sys.executable, "-m", "dpaudit", "audit", "randomized_response", "--epsilon",
                            str(math.log(3)), "--seed", "3", "--json", "--samples", "2e4"], capture_output=True,
                           text=True, timeout=120)
    assert fixed.returncode == 0, fixed.stderr
    f = json.loads(fixed.stdout)
    f.pop("elapsed_seconds")
    assert f == _json(dpaudit.audit("randomized_response", epsilon=math.log(3), samples=20_000, seed=3))
    assert (f["stopping_reason"], f["rounds"]) == ("fixed", 1)


def test_max_samples_bounds_a_sequential_audit_and_its_trajectory():
    r = dpaudit.audit("randomized_response", epsilon=math.log(3), max_samples=4_000, seed=3)
    assert r.stopping_reason in ("converged", "budget") and r.max_samples == 4_000 and r.samples <= 4_000
    traj = r.trajectory
    assert len(traj["samples"]) == r.rounds and traj["samples"][-1] == r.samples
    assert traj["samples"] == sorted(traj["samples"])
    assert np.all(np.diff(traj["epsilon_lower_bound"]) >= 0)  # the certified bound never goes down
    assert traj["epsilon_lower_bound"][-1] == r.epsilon_lower_bound


# ----------------------------------------------------------------------------- n_jobs
@pytest.mark.parametrize("target, d, d2, eps", [
    ("histogram", [0, 1, 2], [0, 1], 1.0),                       # vector output, runs to its budget
    ("rr_wrong_probability", [1], [0], 1.0),                     # stops on a violation
])
def test_sequential_results_do_not_depend_on_n_jobs(target, d, d2, eps):
    # Chunks of 500 releases, so that every round is split between the two workers.
    kw = dict(epsilon=eps, max_samples=4_000, seed=5, ideal=True, chunk_size=500)
    one = _json(dpaudit.audit(getattr(ut, target), d, d2, n_jobs=1, **kw))
    two = _json(dpaudit.audit(getattr(ut, target), d, d2, n_jobs=2, **kw))
    assert one == two
    assert one["rounds"] >= 1 and one["stopping_reason"] != "fixed"


# ----------------------------------------------------------------------------- price of anytime validity
def _sequential_over_fixed(name, seed):
    eps, _ = _claim_and_truth(name)
    seq = dpaudit.audit(name, epsilon=eps, seed=seed)
    fixed = dpaudit.audit(name, epsilon=eps, samples=seq.samples, seed=seed)
    return seq, fixed


def test_sequential_bound_is_within_5_percent_of_the_fixed_bound_at_the_same_samples():
    """Budget 10^5, randomized response, seed 1: sequential bound >= 95% of a fixed audit of as many samples.

    The default budget (10^6) takes ~30 s under load, so the normal suite
    runs a tenth of it; the soundness suite checks all three correct
    built-ins at the default budget (seed 1: 0.997, 0.993, 1.001; docs/sequential.md).
    The two audits draw different releases, so the ratio is noisy, but by far
    less than the 5% allowed.
    """
    seq = dpaudit.audit("randomized_response", epsilon=math.log(3), max_samples=100_000, seed=1)
    fixed = dpaudit.audit("randomized_response", epsilon=math.log(3), samples=seq.samples, seed=1)
    assert seq.epsilon_lower_bound >= 0.95 * fixed.epsilon_lower_bound


@pytest.mark.soundness
@pytest.mark.parametrize("name", CORRECT)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sequential_over_fixed_at_default_budget_all_correct_mechanisms(name, seed):
    """Default budget (10^6 per side): sequential bound >= 95% of a fixed audit of as many samples.

    Every correct built-in, seeds 1-3 (measured 0.987-1.003, all at the budget).  This test
    caught noisy_histogram at seed 3 stopping as "converged" at 128,000 with
    ratio 0.945 while the event was still re-chosen each round; since
    "converged" waits until the events stay, it runs to the budget (0.987).
    """
    seq, fixed = _sequential_over_fixed(name, seed)
    assert seq.max_samples == 1_000_000
    print(f"{name} seed {seed}: {seq.stopping_reason} at {seq.samples}: sequential {seq.epsilon_lower_bound:.4f}, "
          f"fixed {fixed.epsilon_lower_bound:.4f}, ratio {seq.epsilon_lower_bound / fixed.epsilon_lower_bound:.4f}")
    assert seq.epsilon_lower_bound >= 0.95 * fixed.epsilon_lower_bound
