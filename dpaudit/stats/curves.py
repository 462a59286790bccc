"""Testing certified results against a claimed privacy curve, at one confidence for the whole curve.

One held-out event with one-sided Clopper-Pearson upper bounds ``FPR_hi`` and
``FNR_hi`` on its error rates (each at half the failure probability) certifies
a whole lower curve at once:

    eps(delta) >= max(ln((1 - delta - FNR_hi) / FPR_hi), ln((1 - delta - FPR_hi) / FNR_hi))   for every delta,

since (epsilon, delta)-DP bounds every test's rates (Kairouz, Oh and Viswanath
2015) and the two intervals hold together with probability ``confidence``
whatever delta is then read.  Equivalently the point (FPR_hi, FNR_hi) lies on
or above the mechanism's trade-off curve (Dong, Roth and Su 2022), and the
test asks whether it lies below the claimed one (Zhu, Dong and Wang 2022 for
the duality between profiles and trade-off curves).  No share of the failure
probability is spent on the number of deltas tested: a grid of 400 points
costs what one point costs.  ``docs/decisions/curve-claims.md`` compares this
with one event per delta under a Bonferroni split (the single event wins
there).

:class:`CurveCertificate` is the estimator the audit holds for any claim: it
chooses the event on calibration rates (the largest ratio of the event's
curve to the claimed one) and turns the held-out bound into a
:class:`CurveTest`.  A point claim is a curve of one point, for which both
steps are exactly today's (epsilon, delta) choice and bound, so the audit
never asks which kind of claim it holds.  :func:`curve_test` is the same test
for callers that certified rates or a bound per delta elsewhere (attack
scores, one-run audits).

Examples
--------
1-GDP allows FNR >= Phi(Phi^-1(0.99) - 1) = 0.908 at FPR 0.01:

>>> from dpaudit.claims import parse_claim
>>> claim = parse_claim("gdp:mu=1")
>>> t = curve_test(claim, fpr_upper=0.01, fnr_upper=0.95, confidence=0.95)
>>> t.violation, t.epsilon_lower_bound <= t.claimed_epsilon
(False, True)
>>> t = curve_test(claim, fpr_upper=0.01, fnr_upper=0.5, confidence=0.95)
>>> t.violation, t.epsilon_lower_bound > t.claimed_epsilon
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..exceptions import ParameterValueError
from .bounds import EpsilonBound, log_ratio_bound
from .selection import ThresholdEvent, pick_event

__all__ = ["SELECTION_POINTS", "CurveCertificate", "CurveTest", "certified_curve", "curve_test", "interval_region"]

#: Grid points the event choice reads (log-spaced among the claim's); certification reads them all.
SELECTION_POINTS = 48
#: Claimed epsilons below this count as this much in the ratio that ranks events and picks the reported delta.
RATIO_FLOOR = 1e-3


def certified_curve(fpr_upper, fnr_upper, deltas) -> np.ndarray:
    """The lower curve eps(delta) that upper bounds on an event's FPR and FNR certify at every ``delta`` at once.

    Broadcasts: ``fpr_upper``/``fnr_upper`` of shape (m, 1) against ``deltas`` of shape (k,) give (m, k).

    >>> certified_curve(0.01, 0.5, [0.0, 0.1]).round(4).tolist()
    [3.912, 3.6889]
    """
    fpr_upper = np.asarray(fpr_upper, dtype=float)
    fnr_upper = np.asarray(fnr_upper, dtype=float)
    return _curve(1.0 - fnr_upper, fpr_upper, np.asarray(deltas, dtype=float))


def _inequalities(tpr_lo, fpr_hi, deltas):
    """The event's two inequalities' bounds: ``P_1(E) <= e^eps P_0(E) + delta`` (the tail the event is) and
    ``P_0(E^c) <= e^eps P_1(E^c) + delta`` (the other tail, read through the complement)."""
    return log_ratio_bound(tpr_lo, fpr_hi, deltas), log_ratio_bound(1.0 - fpr_hi, 1.0 - tpr_lo, deltas)


def _curve(tpr_lo, fpr_hi, deltas):
    # The same two inequalities, in the same arithmetic, as the point bound
    # (dpaudit.stats.bounds.epsilon_bounds_array), so that a one-point curve is that bound exactly.
    return np.maximum(*_inequalities(tpr_lo, fpr_hi, deltas))


@dataclass(frozen=True)
class CurveTest:
    """A certified lower curve against a claimed one, on the claim's grid.

    ``certified[j]`` is a lower bound on the mechanism's epsilon at
    ``deltas[j]``, all valid at once with probability ``confidence``;
    ``claimed[j]`` the claim's epsilon there.  The verdict is a violation
    when some certified epsilon exceeds the claimed one.  The *reported* point
    (:attr:`index`) is, when there is a violation, the witness of
    :meth:`witness_index`: the grid point where the delta the audit certifies
    at the claim's epsilon exceeds the claim's delta by the largest factor (a
    crossing a reader can check by eye); otherwise where the ratio
    ``certified / claimed`` is largest (the point of the claim the audit came
    closest to), or the claim's reference delta when nothing is certified.
    Every point of the curve holds at once, so choosing which one to report
    after the fact costs no validity.
    """

    claim: str
    confidence: float
    deltas: np.ndarray = field(repr=False)
    certified: np.ndarray = field(repr=False)
    claimed: np.ndarray = field(repr=False)
    fpr_upper: float | None = None
    fnr_upper: float | None = None
    reference_delta: float = 0.0

    @property
    def margins(self) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(self.claimed), self.certified - self.claimed, -np.inf)

    @property
    def violation(self) -> bool:
        return bool(np.any(self.certified > self.claimed))

    @property
    def margin(self) -> float:
        """The largest margin over the grid: > 0 exactly when there is a violation."""
        return float(np.max(self.margins))

    @property
    def index(self) -> int:
        if self.violation:
            return self.witness_index()
        if np.any(self.certified > 0):
            ratio = self.certified / np.maximum(np.where(np.isfinite(self.claimed), self.claimed, np.inf), RATIO_FLOOR)
            return int(np.argmax(ratio))
        return int(np.argmin(np.abs(np.log(self.deltas + 1e-300) - np.log(self.reference_delta + 1e-300))))

    @property
    def delta(self) -> float:
        return float(self.deltas[self.index])

    @property
    def epsilon_lower_bound(self) -> float:
        return float(self.certified[self.index])

    @property
    def claimed_epsilon(self) -> float:
        return float(self.claimed[self.index])

    def certified_deltas(self, epsilons) -> np.ndarray:
        """The delta certified at each of ``epsilons``: the mechanism is (epsilon, d)-DP for no d below it.

        From the event's rates when known (the two inequalities read for delta at a fixed epsilon:
        ``1 - FNR_hi - e^eps FPR_hi`` and ``1 - FPR_hi - e^eps FNR_hi``); else the largest grid delta whose
        certified epsilon exceeds ``epsilon`` (the mechanism's delta there is above it).  0 where nothing is.
        """
        eps = np.asarray(epsilons, dtype=float)
        if self.fpr_upper is not None:
            scale = np.exp(np.minimum(eps, 700.0))
            out = np.maximum(1.0 - self.fnr_upper - scale * self.fpr_upper, 1.0 - self.fpr_upper - scale * self.fnr_upper)
        else:
            above = self.certified[None, :] > eps.reshape(-1, 1)
            out = np.max(np.where(above, self.deltas[None, :], 0.0), axis=1, initial=0.0).reshape(eps.shape)
        return np.maximum(out, 0.0)

    def witness_index(self) -> int:
        """The grid point of a violation that is easiest to check: the largest factor in delta.

        At each crossed point ``(claimed[j], deltas[j])`` the audit certifies a delta at the claim's
        epsilon, ``certified_deltas(claimed[j])``, above ``deltas[j]``; the witness is the point where that
        factor is largest (a claimed delta of 0 counts as an infinite factor), ties to the larger certified
        delta: a crossing stated as "the claim allows delta d there, the audit certifies k times d", which no
        reader takes for noise.  Raises ValueError when there is no violation.
        """
        crossed = np.flatnonzero(self.certified > self.claimed)
        if crossed.size == 0:
            raise ValueError("no violation: no grid point is crossed")
        # A crossed point certifies more than its own delta by definition: the formula's rounding cannot say less.
        got = np.maximum(self.certified_deltas(self.claimed[crossed]), self.deltas[crossed])
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.where(self.deltas[crossed] > 0, got / self.deltas[crossed], np.inf)
        best = max(range(crossed.size), key=lambda i: (factor[i], got[i], -i))
        return int(crossed[best])

    @property
    def certified_delta(self) -> float:
        """The delta certified at the reported point's claimed epsilon (see :meth:`certified_deltas`)."""
        got = float(self.certified_deltas(self.claimed_epsilon)) if np.isfinite(self.claimed_epsilon) else 0.0
        return max(got, self.delta) if self.violation else got

    def epsilon_lower_bound_at(self, delta):
        """The certified epsilon at any ``delta`` (from the rates when known, else the grid's, stepped down)."""
        d = np.asarray(delta, dtype=float)
        if self.fpr_upper is not None:
            out = certified_curve(self.fpr_upper, self.fnr_upper, d)
        else:
            i = np.searchsorted(self.deltas, d, side="right") - 1
            out = np.where(i >= 0, self.certified[np.clip(i, 0, None)], 0.0)
        return out if out.ndim else float(out)

    def certified_at(self, delta: float) -> float:
        """The certified epsilon at one ``delta``: the grid's value when ``delta`` is a grid point, else
        :meth:`epsilon_lower_bound_at` (so a point claim's test gives its own bound exactly)."""
        j = int(np.searchsorted(self.deltas, delta))
        if j < len(self.deltas) and self.deltas[j] == delta:
            return float(self.certified[j])
        return float(self.epsilon_lower_bound_at(delta))

    def as_bound_against(self, epsilon: float, delta: float | None = None) -> float:
        """This test as a bound against a point claim of ``epsilon``: > ``epsilon`` exactly when it is a violation.

        The sequential audit's tracker compares one bound with one epsilon;
        fed this, it stops on "violation" exactly when the verdict is one.
        A violation maps to ``epsilon`` plus the largest margin.  Otherwise, given
        the tracker's ``delta`` (its point ``(epsilon, delta)`` on the claim), the
        certified epsilon there; without it, ``epsilon`` times the closest approach
        (the largest ratio certified / claimed), which ranks tests and rounds.  Both
        are the certified epsilon itself for a point claim at its own point.  (Not the
        margin: where the claimed curve reaches epsilon 0 the certified one does too,
        so the largest margin of a correct mechanism is 0 and would read as "certified
        up to the claim".)
        """
        if self.violation:
            return float(max(epsilon + self.margin, np.nextafter(epsilon, np.inf)))
        if delta is not None:
            return float(min(epsilon, max(0.0, self.certified_at(delta))))
        i = self.index
        ratio = self.certified[i] / max(float(self.claimed[i]), RATIO_FLOOR) if np.isfinite(self.claimed[i]) else 0.0
        return float(min(epsilon, max(0.0, epsilon * ratio)))

    def curve_violation(self) -> dict | None:
        """``None``, or the reported point of a violation (what the JSON's ``curve_violation`` holds).

        ``delta``, ``epsilon_lower_bound`` and ``claimed_epsilon`` are the witness's (:meth:`witness_index`);
        ``certified_delta`` the delta certified at ``claimed_epsilon`` and ``delta_factor`` its ratio to
        ``delta`` (None when ``delta`` is 0); ``margin`` the largest margin in epsilon over the whole grid.
        """
        if not self.violation:
            return None
        certified = self.certified_delta
        return {"delta": self.delta, "epsilon_lower_bound": self.epsilon_lower_bound,
                "claimed_epsilon": self.claimed_epsilon, "margin": self.margin, "confidence": self.confidence,
                "fpr_upper": self.fpr_upper, "fnr_upper": self.fnr_upper, "points_tested": len(self.deltas),
                "certified_delta": certified,
                "delta_factor": certified / self.delta if self.delta > 0 else None}

    def curve(self, n_points: int = 40) -> dict:
        """Up to ``n_points`` grid points (log-spaced in delta), for reports and figures."""
        idx = _spread(self.deltas, n_points)
        return {"delta": self.deltas[idx].tolist(), "claimed_epsilon": self.claimed[idx].tolist(),
                "epsilon_lower_bound": self.certified[idx].tolist()}

    def to_dict(self) -> dict:
        return {"claim": self.claim, "confidence": self.confidence, "violation": self.violation,
                "delta": self.delta, "epsilon_lower_bound": self.epsilon_lower_bound,
                "claimed_epsilon": self.claimed_epsilon, "margin": self.margin, "fpr_upper": self.fpr_upper,
                "fnr_upper": self.fnr_upper, "curve": self.curve()}


def _spread(deltas: np.ndarray, n_points: int) -> np.ndarray:
    """Indices of at most ``n_points`` grid points, log-spaced in delta, both ends kept."""
    n = len(deltas)
    if n <= n_points:
        return np.arange(n)
    logs = np.log(np.maximum(deltas, 1e-300))
    targets = np.linspace(logs[0], logs[-1], n_points)
    return np.unique(np.clip(np.searchsorted(logs, targets), 0, n - 1))


def curve_test(claim, *, confidence: float, fpr_upper=None, fnr_upper=None, deltas=None,
               epsilon_lower_bounds=None) -> CurveTest:
    """Test a certified result against ``claim`` (any object with ``grid()``, ``epsilon(delta)``, ``spec``).

    Give either upper bounds on one event's FPR and FNR, valid together at
    ``confidence`` (the whole lower curve follows, read on the claim's grid),
    or lower bounds ``epsilon_lower_bounds`` at ``deltas``, valid together at
    ``confidence`` (for example a one-run audit's bound per delta).

    >>> from dpaudit.claims import parse_claim
    >>> c = parse_claim("eps:1,delta=1e-5")
    >>> curve_test(c, deltas=[1e-5], epsilon_lower_bounds=[1.2], confidence=0.95).curve_violation()["margin"]
    0.19999999999999996
    """
    ref = float(claim.reference[1])
    if fpr_upper is not None or fnr_upper is not None:
        if fpr_upper is None or fnr_upper is None or epsilon_lower_bounds is not None:
            raise ParameterValueError("give fpr_upper and fnr_upper together, or deltas with epsilon_lower_bounds")
        fpr_upper, fnr_upper = float(fpr_upper), float(fnr_upper)
        if not (0.0 <= fpr_upper <= 1.0 and 0.0 <= fnr_upper <= 1.0):
            raise ParameterValueError(f"fpr_upper and fnr_upper must be in [0, 1]; got {fpr_upper!r}, {fnr_upper!r}")
        gd, ge = claim.grid()
        cert = certified_curve(fpr_upper, fnr_upper, gd)
        return CurveTest(claim.spec, confidence, gd, cert, ge, fpr_upper, fnr_upper, ref)
    if deltas is None or epsilon_lower_bounds is None:
        raise ParameterValueError("give fpr_upper and fnr_upper, or deltas with epsilon_lower_bounds")
    d = np.asarray(deltas, dtype=float).ravel()
    e = np.asarray(epsilon_lower_bounds, dtype=float).ravel()
    if d.shape != e.shape or d.size == 0:
        raise ParameterValueError(f"deltas and epsilon_lower_bounds must have the same non-zero length; got "
                                  f"{d.size} and {e.size}")
    order = np.argsort(d, kind="stable")
    d, e = d[order], np.maximum(e[order], 0.0)
    return CurveTest(claim.spec, confidence, d, e, np.asarray(claim.epsilon(d), dtype=float), None, None, ref)


class CurveCertificate:
    """The estimator an audit holds for a claim: chooses events for it and tests held-out bounds against it.

    Parameters
    ----------
    claim
        A :class:`dpaudit.claims.Claim` (anything with ``grid()``,
        ``epsilon(delta)``, ``spec`` and ``reference``).

    Notes
    -----
    The event is chosen on calibration rates by the largest ratio of its
    certifiable curve to the claimed one, ``max_j lb_j / claimed_j``, scaled by
    the claim's reference epsilon (so a one-point claim ranks events by their
    bound at that point, as before).  Ranking by the largest margin ``lb_j -
    claimed_j`` instead was measured in ``docs/decisions/curve-claims.md``.

    Examples
    --------
    >>> from dpaudit.claims import parse_claim
    >>> cert = CurveCertificate(parse_claim("eps:1"))
    >>> cert.pure
    True
    """

    def __init__(self, claim):
        self.claim = claim
        self.deltas, self.claimed = (np.asarray(a, dtype=float) for a in claim.grid())
        sel = _spread(self.deltas, SELECTION_POINTS)
        self._sel_deltas = self.deltas[sel]
        claimed = np.maximum(self.claimed[sel], RATIO_FLOOR)
        # finite_point, not reference: a curve infinite at 1e-5 (dpsgd:noise=0.01,rate=0.01,steps=1) would weigh
        # every event inf, and inf * 0 = NaN objectives pick an arbitrary event.
        ref = max(float(claim.finite_point[0]), RATIO_FLOOR)
        self._weights = ref / claimed  # exactly 1.0 for a one-point claim
        self.reference_epsilon, self.reference_delta = float(claim.reference[0]), float(claim.reference[1])

    @property
    def pure(self) -> bool:
        """Whether the claim is one point at delta 0 (where a one-ratio certificate also applies)."""
        return bool(len(self.deltas) == 1 and self.deltas[0] == 0.0)

    def objective(self, rates) -> tuple[np.ndarray, np.ndarray]:
        """(forward, reverse) values of every candidate event of ``rates`` (calibration intervals).

        The last rates' values are kept: :meth:`choose` and then :meth:`value` read the same ones.
        """
        last = getattr(self, "_last", None)
        if last is not None and last[0] is rates:
            return last[1]
        self._last = (rates, self._objective(rates))
        return self._last[1]

    def _objective(self, rates) -> tuple[np.ndarray, np.ndarray]:
        d = self._sel_deltas
        w = self._weights
        fwd = _curve(rates.tpr_lo[:, None], rates.fpr_hi[:, None], d) * w
        rev = _curve(1.0 - rates.tpr_hi[:, None], 1.0 - rates.fpr_lo[:, None], d) * w
        return fwd.max(axis=1), rev.max(axis=1)

    def choose(self, rates) -> ThresholdEvent:
        return pick_event(rates.candidates, *self.objective(rates))

    def choose_other_tail(self, rates, event: ThresholdEvent, *, ratio: float) -> ThresholdEvent | None:
        """The best event certified through another inequality than ``event``'s, or None.

        Each event's value is the better of its two inequalities (:func:`_inequalities`), in either
        orientation: four families, and in practice two tails (which side's releases are likelier,
        in which end of the scores).  Where the other tail's best candidate is worth at least
        ``ratio`` of ``event``'s on these calibration rates, certifying both at half the failure
        probability each and keeping the larger gains more than the halving costs: the two tails'
        held-out counts are disjoint, so their noise is nearly independent, where the chosen tail's
        runner-up thresholds share theirs (docs/decisions/event-selection.md).  Calibration data only.
        """
        values = self._families(rates)
        i = rates._index(event)
        own = 2 * event.reverse + int(values[2 * event.reverse + 1][i] > values[2 * event.reverse][i])
        best, family, j = max((float(v[int(np.argmax(v))]), f, int(np.argmax(v)))
                              for f, v in enumerate(values) if f != own)
        other = ThresholdEvent(float(rates.candidates[j]), reverse=family >= 2)
        if best <= 0 or best < ratio * float(values[own][i]) or other == event:
            return None
        return other

    def choose_rarer(self, rates, event: ThresholdEvent, *, chosen_on) -> ThresholdEvent | None:
        """The best event of ``rates`` nested inside ``event``: certified through the same inequality, whose
        region (the event or its complement) lies further out in the same tail; None when no candidate is.

        ``chosen_on`` are the rates ``event`` was chosen on, which tell its inequality.  Rates trusted as more
        releases than the selection counts prefer rarer events: this keeps the rarer one a version of the
        chosen event, not an unrelated far-tail event of the other tail.  Calibration data only.
        """
        own = self._family(chosen_on, event)
        values = self._families(rates)[own]
        idx = np.arange(len(values))
        i = rates._index(event)
        # Families 0 and 3 read the region "score >= t" (further out: larger t), 1 and 2 "score < t".
        inside = idx > i if own in (0, 3) else idx < i
        if not np.any(inside) or np.max(values[inside]) <= 0:
            return None
        j = int(idx[inside][np.argmax(values[inside])])
        return ThresholdEvent(float(rates.candidates[j]), reverse=own >= 2)

    def _families(self, rates) -> list[np.ndarray]:
        """Each candidate's value through each of the four inequalities (:meth:`choose_other_tail`)."""
        d, w = self._sel_deltas, self._weights
        parts = [*_inequalities(rates.tpr_lo[:, None], rates.fpr_hi[:, None], d),
                 *_inequalities(1.0 - rates.tpr_hi[:, None], 1.0 - rates.fpr_lo[:, None], d)]
        return [(p * w).max(axis=1) for p in parts]

    def _family(self, rates, event: ThresholdEvent) -> int:
        """Which of the four inequalities ``event``'s value on ``rates`` comes from."""
        values, i = self._families(rates), rates._index(event)
        return 2 * event.reverse + int(values[2 * event.reverse + 1][i] > values[2 * event.reverse][i])

    def value(self, rates, event: ThresholdEvent) -> float:
        i = rates._index(event)
        fwd, rev = self.objective(rates)
        return float((rev if event.reverse else fwd)[i])

    def test(self, bound: EpsilonBound) -> CurveTest:
        """A held-out two-interval bound (Clopper-Pearson, one direction) tested against the whole claimed curve."""
        if bound.directions != "forward":
            return curve_test(self.claim, deltas=[bound.delta], epsilon_lower_bounds=[bound.epsilon_lower_bound],
                              confidence=bound.confidence)
        return interval_region(self.claim, bound.tpr_interval()[0], bound.fpr_interval()[1],
                               confidence=bound.confidence, point=(bound.delta, bound.epsilon_lower_bound),
                               grid=(self.deltas, self.claimed))


def interval_region(claim, tpr_lower: float, fpr_upper: float, *, confidence: float, point=None,
                    grid=None) -> CurveTest:
    """The curve one event's jointly valid rate bounds certify, on the claim's grid, tested against it.

    ``point = (delta, epsilon)``: a point bound computed from the same bounds, put at its grid point
    as it is (the same two inequalities, so a one-point claim's region is that bound exactly).
    ``grid``: the claim's ``(deltas, epsilons)`` when the caller holds them.
    """
    deltas, claimed = (np.asarray(a, dtype=float) for a in (grid if grid is not None else claim.grid()))
    cert = _curve(tpr_lower, fpr_upper, deltas)
    if point is not None:
        cert = np.where(deltas == point[0], point[1], cert)
    return CurveTest(claim.spec, confidence, deltas, cert, claimed, float(fpr_upper), float(1.0 - tpr_lower),
                     float(claim.reference[1]))
