"""Differencing attack: known answers, composition, third-party mechanisms."""

import pytest

from dpaudit.attacks.differencing import (
    PeopleTable,
    differencing_composition,
    differencing_queries,
    run_differencing,
)
from dpaudit.exceptions import ParameterValueError


def test_query_pair_isolates_every_unique_target():
    t = PeopleTable.random(500, rng=0)
    for i in t.unique_targets()[:50]:
        q = differencing_queries(t, int(i))
        assert q[0] @ t.disease - q[1] @ t.disease == t.disease[i]


def test_exact_server_always_loses_the_secret():
    # Deterministic: the difference of exact counts is the target's bit.
    r = run_differencing(n_people=500, mechanism="exact", trials=200, rng=1)
    assert r.accuracy == 1.0 and r.rmse == 0.0
    assert (r.bound.tp, r.bound.fn, r.bound.fp, r.bound.tn) == (200, 0, 0, 200)
    assert r.claimed is None and r.verdict == "no claim"
    assert r.epsilon_lower_bound == pytest.approx(r.bound.ceiling)


def test_composition_bound_grows_with_repeats_and_stays_below_claim():
    # Laplace(1/0.5) per answer. With 1000 trials the k=1 and k=64 accuracies (~0.56, ~0.84)
    # are ~15 standard errors apart, so the ordering fails with probability < 1e-9.
    # Each bound exceeds its (valid) claim with probability <= 0.05; the seed is fixed.
    r1, r64 = differencing_composition(k_values=(1, 64), n_people=400, epsilon=0.5, trials=1000, rng=2)
    assert r1.claimed.point_epsilon == 1.0 and r64.claimed.point_epsilon == 64.0
    assert r64.rmse < r1.rmse / 4  # error shrinks ~ 1/sqrt(k): ratio 8 expected
    assert r64.epsilon_lower_bound > r1.epsilon_lower_bound + 0.5
    assert r1.verdict == r64.verdict == "no violation found"


def test_third_party_callable_server():
    def noisy_counts(true_answers, rng):
        return true_answers + rng.normal(0.0, 0.2, size=true_answers.shape)

    r = run_differencing(n_people=300, mechanism=noisy_counts, trials=200, rng=3)
    # Noise sd 0.2 on each count: the difference errs by > 0.5 with probability ~0.08.
    assert r.accuracy > 0.8 and r.mechanism == "noisy_counts" and r.verdict == "no claim"


def test_to_dict_round_trips_through_json():
    import json

    r = run_differencing(n_people=200, epsilon=1.0, trials=20, rng=4)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["attack"] == "differencing" and d["claimed_epsilon"] == 2.0 and d["n_answers"] == 2


def test_validation_names_parameters():
    with pytest.raises(ParameterValueError, match="k_repeats"):
        run_differencing(k_repeats=0, epsilon=1.0)
    with pytest.raises(ParameterValueError, match="mechanism"):
        run_differencing(mechanism="nope")
    with pytest.raises(TypeError, match="trials"):
        run_differencing(trials="many", epsilon=1.0)
