"""Find the pair, then audit it: :func:`search`.

An audit certifies a lower bound on the privacy loss *between the two datasets
it is given*; the mechanism's epsilon is the worst case over all neighbouring
pairs.  Searching for that pair is what DP-Sniper, StatDP and DP-Auditorium do
before they test, and it is what this module does, in three steps:

1. **Screen.**  Candidate pairs inside the declared domain
   (:func:`dpaudit.pairs.candidate_pairs`: StatDP's and DP-Sniper's patterns,
   records at the ends of the range, random pairs) are each scored on a small
   sample with the cheap distinguishers of ``attack="auto"``: the fitted
   score is thresholded on a second half and the score of the pair is the
   Clopper-Pearson bound that threshold would give (a projected bound,
   penalised for small counts).  A local search then moves the best pairs
   towards larger scores (:func:`dpaudit.pairs.mutate_pair`, a (1+1)
   hill-climb with an adaptive step), and the leaders are screened again on
   larger samples.
2. **Keep the best** ``finalists`` pairs (default 1).
3. **Audit them on fresh samples**: each finalist gets one full
   :func:`dpaudit.audit` seeded from a stream the search never drew from
   (``SeedSequence(seed, spawn_key=(1, j))``; screening uses ``(0, stage, level)``, one stream
   shared by every pair of a stage: common random numbers).

Why the bound holds whatever the search did: the screening samples only choose
*which* pair is audited; given that choice, the final audit's samples are
independent of it, so its bound is valid for that pair at its confidence, and
the pair is neighbouring, so the pair's epsilon is at most the mechanism's.
With ``k`` finalists each is audited at confidence ``1 - (1 - C) / k`` and the
largest bound is reported: by the union bound all ``k`` hold together with
probability at least ``C`` (Bonferroni).

Cost: by default screening draws about as many releases as the final
audit (``screen_samples`` per side per candidate, ``max_candidates``
candidates), so search plus audit takes two to three times the audit alone
(``benchmarks/bench_search.py``).  ``budget`` bounds the screening time in
seconds; a search stopped by the budget depends on the machine's speed, its
bound stays valid.
"""

from __future__ import annotations

import functools
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._progress import progress_wanted
from ._rng import as_seed_sequence, seed_entropy
from .params import SEARCH_OPTIONS
from .pairs import Domain, candidate_pairs, compare_pair, mutate_pair

__all__ = ["search", "SearchReport", "screen_pair"]

#: Confidence of the projected bound that ranks candidates (a ranking statistic, not a reported bound).
SCREEN_CONFIDENCE = 0.8
#: Successive halving of the leaders: (how many, sample factor) per level, each on fresh samples.
#: Large budgets (final audit >= 100 screenings) take two levels, small ones one.
REFINE_LEVELS = {"large": ((8, 4), (2, 16)), "small": ((3, 4),)}
#: Distinguishers the quick look leaves out: they fit structure, and cost most of a 1,000-release screening.
STRUCTURE_ATTACKS = frozenset({"binned-logistic", "mixed", "pattern-cells"})
#: Seconds between progress lines on stderr.
PROGRESS_EVERY = 5.0
#: Fixed patterns that always reach the first level of successive halving (large budgets).
MAX_PATTERNS_REFINED = 12
#: ... when ranked within this many times the first level's leaders on the screening sample.
PATTERN_RANK_LIMIT = 2
#: Screening counts an event needs (event and complement, both sides) before it is projected.
MIN_PROJECTED_COUNT = 200
#: Standard errors (of the event's log ratio at the screening's size) taken off a projected score.
SCREEN_PENALTY = 1.0
#: Screening releases per outcome (both sides) for a likelihood ratio fitted on the whole sample.
POOL_PER_OUTCOME = 200
#: Releases per side of the quick first look at the patterns (sequential searches only).
QUICK_SAMPLES = 1000
#: The screening is sized (and its scores projected) on at most this many final releases per side: a
#: cap meant as "no limit" (``--max-samples 1e19``) would otherwise screen for ever.
SCREEN_BASIS_CAP = 10**8
#: Rows of the screening table kept in the report (best first).
TABLE_ROWS = 25


def _audit_function():
    from .auditor import audit

    return audit


def _default_final_samples(vectorised: bool) -> int:
    """Releases per side the final audit draws at most when ``max_samples`` is not given."""
    from . import auditor

    return int(auditor.DEFAULT_SAMPLES_VECTORISED if vectorised else auditor.DEFAULT_SAMPLES_PER_CALL)


