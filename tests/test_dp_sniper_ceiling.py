"""experiments/dp_sniper/ceiling.py: the exact sparse-vector outcome probabilities behind the README's ceilings.

The README says no distinguisher can reach three of DP-Sniper's published bounds at 2 x 10^7
samples; that rests on these probabilities being right, so they are checked against the
mechanism's own releases (chi-square, alpha 1e-3 per test: a false failure once in a thousand runs
of a correct integral, and the seeds are fixed).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpaudit.mechanisms import get_mechanism

ROOT = Path(__file__).resolve().parents[1]
ALPHA = 1e-3


def _ceiling_module():
    spec = importlib.util.spec_from_file_location("dp_sniper_ceiling", ROOT / "experiments/dp_sniper/ceiling.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _exact_laws_module():
    """experiments/dp_sniper/exact_laws.py, which ceiling.py puts on the path and imports."""
    import sys

    _ceiling_module()
    return sys.modules["exact_laws"]


@pytest.mark.parametrize("name, threshold", [("sparse_vector", 0.5), ("svt_lyu_alg4", 1.0)])
def test_exact_svt_probabilities_match_the_releases(name, threshold):
    ceiling = _ceiling_module()
    mech = get_mechanism(name, epsilon=0.1, c=1, threshold=threshold, n_queries=10, answers=True)
    d, d2 = mech.neighbouring_pair()
    p0, p1 = ceiling.exact_svt_probabilities(mech, d, d2)
    assert p0.sum() == pytest.approx(1.0) and p1.sum() == pytest.approx(1.0)
    n = 200_000
    for data, p, seed in ((d, p0, 1), (d2, p1, 2)):
        out = np.asarray(mech(data, size=n, rng=seed))
        above = out == 1
        first = np.where(above.any(axis=1), above.argmax(axis=1), out.shape[1])  # position of the first "above"
        counts = np.bincount(first, minlength=len(p))
        assert stats.chisquare(counts, p * n).pvalue > ALPHA


def test_ceiling_of_identical_distributions_is_zero_and_grows_with_samples():
    ceiling = _ceiling_module()
    p = np.array([0.5, 0.3, 0.2])
    assert ceiling.best_event_bound(p, p, 10**6, 0.9) == 0.0
    q = np.array([0.45, 0.3, 0.25])  # the largest privacy loss of any event: ln(0.25 / 0.2) = 0.223
    small, large = (ceiling.best_event_bound(p, q, n, 0.9) for n in (10**5, 10**8))
    assert 0.0 < small < large < np.log(0.25 / 0.2)


def test_the_audits_certificate_is_the_better_of_its_two_per_event():
    ceiling = _ceiling_module()
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.45, 0.3, 0.25])
    both, cp, pois = (ceiling.best_event_bound(p, q, 10**6, 0.9, c) for c in ("both", "intervals", "poisson"))
    assert both == max(cp, pois) and cp > 0 and pois > 0
    # A rare outcome: the Poisson test certifies more than two intervals at the same share.
    p, q = np.array([0.999, 0.001]), np.array([0.9995, 0.0005])
    assert ceiling.best_event_bound(q, p, 10**6, 0.9, "poisson") > ceiling.best_event_bound(q, p, 10**6, 0.9, "intervals")


def test_exact_svt_value_probabilities_match_the_releases():
    """Algorithm 3 releases the first above answer's noisy value: position and value cells against releases."""
    ceiling = _ceiling_module()
    mech = get_mechanism("svt_lyu_alg3", epsilon=0.1, c=1, threshold=1.0, n_queries=10, answers=True)
    d, d2 = mech.neighbouring_pair()
    cells = 4000
    p0, p1 = ceiling.exact_svt_value_probabilities(mech, d, d2, cells=cells)
    assert p0.sum() == pytest.approx(1.0) and p1.sum() == pytest.approx(1.0)
    half = 40 * max(mech.rho_scale, mech.nu_scale)
    grid = np.linspace(-half, half, 400_001) + mech.threshold  # the values v = T + rho of the integral
    starts = grid[np.linspace(0, len(grid), cells, endpoint=False).astype(int)]
    n, m = 200_000, mech.n_queries
    for data, p, seed in ((d, p0, 3), (d2, p1, 4)):
        out = np.asarray(mech(data, size=n, rng=seed))
        above = out[:, :m] == 1
        first = np.where(above.any(axis=1), above.argmax(axis=1), m)
        value = out[np.arange(n), m + np.minimum(first, m - 1)]
        cell = np.clip(np.searchsorted(starts, value, side="right") - 1, 0, cells - 1)
        # Pool the fine cells into deciles of each position's value so every expected count is large.
        expected = np.zeros(10 * m + 1)
        observed = np.zeros(10 * m + 1)
        for i in range(m):
            pi = p[i * cells:(i + 1) * cells]
            edges = np.searchsorted(np.cumsum(pi) / pi.sum(), np.linspace(0.1, 0.9, 9))
            group = np.searchsorted(edges, np.arange(cells), side="right")
            np.add.at(expected, i * 10 + group, pi * n)
            mask = first == i
            np.add.at(observed, i * 10 + group[cell[mask]], 1)
        expected[-1], observed[-1] = p[-1] * n, np.sum(first == m)
        keep = expected > 20
        assert stats.chisquare(observed[keep], expected[keep] * observed[keep].sum() / expected[keep].sum()).pvalue > ALPHA


