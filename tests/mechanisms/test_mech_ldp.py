"""Local DP protocols: each one's report distribution against its formula, and audits that respect the truth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpaudit
from dpaudit.exceptions import ParameterValueError
from dpaudit.mechanisms import get_mechanism
from dpaudit.mechanisms.ldp import LDP_PROTOCOLS, the_threshold

NAMES = [cls.name for cls in LDP_PROTOCOLS]
N = 200_000


def _binom_ok(count, n, p, alpha=1e-4):
    # Two-sided binomial test at 1e-4 per check (about 60 checks here: family-wise failure below 1%).
    return stats.binomtest(int(count), n, p).pvalue > alpha


@pytest.mark.parametrize("eps, k", [(1.0, 5), (3.0, 20)])
def test_grr_and_hadamard_response_frequencies(eps, k):
    e = math.exp(eps)
    out = get_mechanism("grr", epsilon=eps, k=k)([2], size=N, rng=1)
    assert _binom_ok((out == 2).sum(), N, e / (e + k - 1)) and _binom_ok((out == 0).sum(), N, 1 / (e + k - 1))
    hr = get_mechanism("hr", epsilon=eps, k=k)
    j = hr([2], size=N, rng=2)
    plus = np.array([bin(3 & c).count("1") % 2 == 0 for c in range(hr.order)])
    assert _binom_ok(plus[j].sum(), N, e / (e + 1))


@pytest.mark.parametrize("name, p, q", [
    ("sue", math.exp(0.5) / (math.exp(0.5) + 1), 1 / (math.exp(0.5) + 1)),
    ("oue", 0.5, 1 / (math.e + 1)),
])
def test_unary_encoding_bit_frequencies(name, p, q):
    out = get_mechanism(name, epsilon=1.0, k=6)([4], size=N, rng=3)
    assert _binom_ok(out[:, 4].sum(), N, p) and _binom_ok(out[:, 0].sum(), N, q)


def test_the_threshold_and_true_epsilon():
    m = get_mechanism("the", epsilon=2.0, k=6)
    assert 0.5 < m.theta == the_threshold(2.0) < 1.0 and m.true_epsilon() < 2.0
    out = m([1], size=N, rng=4)
    p, q = 1 - 0.5 * math.exp(2.0 * (m.theta - 1) / 2), 0.5 * math.exp(-2.0 * m.theta / 2)
    assert _binom_ok(out[:, 1].sum(), N, p) and _binom_ok(out[:, 3].sum(), N, q)
    assert m.true_epsilon() == pytest.approx(math.log(p / q) + math.log((1 - q) / (1 - p)))


def test_subset_selection_sizes_and_inclusion():
    m = get_mechanism("ss", epsilon=1.0, k=12)
    w, e = m.omega, math.e
    out = m([5], size=N, rng=5)
    assert (out.sum(axis=1) == w).all()
    assert _binom_ok(out[:, 5].sum(), N, w * e / (w * e + 12 - w))


@pytest.mark.parametrize("name, g", [("blh", 2), ("olh", int(round(math.e ** 2)) + 1)])
def test_local_hashing_support_holds_the_value_at_the_grr_rate(name, g):
    out = get_mechanism(name, epsilon=2.0, k=30)([7], size=N, rng=6)
    e = math.exp(2.0)
    p_in = e / (e + g - 1)
    # The value is in the support when its bucket is reported: GRR's rate over g buckets.
    assert _binom_ok(out[:, 7].sum(), N, p_in)
    # Another value is in it when its hash collides (1/g) with the reported bucket (universal hashing).
    assert _binom_ok(out[:, 20].sum(), N, p_in / g + (1 - p_in) * (1 - 1 / g) / (g - 1))


def test_she_is_one_hot_plus_laplace_on_a_grid():
    m = get_mechanism("she", epsilon=1.0, k=4)
    out = m([0], size=N, rng=7)
    assert abs(np.median(out[:, 0]) - 1.0) < 0.05 and abs(np.median(out[:, 1])) < 0.05
    assert stats.kstest(out[:, 1], stats.laplace(scale=2.0).cdf).statistic < 0.01


@pytest.mark.parametrize("name", NAMES)
def test_auto_certifies_close_to_the_truth_and_never_above(name):
    # At confidence 0.999 each protocol's bound exceeds its truth with probability <= 0.1% (about 1% for
    # all nine): a per-seed "never above" at 0.95 would fail one protocol in three runs of this test.
    m = get_mechanism(name, epsilon=1.0, k=8)
    r = dpaudit.audit(m, epsilon=1.0, samples=200_000, seed=11, ideal=True, confidence=0.999)
    assert r.verdict == "no violation found"
    assert 0.85 * m.true_epsilon() <= r.epsilon_lower_bound <= m.true_epsilon() + 1e-9


@pytest.mark.parametrize("name", NAMES)
def test_an_overstated_claim_is_flagged(name):
    m = get_mechanism(name, epsilon=2.0, k=8)
    assert dpaudit.audit(m, epsilon=0.5 * m.true_epsilon(), max_samples=200_000, seed=12).verdict == "violation"


def test_bad_values_are_named():
    with pytest.raises(ParameterValueError, match="0..7"):
        get_mechanism("grr", epsilon=1.0, k=8)([8])
    with pytest.raises(ParameterValueError, match="k"):
        get_mechanism("oue", epsilon=1.0, k=1)


@pytest.mark.soundness
@pytest.mark.parametrize("name", NAMES)
def test_soundness_over_200_seeds(name):
    # Sequential audits at the default settings against the protocol's true epsilon; 5% of 200 allowed.
    m = get_mechanism(name, epsilon=1.0, k=8)
    alarms = sum(dpaudit.audit(m, epsilon=m.true_epsilon(), max_samples=20_000, seed=s).verdict == "violation"
                 for s in range(200))
    assert alarms <= 10


def _subsets_by_pairs(v, k, size, n, rng):
    """The reference: Floyd's algorithm with (row, column) index pairs, as subset selection first drew it."""
    m = k - 1
    sizes = np.broadcast_to(np.asarray(size, dtype=np.int64), (n,))
    top = int(sizes.max())
    complement = top > m - top + 1
    draw = (m - sizes) if complement else sizes
    taken = np.zeros((n, m), dtype=bool)
    rows = np.arange(n)
    for j in range(m - int(draw.max()), m):
        t = rng.integers(0, j + 1, size=n)
        pick = np.where(taken[rows, t], j, t)
        active = draw >= m - j
        taken[rows[active], pick[active]] = True
    taken = ~taken if complement else taken
    out = np.zeros((n, k), dtype=np.int8)
    out[:, np.r_[0:v, v + 1:k]] = taken
    return out


