"""Estimators: held-out counts of chosen events in, certified bounds out.

The auditor works in two steps that never share data.  On calibration data
it chooses *events* (a threshold on a distinguisher's score and an
orientation, :class:`~dpaudit.stats.selection.ThresholdEvent`); on held-out
data it only counts how often each event occurs on D and on D'.  The counts
are a :class:`HeldOutCounts`, which can be filled chunk by chunk (streaming,
bounded memory) and added up across chunks or rounds.  A certificate
(:mod:`dpaudit.stats.certificate`) then turns the counts of its event into a
certified result; the names ``Estimator``, ``ESTIMATORS`` and
``make_estimator`` are that module's protocol and registry.  The
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

from dataclasses import dataclass

import numpy as np

from ..exceptions import ParameterValueError
from .certificate import (
    CERTIFICATES,
    Certificate,
    ClopperPearson,
    GaussianDP,
    GDPResult,
    certificate_for,
)
from .counting import count_at_least
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


#: The certificate base class under its older name: one protocol (:mod:`dpaudit.stats.certificate`).
Estimator = Certificate
ClopperPearsonEstimator = ClopperPearson
GaussianDPEstimator = GaussianDP
#: The registered certificates by name (live).
ESTIMATORS = CERTIFICATES


def make_estimator(name) -> Certificate:
    """The certificate ``name`` names (:func:`~dpaudit.stats.certificate.certificate_for`)."""
    return certificate_for(name)


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