def test_exact_rappor_and_cdf_probabilities_match_the_releases():
    ceiling = _ceiling_module()
    rappor = get_mechanism("rappor", epsilon=0.1)
    d, d2 = rappor.neighbouring_pair()
    p0, p1 = ceiling.exact_bit_probabilities(rappor, d, d2)
    a, b = np.asarray(rappor._prepare(d)), np.asarray(rappor._prepare(d2))
    idx = np.flatnonzero(a != b)
    n = 200_000
    for data, p, seed in ((d, p0, 5), (d2, p1, 6)):
        bits = np.asarray(rappor(data, size=n, rng=seed))[:, idx]
        code = bits @ (1 << np.arange(len(idx)))
        assert stats.chisquare(np.bincount(code, minlength=len(p)), p * n).pvalue > ALPHA
    mech = get_mechanism("noisy_max_value_laplace", epsilon=0.1, n_candidates=5, answers=True)
    d, d2 = mech.neighbouring_pair()
    q0, q1 = ceiling.exact_cdf_probabilities(mech, d, d2, n_bins=2000)
    for data, p, seed in ((d, q0, 7), (d2, q1, 8)):
        x = np.asarray(mech(data, size=n, rng=seed))
        cum = np.cumsum(p)
        edges = np.searchsorted(cum, np.linspace(0.05, 0.95, 19))  # 20 groups of bins, ~5% each
        group = np.searchsorted(edges, np.arange(len(p)), side="right")
        expected = np.bincount(group, weights=p * n)
        # Bin b covers (edge[b-1], edge[b]] of the same grid ceiling.py uses; recover it from the CDF.
        lo_hi = [float(v) for v in (mech.cdf(data, -1e4), mech.cdf(data, 1e4))]
        assert lo_hi[0] < 1e-9 and lo_hi[1] > 1 - 1e-9
        values = np.sort(x)
        cdf_at = mech.cdf(data, values)
        bin_of = np.searchsorted(cum, cdf_at, side="left")
        observed = np.bincount(group[np.minimum(bin_of, len(p) - 1)], minlength=len(expected))
        assert stats.chisquare(observed, expected).pvalue > ALPHA


@pytest.mark.parametrize("name, params", [("svt34_parallel", dict(epsilon=0.1, c=2, threshold=1.0, n_queries=10)),
                                          ("prefix_sum", dict(epsilon=0.1, n_queries=10)),
                                          ("laplace_parallel", dict(epsilon=0.1, n_parallel=20))])
