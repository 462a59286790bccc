"""Empirical privacy profile eps(delta), a Gaussian-DP mu lower bound, and the ROC curve.

All three use the split discipline of :mod:`dpaudit.stats.selection`: the
event is chosen on the calibration part, counted on the held-out part.

* The profile chooses one event per delta on the grid.  With
  ``simultaneous=True`` (default) the failure probability is shared among the
  distinct events chosen (Bonferroni), so the whole curve holds at once with probability
  ``confidence`` and can be drawn as one curve; it is then made
  non-increasing (a bound at a larger delta also bounds eps at a smaller one).
* The mu bound follows Nasr et al. 2023 ("Tight auditing of differentially
  private machine learning"): mu-GDP means every test has
  FNR >= Phi(Phi^-1(1 - FPR) - mu), so an observed (FPR, FNR) with upper
  confidence bounds certifies that the mechanism is *not* mu-GDP for any
  mu < Phi^-1(1 - FPR_hi) - Phi^-1(FNR_hi).  This is a bound on mu, valid for any
  mechanism; converting it to eps(delta) through the Gaussian curve assumes the
  trade-off curve is Gaussian, so dpaudit reports it separately.
"""

from __future__ import annotations

import json  # noqa: F401  (the Examples use it)
from dataclasses import asdict, dataclass

import numpy as np

from .._validation import check_confidence, check_real
from .estimators import GaussianDPEstimator, HeldOutCounts, profile_from_counts, roc_from_counts, roc_thresholds
from .gdp import gaussian_delta, gaussian_epsilon
from .selection import calibration_counts, calibration_rates, split_scores

__all__ = [
    "PrivacyProfile",
    "privacy_profile",
    "GDPBound",
    "gdp_mu_lower_bound",
    "gaussian_epsilon",
    "gaussian_delta",
    "empirical_roc",
    "DEFAULT_DELTAS",
]

DEFAULT_DELTAS = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.2)


@dataclass(frozen=True)
class PrivacyProfile:
    """Lower bounds eps(delta) on a grid of deltas.

    Examples
    --------
    >>> p = PrivacyProfile(deltas=(0.0, 0.1), epsilons=(1.0, 0.5), confidence=0.95, simultaneous=True)
    >>> PrivacyProfile.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    True
    """

    deltas: tuple
    epsilons: tuple
    confidence: float
    simultaneous: bool

    def to_dict(self) -> dict:
        return {"delta": list(self.deltas), "epsilon": list(self.epsilons),
                "confidence": self.confidence, "simultaneous": self.simultaneous}

    @classmethod
    def from_dict(cls, d: dict) -> "PrivacyProfile":
        return cls(tuple(d["delta"]), tuple(d["epsilon"]), d["confidence"], d["simultaneous"])


def privacy_profile(scores0, scores1, *, deltas=DEFAULT_DELTAS, confidence=0.95, calibration_fraction=0.5,
                    simultaneous=True) -> PrivacyProfile:
    """Empirical eps(delta) lower bounds from one set of scores.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> p = privacy_profile(1 + rng.laplace(size=100_000), rng.laplace(size=100_000), deltas=(0.0, 0.1))
    >>> p.epsilons[0] > p.epsilons[1] > 0
    True
    """
    confidence = check_confidence(confidence)
    deltas = tuple(float(check_real(d, "deltas", low=0.0, high=1.0, high_inclusive=False)) for d in deltas)
    s0, s1 = np.asarray(scores0, float).ravel(), np.asarray(scores1, float).ravel()
    cal0, test0 = split_scores(s0, calibration_fraction)
    cal1, test1 = split_scores(s1, calibration_fraction)
    # Rates are computed once and serve every delta's choice.
    rates = calibration_rates(calibration_counts(cal0, cal1), n_test0=len(test0), n_test1=len(test1),
                              confidence=confidence)
    events = [rates.choose(delta=d) for d in deltas]
    counts = HeldOutCounts.from_scores([e.threshold for e in events], test0, test1)
    eps = profile_from_counts(counts, events, deltas, confidence=confidence, simultaneous=simultaneous)
    return PrivacyProfile(deltas, tuple(eps), confidence, bool(simultaneous))


@dataclass(frozen=True)
class GDPBound:
    """A lower bound on the Gaussian-DP parameter mu (Nasr et al. 2023)."""

    mu_lower_bound: float
    confidence: float
    fpr_upper: float
    fnr_upper: float
    threshold: float

    def to_dict(self) -> dict:
        return asdict(self)

    def epsilon_at(self, delta: float) -> float:
        """eps(delta) of a mu-GDP mechanism at the bound; meaningful only if the curve is Gaussian."""
        return gaussian_epsilon(self.mu_lower_bound, delta)


def gdp_mu_lower_bound(scores0, scores1, *, confidence=0.95, calibration_fraction=0.5) -> GDPBound:
    """Certified lower bound on mu from scores (larger means "looks like D").

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> g = gdp_mu_lower_bound(1 + rng.normal(size=200_000), rng.normal(size=200_000))
    >>> 0.95 < g.mu_lower_bound <= 1.0
    True
    """
    confidence = check_confidence(confidence)
    s0, s1 = np.asarray(scores0, float).ravel(), np.asarray(scores1, float).ravel()
    cal0, test0 = split_scores(s0, calibration_fraction)
    cal1, test1 = split_scores(s1, calibration_fraction)
    # The choice is simultaneous over the candidates and both orientations, so
    # that it is not won by calibration noise (see select_threshold).
    rates = calibration_rates(calibration_counts(cal0, cal1), n_test0=len(test0), n_test1=len(test1),
                              confidence=confidence)
    event = rates.choose(gdp=True)
    counts = HeldOutCounts.from_scores([event.threshold], test0, test1)
    g = GaussianDPEstimator().bound(counts, event, delta=0.0, confidence=confidence)
    return GDPBound(g.mu_lower_bound, confidence, g.fpr_upper, g.fnr_upper, event.threshold)


def empirical_roc(scores0, scores1, *, n_points=200):
    """Empirical ROC of the test "score >= t" (true positives on D), for plots.

    Thresholds are placed so that FPR is spread over a log scale down to 1/n.
    Returns ``(fpr, tpr)`` arrays sorted by FPR.

    >>> fpr, tpr = empirical_roc(np.arange(10.0) + 5, np.arange(10.0), n_points=5)
    >>> bool(np.all(np.diff(fpr) >= 0))
    True
    """
    s1 = np.asarray(scores1, float).ravel()
    events = roc_thresholds(s1, n_points=n_points)
    counts = HeldOutCounts.from_scores([e.threshold for e in events], scores0, s1)
    return roc_from_counts(counts, events)
