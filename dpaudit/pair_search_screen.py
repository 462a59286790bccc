"""Screening one candidate pair of :func:`dpaudit.search`: :func:`screen_pair`.

The screening is the audit's calibration on a small sample: the same fitting/selection split
(:func:`~dpaudit.stats.selection.selection_halves`), the same distinguishers
(:func:`~dpaudit.auditor.distinguishers.auto_choices`), the same counts and interval rates
(:func:`~dpaudit.stats.selection.calibration_counts`, :func:`~dpaudit.stats.selection.calibration_rates`)
and the same event choice (:class:`~dpaudit.stats.curves.CurveCertificate`).  What it adds ranks pairs and
certifies nothing: a coarse grid pre-ranked before the intervals, and the bound an event would give at the
final audit's size, penalised for its noise.  ``docs/decisions/search-screening.md`` says why each differs.
"""

from __future__ import annotations

import math

import numpy as np

from ._rng import as_seed_sequence
from .params import SEARCH_OPTIONS

__all__ = ["screen_pair", "separated_bound", "point_certificate", "SCREEN_CONFIDENCE", "STRUCTURE_ATTACKS",
           "MIN_PROJECTED_COUNT", "SCREEN_PENALTY", "POOL_PER_OUTCOME", "SCREEN_GRID", "PRERANKED"]

#: Confidence of the projected bound that ranks candidates (a ranking statistic, not a reported bound).
SCREEN_CONFIDENCE = 0.8
#: Distinguishers the quick look leaves out: they fit structure, and cost most of a small screening.
STRUCTURE_ATTACKS = frozenset({"binned-logistic", "mixed", "pattern-cells"})
#: Screening counts an event needs (event and complement, both sides) before it is projected.
MIN_PROJECTED_COUNT = 200
#: Standard errors (of the event's log ratio at the screening's size) taken off a projected score.
SCREEN_PENALTY = 1.0
#: Screening releases per outcome (both sides) for a likelihood ratio fitted on the whole sample.
POOL_PER_OUTCOME = 200
#: The screening's candidate thresholds: :func:`~dpaudit.stats.selection.threshold_candidates` on a coarse grid.
SCREEN_GRID = {"n_grid": 128, "n_tail": 32, "max_unique": 1024}
#: Thresholds per orientation whose intervals are computed, the best by a smoothed log ratio.
PRERANKED = 8
#: Releases per side that decide the output's kind and the distinguishers.
PROBE = 2000


def point_certificate(epsilon: float, delta: float):
    """The certificate of the point claim (epsilon, delta): it ranks events by their bound at ``delta``."""
    from .claims import PointClaim
    from .stats.curves import CurveCertificate

    return CurveCertificate(PointClaim(epsilon, delta))