def test_exact_log_ratios_are_likelihood_ratios(name, params):
    """A log likelihood ratio r of D against D' has E_D'[e^r] = E_D[e^-r] = 1 (a wrong density breaks it):
    each mean within 4.5 standard errors of 1 (a false failure once in 10^5 runs; the seeds are fixed)."""
    ceiling = _ceiling_module()
    mech = get_mechanism(name, **params)
    d, d2 = mech.neighbouring_pair()
    llr = ceiling.laplace_log_ratio(mech, d, d2) or ceiling.svt34_log_ratio(mech, d, d2, n_grid=50_001)
    n = 100_000
    for data, sign, seed in ((d2, 1.0, 5), (d, -1.0, 6)):
        w = np.exp(sign * llr(np.asarray(mech(data, size=n, rng=seed))))
        assert abs(w.mean() - 1.0) < 4.5 * w.std() / np.sqrt(n) + 1e-4, (name, w.mean())


def test_laplace_log_ratio_is_the_laplace_densities():
    ceiling = _ceiling_module()
    mech = get_mechanism("histogram_scale_bug", epsilon=0.1, n_bins=5, answers=True)
    d, d2 = mech.neighbouring_pair()
    x = np.array([[0.3, 1.0, 0.9, 1.2, 1.0], [-2.0, 1.0, 1.0, 1.0, 1.0]])
    exact = (stats.laplace.logpdf(x, loc=d, scale=0.1) - stats.laplace.logpdf(x, loc=d2, scale=0.1)).sum(axis=1)
    assert np.allclose(ceiling.laplace_log_ratio(mech, d, d2)(x), exact)


def test_ordered_bins_keep_their_order():
    """Bins already in likelihood-ratio order give the same ceiling ordered or sorted; a bin whose estimated
    ratio is out of order by noise is not moved when ordered (no optimism from the estimate)."""
    ceiling = _ceiling_module()
    p0, p1 = np.array([0.2, 0.3, 0.5]), np.array([0.4, 0.3, 0.3])
    assert ceiling.best_event_bound(p0, p1, 10**6, 0.9, ordered=True) == ceiling.best_event_bound(p0, p1, 10**6, 0.9)
    noisy0, noisy1 = np.array([0.3, 0.33, 0.37]), np.array([0.34, 0.28, 0.38])  # the middle bin looks best
    assert ceiling.best_event_bound(noisy0, noisy1, 10**6, 0.9, ordered=True) < ceiling.best_event_bound(
        noisy0, noisy1, 10**6, 0.9)


def test_exact_svt_pattern_probabilities_match_the_releases():
    """Algorithm 6 (no cutoff): the probability of every status pattern against releases (4 queries: 16 patterns)."""
    ceiling = _ceiling_module()
    mech = get_mechanism("svt_lyu_alg6", epsilon=0.5, threshold=1.0, n_queries=4, answers=True)
    d, d2 = mech.neighbouring_pair()
    p0, p1 = ceiling.exact_svt_pattern_probabilities(mech, d, d2)
    assert p0.sum() == pytest.approx(1.0) and len(p0) == 16
    n = 200_000
    for data, p, seed in ((d, p0, 7), (d2, p1, 8)):
        out = np.asarray(mech(data, size=n, rng=seed))
        code = (out == 1) @ (1 << np.arange(4))  # bit k of the pattern: query k above
        assert stats.chisquare(np.bincount(code, minlength=16), p * n).pvalue > ALPHA


def _pattern_counts(out: np.ndarray, law: dict) -> tuple[np.ndarray, np.ndarray]:
    """(observed, expected share) per pattern of ``law``; a release outside the law fails the test."""
    keys = list(law)
    index = {k: i for i, k in enumerate(keys)}
    rows, counts = np.unique(out.astype(int), axis=0, return_counts=True)
    observed = np.zeros(len(keys))
    for row, count in zip(rows, counts):
        assert tuple(row) in index, f"release {tuple(row)} has probability 0 in the exact law"
        observed[index[tuple(row)]] = count
    return observed, np.array([law[k] for k in keys])


