"""The events a report only describes (profile, ROC, GDP) are counted on each side's first held-out releases;
the certified events on all of them."""

import numpy as np
import pytest

import dpaudit
from dpaudit.auditor import count as count_mod
from dpaudit.mechanisms import get_mechanism
from dpaudit.sampling import Sampler, _chunk
from dpaudit.stats.estimators import HeldOutCounts
from dpaudit.targets import load_target


class _Identity:
    def score(self, x):
        return np.asarray(x, dtype=float).ravel()


@pytest.mark.parametrize("limit, want_n", [(1, 32), (32, 32), (33, 64), (100, 128), (10_000, 150)])
def test_described_thresholds_are_counted_on_the_first_whole_chunks(limit, want_n):
    tgt = load_target(get_mechanism("laplace"))
    pair = (np.array([0.0]), np.array([1.0]))
    sampler = Sampler(tgt, pair, entropy=5, chunk_size=32)
    sampler.shape = ()
    certified, described = [[0.5]], [[-1.0, 0.0, 0.5, 0.7, 2.0, 3.0, 4.0, 5.0, 6.0]]
    n = 150
    got = sampler.count_events((1,), n, [_Identity()], certified, extra=described, extra_limit=limit)
    plain = sampler.count((1,), n, [_Identity()], certified)
    assert np.array_equal(got.counts[0].ge0, plain[0].ge0) and np.array_equal(got.counts[0].ge1, plain[0].ge1)
    assert got.counts[0].n0 == n and got.extra[0].n0 == got.extra[0].n1 == want_n
    x0 = np.concatenate([_chunk(tgt, pair[0], m, 5, (0, 1, i), None, 1).ravel() for i, m in sampler._chunks(n)])
    x1 = np.concatenate([_chunk(tgt, pair[1], m, 5, (1, 1, i), None, 1).ravel() for i, m in sampler._chunks(n)])
    want = HeldOutCounts.from_scores(described[0], x0[:want_n], x1[:want_n])
    assert np.array_equal(got.extra[0].ge0, want.ge0) and np.array_equal(got.extra[0].ge1, want.ge1)


def test_an_audit_past_the_limit_certifies_on_all_and_describes_on_the_first(monkeypatch):
    kw = dict(epsilon=1.0, samples=400_000, seed=3, ideal=True, chunk_size=2**14)
    whole = dpaudit.audit("laplace", **kw)
    monkeypatch.setattr(count_mod, "DESCRIBED_HELD_OUT", 2**15)
    part = dpaudit.audit("laplace", **kw)
    # The certified event and its counts are the same; only the described curves are read off fewer releases.
    assert (part.tp, part.fn, part.fp, part.tn) == (whole.tp, whole.fn, whole.fp, whole.tn)
    assert part.epsilon_lower_bound == whole.epsilon_lower_bound and part.verdict == whole.verdict
    assert part.roc.fpr.tolist() != whole.roc.fpr.tolist()
    assert any("the first 32,768 held-out releases per side" in n for n in part.notes)
    assert not any("held-out releases per side, the certified" in n for n in whole.notes)
    # Fewer releases: the certified profile can only be lower (wider intervals), up to sampling noise.
    assert part.privacy_profile["epsilon"][3] < whole.privacy_profile["epsilon"][3] + 0.1


def _mixed_cases():
    rng = np.random.default_rng(11)
    gauss = (rng.normal(size=(40_000, 4)) + [1.0, 0, 0, 0], rng.normal(size=(40_000, 4)))
    # Integers over a wide range are numbers (few values would be special values, a pattern: no direct count).
    ints = tuple(np.rint(rng.laplace(scale=1000.0, size=(40_000, 3))).astype(np.int64) + [s, 0, 0] for s in (900, 0))
    marked = [rng.laplace(size=(40_000, 2)) + s for s in (1.0, 0.0)]
    for m in marked:
        m[rng.random(m.shape) < 0.3] = -1000.0
    return {"gaussian": gauss, "integers": ints, "markers": tuple(marked)}


@pytest.mark.parametrize("case", ["gaussian", "integers", "markers"])
def test_a_step_score_counts_its_level_sets_as_its_scores_do(case):
    """MixedScore.count_at_least gives the counts of its own scores at every threshold (its bins' scores
    themselves, between them, beyond them, NaN), or None when the score is not a step of one coordinate."""
    from dpaudit.auditor.distinguishers.mixed import MixedScore
    from dpaudit.stats.counting import count_at_least

    x0, x1 = _mixed_cases()[case]
    s = MixedScore().fit(x0[:20_000], x1[:20_000])
    held = np.concatenate([x0[20_000:], x1[20_000:]])
    if case == "gaussian":  # values no release has (the audit refuses them): counted as the scores bin them
        held[:6, 0] = [np.nan, np.inf, -np.inf, np.nan, 0.0, -0.0]
    scores = s.score(held)
    levels = np.unique(scores)
    thresholds = np.unique(np.r_[levels, (levels[1:] + levels[:-1]) / 2, levels - 1e-12, -np.inf, np.inf,
                                 levels.min() - 1, levels.max() + 1, np.nan])
    direct = s.count_at_least(held, thresholds)
    if case == "markers":
        assert direct is None
        return
    assert len(levels) > 5  # a real step function, several bins
    assert np.array_equal(direct, count_at_least(scores, thresholds))
    # Few thresholds at a time count by one comparison per edge, many by a count per bin: both agree.
    for few in (thresholds[:1], thresholds[3:5], thresholds[-2:], thresholds[::7]):
        assert np.array_equal(s.count_at_least(held, few), count_at_least(scores, few))
