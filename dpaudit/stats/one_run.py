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

import math

import numpy as np

from .._validation import check_delta, check_int, check_real

__all__ = ["counts_for_guesses", "fdp_one_run_epsilon_bound", "fdp_one_run_mu_bound", "fdp_one_run_rejects",
           "guess_counts", "guess_grid", "one_run_ceiling", "one_run_epsilon_bound", "one_run_epsilon_bounds",
           "one_run_p_value", "top_guess_counts"]


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
    m, r, v, delta = _check(m, r, v, delta)
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    return float(_PValues(m, r, v)(np.array([epsilon]), np.array([delta]))[0])


class _PValues:
    """:func:`one_run_p_value` of one count (m, r, v) at many (epsilon, delta) at once.

    The binomial coefficients of the delta term do not depend on epsilon: they are computed once per
    count (from 50 standard deviations below the mean at q = 1/2, the lowest of any epsilon >= 0),
    not once per step of a bisection.  Each call sums the terms down to 50 standard deviations below
    the mean of its smallest q: lower ones add nothing a float can hold (< e^-1000), so they are left
    out (10^5 guesses: 5x faster than every term); a larger q's own cut-off would only drop terms where
    the running sum stays flat, so its largest ratio to i is the same.
    """

    def __init__(self, m: int, r: int, v: int):
        from scipy import special  # ufuncs: scipy.stats' checks cost 30x per call

        self.m, self.r, self.v = m, r, v
        lowest = max(0, min(v - 1, int(r * 0.5 - 50.0 * math.sqrt(r * 0.25) - 10.0)))
        self.k = np.arange(v - 1, lowest - 1, -1, dtype=float)
        self.logc = special.gammaln(r + 1.0) - special.gammaln(self.k + 1.0) - special.gammaln(r - self.k + 1.0)
        self.steps = np.arange(1, len(self.k) + 1)

    def __call__(self, epsilon: np.ndarray, delta: np.ndarray) -> np.ndarray:
        from scipy import special

        r, v = self.r, self.v
        if v == 0:
            return np.ones(len(epsilon))
        q = np.array([1.0 / (1.0 + math.exp(-e)) if e < 700 else 1.0 for e in epsilon.tolist()])
        p = special.bdtrc(v - 1, r, q)
        with_delta = np.flatnonzero(delta > 0)
        if len(with_delta):
            qd = q[with_delta]
            # The terms down to 50 standard deviations below the smallest of these q's mean (see above).
            low = min(max(0, min(v - 1, int(r * x - 50.0 * math.sqrt(r * x * (1.0 - x)) - 10.0))) for x in qd.tolist())
            n = v - low
            k, qd = self.k[:n], qd[:, None]
            below = np.exp(self.logc[:n] + special.xlogy(k, qd) + special.xlog1py(r - k, -qd))
            alpha = np.max(np.cumsum(below, axis=1) / self.steps[:n], axis=1)
            p[with_delta] += 2.0 * self.m * delta[with_delta] * alpha
        return np.minimum(p, 1.0)


def one_run_epsilon_bound(m: int, r: int, v: int, *, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The largest epsilon the guesses reject at ``1 - confidence``: a lower bound valid with ``confidence``.

    Bisection on the p-value (increasing in epsilon) to 1e-9, keeping the low end, so the bound is
    never above the exact root.  0 when no epsilon is rejected.

    >>> q = 0.05 ** (1 / 1000)
    >>> abs(one_run_epsilon_bound(1000, 1000, 1000) - math.log(q / (1 - q))) < 1e-6
    True
    """
    return one_run_epsilon_bounds(m, r, v, [delta], confidence=confidence)[0]


def one_run_epsilon_bounds(m: int, r: int, v: int, deltas, *, confidence: float = 0.95) -> list[float]:
    """:func:`one_run_epsilon_bound` of one count at each of ``deltas``, from one bisection of them all.

    Each delta takes the steps its own bisection would, so the bounds are the same to the bit; a
    curve claim tests one count at several deltas, and the deltas' p-values come from one call per
    step.

    >>> [round(b, 3) for b in one_run_epsilon_bounds(1000, 1000, 1000, [0.0, 1e-4])]
    [5.809, 5.529]
    """
    m, r, v, _ = _check(m, r, v, 0.0)
    d = np.array([check_delta(x) for x in deltas], dtype=float)
    beta = 1.0 - check_real(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False,
                            high_inclusive=False)
    p_values = _PValues(m, r, v)
    return _largest_lanes(lambda eps, lanes: p_values(eps, d[lanes]) < beta, len(d), 1.0, 1e-9).tolist()


def one_run_ceiling(m: int, r: int, *, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The bound if all ``r`` guesses were right: the most ``r`` guesses among ``m`` canaries can certify."""
    return one_run_epsilon_bound(m, r, r, delta=delta, confidence=confidence)


def guess_counts(scores, included, guesses: int) -> tuple[int, int]:
    """(guesses made, correct ones) when the ``guesses`` scores farthest from the median are guessed.

    A score at or above the median is guessed "included", below it "excluded": the highest and the
    lowest scores, in the proportion the scores themselves show.  The rule reads the scores only (ties
    by position), never the inclusion bits, so the theorem applies to it.

    >>> guess_counts([0.9, 0.1, 0.5, 0.8], [1, 0, 0, 1], 2)
    (2, 2)
    """
    return counts_for_guesses(scores, included, [guesses])[0]


def counts_for_guesses(scores, included, guesses, *, one_sided: bool = False) -> list[tuple[int, int]]:
    """(guesses, correct) for each number in ``guesses``, from one sort of the scores.

    Two-sided (default) as :func:`guess_counts`; ``one_sided`` as :func:`top_guess_counts`.  The
    counts for every k come from one ordering and a running sum (a grid of k at 10^5 canaries used to
    sort them once per k).

    >>> counts_for_guesses([0.9, 0.1, 0.5, 0.8], [1, 0, 0, 1], [1, 2, 4])
    [(1, 1), (2, 2), (4, 4)]
    """
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included).astype(bool)
    ks = [check_int(k, "guesses", low=0, high=len(s)) for k in guesses]
    if one_sided:
        right = inc[np.argsort(-s, kind="stable")]
    else:
        center = float(np.median(s))
        order = np.argsort(-np.abs(s - center), kind="stable")
        right = (s[order] >= center) == inc[order]
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