@pytest.mark.parametrize("k, sizes", [(12, (3, 2)), (200, (54, 53)), (30, (20, 19))])
def test_subsets_are_floyds_draws_and_uniform(k, sizes):
    from dpaudit.mechanisms.ldp import _random_subsets

    n = 60_000
    size = np.where(np.random.default_rng(1).random(n) < 0.4, sizes[1], sizes[0])
    out = _random_subsets(3, k, size, n, np.random.default_rng(2))
    np.testing.assert_array_equal(out, _subsets_by_pairs(3, k, size, n, np.random.default_rng(2)))
    assert (out.sum(axis=1) == size).all() and not out[:, 3].any()
    # Every other value equally likely: a chi-square test of the k - 1 inclusion counts (one check at 1e-4).
    counts = np.delete(out.sum(axis=0), 3)
    assert stats.chisquare(counts).pvalue > 1e-4


@pytest.mark.parametrize("k, sizes, v", [(7, (3, 2), 0), (8, (4, 3), 7), (9, (6, 5), 4)])
def test_rounded_subsets_are_uniform_among_all_subsets(k, sizes, v):
    # The Bernoulli-then-corrected draw for large subsets: every subset of each size equally likely,
    # by a chi-square test over all C(k - 1, size) of them (two checks at 1e-4 per case, six in all).
    from dpaudit.mechanisms.ldp import _rounded_subsets

    n = 120_000
    size = np.where(np.random.default_rng(3).random(n) < 0.5, sizes[1], sizes[0])
    out = _rounded_subsets(v, k, size, sizes[0], np.random.default_rng(4))
    assert out.dtype == np.int8 and (out.sum(axis=1) == size).all() and not out[:, v].any()
    codes = out.astype(np.int64) @ (1 << np.arange(k))
    for s in sizes:
        _, counts = np.unique(codes[size == s], return_counts=True)
        assert len(counts) == math.comb(k - 1, s)
        assert stats.chisquare(counts).pvalue > 1e-4


