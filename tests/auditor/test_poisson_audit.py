"""The Poisson certificate inside the audit: prefix counts, the report, reproducibility."""

import numpy as np
import pytest

import dpaudit
from dpaudit.auditor import pipeline
from dpaudit.mechanisms import get_mechanism
from dpaudit.sampling import Sampler
from dpaudit.stats.estimators import HeldOutCounts
from dpaudit.targets import load_target


class _Identity:
    def score(self, x):
        return np.asarray(x, dtype=float).ravel()


@pytest.mark.parametrize("prefix", [(0, 23), (37, 150), (150, 150), (151, 290), (64, 64)])
def test_prefix_counts_are_the_counts_of_the_first_releases(prefix):
    """Counting the first N0 and N1 releases (shorter or longer than n) agrees with counting them one by one."""
    tgt = load_target(get_mechanism("laplace"))
    pair = (np.array([0.0]), np.array([1.0]))
    sampler = Sampler(tgt, pair, entropy=5, chunk_size=32)
    sampler.shape = ()
    thr = [[-1.0, 0.0, 0.5, 2.0]]
    n = 150
    full, pre = sampler.count((1,), n, [_Identity()], thr, prefix=prefix)
    plain = sampler.count((1,), n, [_Identity()], thr)
    assert np.array_equal(full[0].ge0, plain[0].ge0) and np.array_equal(full[0].ge1, plain[0].ge1)
    # The same stream, release by release: the first n from chunks 0..4, then further chunks.
    for side in (0, 1):
        want_n = max(n, prefix[side])
        stream = []
        for i, m in sampler._chunks(n):
            stream.append(pipeline_chunk(tgt, pair[side], m, (side, 1, i)))
        for j, m in sampler._chunks(want_n - n):
            stream.append(pipeline_chunk(tgt, pair[side], m, (side, 1, len(sampler._chunks(n)) + j)))
        x = np.concatenate(stream) if stream else np.zeros(0)
        want = HeldOutCounts.from_scores(thr[0], x[:prefix[side]], x[:prefix[side]])
        got = pre[0].ge0 if side == 0 else pre[0].ge1
        assert np.array_equal(got, want.ge0), side
        assert (pre[0].n0, pre[0].n1) == prefix
        assert np.array_equal(full[0].ge0 if side == 0 else full[0].ge1,
                              HeldOutCounts.from_scores(thr[0], x[:n], x[:n]).ge0)


def pipeline_chunk(tgt, data, m, key):
    from dpaudit.sampling import _chunk

    return _chunk(tgt, data, m, 5, key, None, 1).ravel()


def test_poisson_sizes_come_from_the_seed_alone():
    a = pipeline._poisson_sizes(123, (3, 2), 10_000)
    assert a == pipeline._poisson_sizes(123, (3, 2), 10_000)
    assert a != pipeline._poisson_sizes(124, (3, 2), 10_000)
    assert all(9_000 < v < 10_000 for v in a)


def test_a_poisson_certified_audit_reports_its_counts_and_does_not_depend_on_jobs():
    m = get_mechanism("report_noisy_max_laplace", epsilon=0.1, n_candidates=5, answers=True)
    d, d2 = m.neighbouring_pair()
    r1 = dpaudit.audit(m, d, d2, epsilon=0.1, samples=400_000, confidence=0.9, seed=4, ideal=True)
    r2 = dpaudit.audit(m, d, d2, epsilon=0.1, samples=400_000, confidence=0.9, seed=4, ideal=True, n_jobs=2)
    assert r1.certificate == "poisson-conditional"
    # The counts are those of Poisson-sized held-out sets: close to, but not, n_test per side.
    assert r1.tp + r1.fn != r1.n_test and abs(r1.tp + r1.fn - r1.n_test) < 0.02 * r1.n_test
    assert "a Poisson number per side" in str(r1)
    d1, d2_ = r1.to_dict(), r2.to_dict()
    d1.pop("elapsed_seconds"), d2_.pop("elapsed_seconds")
    assert d1 == d2_


def test_delta_above_zero_keeps_the_intervals():
    r = dpaudit.audit("gaussian_analytic", epsilon=1.0, delta=1e-5, samples=100_000, seed=2)
    assert r.certificate == "clopper-pearson"
