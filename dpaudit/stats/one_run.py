"""One-run audits: an epsilon lower bound from guesses about many canaries in one training run.

Steinke, Nasr and Jagielski (2023): each of ``m`` canaries is included in the
training data independently with probability 1/2; the auditor guesses
"included" or "excluded" for ``r`` of them (abstaining on the rest) and is
right ``v`` times.  If the training is (epsilon, delta)-DP, the number of
correct guesses is stochastically dominated by Binomial(r, e^eps / (1 + e^eps))
plus a delta term (their Theorem 3 and Corollary 5.4, computed as in their
Appendix D), so a large ``v`` rejects every epsilon below the bound.

With ``r = v = m`` and delta 0 the bound is ``ln(q / (1 - q))`` for
``q = beta^(1/m)``: the most any audit with m canaries can certify at failure
probability beta (5.809 for m = 1000 at 95%).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validation import check_delta, check_int, check_real
from ..exceptions import ParameterValueError

__all__ = ["counts_for_guesses", "fdp_one_run_epsilon_bound", "fdp_one_run_epsilon_bounds", "fdp_one_run_mu_bound",
           "fdp_one_run_mu_bound_max",
           "fdp_one_run_rejects", "fdp_one_run_rejects_points",
           "guess_counts", "guess_grid", "one_run_ceiling", "one_run_epsilon_bound", "one_run_p_value",
           "tie_order", "top_guess_counts"]


def _check(m: int, r: int, v: int, delta: float) -> tuple[int, int, int, float]:
    m = check_int(m, "canaries", low=1)
    r = check_int(r, "guesses", low=0, high=m)
    v = check_int(v, "correct", low=0, high=r)
    return m, r, v, check_delta(delta)


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """Probability of ``v`` or more correct guesses out of ``r`` (``m`` canaries) under (epsilon, delta)-DP.

    The paper's bound: ``P[Bin(r, q) >= v] + 2 m delta max_i P[v - i <= Bin(r, q) < v] / i`` with
    ``q = e^eps / (1 + e^eps)``, capped at 1.

    >>> round(one_run_p_value(100, 100, 75, math.log(3)), 3)     # the paper's example: 0.553
    0.553
    """
    from scipy import special  # ufuncs: a bisection calls this dozens of times, scipy.stats' checks cost 30x

    m, r, v, delta = _check(m, r, v, delta)
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    q = 1.0 / (1.0 + math.exp(-epsilon)) if epsilon < 700 else 1.0
    p = float(special.bdtrc(v - 1, r, q)) if v > 0 else 1.0
    if delta > 0 and v > 0:
        p += 2.0 * m * delta * _delta_term(r, v, q)
    return min(p, 1.0)


def _delta_term(r: int, v: int, q: float) -> float:
    """``max_i P[v - i <= Bin(r, q) < v] / i``: the running mean of ``P[Bin = v - 1], P[Bin = v - 2], ...``.

    Counts more than 50 standard deviations below the mean add nothing a float can hold (< e^-1000),
    so they are never read.  Most of the rest need not be either: below the mode the terms only
    fall, so once a term is under the running mean every later mean is smaller and the maximum is
    already read.  A window 3 standard deviations below the mode is read first and usually shows
    that; the whole range is read when it does not.  The answer is the whole sum's maximum to the bit
    (tested: docs/decisions/one-run-fdp.md); the window makes a p-value cheaper than reading 12 standard
    deviations, which every one-run bound pays several times.
    """
    return float(_delta_window(r, v, q)[2].max())


def _delta_window(r: int, v: int, q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counts k = v - 1, v - 2, ..., their ``P[Bin(r, q) = k]``, the running means), as :func:`_delta_term`
    reads them."""
    from scipy import special

    def read_down_to(low):
        k = np.arange(v - 1, low - 1, -1, dtype=float)
        below = np.exp(_log_binomials(r)[low:v][::-1] + special.xlogy(k, q) + special.xlog1py(r - k, -q))
        return k, below, np.cumsum(below) / np.arange(1.0, v - low + 1.0)

    sd = math.sqrt(r * q * (1.0 - q))
    lowest = max(0, min(v - 1, int(r * q - 50.0 * sd - 10.0)))
    mode = math.floor((r + 1) * q)
    low = max(lowest, min(v - 1, int(mode - 3.0 * sd) - 10))
    k, below, means = read_down_to(low)
    if low > lowest and not (low <= mode and below[-1] < means[-1]):
        k, below, means = read_down_to(lowest)
    return k, below, means


