"""Neighbouring relations, the pair check and candidate generation (dpaudit.pairs).

Deterministic except the random-pair properties, which run over fixed seeds
and must hold for every draw (they are invariants, not statistics).
"""

import numpy as np
import pytest

from dpaudit.exceptions import ParameterTypeError, ParameterValueError
from dpaudit.pairs import (
    Domain,
    Relation,
    candidate_pairs,
    compare_pair,
    is_neighbouring,
    mutate_pair,
    random_pair,
)

RELATIONS = ["replace-one", "add-remove", "linf"]


def test_relation_parse_accepts_the_claim_spellings_and_names_the_parameter():
    assert Relation.parse("add/remove") is Relation.ADD_REMOVE
    assert Relation.parse("Replace_One") is Relation.REPLACE_ONE
    from dpaudit.privacy import Neighbouring

    assert Relation.parse(Neighbouring.ADD_REMOVE) is Relation.ADD_REMOVE
    with pytest.raises(ParameterValueError, match=r"^relation must be one of .*got 'l2'"):
        Relation.parse("l2")
    with pytest.raises(ParameterTypeError, match="relation"):
        Relation.parse(3)


@pytest.mark.parametrize("a, b, expected", [
    # (replace-one, add-remove, linf)
    ([0, 1, 1], [0, 1, 1], (True, True, True)),          # identical
    ([0, 1, 1], [0, 1, 0], (True, False, True)),         # one record replaced by a neighbour value
    ([0, 1, 1], [0, 1, 5], (True, False, False)),        # one record replaced, moved by 4
    ([1, 1, 1, 1], [0, 0, 0, 0], (False, False, True)),  # the example: 4 records differ
    ([0, 1], [0, 1, 100], (False, True, False)),         # one record added at the end
    ([5, 0, 1], [0, 1], (False, True, False)),           # removed at the front
    ([0, 1, 0], [1, 0], (False, True, False)),           # removed in the middle (positionally)
    ([2, 1, 3], [3, 2], (False, True, False)),           # only as multisets
    ([0, 1], [2, 3, 4], (False, False, False)),          # sizes differ by one but two records differ
    ([0], [0, 1, 2], (False, False, False)),             # sizes differ by two
])
def test_relations_on_known_pairs(a, b, expected):
    d = compare_pair(a, b)
    assert tuple(d.is_neighbouring(r) for r in RELATIONS) == expected
    assert is_neighbouring(b, a, "add-remove") == expected[1]  # symmetric


def test_rows_are_records_in_2d_datasets():
    d = [[0, 0, 1], [1, 1, 0]]
    assert is_neighbouring(d, [[0, 0, 1], [1, 1, 0], [1, 0, 0]], "add-remove")
    assert is_neighbouring(d, [[0, 0, 1], [0, 0, 0]], "replace-one")
    assert not is_neighbouring(d, [[1, 0, 1], [0, 1, 0]], "replace-one")
    assert not is_neighbouring(d, [[0, 0], [1, 1]], "replace-one")  # records of another shape


def test_describe_names_the_difference():
    assert compare_pair([1, 1, 1, 1], [0, 0, 0, 0]).describe().startswith("4 records differ (positions 0, 1, 2, 3)")
    assert compare_pair([0, 1], [0, 1, 100]).describe() == "the neighbor is the dataset after adding one record"
    assert compare_pair([0, 1, 7], [0, 1]).describe() == "the neighbor is the dataset after removing one record"
    assert "do not differ by one added or removed record" in compare_pair([0], [1, 2]).describe()
    assert compare_pair([0, 1], [0, 1]).describe() == "the datasets are identical"


def test_domain_validates_and_rounds_integer_ranges():
    assert Domain(3, 0.5, 4.5, integer=True).low == 1.0
    with pytest.raises(ParameterValueError, match="^size must be"):
        Domain(0, 0, 1)
    with pytest.raises(ParameterValueError, match="^high must be > low"):
        Domain(3, 1, 1)
    with pytest.raises(ParameterValueError, match="holds no integer"):
        Domain(3, 0.2, 0.8, integer=True)
    with pytest.raises(ParameterValueError, match="^relation must be one of"):
        Domain(3, 0, 1, relation="swap")


DOMAINS = [Domain(n, lo, hi, integer=integer, relation=rel)
           for rel in RELATIONS for integer in (False, True) for n in (1, 2, 5, 10)
           for lo, hi in ((0, 1), (0, 10), (-10, 10), (3, 4.5))]


@pytest.mark.parametrize("domain", DOMAINS, ids=repr)
def test_every_candidate_is_inside_the_domain_neighbouring_and_distinct(domain):
    pairs = candidate_pairs(domain, n_random=30, rng=0)
    assert len(pairs) >= 5 or domain.size == 1 or domain.high - domain.low <= 1
    keys = set()
    for origin, a, b in pairs:
        assert domain.contains(a) and domain.contains(b), (origin, a, b)
        assert is_neighbouring(a, b, domain.relation), (origin, a, b)
        assert not (len(a) == len(b) and np.array_equal(a, b)), origin
        keys.add((a.tobytes(), b.tobytes()))
    assert len(keys) == len(pairs)


@pytest.mark.parametrize("domain", DOMAINS[::3], ids=repr)
def test_random_and_mutated_pairs_stay_inside_and_neighbouring(domain):
    rng = np.random.default_rng(5)
    a, b = random_pair(domain, rng)
    for _ in range(100):
        assert domain.contains(a) and domain.contains(b)
        assert is_neighbouring(a, b, domain.relation)
        a, b = mutate_pair(domain, a, b, rng, scale=float(rng.uniform(0.01, 1)))


def test_candidates_are_reproducible_from_the_seed():
    d = Domain(5, 0, 10, relation="replace-one")
    one, two = candidate_pairs(d, n_random=10, rng=3), candidate_pairs(d, n_random=10, rng=3)
    assert [(o, a.tolist(), b.tolist()) for o, a, b in one] == [(o, a.tolist(), b.tolist()) for o, a, b in two]


def test_statdp_patterns_include_dp_snipers_report_noisy_max_witness():
    # DP-Sniper (Bichsel et al. 2021) reports ReportNoisyMax1's violation on [1,1,1,1,1] vs [0,2,2,2,2].
    pairs = {(tuple(a), tuple(b)) for _, a, b in candidate_pairs(Domain(5, 0, 10, integer=True, relation="linf"))}
    assert ((1, 1, 1, 1, 1), (0, 2, 2, 2, 2)) in pairs


def test_replace_one_candidates_try_outliers_at_both_ends():
    pairs = candidate_pairs(Domain(4, 0, 100))
    assert any(a.tolist() == [0, 0, 0, 0] and b.tolist() == [100, 0, 0, 0] for _, a, b in pairs)
    assert any(a.tolist() == [100] * 4 and b.tolist() == [0, 100, 100, 100] for _, a, b in pairs)


def test_add_remove_candidates_remove_an_extreme_record():
    pairs = candidate_pairs(Domain(3, -5, 5, relation="add-remove"))
    assert any(a.tolist() == [5, 0, 0] and b.tolist() == [0, 0] for _, a, b in pairs)
    assert all(len(a) == 3 and len(b) == 2 for _, a, b in pairs)
