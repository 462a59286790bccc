"""Vector releases: linear and per-coordinate scores."""

from __future__ import annotations

import math

import numpy as np

from ...exceptions import ParameterValueError

from .base import as_2d

__all__ = ["DensityRatioSumScore", "MeanDifferenceScore", "NaiveBayesScore", "QuadraticScore", "same_law_groups"]


class MeanDifferenceScore:
    """Vector outputs: project on the (standardised) difference of the means.

    The projection is the linear discriminant for independent coordinates of
    equal spread, which is what noisy histograms and counts release.

    >>> rng = np.random.default_rng(0)
    >>> x0, x1 = rng.normal(size=(500, 3)) + [1, 0, 0], rng.normal(size=(500, 3))
    >>> w = MeanDifferenceScore().fit(x0, x1).weights
    >>> int(np.argmax(np.abs(w)))
    0
    """

    name = "mean-difference"

    def fit(self, x0, x1):
        a, b = as_2d(np.asarray(x0, float)), as_2d(np.asarray(x1, float))
        var = 0.5 * (a.var(axis=0) + b.var(axis=0))
        var = np.where(var > 0, var, 1.0)
        self.weights = (a.mean(axis=0) - b.mean(axis=0)) / var
        return self

    def score(self, x):
        # einsum, not ``@``: BLAS's matrix-vector product starts a thread per
        # core, which doubled this step's CPU time under ``n_jobs=1`` on a busy
        # machine; einsum stays on one core and is as fast there.
        return np.einsum("ij,j->i", as_2d(np.asarray(x, float)), self.weights)


class NaiveBayesScore:
    """Vector outputs: sum over coordinates of each coordinate's estimated log likelihood ratio.

    Each coordinate is binned (its distinct values when it takes few, else
    ``n_bins`` quantile bins of the pooled fitting releases) and scored like
    :class:`LikelihoodRatioScore`.  The sum is the optimal test when
    coordinates are independent, catches non-linear per-coordinate leaks
    (a changed spread, a pattern of above/below answers) and costs one
    ``searchsorted`` per coordinate.

    >>> rng = np.random.default_rng(0)
    >>> x0, x1 = rng.normal(size=(2000, 2)) * [3, 1], rng.normal(size=(2000, 2))
    >>> s = NaiveBayesScore().fit(x0, x1)
    >>> bool(s.score(np.array([[6.0, 0.0]]))[0] > s.score(np.array([[0.0, 0.0]]))[0])
    True
    """

    name = "naive-bayes"

    def __init__(self, n_bins: int = 32, max_levels: int = 64):
        self.n_bins = n_bins
        self.max_levels = max_levels

    def fit(self, x0, x1):
        from ._features import bin_index, columns, few_levels, quantiles

        ca, cb = columns(x0), columns(x1)
        a, b = ca.T, cb.T  # column views of contiguous copies
        pooled = np.concatenate([ca, cb], axis=1)  # (k, n0 + n1): each coordinate's values contiguous
        self.edges, self.log_ratio = [], []
        for j in range(pooled.shape[0]):
            levels = few_levels(pooled[j], self.max_levels)
            if levels is not None:
                # Bin i holds values in [edge_i, edge_{i+1}): midpoints separate the levels.
                edges = (levels[1:] + levels[:-1]) / 2
            else:
                edges = np.unique(quantiles(pooled[j], np.linspace(0, 1, self.n_bins + 1)[1:-1]))
            m = len(edges) + 1
            c0 = np.bincount(bin_index(edges, a[:, j]), minlength=m)
            c1 = np.bincount(bin_index(edges, b[:, j]), minlength=m)
            self.edges.append(edges)
            self.log_ratio.append(np.log((c0 + 0.5) / (len(a) + 0.5 * m)) - np.log((c1 + 0.5) / (len(b) + 0.5 * m)))
        return self

    def score(self, x):
        from ._features import bin_index, columns

        cols = columns(x, exact=True)  # one copy, then each coordinate is read contiguously
        out = np.zeros(cols.shape[1])
        for j, (edges, lr) in enumerate(zip(self.edges, self.log_ratio)):
            out += lr[bin_index(edges, cols[j])]
        return out