def _p_value_and_slope(m: int, r: int, v: int, epsilon: float, delta: float) -> tuple[float, float]:
    """:func:`one_run_p_value` (checked arguments, ``0 < v``, ``delta > 0``, ``epsilon < 700``) and its derivative
    in epsilon, for Newton's method.

    With ``q = e^eps / (1 + e^eps)``: ``d/deps P[Bin >= v] = v (1 - q) P[Bin = v]``, and ``d/deps P[Bin = k]
    = (k - r q) P[Bin = k]``, so the delta term's slope is the mean of ``(k - r q) P[Bin = k]`` over the
    counts of its maximising mean.  The slope of the capped value 1 is 0.
    """
    from scipy import special

    q = 1.0 / (1.0 + math.exp(-epsilon))
    tail = float(special.bdtrc(v - 1, r, q))
    at_v = math.exp(_log_binomials(r)[v] + special.xlogy(v, q) + special.xlog1py(r - v, -q))
    k, below, means = _delta_window(r, v, q)
    i = int(np.argmax(means))
    p = tail + 2.0 * m * delta * float(means[i])
    if p >= 1.0:
        return 1.0, 0.0
    slope = v * (1.0 - q) * at_v + 2.0 * m * delta * float(np.dot(below[:i + 1], k[:i + 1] - r * q)) / (i + 1)
    return p, slope


@functools.lru_cache(maxsize=64)
def _log_binomials(r: int) -> np.ndarray:
    """``ln C(r, k)`` for k = 0..r, as the p-value's terms compute it (one audit asks for the same r ~100 times)."""
    from scipy import special

    k = np.arange(r + 1, dtype=float)
    out = special.gammaln(r + 1.0) - special.gammaln(k + 1.0) - special.gammaln(r - k + 1.0)
    out.flags.writeable = False
    return out