def top_guess_counts(scores, included, guesses: int) -> tuple[int, int]:
    """(guesses made, correct ones) when the ``guesses`` highest scores are all guessed "included".

    The one-sided rule the f-DP test is proved for: it reads the scores only (ties by position).

    >>> top_guess_counts([0.9, 0.1, 0.5, 0.8], [1, 0, 0, 1], 3)
    (3, 2)
    """
    return counts_for_guesses(scores, included, [guesses], one_sided=True)[0]


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


def _largest(rejects, hi: float, tol: float = 1e-6) -> float:
    """The largest parameter ``rejects`` accepts (True below a point, False above), to ``tol``, keeping the low end.

    0 when it rejects nothing; doubling from ``hi`` brackets the point (capped at 10^4, where only
    delta 0 with every guess right still rejects), then bisection.  Every one-run bound is read this
    way (:func:`_largest_lanes`, one problem).
    """
    return float(_largest_lanes(lambda x, lanes: [rejects(float(x[0]))], 1, hi, tol)[0])


def _largest_lanes(rejects, n: int, hi: float, tol: float) -> np.ndarray:
    """:func:`_largest` for ``n`` problems at once: ``rejects(x, lanes)`` answers for ``x[i]`` in problem ``lanes[i]``.

    Every problem takes exactly the steps :func:`_largest` would take for it alone.
    """
    lo, top = np.zeros(n), np.full(n, float(hi))
    live = np.asarray(rejects(np.zeros(n), np.arange(n)), dtype=bool)  # problems rejecting 0: the rest stay 0
    doubling = live.copy()
    while True:
        live &= doubling | (top - lo > tol * np.maximum(1.0, top))
        if not live.any():
            return lo
        lanes = np.flatnonzero(live)
        dbl = doubling[lanes]
        x = np.where(dbl, top[lanes], 0.5 * (lo[lanes] + top[lanes]))
        yes = np.asarray(rejects(x, lanes), dtype=bool)
        grow, stop_doubling = lanes[dbl & yes], lanes[dbl & ~yes]
        lo[grow], top[grow] = top[grow], 2.0 * top[grow]
        capped = grow[top[grow] > 1e4]
        live[capped] = False  # only delta 0 with every guess right still rejects there
        doubling[stop_doubling] = False
        half = lanes[~dbl]
        took = yes[~dbl]
        lo[half[took]] = x[~dbl][took]
        top[half[~took]] = x[~dbl][~took]


def fdp_one_run_mu_bound(m: int, k: int, c: int, *, confidence: float = 0.95) -> float:
    """The largest mu for which ``c`` correct of ``k`` guesses reject mu-Gaussian DP: "not mu-GDP below it".

    A statement about Gaussian DP claims, not an assumption-free epsilon: a mechanism with a
    non-Gaussian curve may be (epsilon, delta)-DP where mu-GDP is not.

    >>> round(fdp_one_run_mu_bound(1000, 100, 100), 2)
    1.23
    """
    from scipy.special import ndtr, ndtri

    beta = 1.0 - check_real(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    return _largest(lambda mu: fdp_one_run_rejects(m, k, c, lambda x: float(ndtr(ndtri(x) - mu)), beta),
                    1.0)


def fdp_one_run_epsilon_bound(m: int, k: int, c: int, *, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The largest epsilon whose (epsilon, delta) curve the f-DP test rejects: an assumption-free bound at ``delta``.

    The f-DP counterpart of :func:`one_run_epsilon_bound` (measured 0.3-1.7% below it when a guess
    is wrong: with one point's curve the f-DP test gains nothing); with all ``m`` guesses right and delta 0 both are the
    ceiling ``ln(q / (1 - q))``, ``q = (1 - confidence)^(1/m)``.

    >>> round(fdp_one_run_epsilon_bound(1000, 1000, 1000), 3)
    5.809
    """
    delta = check_delta(delta)
    beta = 1.0 - check_real(confidence, "confidence", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)

    def point(eps):
        e = math.exp(min(eps, 700.0))
        return lambda x: max(0.0, (x - delta) / e, 1.0 - delta - e * (1.0 - x))

    return _largest(lambda eps: fdp_one_run_rejects(m, k, c, point(eps), beta), 1.0, 1e-9)