# ----------------------------------------------------------------------------- screening
def screen_pair(target, dataset, neighbor, *, n_samples: int, delta: float = 0.0, project_to: int | None = None,
                rng=None, coupled: bool = False, cheap: bool = False) -> dict:
    """Score one pair on a small sample: the projected bound of the best cheap distinguisher.

    Each side draws ``n_samples`` releases; the first half fits the
    distinguishers that ``attack="auto"`` would try, the second half picks
    a threshold and gives Clopper-Pearson bounds on its rates, simultaneous
    over the candidate thresholds at confidence ``SCREEN_CONFIDENCE``; their
    bound is 0 when nothing separates, and small counts are penalised rather
    than trusted.  A leak too weak for such a bound on a small sample (a
    claim of 0.1) is still visible to the final audit's larger sample, so
    with ``project_to`` the score is the larger of that bound and the bound
    the same rates would give at ``project_to`` held-out releases per side,
    for events with at least ``MIN_PROJECTED_COUNT`` releases in each of their
    four counts (fewer would let noise pass for a leak).  The score ranks
    pairs; it certifies nothing.

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
        releases are still distributed as the mechanism's, but a mechanism
        whose randomness does not depend on the data then differs between
        the sides only where the data moves its output, and the difference of
        the two sides' rates is estimated far more precisely than from
        independent samples (for sparse vector at epsilon 0.1, scores vary
        4-5x less).  Screening only ranks pairs, so this costs nothing in
        validity: the final audit draws its two sides independently.
    cheap : bool
        Leave out the distinguishers that learn structure (``STRUCTURE_ATTACKS``:
        a logistic regression, patterns of special values), which cost most
        of a small screening; the quick look uses this, since a gross
        violation shows to the simple ones.

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
    from .auditor.distinguishers import auto_choices, make_distinguisher, output_kind
    from .targets import load_target

    n_samples = SEARCH_OPTIONS["screen_samples"].check(n_samples, "n_samples")
    tgt = load_target(target)
    seq = as_seed_sequence(rng)
    s0, s1 = seq.spawn(2)
    if coupled:
        s1 = np.random.SeedSequence(s0.entropy, spawn_key=s0.spawn_key)
    x0 = np.asarray(tgt.sample(np.asarray(dataset), n_samples, rng=s0))
    x1 = np.asarray(tgt.sample(np.asarray(neighbor), n_samples, rng=s1))
    half = n_samples // 2
    # Kind and repeats are decided on a probe: exact distinct-row counts of every release cost more than the rest.
    kind = output_kind(np.concatenate([x0[:_PROBE], x1[:_PROBE]]))
    if kind == "discrete" and x0.ndim > 1:
        # Discrete vectors: the outcome-set attack on one integer code per row (the same events,
        # without sorting rows), and the two vector attacks on the rows themselves.
        c0, c1 = _row_codes(x0, x1)
        plans = [("likelihood-ratio", c0, c1), ("mean-difference", x0, x1), ("naive-bayes", x0, x1)]
    else:
        names = auto_choices(kind, x0[:_PROBE])
        if kind != "scalar" and x0.ndim > 1:
            names = tuple(n for n in names if n != "threshold")
        if cheap:
            names = tuple(n for n in names if n not in STRUCTURE_ATTACKS) or names
        plans = [(name, x0, x1) for name in names]
    best = {"score": 0.0, "bound": 0.0, "attack": plans[0][0]}
    # With few distinct outcomes the likelihood ratio fitted on the whole sample gives the best events
    # of any distinguisher (every event is a set of outcomes, and its prefixes by ratio are the best
    # sets, Neyman-Pearson): then it alone gives the projected score, and the vector scores, whose
    # hundreds of thresholds add only chances for noise to win, give only their own-size bound.
    lr_tried = project_to is not None and project_to > half and plans[0][0] == "likelihood-ratio"
    lr_pooled = _pooled_scores("likelihood-ratio", plans[0][1], plans[0][2], n_samples) if lr_tried else None
    for i, (name, y0, y1) in enumerate(plans):
        try:
            scorer = make_distinguisher(name).fit(y0[:half], y1[:half])
            a, b = scorer.score(y0[half:]), scorer.score(y1[half:])
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            continue  # a distinguisher that cannot fit these releases simply scores nothing
        rates = _screen_rates(a, b)
        value = rates.value(rates.choose(delta=delta), delta=delta)
        value = float(value) if math.isfinite(value) and value > 0 else 0.0
        # Ranking: the bound certified at the screening's own size, or, where larger, the bound that
        # well-populated events would give at the final audit's size (weak leaks, where every bound
        # at the screening's size is 0 but the final audit has the precision to see them).
        extra = 0.0
        if lr_pooled is not None:
            if i == 0:
                extra = _projected_score(*lr_pooled, project_to, delta)
        elif project_to is not None and project_to > half:
            # Distinguishers that must be fitted on one half are projected from their scores on the
            # other, with the same penalty (the held-out half's releases are coupled pairs too).
            # (A likelihood ratio already tried on the whole sample, with too many outcomes, is not refitted.)
            pooled = None if (i == 0 and lr_tried) else _pooled_scores(name, y0, y1, n_samples)
            extra = _projected_score(*(pooled if pooled is not None else (a, b)), project_to, delta)
        score = max(value, extra)
        if score > best["score"]:
            best = {"score": score, "bound": value, "attack": name}
    return best


_PROBE = 2000


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
    """Clopper-Pearson rates of scores ``a`` (on D) and ``b`` at a few thresholds, at their own size.

    The interval bounds are most of the cost of screening a pair, so they are
    computed only for the 8 thresholds per orientation with the largest
    smoothed log ratio (counts + 1), a cheap pre-ranking; the final audit
    uses the full grid.
    """
    from .stats.selection import calibration_rates

    grid, k0, n0, k1, n1 = _grid_counts(a, b)
    ge, lt = _smoothed_ratios(k0, n0, k1, n1)
    top = np.unique(np.r_[np.argsort(-ge, kind="stable")[:8], np.argsort(-lt, kind="stable")[:8]])
    return calibration_rates((grid[top], k0[top], n0, k1[top], n1), n_test0=n0, n_test1=n1,
                             confidence=SCREEN_CONFIDENCE)


def _separated_bound(n_samples: int, delta: float) -> float:
    """The screening bound of a pair whose sides ``screen_pair`` separates completely at ``n_samples``.

    >>> 4 < _separated_bound(1000, 0.0) < 6
    True
    """
    m = n_samples - n_samples // 2  # the half that picks the threshold
    # Distinct scores, as a continuous distinguisher's: the same number of candidate thresholds share
    # the failure probability as for a real pair.
    rates = _screen_rates(np.arange(m, 2.0 * m), np.arange(0.0, m))
    value = rates.value(rates.choose(delta=delta), delta=delta)
    return float(value) if math.isfinite(value) else math.inf


def _smoothed_ratios(k0, n0, k1, n1):
    """|log ratio| of each threshold's event and of its complement, with counts + 1: a cheap pre-ranking."""
    ge = np.abs(np.log((k0 + 1.0) / (n0 + 1.0)) - np.log((k1 + 1.0) / (n1 + 1.0)))
    lt = np.abs(np.log((n0 - k0 + 1.0) / (n0 + 1.0)) - np.log((n1 - k1 + 1.0) / (n1 + 1.0)))
    return ge, lt