def screen_pair(target, dataset, neighbor, *, n_samples: int, delta: float = 0.0, project_to: int | None = None,
                rng=None, coupled: bool = False, cheap: bool = False, certificate=None) -> dict:
    """Score one pair on a small sample: the projected bound of the best cheap distinguisher.

    Each side draws ``n_samples`` releases; the first half fits the
    distinguishers that ``attack="auto"`` would try, the second half picks
    an event as the audit's calibration does and gives Clopper-Pearson bounds
    on its rates, simultaneous over the candidate thresholds at confidence
    ``SCREEN_CONFIDENCE``; their bound is 0 when nothing separates.  A leak
    too weak for such a bound on a small sample is still visible to the final
    audit's larger sample, so with ``project_to`` the score is the larger of
    that bound and the bound the same rates would give at ``project_to``
    held-out releases per side, for events with at least
    ``MIN_PROJECTED_COUNT`` releases in each of their four counts, less
    ``SCREEN_PENALTY`` standard errors.  The score ranks pairs; it certifies nothing.

    Parameters
    ----------
    target : callable or str
        Anything :func:`dpaudit.load_target` accepts.
    dataset, neighbor : array_like
    n_samples : int
        Releases per side (at least 40).
    delta : float
    project_to : int, optional
        Held-out releases per side of the audit the score should anticipate.
    rng : int, SeedSequence, Generator or None
    coupled : bool
        Draw both sides from the same seed stream (a coupling): each side's
        releases are still distributed as the mechanism's, and for a mechanism
        whose randomness does not depend on the data the two sides differ only
        where the data moves the output, so the difference of their rates is
        estimated far more precisely.  Screening only ranks pairs, so this
        costs nothing in validity: the final audit draws its sides independently.
    cheap : bool
        Leave out the distinguishers that learn structure (``STRUCTURE_ATTACKS``),
        which cost most of a small screening; a gross violation shows to the simple ones.
    certificate : CurveCertificate, optional
        What chooses the event (default: the point claim at ``delta``, :func:`point_certificate`).

    Returns
    -------
    dict
        ``bound`` (at the screening's own size, >= 0), ``score`` (the ranking
        statistic, >= bound) and ``attack`` (the distinguisher that scored best).

    Examples
    --------
    >>> import numpy as np
    >>> def leaky(dataset, size=None, rng=None):
    ...     return float(np.sum(dataset)) + rng.laplace(0.0, 0.1, size=size)
    >>> screen_pair(leaky, [0, 0], [1, 0], n_samples=4000, rng=0)["score"] > 3
    True
    """
    from .targets import load_target

    n_samples = SEARCH_OPTIONS["screen_samples"].check(n_samples, "n_samples")
    cert = certificate if certificate is not None else point_certificate(1.0, delta)
    x0, x1 = _draw(load_target(target), dataset, neighbor, n_samples, rng, coupled)
    plans = _plans(x0, x1, cheap)
    best = {"score": 0.0, "bound": 0.0, "attack": plans[0][0]}
    projecting = project_to is not None and project_to > n_samples // 2
    # With few distinct outcomes the likelihood ratio fitted on the whole sample gives the best events
    # of any distinguisher (every event is a set of outcomes, and its prefixes by ratio are the best
    # sets, Neyman-Pearson): then it alone gives the projected score.
    lr_tried = projecting and plans[0][0] == "likelihood-ratio"
    lr_pooled = _pooled_scores("likelihood-ratio", plans[0][1], plans[0][2], n_samples) if lr_tried else None
    for i, (name, y0, y1) in enumerate(plans):
        scores = _selection_scores(name, y0, y1)
        if scores is None:
            continue  # a distinguisher that cannot fit these releases simply scores nothing
        value = _own_bound(cert, *scores)
        # Ranking: the bound at the screening's own size, or, where larger, the bound well-populated
        # events would give at the final audit's size.
        extra = 0.0
        if lr_pooled is not None:
            if i == 0:
                extra = _projected_score(*lr_pooled, project_to, delta)
        elif projecting:
            # (A likelihood ratio already tried on the whole sample, with too many outcomes, is not refitted.)
            pooled = None if (i == 0 and lr_tried) else _pooled_scores(name, y0, y1, n_samples)
            extra = _projected_score(*(pooled if pooled is not None else scores), project_to, delta)
        score = max(value, extra)
        if score > best["score"]:
            best = {"score": score, "bound": value, "attack": name}
    return best


def _draw(tgt, dataset, neighbor, n_samples: int, rng, coupled: bool) -> tuple[np.ndarray, np.ndarray]:
    """``n_samples`` releases per side, both sides from one seed stream when ``coupled``."""
    s0, s1 = as_seed_sequence(rng).spawn(2)
    if coupled:
        s1 = np.random.SeedSequence(s0.entropy, spawn_key=s0.spawn_key)
    x0 = np.asarray(tgt.sample(np.asarray(dataset), n_samples, rng=s0))
    x1 = np.asarray(tgt.sample(np.asarray(neighbor), n_samples, rng=s1))
    return x0, x1