def one_run_epsilon_bound(m: int, r: int, v: int, *, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The largest epsilon the guesses reject at ``1 - confidence``: a lower bound valid with ``confidence``.

    Rejected epsilons form an interval from 0 (the p-value increases with epsilon); the bound is
    a point of it within 1e-9 (relative) of its end, never above.  The end is found in closed form
    when delta is 0 (the binomial tail's inverse, ``betaincinv``), else by Newton's method below that
    end (:func:`_newton_below`), then checked: the bound rejects, a point 1e-9 above it does not.
    Bisection on the same test took 20-25 p-values per bound; this takes 3 with delta 0, about 6
    without (Brent's method took about 10).  0 when no epsilon is rejected.

    >>> q = 0.05 ** (1 / 1000)
    >>> abs(one_run_epsilon_bound(1000, 1000, 1000) - math.log(q / (1 - q))) < 1e-6
    True
    """
    m, r, v, delta = _check(m, r, v, delta)
    beta = 1.0 - check_real(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False,
                            high_inclusive=False)

    def p_value(eps):
        return one_run_p_value(m, r, v, eps, delta)

    def rejects(eps):
        return p_value(eps) < beta

    if v == 0 or not rejects(0.0):
        return 0.0
    end = _tail_root(r, v, beta)  # where P[Bin(r, q) >= v] = beta: delta's term only lowers the end
    if not math.isfinite(end) or end > 700.0:
        return _largest(rejects, 1.0, 1e-9)
    if delta > 0:
        end = _newton_below(m, r, v, delta, beta, end)
    return _low_end(rejects, end, 1e-9)


def _newton_below(m: int, r: int, v: int, delta: float, beta: float, end: float) -> float:
    """Where the p-value crosses ``beta`` in ``[0, end]`` (0 rejected): Newton's method on its log, in a bracket.

    ``ln p`` is close to linear in epsilon, so from ``end`` (the delta-0 root, never below the one sought)
    2-4 steps reach 1e-12; a step that leaves the bracket halves it instead.  Brent's method on p took
    7-12 p-values here.  An estimate only: :func:`_low_end` checks it.

    A step under 1e-7 ends the search: Newton's error after it is about ``step^2 |(ln p)''| / (2 |(ln p)'|)``,
    far under the check's 4.5e-10 bracket (the curvature ratio would have to exceed 10^4), and a step
    tested against the bracket first would be halved whenever it landed on a bracket end (``f`` exactly 0, or
    a step below the float spacing of ``x``): 1 bound in 17 then took 38 p-values instead of 4.
    """
    lo, hi, x = 0.0, end, end
    log_beta = math.log(beta)
    for _ in range(100):
        p, slope = _p_value_and_slope(m, r, v, x, delta)
        f = math.log(p) - log_beta if p > 0.0 else -math.inf  # p underflows far below the root: rejected
        if f >= 0.0:
            hi = x
        else:
            lo = x
        step = f * p / slope if slope > 0.0 and p > 0.0 else math.inf  # d ln p / d eps = slope / p
        if abs(step) <= 1e-7 * max(1.0, x):
            return x - step
        nxt = x - step
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        if abs(nxt - x) <= 1e-12 * max(1.0, x):
            return nxt
        x = nxt
    return x


def _tail_root(r: int, v: int, beta: float) -> float:
    """The epsilon at which ``P[Bin(r, q) >= v] = beta``, ``q = e^eps / (1 + e^eps)``: the tail is the
    regularized incomplete beta function ``I_q(v, r - v + 1)``, whose inverse scipy computes."""
    from scipy import special

    q = float(special.betaincinv(v, r - v + 1, beta))
    return math.log(q) - math.log1p(-q) if 0.0 < q < 1.0 else math.inf


def _low_end(rejects, x: float, tol: float) -> float:
    """A point that ``rejects`` accepts within ``tol`` (relative) below one it does not, near ``x``.

    ``x`` is an estimate of the boundary (a root finder's): the bracket ``x -/+ tol`` is widened
    until its low end is accepted and its high end is not, then halved to ``tol``, so the answer
    keeps bisection's guarantee whatever the estimate's error.
    """
    step = 0.45 * tol * max(1.0, abs(x))  # a bracket under tol wide: an estimate that good needs two tests
    lo, hi = max(0.0, x - step), x + step
    while not rejects(lo):
        lo, hi = max(0.0, lo - 2.0 * (hi - lo)), lo
        if lo == 0.0:
            break
    while rejects(hi):
        lo, hi = hi, hi + 2.0 * (hi - lo)
    return _bisect(rejects, lo, hi, tol)


def _bisect(rejects, lo: float, hi: float, tol: float) -> float:
    """Halve ``[lo, hi]`` (``rejects(lo)``, not ``rejects(hi)``) to ``tol`` relative, keeping the low end."""
    while hi - lo > tol * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if rejects(mid) else (lo, mid)
    return lo


def one_run_ceiling(m: int, r: int, *, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The bound if all ``r`` guesses were right: the most ``r`` guesses among ``m`` canaries can certify."""
    return one_run_epsilon_bound(m, r, r, delta=delta, confidence=confidence)


def guess_counts(scores, included, guesses: int, *, ties=None) -> tuple[int, int]:
    """(guesses made, correct ones) when the ``guesses`` scores farthest from the median are guessed.

    A score above the median is guessed "included", below it "excluded": the highest and the lowest
    scores, in the proportion the scores themselves show.  Scores equal to the median are guessed on the
    side with fewer scores strictly on it ("included" when the two sides are even, so a lone median of
    distinct scores is "included"): 0/1 scores with fewer 1s have median 0, and their 0s are then
    guessed "excluded", as they read.  The rule reads the scores only, never the inclusion bits, so the
    theorem applies to it; ties are ordered by ``ties`` (:func:`tie_order`).

    >>> guess_counts([0.9, 0.1, 0.5, 0.8], [1, 0, 0, 1], 2)
    (2, 2)
    >>> guess_counts([1, 0, 0], [1, 0, 0], 3)     # the median is 0: the two 0s are guessed "excluded"
    (3, 3)
    """
    return counts_for_guesses(scores, included, [guesses], ties=ties)[0]


def tie_order(m: int, rng=None) -> np.ndarray:
    """A random rank per canary, to order canaries whose scores tie: drawn from ``rng``, never from their order.

    Ordering ties by position would let the order of a file decide guesses: scores that carry nothing
    (all equal) with the included canaries listed first certified epsilon 4.6 from 1,000 canaries.  The
    theorem needs guesses that depend on the inclusion bits only through the trained model; a rank drawn
    independently of everything keeps that whatever the order.  ``rng``: a seed or Generator (default:
    a fixed seed, reproducible; an audit passes one from its own seed).
    """
    return np.random.default_rng(0 if rng is None else rng).permutation(check_int(m, "canaries", low=0))


def counts_for_guesses(scores, included, guesses, *, one_sided: bool = False, ties=None) -> list[tuple[int, int]]:
    """(guesses, correct) for each number in ``guesses``, from one sort of the scores.

    Two-sided (default) as :func:`guess_counts`; ``one_sided`` as :func:`top_guess_counts`.  The
    counts for every k come from one ordering and a running sum (a grid of k at 10^5 canaries used to
    sort them once per k).  Equal scores are ordered by ``ties`` (one rank per canary; default
    :func:`tie_order` with its fixed seed).

    >>> counts_for_guesses([0.9, 0.1, 0.5, 0.8], [1, 0, 0, 1], [1, 2, 4])
    [(1, 1), (2, 2), (4, 4)]
    """
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included).astype(bool)
    ks = [check_int(k, "guesses", low=0, high=len(s)) for k in guesses]
    ties = tie_order(len(s)) if ties is None else np.asarray(ties)
    if ties.shape != s.shape:
        raise ParameterValueError(f"ties: one rank per canary ({len(s)}); got shape {ties.shape}")
    if one_sided:
        right = inc[np.lexsort((ties, -s))]
    else:
        with np.errstate(over="ignore"):  # scores near the float maximum: their sums and differences overflow
            center = float(np.median(s))
            if not math.isfinite(center):  # two middle scores summed to inf: every canary sat below it
                center = 2.0 * float(np.median(s / 2))
            distance = np.abs(s - center)
            if not np.all(np.isfinite(distance)):  # tied at inf; halves keep their order (halving is exact)
                distance = np.abs(s / 2 - center / 2)
        order = np.lexsort((ties, -distance))
        # Scores at the median go to the thinner side (see guess_counts): all "included" made every 0 of
        # hard-label 0/1 scores with fewer 1s a wrong guess, and the bound depended on which label was rarer.
        ties_included = np.count_nonzero(s > center) <= np.count_nonzero(s < center)
        guessed = (s > center) | ((s == center) & ties_included)
        right = guessed[order] == inc[order]
    running = np.r_[0, np.cumsum(right)]
    return [(k, int(running[k])) for k in ks]


def guess_grid(m: int, *, smallest: int = 10) -> list[int]:
    """The numbers of guesses tried by default: ``m, m/2, m/4, ...`` down to ``smallest``.

    Each is tested at ``(1 - confidence) / len(grid)`` (Bonferroni), so trying them all spends no
    validity: the reported bound is the largest, and all hold at once with ``confidence``.

    >>> guess_grid(1000)
    [1000, 500, 250, 125, 62, 31, 15]
    """
    m = check_int(m, "canaries", low=1)
    grid, k = [], m
    while k >= min(smallest, m) and (not grid or k != grid[-1]):
        grid.append(k)
        k //= 2
    return grid


# --- The f-DP test (Mahloujifar, Melis and Chaudhuri 2025) -------------------------------------------------


def top_guess_counts(scores, included, guesses: int, *, ties=None) -> tuple[int, int]:
    """(guesses made, correct ones) when the ``guesses`` highest scores are all guessed "included".

    The one-sided rule the f-DP test is proved for: it reads the scores only (ties ordered by ``ties``,
    :func:`tie_order`).

    >>> top_guess_counts([0.9, 0.1, 0.5, 0.8], [1, 0, 0, 1], 3)
    (3, 2)
    """
    return counts_for_guesses(scores, included, [guesses], one_sided=True, ties=ties)[0]


def fdp_one_run_rejects(m: int, k: int, c: int, power_inverse, significance: float) -> bool:
    """Whether ``c`` correct of ``k`` "included" guesses among ``m`` canaries reject f-DP at ``significance``.

    ``power_inverse(x)`` is the smallest false-positive rate at which the claimed trade-off curve f
    lets a test reach true-positive rate ``x`` (the inverse of ``1 - f``; :meth:`dpaudit.claims.Claim.
    power_inverse`).  Mahloujifar, Melis and Chaudhuri (2025) show that under f-DP, if ``c`` or more
    correct guesses had probability ``tau``, then the rates ``r = tau c / m`` (right) and ``h = tau (k
    - c) / m`` (wrong) can be pushed down the counts ``c - 1, ..., 0`` by f's inverse and must end with
    ``r + h <= k / m``; at ``tau = significance`` an end above ``k / m`` means ``c`` or more correct
    guesses has probability below ``significance``: the claim is rejected with that error.  It uses
    the whole curve, where Steinke, Nasr and Jagielski's (2023) bound uses one (epsilon, delta) point,
    which is why a curve claim is rejected from far fewer canaries.

    >>> import math
    >>> def eps_dp(a):                     # epsilon-DP's curve: power x needs rate at least this
    ...     return lambda x: max(x / math.exp(a), 1 - math.exp(a) * (1 - x))
    >>> e = math.log(0.05 ** (1 / 1000) / (1 - 0.05 ** (1 / 1000)))   # all 1000 right: the ceiling, 5.809
    >>> fdp_one_run_rejects(1000, 1000, 1000, eps_dp(e - 1e-3), 0.05)
    True
    >>> fdp_one_run_rejects(1000, 1000, 1000, eps_dp(e + 1e-3), 0.05)
    False
    """
    m = check_int(m, "canaries", low=1)
    k = check_int(k, "guesses", low=0, high=m)
    c = check_int(c, "correct", low=0, high=k)
    tau = check_real(significance, "significance", low=0.0, high=1.0, low_inclusive=False)
    right, wrong = tau * c / m, tau * (k - c) / m
    for i in range(c - 1, -1, -1):
        pushed = max(wrong, float(power_inverse(right)))
        if pushed == wrong:  # neither rate moves again
            break
        right = min(right + i / (k - i) * (pushed - wrong), 1.0)
        wrong = pushed
    return right + wrong > k / m


def _largest(rejects, hi: float, tol: float = 1e-6, *, lo: float = 0.0) -> float:
    """The largest parameter ``rejects`` accepts (True below a point, False above), to ``tol``, keeping the low end.

    0 when it rejects nothing; doubling from ``hi`` brackets the point (capped at 10^4, where only
    delta 0 with every guess right still rejects), then bisection.  Every one-run bound is read this way.
    ``lo > 0``: a point already known to be rejected, where the search starts.
    """
    if lo <= 0.0 and not rejects(0.0):
        return 0.0
    hi = max(hi, 2.0 * lo)
    while rejects(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            return lo
    return _bisect(rejects, lo, hi, tol)


def fdp_one_run_mu_bound(m: int, k: int, c: int, *, confidence: float = 0.95, above: float = 0.0) -> float:
    """The largest mu for which ``c`` correct of ``k`` guesses reject mu-Gaussian DP: "not mu-GDP below it".

    A statement about Gaussian DP claims, not an assumption-free epsilon: a mechanism with a
    non-Gaussian curve may be (epsilon, delta)-DP where mu-GDP is not.  ``above``: a mu known to be
    rejected (by another count); the larger of it and this count's bound is returned, and when this
    count does not reject ``above`` that costs one test instead of a search (the maximum over an
    audit's numbers of guesses: 7 searches -> about one).

    >>> round(fdp_one_run_mu_bound(1000, 100, 100), 2)
    1.23
    >>> fdp_one_run_mu_bound(1000, 100, 100, above=2.0)
    2.0
    """
    from scipy.special import ndtr, ndtri

    beta = 1.0 - check_real(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    above = check_real(above, "above", low=0.0)

    def rejects(mu):
        return fdp_one_run_rejects(m, k, c, lambda x: float(ndtr(ndtri(x) - mu)), beta)

    if above > 0.0 and not rejects(above):
        return above
    return _largest(rejects, 1.0, lo=above)


def fdp_one_run_rejects_points(m: int, k: int, c: int, epsilons, deltas, significance: float) -> np.ndarray:
    """:func:`fdp_one_run_rejects` for many (epsilon, delta) points' curves at once: one bool per point.

    The curve of one point needs rate ``max(0, (x - delta) e^-epsilon, 1 - delta - e^epsilon (1 - x))``
    for power ``x``; every point runs the same recursion, in one array (a claim's 400 grid points in about
    1 ms, where one point at a time takes 30).  A point stops when its rates stop moving, as the scalar test
    breaks; the answers are the scalar test's (checked on random counts in the tests).

    >>> fdp_one_run_rejects_points(1000, 250, 250, [4.4, 4.5], [1e-4, 1e-4], 0.05).tolist()  # bound 4.416
    [True, False]
    """
    m = check_int(m, "canaries", low=1)
    k = check_int(k, "guesses", low=0, high=m)
    c = check_int(c, "correct", low=0, high=k)
    tau = check_real(significance, "significance", low=0.0, high=1.0, low_inclusive=False)
    eps, delta = np.broadcast_arrays(np.asarray(epsilons, dtype=float), np.asarray(deltas, dtype=float))
    e = np.exp(np.minimum(eps, 700.0))
    right = np.full(eps.shape, tau * c / m)
    wrong = np.full(eps.shape, tau * (k - c) / m)
    keep = 1.0 - delta
    for i in range(c - 1, -1, -1):  # 12 array operations a step (15 before: a profile's searches run ~10^3 steps)
        pushed = np.maximum(np.maximum(wrong, (right - delta) / e), keep - e * (1.0 - right))
        moved = pushed - wrong  # >= 0; a point with 0 keeps its rates: right + 0 = right <= 1
        if not moved.any():
            break
        right = np.minimum(right + i / (k - i) * moved, 1.0)
        wrong = pushed
    return right + wrong > k / m


def fdp_one_run_epsilon_bounds(m: int, k: int, c: int, deltas, *, confidence: float = 0.95, above=None,
                               tol: float = 1e-9, points: int = 256, best_margin: bool = False) -> np.ndarray:
    """:func:`fdp_one_run_epsilon_bound` at every delta of ``deltas`` at once (one search, all deltas in step).

    ``above``: per delta, an epsilon known to be rejected (a claimed curve's epsilon there), where the
    search starts (checked: one that is not starts from 0); each answer is the largest rejected epsilon
    to ``tol`` (relative), kept at the low end: a tested point that rejects, with a tested point within
    ``tol`` above it that does not.  The brackets are cut at ``points // (open brackets)`` points per call
    rather than halved: one call runs the c-step recursion once whatever its width, so one delta's 30
    halvings become 4 calls (the widths timed: docs/decisions/one-run-fdp.md).

    ``best_margin`` (with ``above``): only the delta whose bound exceeds ``above`` by the most is wanted
    (the crossed point a rejected curve names); a delta whose bracket's top is below another's proven
    margin cannot be it, is dropped from the search and answered NaN.  Ties are kept.
    """
    d = np.atleast_1d(np.asarray(deltas, dtype=float))
    beta = 1.0 - check_real(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)

    def rejects(eps, idx):
        return fdp_one_run_rejects_points(m, k, c, eps, d[idx], beta)

    lo = np.zeros_like(d) if above is None else np.broadcast_to(np.asarray(above, dtype=float), d.shape).copy()
    if best_margin and above is None:
        raise ParameterValueError("best_margin needs above: the margin is measured from it")
    claimed = lo.copy()
    every = np.arange(len(d))
    live = rejects(lo, every)
    restart = ~live & (lo > 0.0)  # an ``above`` that is not rejected after all: search from 0 there
    if restart.any():
        lo[restart] = 0.0
        live[restart] = rejects(lo[restart], every[restart])
    lo[~live] = 0.0  # no epsilon rejected: the bound is 0
    hi = np.maximum(1.0, 2.0 * lo)
    done = ~live
    while True:  # double hi until it is not rejected (capped at 10^4, as _largest)
        idx = every[~done]
        if len(idx) == 0:
            break
        up = rejects(hi[idx], idx)
        lo[idx[up]] = hi[idx[up]]
        hi[idx[up]] *= 2.0
        capped = idx[up][hi[idx[up]] > 1e4]
        done[idx[~up]] = True
        done[capped] = True
        live[capped] = False  # stays at lo
    while True:  # multisection: n points per open bracket in one call (a call costs c steps whatever its width)
        if best_margin:  # a bracket whose top is below a proven margin cannot hold the best
            out = live & (hi - claimed < np.nanmax(lo - claimed))
            lo[out], live[out] = np.nan, False
        idx = every[live & (hi - lo > tol * np.maximum(1.0, hi))]
        if len(idx) == 0:
            return lo
        n = max(1, points // len(idx))
        pts = lo[idx, None] + (hi[idx] - lo[idx])[:, None] * (np.arange(1.0, n + 1.0) / (n + 1.0))
        pts = np.minimum(np.maximum(pts, lo[idx, None]), hi[idx, None])
        yes = rejects(pts.ravel(), np.repeat(idx, n)).reshape(len(idx), n)
        first_no = np.where(yes.all(axis=1), n, np.argmin(yes, axis=1))  # the bracket's new ends: tested points
        rows = np.arange(len(idx))
        has_lo, has_hi = first_no > 0, first_no < n
        lo[idx[has_lo]] = pts[rows[has_lo], first_no[has_lo] - 1]
        hi[idx[has_hi]] = pts[rows[has_hi], first_no[has_hi]]


def fdp_one_run_mu_bound_max(m: int, counts, *, confidence: float = 0.95) -> float:
    """The largest :func:`fdp_one_run_mu_bound` over ``counts`` (pairs (guesses, correct)), within its tolerance.

    Each count is tested against the best mu so far (:func:`fdp_one_run_mu_bound`'s ``above``), in
    the order of their delta-0 binomial bound (a closed form), so the largest is usually searched
    first and every other count costs one test: 1.1 searches per audit instead of 3.7 in the grid's
    order (100 audits of 1,000 canaries).

    >>> round(fdp_one_run_mu_bound_max(1000, [(1000, 560), (250, 240), (62, 62)]), 3)   # 62 of 62's: 0.080, 1.005, 1.025
    1.025
    """
    beta = 1.0 - check_real(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)

    def likely(count):
        k, c = count
        return _tail_root(k, c, beta) if c > 0 else -math.inf

    best = 0.0
    for k, c in sorted(counts, key=likely, reverse=True):
        best = fdp_one_run_mu_bound(m, k, c, confidence=confidence, above=best)
    return best


def fdp_one_run_epsilon_bound(m: int, k: int, c: int, *, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The largest epsilon whose (epsilon, delta) curve the f-DP test rejects: an assumption-free bound at ``delta``.

    The f-DP counterpart of :func:`one_run_epsilon_bound` (a little below it when a guess
    is wrong, docs/decisions/one-run-fdp.md: with one point's curve the f-DP test gains nothing); with all ``m`` guesses right and delta 0 both are the
    ceiling ``ln(q / (1 - q))``, ``q = (1 - confidence)^(1/m)``.

    >>> round(fdp_one_run_epsilon_bound(1000, 1000, 1000), 3)
    5.809
    """
    delta = check_delta(delta)
    beta = 1.0 - check_real(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)

    def point(eps):
        e = math.exp(min(eps, 700.0))
        return lambda x: max(0.0, (x - delta) / e, 1.0 - delta - e * (1.0 - x))

    # One delta: the scalar recursion is much faster than an array of one (fdp_one_run_epsilon_bounds' lanes).
    return _largest(lambda eps: fdp_one_run_rejects(m, k, c, point(eps), beta), 1.0, 1e-9)
