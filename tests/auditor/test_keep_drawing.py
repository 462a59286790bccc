"""``keep_drawing``: a sequential audit that certified a violation draws on to its budget for a tighter bound.

Validity is the sequential audit's own: every planned round's bound has its share of the failure
probability whether the audit draws it or not (union bound), and the largest drawn is reported, so
reading more rounds after a violation cannot make the bound exceed the truth more often than 5%.
The soundness allowance is tests/auditor/test_sequential_audit.py's (at most 10 of 200 audits above
the truth; the failure probability of a sound method there is 3.6e-5 at the measured p <= 1.2%).
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

import dpaudit
from dpaudit.exceptions import ParameterValueError
from dpaudit.mechanisms import get_mechanism
from dpaudit.stats.sequential import SequentialBound, round_schedule

#: Correct built-ins whose true epsilon on their own stress pair is their claim (as in test_sequential_audit.py).
CORRECT = ("laplace", "randomized_response", "noisy_histogram")


def laplace_count(dataset, size=None, rng=None):
    """The README's mymech.release: Laplace(1) noise on a count, true epsilon 1."""
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)


def test_keep_drawing_goes_to_the_budget_and_only_tightens_the_bound():
    # Claimed 0.5 against a true 1: the first round (2,000 per side) certifies the violation.  Seeded, the
    # rounds before the stop are the same draws, and the reported bound is the largest over rounds.
    kw = dict(epsilon=0.5, ideal=True, seed=1, max_samples=64_000)
    early = dpaudit.audit(laplace_count, [0, 1, 1], [0, 1], **kw)
    full = dpaudit.audit(laplace_count, [0, 1, 1], [0, 1], keep_drawing=True, **kw)
    assert (early.stopping_reason, early.rounds) == ("violation", 1)
    assert (full.stopping_reason, full.samples, full.verdict) == ("budget", 64_000, "violation")
    assert full.rounds > early.rounds and full.epsilon_lower_bound >= early.epsilon_lower_bound
    assert full.trajectory["epsilon_lower_bound"][0] == early.trajectory["epsilon_lower_bound"][0]
    assert full.epsilon_lower_bound > 0.85 > early.epsilon_lower_bound  # tighter: 0.7566 -> 0.9 of the true 1
    assert "--keep-drawing" in early.summary() and "stopped once the violation was certain" in early.summary()
    assert "--keep-drawing" not in full.summary()


def test_keep_drawing_is_for_sequential_audits_and_takes_a_bool():
    with pytest.raises(ParameterValueError, match=r"^keep_drawing: a fixed-size audit \(samples=1000\) takes no "):
        dpaudit.audit("laplace", epsilon=1, samples=1000, keep_drawing=True)
    with pytest.raises(TypeError, match="keep_drawing"):
        dpaudit.audit("laplace", epsilon=1, keep_drawing="yes")


def test_cli_keep_drawing(capsys):
    from _cli import cli

    code, out, err = cli(capsys, "audit", "laplace", "--epsilon", "0.5", "--max-samples", "8000", "--seed", "2",
                         "--keep-drawing", "--json")
    import json

    d = json.loads(out)
    assert code == 1 and d["stopping_reason"] == "budget" and d["samples"] == 8000 and d["verdict"] == "violation"
    code, _, err = cli(capsys, "audit", "laplace", "--epsilon", "0.5", "--samples", "1000", "--keep-drawing")
    assert code == 2 and "argument --keep-drawing: a fixed-size audit (--samples 1000)" in err


def test_sequential_bound_without_stopping_on_violation():
    seq = SequentialBound(schedule=round_schedule(4000, first=1000), epsilon=1.0, stop_on_violation=False)
    seq = seq.update(tp=900, fp=100)
    assert seq.violation() and seq.stopping_reason() is None  # a violation, and on to the next round
    for _ in range(2):
        seq = seq.update(tp=900, fp=100)
    assert seq.stopping_reason() == "budget"
    assert SequentialBound.from_json(seq.to_json()) == seq
    assert SequentialBound(schedule=round_schedule(4000, first=1000), epsilon=1.0).update(
        tp=900, fp=100).stopping_reason() == "violation"


def _kept_drawing(name, seeds, *, max_samples):
    """Audits of a correct built-in claimed at half its epsilon (so they certify a violation early and keep
    drawing): how many bounds exceed the true epsilon."""
    mech = get_mechanism(name)
    true_eps = float(mech.true_epsilon(mech.claim.point_delta))
    assert math.isclose(mech.claim.point_epsilon, true_eps, rel_tol=1e-12)
    bounds, reasons = [], []
    for seed in seeds:
        r = dpaudit.audit(name, epsilon=true_eps / 2, delta=mech.claim.point_delta, max_samples=max_samples, seed=seed,
                          keep_drawing=True)
        bounds.append(r.epsilon_lower_bound)
        reasons.append(r.stopping_reason)
    return int(np.sum(np.asarray(bounds) > true_eps)), bounds, reasons


@pytest.mark.parametrize("name", CORRECT)
def test_keep_drawing_stays_below_the_true_epsilon(name):
    """Three seeded audits per mechanism at 4,000 per side, each drawn to the budget past its violation: none above
    the truth (each exceeds with p <= 0.05, measured at most 1.2% for the sequential audit: 3.6% for three)."""
    exceed, bounds, reasons = _kept_drawing(name, range(3), max_samples=4_000)
    assert exceed == 0, bounds
    assert set(reasons) == {"budget"}, reasons


@pytest.mark.soundness
@pytest.mark.parametrize("name", CORRECT)
def test_keep_drawing_is_sound_200_seeds(name):
    """200 audits per mechanism (budget 20,000 per side) drawn on past their violation: at most 10 above the truth."""
    exceed, bounds, reasons = _kept_drawing(name, range(200), max_samples=20_000)
    print(f"{name}: {exceed}/200 above the true epsilon; bounds median {statistics.median(bounds):.4f}; "
          f"stops {sorted((r, reasons.count(r)) for r in set(reasons))}")
    assert exceed <= 10


def test_search_passes_keep_drawing_to_its_final_audit(monkeypatch):
    import dpaudit.pair_search as ps

    with pytest.raises(ParameterValueError, match=r"^keep_drawing: a fixed-size audit \(samples=1000\) takes no "):
        dpaudit.search("laplace", epsilon=1, size=2, low=0, high=1, samples=1000, keep_drawing=True)
    seen = {}
    real = ps._final_audits

    def spy(tgt, chosen, entropy, kwargs, reports):
        seen.update(kwargs)
        return real(tgt, chosen, entropy, kwargs, reports)

    monkeypatch.setattr(ps, "_final_audits", spy)
    r = dpaudit.search(laplace_count, epsilon=0.5, size=2, low=0, high=1, max_samples=8000, seed=1,
                       keep_drawing=True, ideal=True)
    assert seen["keep_drawing"] is True and r.audit.stopping_reason == "budget" and r.audit.samples == 8000
