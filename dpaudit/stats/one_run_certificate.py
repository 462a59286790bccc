"""The one-run certificate: guess counts of one training run and a claim in, one :class:`CertificateResult` out.

The evidence (:class:`GuessCounts`) is how many guesses were right for each
number of guesses tried, two-sided (the point tests of Steinke, Nasr and
Jagielski 2023) and one-sided (the f-DP tests of Mahloujifar, Melis and
Chaudhuri 2025, for a curve).  :class:`OneRun` certifies every test at its
share of the failure probability and reports the test that came closest to
the claim, ranked as the audit ranks its tests
(:meth:`~dpaudit.stats.curves.CurveTest.as_bound_against`): the largest margin
when one is crossed, else the largest share of the claim certified.  The
result's region is that test's point; every test is in ``details``.

Examples
--------
>>> from dpaudit.claims import parse_claim
>>> ev = GuessCounts(1000, ((500, 480),))
>>> r = OneRun().certify(ev, parse_claim("eps:1"), confidence=0.95)
>>> r.method, r.violation, r.epsilon_lower_bound > 1.0
('steinke-nasr-jagielski', True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_int
from ..exceptions import ParameterValueError
from .certificate import Certificate, CertificateResult
from .curves import CurveTest
from .one_run import (
    fdp_one_run_epsilon_bounds,
    fdp_one_run_mu_bound_max,
    fdp_one_run_rejects,
    fdp_one_run_rejects_points,
    one_run_ceiling,
    one_run_epsilon_bound,
)

__all__ = ["GuessCounts", "OneRun", "CURVE_DELTAS", "FDP_SHARE", "POINT_TEST", "FDP_TEST"]

#: The deltas a curve claim is tested at: one run's delta term grows as 2 m delta, so only small ones help.
CURVE_DELTAS = (0.0, 1e-6, 1e-5, 1e-4, 1e-3)
#: A curve claim's split of the failure probability: this part to the f-DP tests (the whole curve and the
#: points they name), the rest to the point tests at CURVE_DELTAS.  The f-DP tests carry the verdict; the
#: point tests keep a quarter for their assumption-free bound at each delta (docs/decisions/one-run-fdp.md).
FDP_SHARE = 0.75
#: The names of the two tests, as reports give them.
POINT_TEST, FDP_TEST = "steinke-nasr-jagielski", "f-dp"


@dataclass(frozen=True)
class GuessCounts:
    """One run's guesses: ``m`` canaries; ``counts``, (guesses, correct) two-sided for each number of guesses
    tried; ``top``, (guesses, correct) of one-sided guesses on the highest scores (the f-DP tests; a curve only)."""

    m: int
    counts: tuple
    top: tuple = ()

    def __post_init__(self):
        check_int(self.m, "canaries", low=1)
        object.__setattr__(self, "counts", tuple((int(k), int(v)) for k, v in self.counts))
        object.__setattr__(self, "top", tuple((int(k), int(v)) for k, v in self.top))
        if not self.counts:
            raise ParameterValueError("guess counts: at least one number of guesses")
        for k, v in self.counts + self.top:
            if not 0 <= v <= k <= self.m:
                raise ParameterValueError(f"guess counts: {v} right of {k} guesses among {self.m} canaries")

    @property
    def guesses(self) -> list[int]:
        return [k for k, _ in self.counts]


class OneRun(Certificate):
    """Steinke, Nasr and Jagielski's point tests and, for a curve, the f-DP tests of the whole curve.

    Each number of guesses gets ``(1 - confidence) / len(counts)``
    (Bonferroni); a curve splits each share between the f-DP tests
    (:data:`FDP_SHARE`) and the point tests at :data:`CURVE_DELTAS`, whose
    deltas need no further share (one count W bounds every delta's p-value).
    """

    name = "one-run"
    description = "one training run's canary guesses (Steinke, Nasr and Jagielski 2023; f-DP for curves)"
    evidence = GuessCounts

    def _certify(self, evidence, claim, *, confidence, delta):
        m, grid = evidence.m, evidence.guesses
        split = (1.0 - confidence) / len(grid)
        fdp_share = split * FDP_SHARE
        level = 1.0 - (split - fdp_share if claim.is_curve else split)
        counts = dict(evidence.counts)
        rows = [{"guesses": k, "correct": counts[k], "delta": d, "claimed_epsilon": e,
                 "epsilon_lower_bound": one_run_epsilon_bound(m, k, counts[k], delta=d, confidence=level)}
                for k, d, e in _tests(claim, delta, grid)]
        fdp_rows = _fdp_tests(claim, m, evidence.top, fdp_share) if claim.is_curve else []
        regions = [(t, _region(t, claim, confidence)) for t in rows + [t["pair"] for t in fdp_rows if t["pair"]]]
        # Ranked as the audit ranks its tests and rounds: by the margin over the claim, else by the share of it
        # certified (CurveTest.as_bound_against); ties by the larger bound.
        best, region = max(regions, key=lambda tr: (tr[1].as_bound_against(1.0), tr[0]["epsilon_lower_bound"]))
        details = {"tests": rows, "fdp_tests": fdp_rows, "reported": best, "guesses": best["guesses"],
                   "correct": best["correct"],
                   "curve_rejected": any(t["rejected"] for t in fdp_rows) if claim.is_curve else None,
                   "gdp_mu_lower_bound": fdp_one_run_mu_bound_max(m, list(evidence.top), confidence=1.0 - fdp_share)
                   if claim.is_curve else None}
        return CertificateResult(best.get("test", POINT_TEST), confidence, evidence, region,
                                 _ceiling(m, best, level, 1.0 - fdp_share), best["delta"],
                                 best["epsilon_lower_bound"], details=details)


def _tests(claim, delta, grid):
    """(guesses, delta, claimed epsilon) of every point test: each number of guesses at each tested delta.

    The deltas of one number of guesses need no share of the failure probability each: a mechanism
    that keeps the claimed curve is (epsilon(delta), delta)-DP at every delta at once, so each delta's
    p-value bounds the same tail P[W >= v] of the one count W of correct guesses, and so does their
    minimum; certifying at every delta with level ``beta`` errs only when that minimum is below
    ``beta`` at the observed W, which has probability at most ``beta``.  Only the numbers of guesses
    (different counts W) are Bonferroni-split.
    """
    claimed = {d: float(claim.epsilon(d)) for d in (CURVE_DELTAS if claim.is_curve else [delta])}
    claimed = {d: e for d, e in claimed.items() if math.isfinite(e)}
    if not claimed:
        # A curve finite only above CURVE_DELTAS (a profile of large deltas) is point-tested at its first
        # point, as a one-point claim is; the f-DP tests still read all of it.
        eps, d = claim.finite_point
        claimed = {d: eps}
    return [(k, d, e) for k in grid for d, e in claimed.items()]


def _region(test: dict, claim, confidence: float) -> CurveTest:
    """One test as a one-point certified curve at its delta, against its own claimed epsilon (an f-DP test reads
    the claim's grid, where the curve is exact)."""
    return CurveTest(claim.spec, confidence, np.array([test["delta"]]), np.array([max(test["epsilon_lower_bound"], 0.0)]),
                     np.array([test["claimed_epsilon"]]), reference_delta=float(claim.reference[1]))


def _ceiling(m, best, level, fdp_level):
    """The reported test's bound had all its guesses been right, at that test's level (point or f-DP)."""
    if best.get("test") == FDP_TEST:  # searched up from the bound itself, so the two tolerances cannot cross
        return float(fdp_one_run_epsilon_bounds(m, best["guesses"], best["guesses"], [best["delta"]],
                                                confidence=fdp_level, above=[best["epsilon_lower_bound"]])[0])
    return one_run_ceiling(m, best["guesses"], delta=best["delta"], confidence=level)


def _fdp_tests(claim, m, counts, share):
    """The f-DP test of the whole claimed curve (Mahloujifar, Melis and Chaudhuri 2025) at each number of guesses.

    It is proved for one-sided guesses, so each count is of k "included" guesses on the k highest
    scores; each k is tested at ``share`` (Bonferroni over k, as the point tests).  Where the whole
    curve is rejected, :func:`_fdp_pair` looks for a point of it that the same count rejects.  The
    mu bound (:func:`fdp_one_run_mu_bound_max`) reads the same counts at the same level: the same
    tests, of Gaussian curves, so no further share.
    """
    rows = []
    for r, v in counts:
        rejected = fdp_one_run_rejects(m, r, v, claim.power_inverse, share)
        rows.append({"guesses": r, "correct": v, "rejected": rejected,
                     "pair": _fdp_pair(claim, m, r, v, share) if rejected else None})
    return rows


def _fdp_pair(claim, m, k, c, share):
    """The claim's grid point (delta, epsilon) that ``c`` of ``k`` crosses by the most, with its certified epsilon.

    A rejected whole curve says the run breaks the claim at some delta, not at which (a curve is
    stronger than each of its points).  The grid's points are tested one by one with the same count
    at the same level, and the largest epsilon rejected at each crossed one is certified.  A point's
    curve is weaker than the whole curve, so the count rejects it only when it rejects the whole
    (checked in the tests), and these need no further share.  None when no single point is crossed.
    """
    deltas, epsilons = claim.grid()
    crossed = fdp_one_run_rejects_points(m, k, c, epsilons, deltas, share)
    if not crossed.any():
        return None
    bounds = fdp_one_run_epsilon_bounds(m, k, c, deltas[crossed], confidence=1.0 - share, above=epsilons[crossed],
                                        best_margin=True)
    j = int(np.nanargmax(bounds - epsilons[crossed]))
    return {"test": FDP_TEST, "guesses": k, "correct": c, "delta": float(deltas[crossed][j]),
            "claimed_epsilon": float(epsilons[crossed][j]), "epsilon_lower_bound": float(bounds[j])}
