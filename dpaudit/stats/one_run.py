"""One-run audits (Steinke, Nasr and Jagielski 2023): m canaries, each in the training data with probability 1/2.

The auditor looks at the one output, guesses "included" for some canaries and
"excluded" for others (abstaining on the rest), and counts its correct guesses.
If the mechanism is (epsilon, delta)-DP with respect to adding or removing one
canary, the number W of correct guesses among r guesses satisfies, for every v
(their Theorem 3, in the form of their Appendix D algorithm)::

    P[W >= v] <= P[Bin(r, q) >= v] + 2 m delta max_{1 <= i <= v} P[v - i <= Bin(r, q) < v] / i,
    q = e^epsilon / (1 + e^epsilon)

(the accuracy of epsilon-DP randomized response).  The right-hand side is a
p-value for the claim (epsilon, delta); the epsilon lower bound at confidence
C is the largest epsilon whose p-value is below 1 - C, found by bisection
(:func:`one_run_epsilon`).  With delta = 0 and every one of r guesses right it
is ``ln(q/(1-q))`` with ``q = (1-C)^(1/r)``: 5.809 for r = 1000 at 95%, the
most 1000 canaries can ever show.

The tail bound holds whatever the guesses are, provided they depend only on
the output (never on the inclusion bits) and are at most r.  Choosing r after
looking at how many guesses came out right would spend validity; the default
here tries every r of a small fixed grid (:func:`guess_grid`) and splits the
failure probability evenly over it (Bonferroni), so the largest bound over the
grid holds at the stated confidence.

Examples
--------
>>> round(one_run_epsilon(1000, 1000, 1000), 3)     # every guess right: the ceiling
5.809
>>> round(one_run_epsilon(1000, 100, 75, delta=1e-4), 3)   # the paper's Appendix D example
0.673
>>> one_run_epsilon(100, 100, 50)                    # no better than a coin
0.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import ParameterValueError

__all__ = ["OneRunCount", "guess", "guess_grid", "one_run_counts", "one_run_epsilon", "one_run_p_value"]

#: Fewest guesses the default grid tries (fewer cannot certify much at 95%).
MIN_GRID_GUESSES = 10
#: Bisection steps of :func:`one_run_epsilon` (the bracket is at most 2^8 wide: steps of 2^-42).
BISECTION_STEPS = 50


def _check_counts(m: int, r: int, v: int) -> None:
    if not (0 <= v <= r <= m) or m < 1:
        raise ParameterValueError(f"one-run counts must satisfy 0 <= correct <= guesses <= canaries and canaries >= 1;"
                                  f" got canaries={m}, guesses={r}, correct={v}")


def one_run_p_value(m: int, r: int, v: int, epsilon, delta=0.0):
    """The theorem's bound on P[at least ``v`` of ``r`` guesses right] for an (epsilon, delta)-DP mechanism.

    ``epsilon`` and ``delta`` broadcast (arrays in, an array out); ``m`` is the number of canaries.

    >>> round(float(one_run_p_value(10, 10, 10, 0.0)), 6)   # ten coin flips all right
    0.000977
    """
    from scipy.special import expit
    from scipy.stats import binom

    _check_counts(m, r, v)
    eps, dl = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(delta, dtype=float))
    q = expit(eps)
    tail = binom.sf(v - 1, r, q)
    if v == 0 or not np.any(dl > 0):
        return tail if tail.ndim else float(tail)
    below = binom.pmf(v - np.arange(1, v + 1), r, q[..., None])          # P[Bin = v - i], i = 1..v
    alpha = np.max(np.cumsum(below, axis=-1) / np.arange(1, v + 1), axis=-1)
    out = np.minimum(tail + 2.0 * m * dl * alpha, 1.0)
    return out if out.ndim else float(out)


def one_run_epsilon(m: int, r: int, v: int, *, delta=0.0, confidence: float = 0.95):
    """The largest epsilon whose p-value is below ``1 - confidence``: a lower bound valid at ``confidence``.

    Vectorised over ``delta``.  0 when even epsilon = 0 is not rejected.
    The returned epsilon always has a p-value below ``1 - confidence`` (the
    bisection keeps its lower end there), so the claim "not (epsilon,
    delta)-DP" it makes is rejected at that level whatever the shape of the
    p-value in epsilon.
    """
    _check_counts(m, r, v)
    beta = 1.0 - float(confidence)
    dl = np.asarray(delta, dtype=float)
    if np.any((dl < 0) | (dl >= 1)) or not 0.0 < beta < 1.0:
        raise ParameterValueError(f"delta must be in [0, 1) and confidence in (0, 1); got {delta!r}, {confidence!r}")
    lo = np.zeros(dl.shape)
    ok = np.asarray(one_run_p_value(m, r, v, lo, dl)) < beta
    hi = np.ones(dl.shape)
    for _ in range(8):                                   # grow the bracket to at most 2^8
        grow = ok & (np.asarray(one_run_p_value(m, r, v, hi, dl)) < beta)
        if not np.any(grow):
            break
        lo, hi = np.where(grow, hi, lo), np.where(grow, 2 * hi, hi)
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        below = np.asarray(one_run_p_value(m, r, v, mid, dl)) < beta
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    out = np.where(ok, lo, 0.0)
    return out if out.ndim else float(out)


def guess(scores, k: int) -> np.ndarray:
    """Guesses in {-1, 0, +1}: +1 ("included") for the ``ceil(k/2)`` highest scores, -1 for the ``floor(k/2)`` lowest.

    Ties are broken by canary index (a fixed order, chosen before the
    inclusion bits are drawn), so the guesses depend on the scores alone.

    >>> guess([0.1, 0.9, 0.5, 0.2], 2).tolist()
    [-1, 1, 0, 0]
    """
    s = np.asarray(scores, dtype=float)
    m = s.size
    if not 1 <= k <= m:
        raise ParameterValueError(f"guesses must be in [1, {m}] (the number of canaries); got {k}")
    order = np.lexsort((np.arange(m), s))                 # ascending score, then index
    out = np.zeros(m, dtype=np.int64)
    up = (k + 1) // 2
    out[order[m - up:]] = 1
    out[order[: k - up]] = -1
    return out


def guess_grid(m: int) -> tuple[int, ...]:
    """The default numbers of guesses tried: m, m/2, m/4, ... down to :data:`MIN_GRID_GUESSES` (or just m).

    >>> guess_grid(1000)
    (1000, 500, 250, 125, 62, 31, 16)
    """
    ks = [m]
    j = 1
    while m / 2 ** j >= MIN_GRID_GUESSES:
        ks.append(int(round(m / 2 ** j)))
        j += 1
    return tuple(dict.fromkeys(ks))


@dataclass(frozen=True)
class OneRunCount:
    """One number of guesses: how many were made and how many were right."""

    guesses: int
    correct: int


def one_run_counts(scores, included, ks) -> list[OneRunCount]:
    """The guesses and correct guesses for each number of guesses in ``ks``."""
    truth = np.where(np.asarray(included) > 0, 1, -1)
    out = []
    for k in ks:
        g = guess(scores, int(k))
        out.append(OneRunCount(int(np.count_nonzero(g)), int(np.count_nonzero(g == truth))))
    return out