def _exact_dtype(x) -> np.ndarray:
    """``x`` as a 2-d array whose comparisons and medians are those of its float64 copy, copied only if needed.

    Integers stay as they are (bools as uint8), float64 stays; anything else becomes float64.
    """
    x = as_2d(np.asarray(x))
    if x.dtype == bool:
        return x.view(np.uint8)
    if np.issubdtype(x.dtype, np.integer) or x.dtype == np.float64:
        return x
    return x.astype(float)


#: Integer columns spanning at most this many levels get their medians by counting (one pass per level).
COUNTED_MEDIAN_LEVELS = 8


def _column_medians(x: np.ndarray) -> np.ndarray:
    """``np.median(x, axis=0)``, by counting the levels of integer columns of a narrow range.

    The median of n values is the mean of the values at sorted positions ``(n - 1) // 2`` and
    ``n // 2``; the value at position i is the lowest level with more than i values at or below
    it.  The same floats, cheaper than a sort (docs/decisions/distinguisher-costs.md).
    """
    if x.dtype.kind not in "iu" or len(x) == 0:
        return np.median(x, axis=0)
    lo, hi = int(x.min()), int(x.max())
    if hi - lo > COUNTED_MEDIAN_LEVELS:
        return np.median(x, axis=0)
    n = len(x)
    if lo == hi:
        return np.full(x.shape[1:], float(lo))
    below = np.stack([np.count_nonzero(x <= u, axis=0) for u in range(lo, hi)])  # (levels - 1, k)
    at = [lo + np.count_nonzero(below <= i, axis=0) for i in ((n - 1) // 2, n // 2)]
    return (at[0].astype(np.float64) + at[1]) / 2.0


class SignSumScore:
    """Vector outputs: how many coordinates fall on D's side of their pooled median (the far tail of a sum).

    Each coordinate (or each *innovation*, with ``transform="innovations"``:
    the coordinate minus its linear prediction from the earlier ones, so that
    prefix sums become their increments) is split at its pooled median into
    "above" and "below", and the standardised difference z of the split
    between the sides is computed.  The coordinates with the k largest |z|
    vote +1 or -1 (the sign of z), k maximising the z-score of the count,
    sum |z| / sqrt(k); no coordinate votes unless that reaches ``z``.  The score is the signed count of votes, an integer: its extreme values
    are the events where many small per-coordinate leaks add up (twenty
    Laplace releases of epsilon 0.005 each, the six differing bits of a
    RAPPOR report), and thresholding an integer loses nothing to noise in
    estimated weights.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x0, x1 = rng.laplace(0.3, 1.0, size=(20_000, 8)), rng.laplace(0.0, 1.0, size=(20_000, 8))
    >>> s = SignSumScore().fit(x0, x1)
    >>> s.weights.tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    >>> s.score(np.array([[1.0] * 8, [-1.0] * 8])).tolist()
    [8.0, 0.0]
    """

    def __init__(self, transform: str = "raw", *, z: float = 3.0, pool_z: float = 6.0):
        if transform not in ("raw", "innovations"):
            raise ParameterValueError(f"transform must be 'raw' or 'innovations'; got {transform!r}")
        self.transform = transform
        self.z = z
        self.pool_z = pool_z
        self.name = "sign-sum" if transform == "raw" else "innovation-sign-sum"

    def _features(self, x):
        from ._features import columns

        if self.transform == "innovations":
            return np.ascontiguousarray(self.innovations.transform(x).T)
        return columns(x)

    def fit(self, x0, x1):
        from ._features import Innovations

        if self.transform == "innovations":
            a, b = as_2d(np.asarray(x0, float)), as_2d(np.asarray(x1, float))
            self.innovations = Innovations().fit(a, b)
            a, b = self._features(a).T, self._features(b).T
        else:
            # Raw releases are read in their own layout, integers in their own dtype (the
            # comparisons and medians are the same as in float64): no transposed float copy
            # (docs/decisions/distinguisher-costs.md).
            a, b = _exact_dtype(x0), _exact_dtype(x1)
        # The split point only has to be fixed before counting: a median of up to
        # 100,000 releases per side is as good as the full one and much cheaper.
        probe = np.concatenate([a[:100_000], b[:100_000]])
        med = _column_medians(probe)
        # Ties at the median (bits, counts): "above" is > or >=, whichever splits nearer to a half.
        gt = (probe > med).mean(axis=0)
        ge = (probe >= med).mean(axis=0)
        self.inclusive = np.abs(ge - 0.5) < np.abs(gt - 0.5)
        self.median = med
        # "Above" as one comparison, x >= cut: the median, or for "x > m" the next float after m
        # (kept beside median and inclusive so that scoring held-out chunks does not rebuild it).
        self.cut = np.where(self.inclusive, med, np.nextafter(med, np.inf))
        f0, f1 = (a >= self.cut).mean(axis=0), (b >= self.cut).mean(axis=0)
        p = 0.5 * (f0 + f1)
        se = np.sqrt(np.maximum(p * (1 - p), 1e-300) * (1.0 / len(a) + 1.0 / len(b)))
        zs = (f0 - f1) / se
        # Which coordinates vote: the k largest |z| maximising the z-score of
        # their equal-weight count, sum(|z|) / sqrt(k).  Six bits far apart
        # from the others keep only those six; twenty equally weak coordinates
        # (each alone below any significance level) all vote.
        order = np.argsort(-np.abs(zs), kind="stable")
        crit = np.cumsum(np.abs(zs[order])) / np.sqrt(np.arange(1, len(zs) + 1))
        k = int(np.argmax(crit)) + 1
        self.weights = np.zeros(len(zs))
        self.evidence = float(crit[k - 1])  # the z-score of the count of votes
        if crit[k - 1] >= self.z:
            self.weights[order[:k]] = np.sign(zs[order[:k]])
        return self

    def pooled(self, n_pool: int) -> bool:
        """Whether the event may be chosen on the whole calibration pool (see ``pooled`` in the package).

        The fitted score is an integer count of fixed votes: a handful of
        signs.  Once the count separates the sides by ``pool_z`` standard
        errors on the fitting releases (twice the ``z`` a vote needs; with
        no leak, twenty coordinates give about 3.6), the signs and the votes
        are what any other half of the pool would give, so choosing the event
        on the releases they were fitted on adds little optimism, while twice
        the releases let the selection reach a further tail: twenty Laplace
        releases of epsilon 0.005 each (DP-Sniper's LaplaceParallel), where
        the selection half's best event is 12 or more coordinates out of 20,
        certify 0.0386 instead of 0.0325 at 10^7 per side.  (The held-out
        releases are never touched: the bound stays valid whatever the choice.)
        """
        return bool(np.any(self.weights)) and self.evidence >= self.pool_z

    def confirms_pooling(self, s0, s1) -> bool:
        """Whether the vote count separates the sides by ``pool_z`` standard errors on releases it was not fitted on.

        The fitting evidence alone cannot tell many weak real leaks from a few
        leaks among many noise coordinates: with no leak it grows like
        ``sqrt(2 K / pi)`` over K coordinates (9.0 on average at K = 100, 11.1
        at its 99.9th percentile, by simulation), so the Gaussian mechanism over
        k = 100 values at epsilon 0.25 (2 informative coordinates of 100) read
        11.7, pooled, chose a rare tail of a count of 46 mostly random votes on
        the releases those votes were fitted on, and certified 0 held out where
        LDP-Auditor's projection certifies 0.036.  Out of sample the noise votes
        add nothing, so this z is what the signal gives.
        """
        s0, s1 = np.asarray(s0, float), np.asarray(s1, float)
        se = math.sqrt(s0.var() / max(len(s0), 1) + s1.var() / max(len(s1), 1))
        return se > 0 and (s0.mean() - s1.mean()) / se >= self.pool_z

    def _above(self, col, j):
        return col >= self.cut[j]

    def score(self, x):
        voting = np.flatnonzero(self.weights)
        if self.transform == "raw":
            # Only the voting coordinates are read, in the release's own dtype and layout: a
            # transposed float copy of every coordinate cost twice the mechanism's draw on
            # RAPPOR's 20 integer bits, of which 6 vote. (``cut``: see fit.)
            x = as_2d(np.asarray(x))
            if len(voting) == 0:
                return np.zeros(len(x))
            above = x[:, voting] >= self.cut[voting]  # the votes are signs: count the +1s, subtract the -1s
            up = self.weights[voting] > 0
            return (above[:, up].sum(axis=1, dtype=np.int64)
                    - above[:, ~up].sum(axis=1, dtype=np.int64)).astype(float)
        cols = self._features(x)
        out = np.zeros(cols.shape[1])
        for j in voting:
            if self.weights[j] > 0:
                out += self._above(cols[j], j)
            else:
                out -= self._above(cols[j], j)
        return out


class CoordinateScore:
    """Vector outputs: the one coordinate that separates best, thresholded on its own.

    A leak confined to one coordinate (a histogram bin that differs, the value
    of a noisy maximum) lives in that coordinate's tail; mixing in the others,
    even with small estimated weights, blurs it.  The coordinate is chosen on
    (at most ``max_fit`` of) the fitting releases by the bound its best
    threshold would certify, the same objective the selection uses.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x0, x1 = rng.laplace(size=(5000, 3)), rng.laplace(size=(5000, 3))
    >>> x0[:, 2] += 1.0
    >>> CoordinateScore().fit(x0, x1).coordinate
    2
    """

    name = "coordinate"

    def __init__(self, *, max_fit: int = 500_000, shortlist: int = 64):
        self.max_fit = max_fit
        self.shortlist = shortlist

    def fit(self, x0, x1):
        from ...stats.selection import calibration_counts, calibration_rates

        a = as_2d(np.asarray(x0, float))[: self.max_fit]
        b = as_2d(np.asarray(x1, float))[: self.max_fit]
        best = (-np.inf, 0)
        for j in _shortlist(a, b, self.shortlist):
            rates = calibration_rates(calibration_counts(a[:, j], b[:, j]), n_test0=len(a), n_test1=len(b))
            fwd, rev = rates.objective()
            value = float(max(np.max(fwd), np.max(rev)))
            if value > best[0]:
                best = (value, int(j))
        self.coordinate = best[1]
        return self

    def score(self, x):
        return as_2d(np.asarray(x, float))[:, self.coordinate].copy()


#: Pooled quantiles at which :func:`_shortlist` compares a coordinate's two sides: both tails and the middle.
_SCREEN_QUANTILES = (0.001, 0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99, 0.999)


def _shortlist(a: np.ndarray, b: np.ndarray, size: int) -> np.ndarray:
    """The coordinates worth the exact objective: all of them up to ``size``, else the ``size`` whose sides differ
    most at a few pooled quantiles (the largest two-proportion z statistic of the shares above one; ties by
    index: a statistic scaled by its noise, so that a few releases in a far tail do not outrank a real shift).

    The exact objective (every threshold's two intervals) is too slow for every coordinate of a wide release
    (docs/decisions/distinguisher-costs.md); this screen reads nine thresholds per coordinate in one pass.  Only a
    choice made on fitting releases, so the bound stays valid whichever coordinates it keeps.

    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.laplace(size=(2000, 500)), rng.laplace(size=(2000, 500))
    >>> b[:, 321] += 1.0
    >>> 321 in _shortlist(a, b, 8)
    True
    """
    k = a.shape[1]
    if k <= size:
        return np.arange(k)
    t = np.quantile(np.concatenate([a, b]), _SCREEN_QUANTILES, axis=0)  # (quantiles, k)
    gap = np.zeros(k)
    for row in t:
        c0, c1 = np.count_nonzero(a >= row, axis=0), np.count_nonzero(b >= row, axis=0)
        p = (c0 + c1 + 1.0) / (len(a) + len(b) + 2.0)
        z = np.abs(c0 / len(a) - c1 / len(b)) / np.sqrt(p * (1.0 - p) * (1.0 / len(a) + 1.0 / len(b)))
        gap = np.maximum(gap, z)
    return np.sort(np.argsort(-gap, kind="stable")[:size])


class DensityRatioSumScore:
    """Vector outputs: sum over coordinates of a smoothed, piecewise-linear estimate of each coordinate's log ratio.

    What DP training releases is many weakly informative coordinates: in the
    white-box view of DP-SGD on a gradient canary, step t gives N(B_t, sigma^2)
    with B_t ~ Bernoulli(q) when the canary is in, N(0, sigma^2) when it is out,
    and the optimal test sums the per-step log-likelihood ratios
    ``log(1 - q + q exp((2x - 1) / (2 sigma^2)))``, which keep growing in the tail.
    Each coordinate's log ratio is estimated on the fitting releases in quantile
    bins refined into both tails, smoothed across neighbouring bins
    (inverse-variance weights), read between bin centres by linear
    interpolation and beyond the outermost centres by the line fitted to the
    outer bins, so the far tails, where large and rare sums live, keep
    ordering releases (:class:`NaiveBayesScore` caps them at its last bin).
    Coordinates with few distinct values are scored level by level as in
    :class:`NaiveBayesScore`.

    Coordinates that share their law on both sides (the steps of DP-SGD, the
    rounds of a composition) share one curve, fitted on all their values at
    once: ``k`` times the data for each curve.  Coordinates join a group when a
    chi-square homogeneity test on pooled quantile bins, on D's releases and
    on D''s, rejects neither at ``pool_alpha`` (decided on the fitting
    releases, so the split stays honest); a coordinate that differs (the one
    bin of a histogram that the pair changes) keeps its own curve.  On the
    white-box DP-SGD view (10 steps, rate 0.1; 125,000 fitting releases) the
    shared curve recovers about 0.8% of the bound at delta 1e-2, two thirds of
    what separated the fitted score from the exact log-likelihood ratio
    (docs/decisions/event-selection.md).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x1 = rng.normal(size=(50_000, 5))
    >>> x0 = rng.normal(size=(50_000, 5)) + (rng.random((50_000, 5)) < 0.2)
    >>> s = DensityRatioSumScore().fit(x0, x1)
    >>> a, b, c = s.score(np.array([[0.0] * 5, [2.0] * 5, [4.0] * 5]))
    >>> bool(a < b < c)
    True
    """

    name = "density-ratio-sum"

    def __init__(self, n_bins: int = 48, tails=(1e-4, 3e-4, 1e-3, 3e-3, 1e-2), min_count: int = 40,
                 max_levels: int = 64, n_outer: int = 4, pool: bool = True, pool_alpha: float = 1e-3,
                 pool_bins: int = 24):
        self.n_bins = n_bins
        self.tails = tails
        self.min_count = min_count
        self.max_levels = max_levels
        self.n_outer = n_outer
        self.pool = pool
        self.pool_alpha = pool_alpha
        self.pool_bins = pool_bins

    def fit(self, x0, x1):
        from ._features import columns

        a, b = columns(x0), columns(x1)  # (k, n): one contiguous row per coordinate
        self.groups = same_law_groups(a, b, alpha=self.pool_alpha, n_bins=self.pool_bins) if self.pool \
            else [[j] for j in range(a.shape[0])]
        fits = [self._fit_one(a[g].ravel(), b[g].ravel()) for g in self.groups]
        self.coords = [None] * a.shape[0]
        for g, f in zip(self.groups, fits):
            for j in g:
                self.coords[j] = f
        return self

    def _fit_one(self, a, b):
        from ._features import bin_index, few_levels, quantiles

        pooled = np.concatenate([a, b])
        levels = few_levels(pooled, self.max_levels)
        if levels is not None:
            edges = (levels[1:] + levels[:-1]) / 2
            m = len(edges) + 1
            c0 = np.bincount(bin_index(edges, a), minlength=m)
            c1 = np.bincount(bin_index(edges, b), minlength=m)
            lr = np.log((c0 + 0.5) / (len(a) + 0.5 * m)) - np.log((c1 + 0.5) / (len(b) + 0.5 * m))
            return ("levels", edges, lr)
        n = len(pooled)
        tails = np.array([t for t in self.tails if t * n >= self.min_count])
        q = np.unique(np.concatenate([np.linspace(0, 1, self.n_bins + 1)[1:-1], tails, 1.0 - tails]))
        edges = np.unique(quantiles(pooled, q))
        m = len(edges) + 1
        i0, i1 = bin_index(edges, a), bin_index(edges, b)
        c0 = np.bincount(i0, minlength=m).astype(float)
        c1 = np.bincount(i1, minlength=m).astype(float)
        centre = (np.bincount(i0, weights=a, minlength=m) + np.bincount(i1, weights=b, minlength=m)) / np.maximum(
            c0 + c1, 1.0)
        keep = (c0 + c1) > 0
        c0, c1, centre = c0[keep], c1[keep], centre[keep]
        lr = np.log((c0 + 0.5) / (len(a) + 0.5 * len(c0))) - np.log((c1 + 0.5) / (len(b) + 0.5 * len(c1)))
        w = 1.0 / (1.0 / (c0 + 0.5) + 1.0 / (c1 + 0.5))  # inverse variance of each bin's log ratio
        # Smoothing: each bin's log ratio averaged with its neighbours' (weights 1-2-1 times inverse variance).
        pw = np.pad(w, 1)
        pwl = np.pad(w * lr, 1)
        smooth = (pwl[:-2] + 2 * pwl[1:-1] + pwl[2:]) / (pw[:-2] + 2 * pw[1:-1] + pw[2:])
        k = min(self.n_outer, len(centre))
        lo = self._line(centre[:k], smooth[:k], w[:k])
        hi = self._line(centre[-k:], smooth[-k:], w[-k:])
        return ("curve", centre, smooth, lo, hi)

    @staticmethod
    def _line(x, y, w):
        """Weighted least-squares slope through the outer bins (0 when they are one point)."""
        if len(x) < 2 or np.ptp(x) == 0:
            return 0.0
        xm = np.average(x, weights=w)
        ym = np.average(y, weights=w)
        return float(np.sum(w * (x - xm) * (y - ym)) / np.sum(w * (x - xm) ** 2))

    def score(self, x):
        from ._features import bin_index, columns

        cols = columns(x, exact=True)  # levels are found by comparisons: integers need no float copy
        out = np.zeros(cols.shape[1])
        for j, c in enumerate(self.coords):
            col = cols[j]
            if c[0] == "levels":
                out += c[2][bin_index(c[1], col)]
                continue
            col = col.astype(float, copy=False)
            _, centre, lr, lo, hi = c
            out += np.interp(col, centre, lr)
            below, above = col < centre[0], col > centre[-1]
            out[below] += lo * (col[below] - centre[0])
            out[above] += hi * (col[above] - centre[-1])
        return out


#: Groups a coordinate is compared with before it starts a group of its own: coordinates that all differ
#: (10,000 of them) would otherwise cost k^2 / 2 tests.
MAX_COMPARED_GROUPS = 64


def same_law_groups(a: np.ndarray, b: np.ndarray, *, alpha: float = 1e-3, n_bins: int = 24,
                    probe: int = 200_000) -> list[list[int]]:
    """Coordinates grouped by law: each joins the first group it cannot be told apart from on either side.

    ``a`` and ``b`` hold one row per coordinate (releases on D and on D').
    A coordinate is compared with a group's first member by chi-square
    homogeneity tests on ``n_bins`` quantile bins of their pooled values, one
    for each side, on at most ``probe`` releases; it joins when neither
    p-value is below ``alpha``.  Only a choice of features: any grouping gives
    a valid score, a wrong one a weaker one.

    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(size=(4, 20_000)); a[2] += 1
    >>> same_law_groups(a, rng.normal(size=(4, 20_000)))
    [[0, 1, 3], [2]]
    """
    from scipy.special import chdtrc  # the chi-square survival function (scipy.stats costs a second to import)

    from ._features import bin_index, quantiles

    k = a.shape[0]
    if k < 2:
        return [list(range(k))]
    a, b = a[:, :probe], b[:, :probe]
    sides = []
    for x in (a, b):
        edges = np.unique(quantiles(x[:, : max(1, probe // k)], np.linspace(0, 1, n_bins + 1)[1:-1]))
        m = len(edges) + 1
        sides.append(np.stack([np.bincount(bin_index(edges, row, narrow=True), minlength=m) for row in x]).astype(float))

    def same(i, j):
        for h in sides:
            u, v = h[i], h[j]
            keep = (u + v) > 0
            u, v = u[keep], v[keep]
            if len(u) < 2:
                continue
            nu, nv = u.sum(), v.sum()
            eu, ev = (u + v) * nu / (nu + nv), (u + v) * nv / (nu + nv)
            stat = float(np.sum((u - eu) ** 2 / eu + (v - ev) ** 2 / ev))
            if chdtrc(len(u) - 1, stat) < alpha:
                return False
        return True

    groups: list[list[int]] = []
    for j in range(k):
        for g in groups[:MAX_COMPARED_GROUPS]:  # a coordinate like none of the first groups starts its own
            if same(g[0], j):
                g.append(j)
                break
        else:
            groups.append([j])
    return groups


class QuadraticScore:
    """Vector outputs: the Gaussian log likelihood ratio with each side's own mean and covariance (quadratic
    discriminant analysis), on coordinates standardised over both sides.

    A leak in how coordinates depend on each other (a coordinate copied, or two coordinates correlated, on one
    side only) leaves every coordinate's law the same, so every per-coordinate and linear score misses it; the
    covariance of each side sees it.  Each covariance is shrunk by ``ridge`` times the identity, so that a copy (a
    direction of zero variance) scores as a large but finite ratio.

    >>> rng = np.random.default_rng(0)
    >>> x0 = rng.laplace(size=(4000, 3))
    >>> x1 = rng.laplace(size=(4000, 3)); x1[:, 2] = x1[:, 0]
    >>> s = QuadraticScore().fit(x0, x1)
    >>> bool(np.median(s.score(x1)) < np.median(s.score(x0)) - 100)
    True
    """

    name = "quadratic"

    def __init__(self, ridge: float = 1e-3, block: int = 65_536):
        self.ridge, self.block = ridge, block

    def fit(self, x0, x1):
        a, b = as_2d(np.asarray(x0, float)), as_2d(np.asarray(x1, float))
        both = np.concatenate([a, b])
        self.center = both.mean(axis=0)
        sd = both.std(axis=0)
        self.scale = np.where(sd > 0, sd, 1.0)
        self.sides = [self._side((x - self.center) / self.scale) for x in (a, b)]
        return self

    def _side(self, z):
        k = z.shape[1]
        cov = np.cov(z, rowvar=False).reshape(k, k) + self.ridge * np.eye(k)
        chol = np.linalg.cholesky(cov)
        # (x - mu)' cov^-1 (x - mu) = |L^-1 (x - mu)|^2: rows times the transposed inverse factor.
        return z.mean(axis=0), np.linalg.inv(chol).T, float(np.sum(np.log(np.diag(chol))))

    def score(self, x):
        z = (as_2d(np.asarray(x, float)) - self.center) / self.scale
        out = np.empty(len(z))
        for i in range(0, len(z), self.block):  # bounded temporaries on wide chunks
            part = z[i:i + self.block]
            q = [np.einsum("ij,ij->i", w := (part - mu) @ inv_t, w) / 2 + half_logdet
                 for mu, inv_t, half_logdet in self.sides]
            out[i:i + self.block] = q[1] - q[0]  # log density on D minus on D': higher is D
        return out