def _plans(x0: np.ndarray, x1: np.ndarray, cheap: bool) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(distinguisher, D releases, D' releases) to try: ``auto``'s, decided on a probe of ``PROBE`` releases."""
    from .auditor.distinguishers import auto_choices, output_kind

    # Kind and repeats are decided on a probe: exact distinct-row counts of every release cost more than the rest.
    kind = output_kind(np.concatenate([x0[:PROBE], x1[:PROBE]]))
    if kind == "discrete" and x0.ndim > 1:
        # Discrete vectors: the outcome-set attack on one integer code per row (the same events,
        # without sorting rows), and the two vector attacks on the rows themselves.
        c0, c1 = _row_codes(x0, x1)
        return [("likelihood-ratio", c0, c1), ("mean-difference", x0, x1), ("naive-bayes", x0, x1)]
    names = auto_choices(kind, x0[:PROBE], x1[:PROBE])
    if cheap:
        names = tuple(n for n in names if n not in STRUCTURE_ATTACKS) or names
    return [(name, x0, x1) for name in names]


def _selection_scores(name: str, y0: np.ndarray, y1: np.ndarray):
    """The distinguisher fitted on the fitting half and its scores on the selection half, or None."""
    from .auditor.distinguishers import make_distinguisher
    from .stats.selection import selection_halves

    fit, sel = selection_halves((y0, y1))
    try:
        scorer = make_distinguisher(name).fit(*fit)
        return scorer.score(sel[0]), scorer.score(sel[1])
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return None


def _own_bound(cert, a: np.ndarray, b: np.ndarray) -> float:
    """The certificate's value of the event it chooses on scores ``a`` (D) and ``b`` (D'), at their own size."""
    rates = _screen_rates(a, b)
    value = cert.value(rates, cert.choose(rates))
    return float(value) if math.isfinite(value) and value > 0 else 0.0


def _row_codes(x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One number per row, equal exactly when the rows are equal."""
    both = np.concatenate([x0, x1])
    lo, hi = both.min(axis=0), both.max(axis=0)
    base = hi - lo + 1.0
    integral = bool(np.all(both == np.round(both)))
    if integral and float(np.sum(np.log2(base))) < 52:
        weights = np.cumprod(np.r_[1.0, base[:-1]])
        codes = (both - lo) @ weights
    else:
        codes = np.unique(both, axis=0, return_inverse=True)[1].reshape(-1).astype(float)
    return codes[: len(x0)], codes[len(x0):]


def _screen_rates(a: np.ndarray, b: np.ndarray):
    """The calibration rates of scores ``a`` (on D) and ``b`` at their own size, on ``PRERANKED`` thresholds per
    orientation: the interval bounds are most of a screening's cost, so only the thresholds with the largest
    smoothed log ratio (counts + 1) get them; the final audit uses the full grid."""
    from .stats.selection import calibration_counts, calibration_rates

    grid, k0, n0, k1, n1 = calibration_counts(a, b, **SCREEN_GRID)
    ge, lt = _smoothed_ratios(k0, n0, k1, n1)
    top = np.unique(np.r_[np.argsort(-ge, kind="stable")[:PRERANKED], np.argsort(-lt, kind="stable")[:PRERANKED]])
    return calibration_rates((grid[top], k0[top], n0, k1[top], n1), n_test0=n0, n_test1=n1,
                             confidence=SCREEN_CONFIDENCE)


def separated_bound(n_samples: int, delta: float) -> float:
    """The screening bound of a pair whose sides :func:`screen_pair` separates completely at ``n_samples``.

    >>> 4 < separated_bound(1000, 0.0) < 6
    True
    """
    m = n_samples - n_samples // 2  # the half that picks the threshold
    # Distinct scores, as a continuous distinguisher's: the same number of candidate thresholds share
    # the failure probability as for a real pair.
    rates, cert = _screen_rates(np.arange(m, 2.0 * m), np.arange(0.0, m)), point_certificate(1.0, delta)
    value = cert.value(rates, cert.choose(rates))
    return float(value) if math.isfinite(value) else math.inf


def _smoothed_ratios(k0, n0, k1, n1):
    """|log ratio| of each threshold's event and of its complement, with counts + 1: a cheap pre-ranking."""
    ge = np.abs(np.log((k0 + 1.0) / (n0 + 1.0)) - np.log((k1 + 1.0) / (n1 + 1.0)))
    lt = np.abs(np.log((n0 - k0 + 1.0) / (n0 + 1.0)) - np.log((n1 - k1 + 1.0) / (n1 + 1.0)))
    return ge, lt


def _pooled_scores(name: str, y0: np.ndarray, y1: np.ndarray, n: int):
    """Scores of every screening release when the distinguisher may be fitted on all of them, else None.

    The threshold fits nothing, and the likelihood ratio over a few outcomes
    (at least ``POOL_PER_OUTCOME`` releases per outcome) orders its outcomes
    by ratios nearly as well on the releases that choose the event: then the
    projected score uses the whole sample instead of its second half, which
    halves the variance that decides the ranking.
    """
    from .auditor.distinguishers import make_distinguisher

    if name not in ("threshold", "likelihood-ratio") or np.ndim(y0) > 1:
        return None  # (rows with many distinct values: the likelihood ratio over them needs its split)
    try:
        scorer = make_distinguisher(name).fit(y0, y1)
        if name == "likelihood-ratio" and len(scorer.log_ratio) * POOL_PER_OUTCOME > 2 * n:
            return None
        return scorer.score(y0), scorer.score(y1)
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return None