@pytest.mark.parametrize("name, params", [
    ("sparse_vector", dict(epsilon=0.5, c=2, threshold=1.0, n_queries=6)),  # cutoff 2: 22 patterns
    ("svt_lyu_alg4", dict(epsilon=0.5, c=3, threshold=1.0, n_queries=6)),  # cutoff 3: 42 patterns
    ("svt_lyu_alg5", dict(epsilon=0.1, threshold=1.0, n_queries=10)),  # no query noise: closed form
    ("svt_lyu_alg5", dict(epsilon=0.5, threshold=0.3, n_queries=6)),
])
def test_svt_pattern_law_matches_the_releases(name, params):
    """Every status pattern of a one-threshold sparse vector (any cutoff, or none) against 200,000 releases
    per side: chi-square over the patterns expected 20 or more times, the rest pooled (alpha 1e-3)."""
    svt_pattern_law = _exact_laws_module().svt_pattern_law
    mech = get_mechanism(name, answers=True, **params)
    n = 200_000
    for data, seed in zip(mech.neighbouring_pair(), (11, 12)):
        law = svt_pattern_law(mech, data, n_grid=100_001)
        assert sum(law.values()) == pytest.approx(1.0)
        observed, p = _pattern_counts(np.asarray(mech(data, size=n, rng=seed)), law)
        big = p * n >= 20
        if not big.all():
            observed, p = np.r_[observed[big], observed[~big].sum()], np.r_[p[big], p[~big].sum()]
        assert stats.chisquare(observed, p * n).pvalue > ALPHA


def test_svt5_law_is_the_threshold_noise_mass_between_the_answers():
    """Algorithm 5 on DP-Sniper's pair: D = [2]*5 + [0]*5 has query k above iff rho <= q_k - 1, so all above
    with P(rho <= -1), the first half with P(-1 < rho <= 1); D' = [1]*10 all above or all below, never half."""
    svt_pattern_law = _exact_laws_module().svt_pattern_law
    mech = get_mechanism("svt_lyu_alg5", epsilon=0.1, c=1, threshold=1.0, n_queries=10, answers=True)
    d, d2 = mech.neighbouring_pair()
    cdf = stats.laplace(scale=mech.rho_scale).cdf
    law, law2 = svt_pattern_law(mech, d), svt_pattern_law(mech, d2)
    half = (1,) * 5 + (0,) * 5
    assert law == pytest.approx({(1,) * 10: cdf(-1), half: cdf(1) - cdf(-1), (0,) * 10: 1 - cdf(1)})
    assert law2 == pytest.approx({(1,) * 10: 0.5, (0,) * 10: 0.5})


def test_the_svt_laws_refuse_the_variants_they_do_not_describe():
    ceiling = _ceiling_module()
    for name, c in (("svt_lyu_alg2", 2), ("svt_lyu_alg3", 1)):  # a threshold redrawn per above; released values
        mech = get_mechanism(name, epsilon=0.1, c=c, threshold=1.0, n_queries=10, answers=True)
        assert ceiling.exact_svt_pattern_probabilities(mech, *mech.neighbouring_pair()) is None
    mech = get_mechanism("svt_lyu_alg2", epsilon=0.1, c=1, threshold=1.0, n_queries=10, answers=True)
    assert ceiling.exact_svt_pattern_probabilities(mech, *mech.neighbouring_pair()) is not None  # c = 1: one rho


@pytest.mark.parametrize("name, params", [
    ("truncated_geometric", dict(epsilon=0.1, n=5, k=3)),
    ("report_noisy_max_laplace", dict(epsilon=0.1, n_candidates=5, answers=True)),
    ("report_noisy_max_exponential", dict(epsilon=0.1, n_candidates=5, answers=True)),
])
def test_exact_index_probabilities_match_the_releases(name, params):
    """The truncated geometric's pmf and noisy max's index law against 500,000 releases per side (alpha 1e-3)."""
    ceiling = _ceiling_module()
    mech = get_mechanism(name, **params)
    d, d2 = mech.neighbouring_pair()
    p0, p1 = ceiling.exact_index_probabilities(mech, d, d2)
    assert p0.sum() == pytest.approx(1.0) and p1.sum() == pytest.approx(1.0)
    n = 500_000
    for data, p, seed in ((d, p0, 13), (d2, p1, 14)):
        counts = np.bincount(np.asarray(mech(data, size=n, rng=seed)).ravel(), minlength=len(p))
        assert stats.chisquare(counts, p * n).pvalue > ALPHA