def _grid_counts(a: np.ndarray, b: np.ndarray):
    """(thresholds, counts >= each on D, n0, the same on D', n1) on the screening's coarse grid."""
    from .stats.selection import counts_at_least, threshold_candidates

    sa = np.sort(np.asarray(a, dtype=float))
    sb = np.sort(np.asarray(b, dtype=float))
    grid = threshold_candidates(np.sort(np.concatenate([sa, sb]), kind="stable"), n_grid=128, n_tail=32,
                                max_unique=1024)
    return grid, counts_at_least(sa, grid), len(sa), counts_at_least(sb, grid), len(sb)


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

    For each threshold whose four counts (event and complement, both sides)
    reach ``MIN_PROJECTED_COUNT``, and each of the four inequalities it
    offers (``P_D(E) / P_D'(E)``, the complement's, both orientations), the
    Clopper-Pearson bound its rates would give at ``project_to`` releases
    per side, minus ``SCREEN_PENALTY`` standard errors of its log ratio at
    the screening's own size.  The penalty is what makes the score rank
    pairs rather than luck: without it the best of a few hundred noisy
    events wins, and rare events (a hundred releases, a standard error of
    0.14) win most often, whatever the pair.  Returns 0 when nothing is
    well populated or nothing is positive.
    """
    from .stats.bounds import log_ratio_bound
    from .stats.clopper_pearson import cp_lower, cp_upper
    from .stats.selection import counts_at_least

    grid, k0, n0, k1, n1 = _grid_counts(a, b)
    full = np.minimum.reduce([k0, k1, n0 - k0, n1 - k1]) >= MIN_PROJECTED_COUNT
    if not full.any():
        return 0.0
    k0, k1 = k0[full].astype(float), k1[full].astype(float)
    p0, p1 = k0 / n0, k1 / n1
    # Standard errors of the log ratios on the event (>= t) and on its complement (< t), by the delta
    # method.  Releases of a coupled screening come in pairs (row i of both sides drew the same
    # randomness), and the covariance of the two sides' rates, estimated from the pairs, removes the
    # noise the sides share; for independent sides it is about 0 and this is the usual formula.
    se_ge2 = (1.0 - p0) / k0 + (1.0 - p1) / k1
    se_lt2 = p0 / (n0 - k0) + p1 / (n1 - k1)
    if n0 == n1:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        both_ge = counts_at_least(np.sort(np.minimum(a, b)), grid[full]).astype(float)
        both_lt = n0 - counts_at_least(np.sort(np.maximum(a, b)), grid[full]).astype(float)
        se_ge2 = se_ge2 - 2.0 * (n0 * both_ge / (k0 * k1) - 1.0) / n0
        se_lt2 = se_lt2 - 2.0 * (n0 * both_lt / ((n0 - k0) * (n1 - k1)) - 1.0) / n0
    se_ge, se_lt = np.sqrt(np.maximum(se_ge2, 0.0)), np.sqrt(np.maximum(se_lt2, 0.0))
    # A cheap pre-ranking by the penalised point estimate, then exact intervals for the best few.
    with np.errstate(divide="ignore"):
        l_ge, l_lt = np.log(p0) - np.log(p1), np.log1p(-p0) - np.log1p(-p1)
    rough = np.maximum(np.abs(l_ge) - SCREEN_PENALTY * se_ge, np.abs(l_lt) - SCREEN_PENALTY * se_lt)
    pick = np.unique(np.argsort(-rough, kind="stable")[:8])
    # The intervals of one event at the final audit's size, as the final audit computes them for the
    # event it chose (no share for the other candidates: they are ranked here, not certified).
    alpha = (1.0 - SCREEN_CONFIDENCE) / 4.0
    c0, c1 = k0[pick] * (project_to / n0), k1[pick] * (project_to / n1)
    tpr_lo, tpr_hi = cp_lower(c0, project_to, alpha), cp_upper(c0, project_to, alpha)
    fpr_lo, fpr_hi = cp_lower(c1, project_to, alpha), cp_upper(c1, project_to, alpha)
    ge, lt = se_ge[pick] * SCREEN_PENALTY, se_lt[pick] * SCREEN_PENALTY
    values = np.concatenate([
        log_ratio_bound(tpr_lo, fpr_hi, delta) - ge,              # P_D(E) / P_D'(E)
        log_ratio_bound(1.0 - fpr_hi, 1.0 - tpr_lo, delta) - lt,  # P_D'(E^c) / P_D(E^c)
        log_ratio_bound(1.0 - tpr_hi, 1.0 - fpr_lo, delta) - lt,  # P_D(E^c) / P_D'(E^c)
        log_ratio_bound(fpr_lo, tpr_hi, delta) - ge,              # P_D'(E) / P_D(E)
    ])
    best = float(np.max(values))
    return best if math.isfinite(best) and best > 0 else 0.0


# ----------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class SearchReport:
    """Result of :func:`search`: the final audit plus the pair it was run on.

    Attribute names are the JSON keys: every field of the final
    :class:`~dpaudit.AuditReport` (``epsilon_lower_bound``, ``verdict``, ...;
    read through to ``audit``) plus ``dataset``, ``neighbor`` and
    ``candidates_screened``.  ``confidence`` is the stated confidence of the
    whole procedure; with several finalists each audit ran at
    ``finalist_confidence``.  ``seed`` is the search's own (the one given, or the one drawn): it
    reproduces the whole search, the final audit's included; each finalist's audit seed, derived
    from it, is in ``finalists``.
    """

    audit: Any
    dataset: list
    neighbor: list
    candidates_screened: int
    confidence: float
    finalist_confidence: float
    domain: dict
    origin: str
    difference: str
    finalists: list
    screening: list
    screen_samples: int
    stopping: str
    search_seconds: float
    budget: float | None = None
    notes: list = field(default_factory=list)
    seed: int | None = None
    #: Screenings done, repeats of a pair included (``candidates_screened`` counts distinct pairs).
    screenings: int | None = None
    #: True when the search was interrupted (Ctrl-C) during its final audits: the finished audits and the
    #: interrupted one's finished rounds are reported (an audit's own ``interrupted`` says which).
    interrupted: bool = False
    #: What the screening drew: ``releases_per_side`` (summed over the black-box screenings) and
    #: ``grey_box_calls`` (target calls, one release each, of the grey-box screenings).
    screening_draws: dict = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not fields: the audit's attributes.
        if name.startswith("_") or name == "audit":
            raise AttributeError(name)
        return getattr(self.audit, name)

    @property
    def violation(self) -> bool:
        return self.audit.verdict == "violation"

    @property
    def verdict(self) -> str:
        """The final audit's verdict (declared, not only read through, so the :class:`~dpaudit.Report` check sees it)."""
        return self.audit.verdict

    @property
    def epsilon_lower_bound(self) -> float:
        return self.audit.epsilon_lower_bound

    def to_dict(self) -> dict:
        out = dict(self.audit.to_dict())
        out["confidence"] = self.confidence
        if self.seed is not None:
            out["seed"] = self.seed
        out["notes"] = list(out.get("notes") or []) + list(self.notes)
        out["dataset"] = list(self.dataset)
        out["neighbor"] = list(self.neighbor)
        out["candidates_screened"] = self.candidates_screened
        out["interrupted"] = bool(self.interrupted or out.get("interrupted"))
        out["search"] = {
            "domain": self.domain,
            "origin": self.origin,
            "difference": self.difference,
            "finalists": self.finalists,
            "finalist_confidence": self.finalist_confidence,
            "screen_samples": self.screen_samples,
            "screenings": self.screenings,
            "stopping": self.stopping,
            "budget": self.budget,
            "search_seconds": self.search_seconds,
            "screening": self.screening,
            "screening_draws": self.screening_draws,
        }
        return out

    def __repr__(self) -> str:
        return (f"SearchReport(verdict={str(self.audit.verdict)!r}, epsilon_lower_bound="
                f"{self.audit.epsilon_lower_bound:.4g}, dataset={self.dataset}, neighbor={self.neighbor}, "
                f"candidates_screened={self.candidates_screened}, confidence={self.confidence!r})")

    def summary(self) -> str:
        """Lines for people: the search, the pair, then the audit's own summary."""
        k = len(self.finalists)
        lines = [
            f"search      {self.candidates_screened} distinct candidate pairs screened{self._repeats_text()} in "
            f"{self.search_seconds:.1f} s "
            f"({self.domain['relation']}, {self.domain['size']} records in [{self.domain['low']:g}, "
            f"{self.domain['high']:g}]{', integers' if self.domain['integer'] else ''}; {_STOPPING.get(self.stopping, self.stopping)})",
            f"pair        {_short(self.dataset)} vs {_short(self.neighbor)} ({self.origin}; {self.difference})",
            f"finalists   {k} audited on fresh samples" + (
                f", each at confidence {self.finalist_confidence:.4g} (Bonferroni)"
                if self.finalist_confidence != self.confidence else ""),
        ]
        text = self.audit.summary() if hasattr(self.audit, "summary") else str(self.audit)
        return "\n".join(lines + [text] + [f"note        {n}" for n in self.notes])

    def _repeats_text(self) -> str:
        """`` (N screenings)`` when screenings outnumber the distinct pairs, else nothing."""
        if self.screenings is None or self.screenings == self.candidates_screened:
            return ""
        return f" ({self.screenings} screenings: a pair is screened again on larger samples, or revisited)"

    def __str__(self) -> str:
        return self.summary()