def _projected_score(a: np.ndarray, b: np.ndarray, project_to: int, delta: float) -> float:
    """The bound the best well-populated event of scores ``a``, ``b`` would give at ``project_to``, less its noise.

    For each threshold whose four counts (event and complement, both sides) reach ``MIN_PROJECTED_COUNT``,
    each of the four inequalities of :meth:`~dpaudit.stats.selection.CalibrationRates.inequalities` at
    ``project_to`` releases per side, with one event's intervals (no share for the other candidates: they are
    ranked here, not certified), minus ``SCREEN_PENALTY`` standard errors of its log ratio at the screening's
    own size: without the penalty the best of a few hundred noisy events wins, whatever the pair.  Returns 0
    when nothing is well populated or nothing is positive.
    """
    from .stats.selection import calibration_counts, calibration_rates

    grid, k0, n0, k1, n1 = calibration_counts(a, b, **SCREEN_GRID)
    full = np.minimum.reduce([k0, k1, n0 - k0, n1 - k1]) >= MIN_PROJECTED_COUNT
    if not full.any():
        return 0.0
    grid, k0, k1 = grid[full], k0[full].astype(float), k1[full].astype(float)
    se_ge, se_lt = _log_ratio_errors(a, b, grid, k0, n0, k1, n1)
    # A cheap pre-ranking by the penalised point estimate, then intervals for the best few.
    p0, p1 = k0 / n0, k1 / n1
    with np.errstate(divide="ignore"):
        l_ge, l_lt = np.log(p0) - np.log(p1), np.log1p(-p0) - np.log1p(-p1)
    rough = np.maximum(np.abs(l_ge) - SCREEN_PENALTY * se_ge, np.abs(l_lt) - SCREEN_PENALTY * se_lt)
    pick = np.unique(np.argsort(-rough, kind="stable")[:PRERANKED])
    rates = calibration_rates((grid[pick], k0[pick], n0, k1[pick], n1), n_test0=project_to, n_test1=project_to,
                              confidence=SCREEN_CONFIDENCE, shared=False)
    ge, lt = se_ge[pick] * SCREEN_PENALTY, se_lt[pick] * SCREEN_PENALTY
    on_event, on_complement, reverse_complement, reverse_event = rates.inequalities(delta=delta)
    values = np.concatenate([on_event - ge, on_complement - lt, reverse_complement - lt, reverse_event - ge])
    best = float(np.max(values))
    return best if math.isfinite(best) and best > 0 else 0.0


def _log_ratio_errors(a, b, grid, k0, n0, k1, n1) -> tuple[np.ndarray, np.ndarray]:
    """Standard errors of the log ratios on the event (>= t) and on its complement (< t), by the delta method.

    Releases of a coupled screening come in pairs (row i of both sides drew the same randomness), and the
    covariance of the two sides' rates, estimated from the pairs, removes the noise the sides share; for
    independent sides it is about 0 and this is the usual formula.
    """
    from .stats.selection import counts_at_least

    p0, p1 = k0 / n0, k1 / n1
    se_ge2 = (1.0 - p0) / k0 + (1.0 - p1) / k1
    se_lt2 = p0 / (n0 - k0) + p1 / (n1 - k1)
    if n0 == n1:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        both_ge = counts_at_least(np.sort(np.minimum(a, b)), grid).astype(float)
        both_lt = n0 - counts_at_least(np.sort(np.maximum(a, b)), grid).astype(float)
        se_ge2 = se_ge2 - 2.0 * (n0 * both_ge / (k0 * k1) - 1.0) / n0
        se_lt2 = se_lt2 - 2.0 * (n0 * both_lt / ((n0 - k0) * (n1 - k1)) - 1.0) / n0
    return np.sqrt(np.maximum(se_ge2, 0.0)), np.sqrt(np.maximum(se_lt2, 0.0))
