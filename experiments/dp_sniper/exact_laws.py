"""Exact outcome probabilities of DP-Sniper's rows whose releases take few values, for ``ceiling.py``.

An estimated law's rare outcomes read as large ratios and, re-sorted by them, lift a ceiling above
what any event could certify; these laws are computed from the mechanism's definition instead:

- sparse-vector variants that compare every query with one noisy threshold (Lyu et al.'s
  Algorithms 1, 4, 5 and 6 at any cutoff ``c`` or none, Algorithm 2 at ``c = 1``): the probability
  of each status pattern, an integral over the threshold noise (in closed form when the queries
  carry no noise, Algorithm 5);
- Algorithm 3 at ``c = 1``: the first above answer's position and its noisy value in fine cells;
- the truncated geometric mechanism (differences of Balcer and Vadhan's integer CDF) and report
  noisy max's index (one integral per index, the mechanism's ``probabilities``).

Every function returns ``(P(outcome | D), P(outcome | D'))`` over one list of outcomes, or None
when the mechanism is not one it knows.
"""

from __future__ import annotations

from math import comb

import numpy as np

__all__ = ["exact_discrete_probabilities", "exact_index_probabilities", "exact_svt_pattern_probabilities",
           "exact_svt_probabilities", "exact_svt_value_probabilities", "svt_pattern_law"]

# The trapezoid rule under its numpy 2 name, or its numpy 1 name (np.trapz, the same function) on numpy 1.26.
_trapezoid = getattr(np, "trapezoid", None) or np.trapz

#: Most status patterns computed exactly (Algorithm 6 with 12 queries has 4,096).
MAX_PATTERNS = 4096


def _one_threshold(mech) -> bool:
    """Whether ``mech`` is a sparse-vector variant whose statuses follow from one threshold noise
    (every query compared with ``threshold + rho``, ``c`` above answers at most if it has a cutoff)."""
    from dpaudit.mechanisms.sparse_vector import SVTBase

    if not isinstance(mech, SVTBase) or mech._releases_values:
        return False
    # Algorithm 2 redraws rho after an above answer: with c = 1 the release ends there, so it never matters.
    return type(mech)._draw is SVTBase._draw or (mech._has_cutoff and mech.c == 1)


def _n_patterns(mech) -> int:
    m = mech.n_queries
    return sum(comb(m, k) for k in range(mech.c + 1)) if mech._has_cutoff and mech.c < m else 2 ** m


def _cut(status: tuple, c: int | None) -> tuple:
    """``status`` (1 above, 0 below) with the queries after the c-th above answer marked -1 (not answered)."""
    if c is None:
        return status
    out, seen = [], 0
    for s in status:
        out.append(-1 if seen >= c else s)
        seen += s == 1 and seen < c
    return tuple(out)


def _noiseless_law(mech, q: np.ndarray) -> dict:
    """{pattern: probability} when the queries carry no noise: query k is above iff rho <= q_k - T, so the
    pattern is fixed on each interval of rho between the sorted values q_k - T, whose mass is closed-form."""
    from scipy.stats import laplace

    cuts = np.unique(q - mech.threshold)
    c = mech.c if mech._has_cutoff else None
    law: dict = {}
    lower = 0.0
    for b in cuts:  # rho in (previous cut, b]: above exactly where b <= q_k - T
        upper = float(laplace.cdf(b, scale=mech.rho_scale))
        key = _cut(tuple(int(v) for v in (b <= q - mech.threshold)), c)
        law[key] = law.get(key, 0.0) + upper - lower
        lower = upper
    key = _cut((0,) * len(q), c)  # rho above every cut: every query below
    law[key] = law.get(key, 0.0) + 1.0 - lower
    return law


def svt_pattern_law(mech, data, n_grid: int = 400_001, chunk: int = 20_000) -> dict:
    """{status pattern: probability} of one threshold-noise sparse-vector variant on ``data``.

    Given the threshold noise rho the queries answer independently, so P(pattern) = E_rho[prod over the
    answered queries of 1 - F_k(T + rho) (above) or F_k(T + rho) (below)], F_k the Laplace CDF of query k's
    noisy answer; the queries after the c-th above answer are -1 and contribute no factor.  The integral is
    the trapezoid rule on ``n_grid`` points of rho in +-60 rho scales, taken ``chunk`` points at a time.
    """
    from scipy.stats import laplace

    q = np.asarray(mech._prepare(data), dtype=float)
    if mech.nu_scale <= 0:
        return _noiseless_law(mech, q)
    c = mech.c if mech._has_cutoff else len(q)
    r = np.linspace(-60 * mech.rho_scale, 60 * mech.rho_scale, n_grid)
    weights = laplace.pdf(r, scale=mech.rho_scale) * (r[1] - r[0])
    weights[[0, -1]] *= 0.5
    law: dict = {}
    for start in range(0, n_grid, chunk):
        rr, ww = r[start:start + chunk], weights[start:start + chunk]
        below = laplace.cdf((mech.threshold + rr[None, :] - q[:, None]) / mech.nu_scale)
        states = [((), 0, ww)]  # (statuses so far, above answers so far, weight times the product so far)
        for k in range(len(q)):
            nxt = []
            for status, n_above, prod in states:
                if n_above >= c:
                    nxt.append((status + (-1,), n_above, prod))
                else:
                    nxt.append((status + (0,), n_above, prod * below[k]))
                    nxt.append((status + (1,), n_above + 1, prod * (1.0 - below[k])))
            states = nxt
        for status, _, prod in states:
            law[status] = law.get(status, 0.0) + float(prod.sum())
    total = sum(law.values())
    return {k: v / total for k, v in law.items()}