def _pairs_text(n: int) -> str:
    return f"{n} distinct pair{'s' * (n != 1)}"


#: Seed stream of each screening stage (with the level of successive halving): ``(0, stream, level)``.
_STREAMS = {"quick": 0, "screen": 1, "local": 1, "refine": 2}

_STOPPING = {"candidates": "every planned candidate screened", "budget": "stopped by the time budget",
             "exceeded": "stopped early: a pattern already exceeded the claim"}


def _short(values: list, limit: int = 12) -> str:
    shown = ", ".join(f"{v:g}" for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"


# ----------------------------------------------------------------------------- the search
class _Screener:
    """Screens pairs in order, each on its own seed stream, until the time budget runs out."""

    def __init__(self, target, entropy, n_samples, delta, budget, progress, project_to=None, grey_box=False):
        self.target = target
        #: Grey-box screening (:mod:`dpaudit.greybox.screen`): pairs a few traces settle exactly are ranked by
        #: their exact epsilon; the others are screened black-box.  ``calls`` counts its target calls.
        self.grey_box, self.grey_calls = grey_box, 0
        self.project_to = project_to
        self.entropy = entropy
        self.n_samples = n_samples
        self.delta = delta
        self.budget = budget
        self.progress = progress
        self.start = time.perf_counter()
        self.last_report = self.start
        self.rows: list[dict] = []
        self.pairs: set = set()  # distinct pairs among the rows (a pair may be screened many times)
        self.out_of_time = False

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def time_left(self) -> bool:
        if self.budget is not None and self.rows and self.elapsed() >= self.budget:
            self.out_of_time = True
        return not self.out_of_time

    def __call__(self, origin, a, b, *, factor: int = 1, n_samples: int | None = None, stage: str = "screen",
                 level: int = 0) -> dict:
        # Common random numbers: every pair of one stage (and level) is screened on the same seed
        # stream, so that two pairs are compared on the same noise and their scores differ by what the
        # pairs do, not by luck (for a mechanism that draws its noise independently of the data the
        # releases of two pairs then differ only where the data moves them).  Each stage and level has
        # its own stream, so successive halving still ranks on fresh releases.  Within a pair the two
        # sides are coupled (one stream): a weak leak is then ranked by what the pair does, where
        # independent sides leave the score's noise several times the gap between pairs.
        seq = np.random.SeedSequence(self.entropy, spawn_key=(0, _STREAMS[stage], level))
        n = n_samples if n_samples is not None else self.n_samples * factor
        res = self._grey(a, b, seq) if self.grey_box else None
        if res is None:
            res = screen_pair(self.target, a, b, n_samples=n, delta=self.delta, project_to=self.project_to,
                              rng=seq, coupled=True, cheap=stage == "quick")
        else:
            n = 0  # no releases drawn: the traces' calls are counted in grey_calls
        row = {"origin": origin, "stage": stage, "dataset": a, "neighbor": b, "score": res["score"],
               "bound": res["bound"],
               "attack": res["attack"], "samples": n}
        self.rows.append(row)
        self.pairs.add(_pair_key(np.asarray(a), np.asarray(b)))
        self._maybe_report()
        return row

    def _grey(self, a, b, seq) -> dict | None:
        from .greybox.screen import grey_screen

        res = grey_screen(self.target, a, b, delta=self.delta, seed=np.random.SeedSequence(seq.entropy,
                                                                                           spawn_key=(46,)))
        self.grey_calls += res["calls"]
        return res if res["score"] is not None else None

    def count_text(self) -> str:
        """The screenings and the distinct pairs they covered, both named: a pair is screened again on larger
        samples, and the local search can revisit one (on a small integer domain, hundreds of screenings may
        cover a few pairs)."""
        return f"{len(self.rows)} screening{'s' * (len(self.rows) != 1)} of {_pairs_text(len(self.pairs))}"

    def _maybe_report(self) -> None:
        now = time.perf_counter()
        if self.progress and now - self.last_report >= PROGRESS_EVERY:
            self.last_report = now
            best = max(self.rows, key=lambda r: r["score"])
            print(f"search: {self.count_text()} in {now - self.start:.0f} s; best projected "
                  f"epsilon {best['score']:.3f} ({best['origin']})", file=sys.stderr, flush=True)


@SEARCH_OPTIONS.validates
def search(
    target,
    *,
    epsilon=None,
    delta=0.0,
    claim=None,
    size,
    low,
    high,
    integer=False,
    relation="replace-one",
    budget=None,
    samples=None,
    max_samples=None,
    confidence=0.95,
    seed=None,
    attack="auto",
    ideal=False,
    n_jobs=1,
    backend="loky",
    scheduler=None,
    estimator="clopper-pearson",
    time_budget=None,
    finalists=1,
    screen_samples=None,
    max_candidates=None,
    timeout=None,
    progress=None,
    keep_drawing=False,
    grey_box=False,
    traces=1000,
    sensitivity=None,
    stopping="planned",
):
    """Search the declared input domain for the pair that leaks most, then audit it on fresh samples.

    Parameters
    ----------
    target : str or callable
        As for :func:`dpaudit.audit`; it receives 1-D datasets of the domain.
    epsilon, delta : float
        The claimed budget (omit them when ``claim`` is given).
    claim : str, Claim or dp_accounting DpEvent, optional
        A claimed curve, as for :func:`dpaudit.audit`: the final audit tests
        the whole curve at ``confidence``; the screening ranks pairs at one
        point of it (the claim's reference point, delta 1e-5 for a computed curve).
    size : int
        Records per dataset (under ``add-remove`` the smaller has ``size - 1``).
    low, high : float
        Every record lies in ``[low, high]``.
    integer : bool
        Records are integers.
    relation : {"replace-one", "add-remove", "linf"}
        Which pairs are neighbours: one record changed; one record added or
        removed; every coordinate moved by at most 1 (query answers of
        sensitivity 1, as in DP-Sniper and StatDP).
    budget : float, optional
        Seconds the screening may take (default: no time limit; the default
        sizes keep it near the final audit's cost).
    samples : int, optional
        A fixed-size final audit of exactly ``samples`` releases per side
        (then the screening always runs in full, for the strongest pair).
    max_samples : int, optional
        Budget of the sequential final audit in releases per side (default:
        the audit's).  A sequential search first screens the fixed patterns
        on 1,000 releases per side and, when one already exceeds the claim,
        audits the best of them at once.
    confidence : float
        Probability that the reported bound is below the mechanism's true
        epsilon, whatever the search did.
    seed : int, optional
        Seed of everything (screening and final audits use disjoint streams).
    attack : str
        Distinguisher of the final audit (screening always uses the cheap ones).
    ideal : bool
        Audit the mechanism as mathematics (no floating-point attacks in the final audit).
    n_jobs : int
        Workers of the final audit; the result does not depend on it.
    backend, scheduler
        Where the final audit's chunks are drawn and counted, as for
        :func:`dpaudit.audit` (the screening runs in this process).
    estimator : {"clopper-pearson", "gdp"}
        The final audit's certificate, as for :func:`dpaudit.audit`.
    time_budget : float, optional
        Time limit of a sequential final audit in seconds (``budget`` limits the screening).
    finalists : int
        Pairs audited at the end, each at confidence ``1 - (1 - confidence) / finalists``.
    screen_samples : int, optional
        Releases per side per screened pair (default: 1% of the final audit's,
        between 1,000 and 20,000).
    max_candidates : int, optional
        Pairs screened at most (default: as many as keep the screening's draws
        near those of the final audit).
    timeout : float, optional
        Seconds allowed per target call.
    progress : bool, optional
        Print a line on stderr every few seconds (default: when stderr is a terminal).
    keep_drawing : bool
        The final audit draws on to its budget after certifying a violation, as
        :func:`dpaudit.audit`'s ``keep_drawing``.
    grey_box, traces, sensitivity
        The final audits are grey-box audits too, as :func:`dpaudit.audit`'s,
        and the screening ranks a pair that a few traces settle exactly by its
        exact epsilon (:mod:`dpaudit.greybox.screen`), screening the others
        black-box.
    stopping : {"planned", "anytime"}
        How the final audit may stop, as :func:`dpaudit.audit`'s ``stopping``.

    Returns
    -------
    SearchReport

    Raises
    ------
    KeyboardInterrupt
        Passed on as raised, as by :func:`dpaudit.audit`.  Its ``audit_report``
        attribute is a :class:`SearchReport` (``interrupted=True``) of what the
        final audits certified (the finished ones and the sequential rounds the
        interrupted one finished); None when nothing was certified: interrupted
        while screening (the screening only chooses the pair), or before the
        final audit's first round (or a fixed-size one) finished.  Its
        ``search_progress`` dict says where: ``stage`` ("screening" or "final
        audit"), ``candidates_screened``, ``screenings``, ``max_candidates``,
        and ``dataset``/``neighbor``, the first finalist (None while screening).

    Examples
    --------
    >>> import numpy as np
    >>> def unclipped_sum(dataset, size=None, rng=None):      # forgets to clip to [0, 1]
    ...     return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)
    >>> r = search(unclipped_sum, epsilon=1.0, size=3, low=0, high=10, max_samples=20_000, seed=1)
    >>> r.verdict, r.epsilon_lower_bound > 3
    ('violation', True)
    >>> from dpaudit.pairs import compare_pair     # one record moved far across the range
    >>> d = compare_pair(r.dataset, r.neighbor); len(d.changed), d.linf > 5
    (1, True)
    """
    final_stopping = stopping
    from .claims import as_claim

    claim_obj = as_claim(claim, epsilon=epsilon, delta=delta)
    final_claim = {"claim": claim} if claim is not None else {"epsilon": epsilon, "delta": delta}
    # The screening ranks pairs at one point of the claim (a point claim's own).
    epsilon, delta = claim_obj.finite_point
    domain = Domain(size, low, high, integer=integer, relation=relation)
    from .stats.estimators import make_estimator

    make_estimator(estimator).check(delta=delta, claim=claim_obj)  # before the screening, not after it
    from .targets import load_target

    tgt = load_target(target)
    n_final = samples or max_samples or _default_final_samples(bool(tgt.vectorised))
    n_final = min(n_final, SCREEN_BASIS_CAP)  # what the screening plans for; the final audit keeps its own size
    screen_samples, levels, max_candidates = _screening_sizes(n_final, screen_samples, max_candidates)
    progress = progress_wanted(progress)

    entropy = seed_entropy(as_seed_sequence(seed))
    cand_rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(2,)))
    # Scores are projected to the final audit's held-out size (half its releases per side).
    screen = _Screener(tgt, entropy, screen_samples, delta, budget, progress, project_to=n_final // 2,
                       grey_box=bool(grey_box) and tgt.accepts_rng)
    try:
        chosen, early = _screening(screen, domain, cand_rng, max_candidates=max_candidates, levels=levels,
                                   finalists=finalists, quick=samples is None and screen_samples > QUICK_SAMPLES,
                                   epsilon=epsilon, delta=delta)
    except KeyboardInterrupt as exc:
        _attach_progress(exc, "screening", screen, max_candidates)
        raise
    stopping = "budget" if screen.out_of_time else ("exceeded" if early else "candidates")
    search_seconds = screen.elapsed()

    # 4. Final audits on fresh samples, Bonferroni over the finalists.
    final_conf = 1.0 - (1.0 - confidence) / len(chosen)
    kwargs = dict(**final_claim, confidence=final_conf, attack=attack, ideal=ideal, estimator=estimator,
                  n_jobs=n_jobs, backend=backend, scheduler=scheduler, timeout=timeout,
                  **({"grey_box": True, "traces": traces, "sensitivity": sensitivity} if grey_box else {}),
                  **_final_size(samples, max_samples, time_budget, stopping=final_stopping,
                                expect_violation=not early and chosen and chosen[0]["score"] > epsilon),
                  **({"keep_drawing": True} if keep_drawing else {}))
    report = functools.partial(_search_report, tgt, screen, domain=domain, confidence=confidence,
                               final_conf=final_conf, stopping=stopping, search_seconds=search_seconds, budget=budget,
                               seed=entropy)
    reports: list = []
    try:
        _final_audits(tgt, chosen, entropy, kwargs, reports)
    except KeyboardInterrupt as exc:
        # Not swallowed, as audit's: the interrupt goes on with the report of what the final audits certified.
        _attach_progress(exc, "final audit", screen, max_candidates, chosen[0])
        exc.audit_report = report(chosen[:len(reports)], reports, planned=len(chosen)) if reports else None
        raise
    return report(chosen, reports)


