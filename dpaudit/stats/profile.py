"""Empirical privacy profile eps(delta), a Gaussian-DP mu lower bound, and the ROC curve.

All three use the split discipline of :mod:`dpaudit.stats.selection`: the
event is chosen on the calibration part, counted on the held-out part.

* The profile chooses one event per delta on the grid.  With
  ``simultaneous=True`` (default) the failure probability is shared among the
  grid points (Bonferroni), so the whole curve holds at once with probability
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

import json
from dataclasses import asdict, dataclass

import numpy as np

from .._validation import check_confidence, check_real
from .bounds import epsilon_lower_bound
from .clopper_pearson import cp_upper
from ._mu import mu_from_rates as _mu_from_rates
from .selection import calibration_counts, choose_event, select_threshold, split_scores

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
    m = len(deltas) if simultaneous else 1
    calibration = calibration_counts(cal0, cal1)  # sorted once, not once per delta
    eps = []
    for delta in deltas:
        event = choose_event(calibration, n_test0=len(test0), n_test1=len(test1), delta=delta,
                             confidence=confidence)
        tp, fp = event.count(test0), event.count(test1)
        b = epsilon_lower_bound(tp, len(test0) - tp, fp, len(test1) - fp, delta=delta, confidence=confidence,
                                n_comparisons=m)
        eps.append(b.epsilon_lower_bound)
    if simultaneous:
        # The true eps(delta) is non-increasing, so a bound at a larger delta is
        # also one at every smaller delta; the grid holds at once, so take it.
        # This keeps the curve non-increasing despite per-delta selection noise.
        eps = [max(e for d2, e in zip(deltas, eps) if d2 >= d) for d in deltas]
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
    alpha = (1.0 - confidence) / 2.0

    def objective(tp, n0, fp, n1):
        # Simultaneous over the candidates and both orientations, so that the
        # choice is not won by calibration noise (see select_threshold).
        a = alpha / (2 * np.size(tp))
        return _mu_from_rates(cp_upper(fp, n1, a), cp_upper(n0 - tp, n0, a))

    event = select_threshold(cal0, cal1, n_test0=len(test0), n_test1=len(test1), confidence=confidence,
                             objective=objective)
    tp, fp = event.count(test0), event.count(test1)
    fpr_hi = float(cp_upper(fp, len(test1), alpha))
    fnr_hi = float(cp_upper(len(test0) - tp, len(test0), alpha))
    return GDPBound(float(_mu_from_rates(fpr_hi, fnr_hi)), confidence, fpr_hi, fnr_hi, event.threshold)


def gaussian_delta(epsilon: float, mu: float) -> float:
    """Exact delta(epsilon) of the Gaussian mechanism with mu = sensitivity / sigma (Balle and Wang 2018).

    delta = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu), the second term in log
    space (e^eps alone overflows once eps > 709).

    >>> round(gaussian_delta(1.0, 1 / 3.7306), 7)
    1e-05
    """
    from scipy.special import log_ndtr, ndtr

    a, b = mu / 2.0, epsilon / mu
    return float(ndtr(a - b) - np.exp(epsilon + log_ndtr(-a - b)))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """eps(delta) of the Gaussian mechanism with mu = sensitivity / sigma (Balle and Wang 2018).

    The smallest eps with ``gaussian_delta(eps, mu) <= delta``, by bisection to
    a relative 1e-13; the upper end of the bracket is returned, so the result
    is never below the true value.

    >>> round(gaussian_epsilon(1.0, 1e-5), 3)
    4.377
    >>> gaussian_epsilon(1.0, 0.0), gaussian_epsilon(0.0, 1e-5)
    (inf, 0.0)
    """
    if mu <= 0 or delta >= 1:
        return 0.0
    if delta <= 0:
        return float("inf")
    if gaussian_delta(0.0, mu) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_delta(hi, mu) > delta:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if gaussian_delta(mid, mu) > delta else (lo, mid)
        if hi - lo <= 1e-13 * max(hi, 1.0):
            break
    return float(hi)


def empirical_roc(scores0, scores1, *, n_points=200):
    """Empirical ROC of the test "score >= t" (true positives on D), for plots.

    Thresholds are placed so that FPR is spread over a log scale down to 1/n.
    Returns ``(fpr, tpr)`` arrays sorted by FPR.

    >>> fpr, tpr = empirical_roc(np.arange(10.0) + 5, np.arange(10.0), n_points=5)
    >>> bool(np.all(np.diff(fpr) >= 0))
    True
    """
    s0 = np.sort(np.asarray(scores0, float).ravel())
    s1 = np.sort(np.asarray(scores1, float).ravel())
    n1 = len(s1)
    k = np.unique(np.geomspace(1, n1, n_points).round().astype(np.int64))
    thr = s1[n1 - k]  # the k-th largest D' score: FPR about k / n1
    fpr = (n1 - np.searchsorted(s1, thr, side="left")) / n1
    tpr = (len(s0) - np.searchsorted(s0, thr, side="left")) / len(s0)
    order = np.argsort(fpr, kind="stable")
    return fpr[order], tpr[order]