def _pattern_table(mech, d, d2, n_grid: int):
    """(patterns, P(pattern | D), P(pattern | D')) of a one-threshold variant, patterns ordered by their
    reversed statuses; None for other mechanisms or too many patterns."""
    if not _one_threshold(mech) or _n_patterns(mech) > MAX_PATTERNS:
        return None
    laws = [svt_pattern_law(mech, data, n_grid=n_grid) for data in (d, d2)]
    keys = sorted(set(laws[0]) | set(laws[1]), key=lambda s: tuple(reversed(s)))
    return keys, np.array([laws[0].get(k, 0.0) for k in keys]), np.array([laws[1].get(k, 0.0) for k in keys])


def exact_svt_pattern_probabilities(mech, d, d2, n_grid: int = 400_001):
    """Exact probabilities of every status pattern of a one-threshold sparse-vector variant (any cutoff, or
    none), or None for other mechanisms; with no cutoff pattern ``sum_k [query k above] 2^k`` comes at that
    index (the patterns are ordered by their reversed statuses)."""
    table = _pattern_table(mech, d, d2, n_grid)
    return None if table is None else (table[1], table[2])


def exact_svt_probabilities(mech, d, d2, n_grid: int = 400_001):
    """Exact outcome probabilities of a one-threshold sparse-vector variant with cutoff 1: P(first above at
    i) for i = 0..m-1, then P(none above); None for other mechanisms."""
    if getattr(mech, "c", None) != 1 or not getattr(mech, "_has_cutoff", False):
        return None
    table = _pattern_table(mech, d, d2, n_grid)
    if table is None:
        return None
    keys, p0, p1 = table
    order = np.argsort([s.index(1) if 1 in s else len(s) for s in keys], kind="stable")
    return p0[order], p1[order]


def exact_svt_value_probabilities(mech, d, d2, n_grid: int = 400_001, cells: int = 4000):
    """Exact outcome probabilities of a sparse-vector variant with cutoff 1 that releases the noisy
    value of its above answer (Lyu et al.'s Algorithm 3): the position i of the first above and the
    value v = q_i + nu_i in fine cells, or none above; None for other mechanisms.

    P(i, v) = f_nu(v - q_i) * integral over rho <= v - T of f_rho(rho) prod_{j<i} F_nu(T + rho - q_j),
    on one grid of rho (and v = T + rho), summed into ``cells`` cells of v per position.
    """
    needed = ("rho_scale", "nu_scale", "threshold", "_prepare")
    if getattr(mech, "c", None) != 1 or not all(hasattr(mech, a) for a in needed):
        return None
    if not getattr(mech, "_releases_values", False) or not getattr(mech, "_has_cutoff", False):
        return None
    from scipy.integrate import cumulative_trapezoid
    from scipy.stats import laplace

    b_rho, b_nu = mech.rho_scale, mech.nu_scale
    half = 40 * max(b_rho, b_nu)
    r = np.linspace(-half, half, n_grid)
    step = r[1] - r[0]
    w = laplace.pdf(r, scale=b_rho)
    out = []
    for data in (d, d2):
        q = np.asarray(mech._prepare(data), dtype=float)
        cdf = laplace.cdf((mech.threshold + r[None, :] - q[:, None]) / b_nu)
        below_before = np.vstack([np.ones_like(r), np.cumprod(cdf, axis=0)])
        probs = []
        for i in range(len(q)):
            h = cumulative_trapezoid(w * below_before[i], r, initial=0.0)  # rho <= r, earlier queries below
            dens = laplace.pdf(mech.threshold + r - q[i], scale=b_nu) * h * step  # v = T + r
            probs.append(np.add.reduceat(dens, np.linspace(0, len(r), cells, endpoint=False).astype(int)))
        probs.append([_trapezoid(w * below_before[-1], r)])
        p = np.concatenate(probs)
        out.append(p / p.sum())
    return out[0], out[1]


def exact_index_probabilities(mech, d, d2):
    """Exact outcome probabilities of the truncated geometric mechanism (its ``pmf``: differences of Balcer
    and Vadhan's integer CDF, a finite sum) or of report noisy max's index (its ``probabilities``: one
    integral per index); None for other mechanisms."""
    from dpaudit.mechanisms.selection import NoisyMaxBase
    from dpaudit.mechanisms.truncated_geometric import TruncatedGeometric

    if isinstance(mech, TruncatedGeometric):
        return tuple(mech.pmf(int(np.asarray(data).ravel()[0])) for data in (d, d2))
    if isinstance(mech, NoisyMaxBase) and type(mech)._draw is NoisyMaxBase._draw:  # releases the index only
        return mech.probabilities(d), mech.probabilities(d2)
    return None


def exact_discrete_probabilities(mech, d, d2):
    """The first exact law of this module that knows ``mech`` (sparse-vector patterns, Algorithm 3's values,
    the truncated geometric, noisy max's index), or None."""
    for law in (exact_svt_pattern_probabilities, exact_svt_value_probabilities, exact_index_probabilities):
        probs = law(mech, d, d2)
        if probs is not None:
            return probs
    return None