def _screening(screen: _Screener, domain, cand_rng, *, max_candidates: int, levels, finalists: int, quick: bool,
               epsilon: float, delta: float) -> tuple[list[dict], list[dict]]:
    """Steps 0-3: (the finalists, best first; the quick look's rows when they already exceed the claim, else [])."""
    fixed = candidate_pairs(domain, rng=cand_rng)
    n_fixed = min(len(fixed), max_candidates)
    early = _quick_look(screen, fixed[:n_fixed], epsilon=epsilon, delta=delta) if quick else []
    if early:
        return _distinct(early)[:finalists], early
    # 1. Patterns and random pairs: patterns first, random ones fill a quarter of what is left.
    n_random = max(0, (max_candidates - n_fixed) // 4)
    for origin, a, b in fixed[:n_fixed] + candidate_pairs(domain, n_random=n_random, rng=cand_rng)[len(fixed):]:
        if not screen.time_left():
            break
        screen(origin, a, b)
    _local_search(screen, domain, cand_rng, max_candidates)
    return _halving(screen, fixed, levels, finalists), early


def _screening_sizes(n_final: int, screen_samples, max_candidates) -> tuple[int, tuple, int]:
    """(releases per screened pair, halving levels, pairs screened at most): the screening draws about as
    many releases as the final audit."""
    if screen_samples is None:
        screen_samples = min(max(n_final // 100, 1000), 20_000)
    levels = REFINE_LEVELS["large" if n_final // screen_samples >= 100 else "small"]
    if max_candidates is None:
        max_candidates = max(20, n_final // screen_samples - sum(k * f for k, f in levels))
    return screen_samples, levels, max_candidates


def _quick_look(screen: _Screener, patterns, *, epsilon, delta) -> list[dict]:
    """0. The patterns on a few releases each: rows that already exceed the claim, best first (else none).

    A sequential audit certifies a gross violation in a few thousand releases, and a search that
    then spent its full budget would cost many audits.  A pattern at the bound of completely
    separated sides is about as strong as this sample can show: the look stops there.
    """
    ceiling = _separated_bound(QUICK_SAMPLES, delta)
    for origin, a, b in patterns:
        if not screen.time_left():
            break
        row = screen(origin, a, b, n_samples=QUICK_SAMPLES, stage="quick")
        if row["bound"] > epsilon and row["bound"] >= ceiling * (1.0 - 1e-9):
            break
    early = sorted(screen.rows, key=lambda r: -r["bound"])
    return early if early and early[0]["bound"] > epsilon else []


def _local_search(screen: _Screener, domain, cand_rng, max_candidates: int) -> None:
    """2. From the three best: a (1+1) hill-climb per start, step x1.5 on success, x0.7 on failure."""
    starts = sorted((r for r in screen.rows if r["stage"] != "quick"), key=lambda r: -r["score"])[:3]
    incumbents = [dict(r, scale=0.25) for r in starts]
    n_local = max_candidates - sum(r["stage"] != "quick" for r in screen.rows)
    for step in range(max(0, n_local)):
        if not incumbents or not screen.time_left():
            break
        inc = incumbents[step % len(incumbents)]
        a, b = mutate_pair(domain, inc["dataset"], inc["neighbor"], rng=cand_rng, scale=inc["scale"])
        if len(a) == len(b) and np.array_equal(a, b):
            continue  # a move that made the datasets equal shows nothing
        origin = inc["origin"] if inc["origin"].startswith("local") else f"local from {inc['origin']}"
        row = screen(origin, a, b, stage="local")
        if row["score"] > inc["score"]:
            inc.update(dataset=a, neighbor=b, score=row["score"], scale=min(inc["scale"] * 1.5, 1.0), origin=origin)
        else:
            inc["scale"] = max(inc["scale"] * 0.7, 0.01)


def _halving(screen: _Screener, fixed, levels, finalists: int) -> list[dict]:
    """3. The leaders again on larger fresh samples (successive halving): the finalists, best first.

    Each level screens the best of the previous one again and ranks them by that alone, so a pair
    lucky on a small sample does not win by luck.  Quick-look scores (10x smaller samples, inflated
    by the max over thresholds) do not rank.  With a large budget, the fixed patterns ranked within
    PATTERN_RANK_LIMIT times the leaders also go to the first level: patterns are the known worst
    cases of whole families (StatDP, DP-Sniper), and a weak leak can rank them a few places too low.
    """
    full = [r for r in screen.rows if r["stage"] != "quick"] or screen.rows
    pool = _distinct(sorted(full, key=lambda r: -r["score"]))
    pattern_keys = {_pair_key(a, b) for _, a, b in fixed[:MAX_PATTERNS_REFINED]}
    for level, (n_keep, factor) in enumerate(levels):
        leaders = pool[:max(n_keep, finalists)]
        if level == 0 and len(levels) > 1:
            chosen_keys = {_row_key(r) for r in leaders}
            near = pool[:PATTERN_RANK_LIMIT * len(leaders)]
            leaders = leaders + [r for r in near if _row_key(r) in pattern_keys - chosen_keys]
        again_rows = []
        for r in leaders:
            if not screen.time_left():
                break
            again = screen(r["origin"], r["dataset"], r["neighbor"], factor=factor, stage="refine", level=level)
            again_rows.append(dict(r, score=again["score"], first_score=r["score"]))
        if len(again_rows) < len(leaders):
            break  # out of time within a level: keep the previous level's ranking
        pool = sorted(again_rows, key=lambda r: -r["score"])
    return pool[:finalists]


def _final_size(samples, max_samples, time_budget, *, expect_violation: bool, stopping="planned") -> dict[str, Any]:
    """The final audit's size keywords: ``samples`` fixes it, else it is sequential, as ``dpaudit audit``'s.

    A sequential audit may stop as "converged" when its first rounds see nothing, and a leak that
    shows in one release in a hundred can hide there.  When the screening expects the chosen pair to
    exceed the claim, the final audit stops only on a violation or its budget (``max_samples``,
    ``time_budget``).  It used to draw ``n_final`` at once instead, which turned ``--max-samples``
    into a fixed size and ignored ``--time-budget`` (an outside check's ``--max-samples 1e19`` never
    ended; the screening is sized on at most :data:`SCREEN_BASIS_CAP`).  The choice depends on
    screening samples only, so the final samples stay fresh.
    """
    if samples is not None:
        return {"samples": samples}
    anytime = {"stopping": "anytime"} if stopping == "anytime" else {}  # the final audit's, as dpaudit audit's
    return {"max_samples": max_samples, "time_budget": time_budget, "stop_when_converged": not expect_violation,
            **anytime}


def _final_audits(tgt, chosen: list[dict], entropy: int, kwargs: dict, reports: list) -> None:
    """4. Each finalist audited on its own fresh seed stream, its report appended to ``reports``.

    Interrupted, ``reports`` holds the finished audits and then the interrupted one's finished rounds
    (when it has any): each finalist's bound holds at the Bonferroni confidence, so any of them do together.
    """
    audit = _audit_function()
    for j, r in enumerate(chosen):
        final_seed = int(np.random.SeedSequence(entropy, spawn_key=(1, j)).generate_state(1, np.uint64)[0]) >> 1
        try:
            reports.append(audit(tgt, r["dataset"], r["neighbor"], seed=final_seed, **kwargs))
        except KeyboardInterrupt as exc:
            if getattr(exc, "audit_report", None) is not None:
                reports.append(exc.audit_report)
            raise


def _attach_progress(exc: KeyboardInterrupt, stage: str, screen: "_Screener", max_candidates: int,
                     pair: dict | None = None) -> None:
    """Say on an interrupt where the search was stopped: ``exc.search_progress``, and ``exc.audit_report`` None
    unless a final audit certified something (set by the caller after this).

    The command line's one line of an interrupt that certified nothing names what was done with it.
    """
    exc.audit_report = None
    exc.search_progress = {
        "stage": stage, "candidates_screened": len(screen.pairs), "screenings": len(screen.rows),
        "max_candidates": max_candidates,
        "dataset": None if pair is None else np.asarray(pair["dataset"]).tolist(),
        "neighbor": None if pair is None else np.asarray(pair["neighbor"]).tolist()}


def _search_report(tgt, screen: _Screener, chosen, reports, *, domain, confidence, final_conf, stopping,
                   search_seconds, budget, seed, planned: int | None = None) -> SearchReport:
    """The report of the final audits in ``reports`` (of ``chosen``, in order).

    ``planned``: the search was interrupted during its final audits, of which ``planned`` were to run;
    ``reports`` are the finished ones and the interrupted one's finished rounds (the last may be partial).
    """
    # The finalist whose audit came closest to (or went furthest past) the claim; for a point claim: the largest bound.
    best_j = max(range(len(reports)), key=lambda j: (reports[j].violation, reports[j].epsilon_lower_bound
                                                     - reports[j].claimed_epsilon, reports[j].epsilon_lower_bound,
                                                     -j))
    winner, best_report = chosen[best_j], reports[best_j]
    final_rows = [{"dataset": r["dataset"].tolist(), "neighbor": r["neighbor"].tolist(), "origin": r["origin"],
                   "screen_score": r["score"], "epsilon_lower_bound": rep.epsilon_lower_bound, "seed": rep.seed}
                  for r, rep in zip(chosen, reports)]
    table = [{"origin": r["origin"], "stage": r["stage"], "dataset": r["dataset"].tolist(),
              "neighbor": r["neighbor"].tolist(), "score": r["score"], "bound": r["bound"], "attack": r["attack"],
              "samples": r["samples"]}
             for r in sorted(screen.rows, key=lambda r: -r["score"])[:TABLE_ROWS]]
    notes = []
    if stopping == "budget":
        notes.append(f"the screening budget of {budget:g} s ran out after {screen.count_text()}; "
                     "a longer budget may find a stronger pair")
    if not tgt.seeded:
        notes.append("the target takes no rng: the search itself is not reproducible")
    interrupted = planned is not None
    if interrupted and planned > 1:
        notes.append(f"interrupted: the search was stopped by hand during its final audits; {len(reports)} of the "
                     f"{planned} finalists are reported (each at confidence {final_conf:.4g}, so together at "
                     f"{confidence:g}, whatever was not audited)")
    return SearchReport(
        audit=best_report, dataset=winner["dataset"].tolist(), neighbor=winner["neighbor"].tolist(),
        candidates_screened=len(_distinct(screen.rows)), confidence=confidence, finalist_confidence=final_conf,
        domain=domain.to_dict(), origin=winner["origin"],
        difference=compare_pair(winner["dataset"], winner["neighbor"]).describe(), finalists=final_rows,
        screening=table, screen_samples=screen.n_samples, stopping=stopping, screenings=len(screen.rows),
        search_seconds=round(search_seconds, 4), budget=budget, notes=notes, seed=seed, interrupted=interrupted,
        screening_draws={"releases_per_side": sum(r["samples"] for r in screen.rows),
                         "grey_box_calls": screen.grey_calls})


def _distinct(rows: list[dict]) -> list[dict]:
    """Rows with distinct pairs, order kept (a pair screened twice counts once: its first, better score)."""
    seen, out = set(), []
    for r in rows:
        key = _row_key(r)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _pair_key(dataset: np.ndarray, neighbor: np.ndarray) -> tuple[bytes, bytes]:
    """A hashable key equal exactly when two pairs are the same."""
    return dataset.tobytes(), neighbor.tobytes()


def _row_key(row: dict) -> tuple[bytes, bytes]:
    return _pair_key(row["dataset"], row["neighbor"])