def test_large_subsets_are_drawn_rounded_and_uniform():
    # k 200 at epsilon 0.5 (76 of 199): the dispatcher takes the rounded draw; each value equally
    # likely and each pair of values as likely as any other (one check at 1e-4 each).
    from dpaudit.mechanisms.ldp import _random_subsets, _rounded_subsets

    n, k, v = 40_000, 200, 5
    size = np.where(np.random.default_rng(1).random(n) < 0.3, 75, 76)
    out = _random_subsets(v, k, size, n, np.random.default_rng(2))
    np.testing.assert_array_equal(out, _rounded_subsets(v, k, size, 76, np.random.default_rng(2)))
    assert (out.sum(axis=1) == size).all() and not out[:, v].any()
    assert stats.chisquare(np.delete(out.sum(axis=0), v)).pvalue > 1e-4
    x = np.delete(out, v, axis=1)[:, :40].astype(np.float64)
    pairs = (x.T @ x)[np.triu_indices(40, 1)]  # 780 pairs, each held by Binomial-like counts
    assert stats.chisquare(pairs).pvalue > 1e-4


@pytest.mark.parametrize("q, batch", [(0.002, None), (0.03, None), (0.03, 50), (0.2, None)])
def test_bernoulli_bits_are_independent_at_their_rate(q, batch):
    # Below SPARSE_BELOW the ones are placed by geometric gaps (batch=50 forces hundreds of rounds),
    # above it cell by cell. Four checks at 1e-4 each per case (16 in all: family-wise failure < 0.2%).
    from dpaudit.mechanisms.ldp import bernoulli_bits

    n, k = 40_000, 50
    out = bernoulli_bits(n, k, q, np.random.default_rng(7), batch=batch)
    assert out.shape == (n, k) and out.dtype == np.int8 and set(np.unique(out)) <= {0, 1}
    assert _binom_ok(out.sum(), n * k, q)
    # Every column at the same rate (the gaps cross row ends): homogeneity of the k column counts.
    assert stats.chisquare(out.sum(axis=0)).pvalue > 1e-4
    # Each bit independent of the one before it in the row-by-row sequence, row ends included.
    flat = out.reshape(-1)
    after_one = flat[1:][flat[:-1] == 1]
    assert _binom_ok(after_one.sum(), len(after_one), q)
    # Ones per row: Binomial(k, q), tail counts pooled so each expected count is at least 20.
    sums = np.bincount(out.sum(axis=1), minlength=k + 1)
    expected = stats.binom.pmf(np.arange(k + 1), k, q) * n
    top = max(1, int(np.flatnonzero(expected >= 20).max()))
    obs = np.r_[sums[:top], sums[top:].sum()]
    exp = np.r_[expected[:top], n - expected[:top].sum()]
    assert stats.chisquare(obs, exp).pvalue > 1e-4


def test_unary_encoding_at_a_large_epsilon_draws_sparse_bits_at_q():
    from dpaudit.mechanisms.ldp import SPARSE_BELOW

    m = get_mechanism("oue", epsilon=4.0, k=50)
    q = 1 / (math.exp(4.0) + 1)
    assert q < SPARSE_BELOW
    out = m([7], size=N, rng=8)
    assert _binom_ok(out[:, 7].sum(), N, 0.5) and _binom_ok(np.delete(out, 7, axis=1).sum(), N * 49, q)
