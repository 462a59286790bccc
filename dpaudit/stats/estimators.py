"""Estimators: held-out counts of chosen events in, certified bounds out.

The auditor works in two steps that never share data.  On calibration data
it chooses *events* (a threshold on a distinguisher's score and an
orientation, :class:`~dpaudit.stats.selection.ThresholdEvent`); on held-out
data it only counts how often each event occurs on D and on D'.  The counts
are a :class:`HeldOutCounts`, which can be filled chunk by chunk (streaming,
bounded memory) and added up across chunks or rounds.  An
:class:`Estimator` then turns the count of its event into a bound.

One implementation of each estimator lives here; a new estimator is a new
subclass with one method (:meth:`Estimator.bound`), registered in
:data:`ESTIMATORS`; the audit asks it which certified result it reports
(:meth:`Estimator.headline`), never which estimator it is.  The
scores-in helpers of :mod:`~dpaudit.stats.profile` and
:mod:`~dpaudit.stats.selection` use the same code.

Examples
--------
>>> import numpy as np
>>> from dpaudit.stats.selection import ThresholdEvent
>>> rng = np.random.default_rng(0)
>>> event = ThresholdEvent(1.0)
>>> counts = HeldOutCounts.empty([event.threshold])
>>> for _ in range(4):  # four chunks of 50,000 releases per side
...     counts = counts + HeldOutCounts.from_scores(counts.thresholds, 1 + rng.laplace(size=50_000),
...                                                 rng.laplace(size=50_000))
>>> b = ClopperPearsonEstimator().bound(counts, event, delta=0.0, confidence=0.95)
>>> counts.n0, 0.9 < b.epsilon_lower_bound < 1.0
(200000, True)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..exceptions import ParameterValueError
from .bounds import EpsilonBound, epsilon_lower_bound
from .clopper_pearson import cp_upper
from .counting import count_at_least
from .gdp import gaussian_epsilon, mu_from_rates
from .selection import ThresholdEvent

__all__ = [
    "HeldOutCounts",
    "count_at_least",
    "Estimator",
    "ClopperPearsonEstimator",
    "GaussianDPEstimator",
    "GDPResult",
    "ESTIMATORS",
    "make_estimator",
    "profile_from_counts",
    "roc_thresholds",
    "roc_from_counts",
]


@dataclass(frozen=True)
class HeldOutCounts:
    """Held-out counts "score >= t" on D (``ge0``) and D' (``ge1``) for each threshold t.

    ``thresholds`` are sorted and unique; ``n0``, ``n1`` are the numbers of
    held-out releases per side.  Counts add up (``a + b``) when the two were
    counted on disjoint samples with the same thresholds.
    """

    thresholds: np.ndarray
    ge0: np.ndarray
    ge1: np.ndarray
    n0: int
    n1: int

    @classmethod
    def empty(cls, thresholds) -> "HeldOutCounts":
        t = np.unique(np.asarray(thresholds, dtype=float))
        z = np.zeros(len(t), dtype=np.int64)
        return cls(t, z, z.copy(), 0, 0)

    @classmethod
    def from_scores(cls, thresholds, scores0, scores1) -> "HeldOutCounts":
        t = np.unique(np.asarray(thresholds, dtype=float))
        return cls(t, count_at_least(scores0, t), count_at_least(scores1, t), int(np.size(scores0)),
                   int(np.size(scores1)))

    def __add__(self, other: "HeldOutCounts") -> "HeldOutCounts":
        if not np.array_equal(self.thresholds, other.thresholds):
            raise ParameterValueError("held-out counts can only be added for the same thresholds")
        return HeldOutCounts(self.thresholds, self.ge0 + other.ge0, self.ge1 + other.ge1,
                             self.n0 + other.n0, self.n1 + other.n1)

    def hits(self, event: ThresholdEvent) -> tuple[int, int]:
        """(hits on D, hits on D') of ``event``, which must be one of the counted thresholds."""
        i = int(np.searchsorted(self.thresholds, event.threshold))
        if i >= len(self.thresholds) or self.thresholds[i] != event.threshold:
            raise ParameterValueError(f"the event {event.describe()} was not counted")
        a, b = int(self.ge0[i]), int(self.ge1[i])
        return (self.n0 - a, self.n1 - b) if event.reverse else (a, b)


class Estimator(ABC):
    """Turns the held-out count of one event into a certified bound.

    Subclasses say how the counts become a bound (:meth:`bound`).  The
    bound's ``epsilon_lower_bound`` attribute is what the audit reports.
    """

    name: str = ""
    #: One line for ``dpaudit list``.
    description: str = ""
    #: What a report must say when this estimator's epsilon holds only under an assumption (else None).
    caveat: str | None = None
    #: Whether the headline holds at one delta only (it cannot be tested against a whole claimed curve).
    point_only: bool = False

    def check(self, *, delta: float, claim=None) -> None:
        """Raise when the estimator cannot serve this claim (default: any claim but a curve for a point-only one).

        ``claim`` is a :class:`~dpaudit.claims.Claim` when the entry point was given one.
        """
        if self.point_only and claim is not None and claim.is_curve:
            raise ParameterValueError(f"estimator {self.name!r} certifies at one delta; it takes a point claim, "
                                      f"got claim {claim.spec!r}")

    def headline(self, results: dict) -> float:
        """The epsilon an audit reports: this estimator's own result among ``results`` (by estimator name).

        An audit certifies with several estimators at once (the bound, the
        Gaussian mu, ...) and reports the one the user chose; asking the
        estimator keeps a new one from silently reporting another's bound.

        >>> from dpaudit.stats.bounds import epsilon_lower_bound
        >>> cp = epsilon_lower_bound(900, 100, 100, 900, confidence=0.95)
        >>> ClopperPearsonEstimator().headline({"clopper-pearson": cp}) == cp.epsilon_lower_bound
        True
        """
        try:
            result = results[self.name]
        except KeyError:
            raise ParameterValueError(f"estimator {self.name!r}: the audit certified no result for it (it "
                                      f"certified {sorted(results)})") from None
        return float(max(0.0, result.epsilon_lower_bound))

    def headline_ceiling(self, results: dict) -> float:
        """The most the held-out sizes could certify with this estimator (its own result's ``ceiling``).

        The report's ``ceiling`` comes from the estimator that gives its bound, so the bound never exceeds it.
        """
        return float(max(0.0, results[self.name].ceiling))

    @abstractmethod
    def bound(self, counts: HeldOutCounts, event: ThresholdEvent, *, delta: float, confidence: float):
        """The certified bound from the held-out counts of ``event``."""


class ClopperPearsonEstimator(Estimator):
    """Exact one-sided intervals on the event's TPR and FPR; valid for any mechanism."""

    name = "clopper-pearson"
    description = "exact one-sided intervals on TPR/FPR of a held-out event; valid for any mechanism"

    def bound(self, counts, event, *, delta, confidence, n_comparisons: int = 1) -> EpsilonBound:
        tp, fp = counts.hits(event)
        return epsilon_lower_bound(tp, counts.n0 - tp, fp, counts.n1 - fp, delta=delta, confidence=confidence,
                                   n_comparisons=n_comparisons)


@dataclass(frozen=True)
class GDPResult:
    """A certified Gaussian-DP mu and the epsilon(delta) of a Gaussian mechanism with that mu."""

    mu_lower_bound: float
    epsilon_lower_bound: float
    fpr_upper: float
    fnr_upper: float
    confidence: float
    #: The most these held-out sizes could certify with this estimator: the epsilon of a perfect attack.
    ceiling: float = 0.0


class GaussianDPEstimator(Estimator):
    """A certified mu (Nasr et al. 2023), reported as the epsilon(delta) of a Gaussian mechanism.

    The mu is valid for any mechanism; its epsilon(delta) is a valid bound only
    when the mechanism's trade-off curve is Gaussian.
    """

    name = "gdp"
    description = "certified Gaussian-DP mu (Nasr et al. 2023) turned into epsilon(delta); assumes a Gaussian curve"
    caveat = ("estimator 'gdp': epsilon(delta) of a Gaussian mechanism with the certified mu; valid only if the "
              "target's trade-off curve is Gaussian (Nasr et al. 2023)")
    point_only = True

    def check(self, *, delta, claim=None):
        super().check(delta=delta, claim=claim)
        if delta <= 0:
            raise ParameterValueError("estimator 'gdp' needs delta > 0 (a Gaussian mechanism has no finite "
                                      "epsilon at delta = 0); got delta = 0")

    def bound(self, counts, event, *, delta, confidence) -> GDPResult:
        tp, fp = counts.hits(event)
        alpha = (1.0 - confidence) / 2.0
        fpr_hi = float(cp_upper(fp, counts.n1, alpha))
        fnr_hi = float(cp_upper(counts.n0 - tp, counts.n0, alpha))
        mu = float(mu_from_rates(fpr_hi, fnr_hi))
        eps = gaussian_epsilon(mu, delta) if (mu > 0 and delta > 0) else 0.0
        # A perfect attack (no false positive, no false negative) has the smallest upper rates, hence the
        # largest mu and epsilon: the ceiling of these sizes.
        top = float(mu_from_rates(float(cp_upper(0, counts.n1, alpha)), float(cp_upper(0, counts.n0, alpha))))
        top_eps = gaussian_epsilon(top, delta) if (top > 0 and delta > 0) else 0.0
        return GDPResult(mu, float(eps), fpr_hi, fnr_hi, confidence, float(max(top_eps, eps)))


ESTIMATORS: dict[str, type[Estimator]] = {
    ClopperPearsonEstimator.name: ClopperPearsonEstimator,
    GaussianDPEstimator.name: GaussianDPEstimator,
}


def make_estimator(name: str) -> Estimator:
    """The estimator registered under ``name``."""
    try:
        return ESTIMATORS[name]()
    except (KeyError, TypeError):
        raise ParameterValueError(f"estimator must be one of {sorted(ESTIMATORS)}; got {name!r}") from None


def profile_from_counts(counts: HeldOutCounts, events, deltas, *, confidence: float,
                        simultaneous: bool = True) -> list[float]:
    """eps(delta) lower bounds on a grid, one chosen event per delta.

    With ``simultaneous`` the failure probability is shared among the
    distinct events (one event's two intervals bound its epsilon at every
    delta at once, so grid points that chose the same event share one
    share), and the whole curve holds at once; it is then made
    non-increasing: the true eps(delta) is non-increasing, so a bound at a
    larger delta also bounds every smaller one.

    >>> c = HeldOutCounts.from_scores([1.0, 2.0], np.arange(100.0) / 20, np.arange(100.0) / 25)
    >>> same = [ThresholdEvent(1.0, False)] * 3
    >>> a = profile_from_counts(c, same, [0.0, 0.01, 0.1], confidence=0.95)
    >>> b = profile_from_counts(c, same[:1] * 3, [0.0, 0.01, 0.1], confidence=0.95, simultaneous=False)
    >>> a == b
    True
    """
    m = len({(float(e.threshold), bool(e.reverse)) for e in events}) if simultaneous else 1
    cp = ClopperPearsonEstimator()
    eps = [cp.bound(counts, ev, delta=d, confidence=confidence, n_comparisons=m).epsilon_lower_bound
           for d, ev in zip(deltas, events)]
    if simultaneous:
        eps = [max(e for d2, e in zip(deltas, eps) if d2 >= d) for d in deltas]
    return eps


def roc_thresholds(scores1, *, reverse: bool = False, n_points: int = 60) -> list[ThresholdEvent]:
    """Events spread so that their FPR on ``scores1`` (from D') runs over a log scale down to 1/n."""
    s = np.asarray(scores1, dtype=float).ravel()
    s = np.sort(-s if reverse else s)
    n = len(s)
    k = np.unique(np.geomspace(1, n, n_points).round().astype(np.int64))
    thr = s[n - k]
    thr = -thr if reverse else thr
    return [ThresholdEvent(float(t), reverse) for t in thr]


def roc_from_counts(counts: HeldOutCounts, events) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) of each event on the held-out counts, sorted by FPR."""
    hits = [counts.hits(e) for e in events]
    tpr = np.array([h[0] for h in hits], dtype=float) / max(counts.n0, 1)
    fpr = np.array([h[1] for h in hits], dtype=float) / max(counts.n1, 1)
    order = np.argsort(fpr, kind="stable")
    return fpr[order], tpr[order]
