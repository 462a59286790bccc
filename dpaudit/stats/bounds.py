"""From an attack's confusion counts to an epsilon lower bound with a stated confidence.

(epsilon, delta)-DP says that for every event E and neighbours D, D'

    P_D(E) <= e^eps P_D'(E) + delta        and        P_D'(E) <= e^eps P_D(E) + delta.

Applied to E and to its complement (the hypothesis-testing form of Kairouz,
Oh and Viswanath 2015: TPR <= e^eps FPR + delta and TNR <= e^eps FNR + delta),
any confusion count gives

    eps >= ln((TPR - delta) / FPR)   and   eps >= ln((TNR - delta) / FNR).

We replace each rate by a one-sided Clopper-Pearson bound in the conservative
direction.  The "forward" direction (E is the attacker's guess "D") uses two
intervals, a lower bound on TPR and an upper bound on FPR, which also give the
complement's bound (TNR_lo = 1 - FPR_hi, FNR_hi = 1 - TPR_lo); each gets half
the failure probability.  ``directions="both"`` also tries the reverse guess
(E more likely under D'), which needs two more intervals, so each of the four
gets a quarter.  The reported bound is the largest of the candidates and is
valid with probability at least ``confidence`` by the union bound.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from .._validation import check_choice, check_confidence, check_delta, check_int
from ..exceptions import ParameterValueError
from .clopper_pearson import cp_lower, cp_upper

__all__ = [
    "EpsilonBound",
    "epsilon_lower_bound",
    "epsilon_bounds_array",
    "ceiling",
    "log_ratio_bound",
    "poisson_log_ratio",
    "poisson_epsilon_bound",
    "poisson_held_out_mean",
    "DIRECTIONS",
]

DIRECTIONS = ("forward", "both")


def log_ratio_bound(p_lo, q_hi, delta):
    """Vectorised ``max(0, ln((p_lo - delta) / q_hi))``; 0 where nothing is certified.

    >>> round(float(log_ratio_bound(0.75, 0.25, 0.0)), 6)
    1.098612
    >>> float(log_ratio_bound(0.1, 0.2, 0.0)), float(log_ratio_bound(1e-6, 1e-9, 1e-5))
    (0.0, 0.0)
    """
    p_lo = np.asarray(p_lo, dtype=float)
    q_hi = np.asarray(q_hi, dtype=float)
    num = p_lo - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log(num) - np.log(q_hi)
    val = np.where((num > 0) & (q_hi > 0), val, 0.0)
    # q_hi == 0 cannot come out of a Clopper-Pearson upper bound with n >= 1.
    val = np.maximum(val, 0.0)
    return val if val.ndim else float(val)


def _alpha_per_interval(confidence: float, directions: str, n_comparisons: int = 1) -> float:
    return (1.0 - confidence) / ((2.0 if directions == "forward" else 4.0) * n_comparisons)


def epsilon_bounds_array(tp, fn, fp, tn, *, delta=0.0, confidence=0.95, directions="forward", n_comparisons=1):
    """Vectorised core of :func:`epsilon_lower_bound`: arrays in, array of bounds out.

    Used to score many candidate events at once; no validation beyond numpy's.

    Returns
    -------
    bound : ndarray
        The certified lower bound for each count.
    which : ndarray of int
        Which candidate gave it: 0 event (D over D'), 1 complement (D' over D),
        2 event (D' over D), 3 complement (D over D').
    """
    tp, fn, fp, tn = (np.asarray(a, dtype=float) for a in (tp, fn, fp, tn))
    n0, n1 = tp + fn, fp + tn
    alpha = _alpha_per_interval(confidence, directions, n_comparisons)
    tpr_lo = cp_lower(tp, n0, alpha)
    fpr_hi = cp_upper(fp, n1, alpha)
    cands = [
        log_ratio_bound(tpr_lo, fpr_hi, delta),            # P_D(E) vs P_D'(E)
        log_ratio_bound(1.0 - fpr_hi, 1.0 - tpr_lo, delta),  # P_D'(E^c) vs P_D(E^c)
    ]
    if directions == "both":
        tpr_hi = cp_upper(tp, n0, alpha)
        fpr_lo = cp_lower(fp, n1, alpha)
        cands.append(log_ratio_bound(fpr_lo, tpr_hi, delta))            # P_D'(E) vs P_D(E)
        cands.append(log_ratio_bound(1.0 - tpr_hi, 1.0 - fpr_lo, delta))  # P_D(E^c) vs P_D'(E^c)
    stacked = np.stack(np.broadcast_arrays(*cands))
    which = np.argmax(stacked, axis=0)
    return np.max(stacked, axis=0), which


_WHICH = (
    ("D over D'", "event"),
    ("D' over D", "complement"),
    ("D' over D", "event"),
    ("D over D'", "complement"),
)


@dataclass(frozen=True)
class EpsilonBound:
    """An empirical epsilon lower bound with the counts it was computed from.

    Attributes
    ----------
    epsilon_lower_bound : float
        Certified lower bound on the mechanism's epsilon (at ``delta``) on this
        pair, valid with probability at least ``confidence``; 0 when nothing
        can be certified.
    tp, fn : int
        Runs on D where the attack guessed "D" (true positives) and "D'".
    fp, tn : int
        Runs on D' where the attack guessed "D" (false positives) and "D'".
    delta, confidence : float
        The delta the bound is for and the probability it is valid.
    ceiling : float
        The largest bound these sample sizes could certify (perfect separation).
    method, directions : str
        The interval method and which directions were tried.
    direction, event : str
        Which inequality gave the bound ("D over D'" / "D' over D"; "event" /
        "complement").
    details : dict
        Extra description from the producer (threshold, selection rule...).

    Examples
    --------
    >>> b = epsilon_lower_bound(750_000, 250_000, 250_000, 750_000)
    >>> b
    EpsilonBound(epsilon_lower_bound=1.0941, ceiling=12.5, tp=750000, fn=250000, fp=250000, tn=750000, delta=0.0, confidence=0.95)
    >>> EpsilonBound.from_json(b.to_json()) == b
    True
    """

    epsilon_lower_bound: float
    tp: int
    fn: int
    fp: int
    tn: int
    delta: float
    confidence: float
    ceiling: float
    method: str = "clopper-pearson"
    directions: str = "forward"
    n_comparisons: int = 1
    direction: str = "D over D'"
    event: str = "event"
    details: dict = field(default_factory=dict, compare=True)

    def __repr__(self) -> str:
        return (
            f"EpsilonBound(epsilon_lower_bound={self.epsilon_lower_bound:.5g}, ceiling={self.ceiling:.3g}, "
            f"tp={self.tp}, fn={self.fn}, fp={self.fp}, tn={self.tn}, delta={self.delta!r}, "
            f"confidence={self.confidence!r})"
        )

    @property
    def n0(self) -> int:
        """Runs on D."""
        return self.tp + self.fn

    @property
    def n1(self) -> int:
        """Runs on D'."""
        return self.fp + self.tn

    @property
    def tpr(self) -> float:
        return self.tp / self.n0

    @property
    def fpr(self) -> float:
        return self.fp / self.n1

    def _alpha(self) -> float:
        return _alpha_per_interval(self.confidence, self.directions, self.n_comparisons)

    def tpr_interval(self) -> tuple[float, float]:
        """The (lower, upper) Clopper-Pearson bounds on TPR at the per-interval failure probability."""
        a = self._alpha()
        return float(cp_lower(self.tp, self.n0, a)), float(cp_upper(self.tp, self.n0, a))

    def fpr_interval(self) -> tuple[float, float]:
        """The (lower, upper) Clopper-Pearson bounds on FPR at the per-interval failure probability."""
        a = self._alpha()
        return float(cp_lower(self.fp, self.n1, a)), float(cp_upper(self.fp, self.n1, a))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["tpr"], d["fpr"] = self.tpr, self.fpr
        d["tpr_interval"], d["fpr_interval"] = list(self.tpr_interval()), list(self.fpr_interval())
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "EpsilonBound":
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in d.items() if k in names})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "EpsilonBound":
        return cls.from_dict(json.loads(text))


def _check_counts(tp, fn, fp, tn):
    tp = check_int(tp, "tp", low=0)
    fn = check_int(fn, "fn", low=0)
    fp = check_int(fp, "fp", low=0)
    tn = check_int(tn, "tn", low=0)
    if tp + fn == 0:
        raise ParameterValueError("tp + fn (runs on D) must be at least 1; got 0")
    if fp + tn == 0:
        raise ParameterValueError("fp + tn (runs on D') must be at least 1; got 0")
    return tp, fn, fp, tn


def ceiling(n0, n1, *, delta=0.0, confidence=0.95, directions="forward", n_comparisons=1) -> float:
    """The largest bound ``n0`` runs on D and ``n1`` on D' can certify.

    It is the bound of a perfect attack (TP = n0, FP = 0), so no attack at
    these sample sizes can report more; a "no violation found" below it says
    nothing about budgets above it.

    Examples
    --------
    >>> round(ceiling(1_000_000, 1_000_000), 3)   # ln(0.025 ** 1e-6 / (1 - 0.025 ** 1e-6))
    12.51
    >>> ceiling(1, 1)
    0.0
    """
    n0 = check_int(n0, "n0", low=1)
    n1 = check_int(n1, "n1", low=1)
    bound, _ = epsilon_bounds_array(n0, 0, 0, n1, delta=delta, confidence=confidence, directions=directions,
                                    n_comparisons=n_comparisons)
    return float(bound)


def epsilon_lower_bound(
    tp, fn, fp, tn, *, delta=0.0, confidence=0.95, directions="forward", n_comparisons=1, details=None
) -> EpsilonBound:
    """Epsilon lower bound from a confusion count, valid with probability ``confidence``.

    Parameters
    ----------
    tp, fn : int
        On runs of the mechanism on D: how often the attack guessed D (tp) or D' (fn).
    fp, tn : int
        On runs on D': how often the attack guessed D (fp) or D' (tn).
    delta : float, default 0
        The delta of the claim; the bound is on epsilon at this delta.
    confidence : float, default 0.95
        Probability that the returned bound is below the true epsilon.
    directions : {"forward", "both"}
        "forward" when the guess was fixed before counting to mean "D"
        (two intervals); "both" when the direction is not known in advance
        (four intervals, each with a quarter of the failure probability).
    n_comparisons : int, default 1
        When the event was the best of ``n_comparisons`` events scored on these
        same counts, the failure probability is divided among them (Bonferroni).
    details : dict, optional
        Free description stored on the result (threshold, selection...).

    Returns
    -------
    EpsilonBound

    Examples
    --------
    Randomized response with truth probability 1/2 (true epsilon ln 3 = 1.0986):

    >>> b = epsilon_lower_bound(750_000, 250_000, 250_000, 750_000)
    >>> round(b.epsilon_lower_bound, 3)
    1.094

    A guess that ignores the output certifies nothing:

    >>> epsilon_lower_bound(500, 500, 500, 500).epsilon_lower_bound
    0.0
    """
    tp, fn, fp, tn = _check_counts(tp, fn, fp, tn)
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    check_choice(directions, "directions", DIRECTIONS)
    n_comparisons = check_int(n_comparisons, "n_comparisons", low=1)
    bound, which = epsilon_bounds_array(tp, fn, fp, tn, delta=delta, confidence=confidence, directions=directions,
                                        n_comparisons=n_comparisons)
    direction, event = _WHICH[int(which)]
    return EpsilonBound(
        epsilon_lower_bound=float(bound),
        tp=tp, fn=fn, fp=fp, tn=tn,
        delta=delta, confidence=confidence,
        ceiling=ceiling(tp + fn, fp + tn, delta=delta, confidence=confidence, directions=directions,
                        n_comparisons=n_comparisons),
        directions=directions, n_comparisons=n_comparisons, direction=direction, event=event,
        details=dict(details or {}),
    )


# ----------------------------------------------------------------------------- the Poisson certificate
def poisson_held_out_mean(n: int) -> float:
    """The mean lambda of the Poisson number of held-out releases per side that replaces ``n``.

    ``n - 4 sqrt(n)`` (at least ``n / 2``): the Poisson count exceeds ``n``
    with probability about 3e-5, and then the audit draws the few extra
    releases, so the certificate is exact; the price is ``4 sqrt(n)`` releases
    (0.4% of 10^6).

    >>> poisson_held_out_mean(1_000_000)
    996000.0
    """
    n = check_int(n, "n", low=1)
    return float(max(n - 4.0 * math.sqrt(n), 0.5 * n))


def poisson_log_ratio(x_num, x_den, alpha, exposure_ratio=1.0):
    """Vectorised exact lower bound on ``ln(mu_num / mu_den)`` from two independent Poisson counts.

    Given ``S = x_num + x_den``, ``x_num`` is binomial with success
    probability ``mu_num / (mu_num + mu_den)`` whatever the two means are, so
    a one-sided Clopper-Pearson bound ``theta`` on that probability at
    failure probability ``alpha`` gives ``mu_num / mu_den >= theta / (1 -
    theta)``.  ``exposure_ratio`` (``lambda_den / lambda_num``) corrects for
    unequal expected sizes: the counts' means are ``lambda * p``.  Counts may
    be non-integers (projected counts).  0 where nothing is certified.

    >>> round(float(poisson_log_ratio(2000, 1000, 0.05)), 4)
    0.6288
    >>> float(poisson_log_ratio(0, 5, 0.05))
    0.0
    """
    x_num = np.asarray(x_num, dtype=float)
    x_den = np.asarray(x_den, dtype=float)
    total = x_num + x_den
    safe = np.maximum(total, 1.0)
    theta = cp_lower(np.where(total > 0, x_num, 0.0), safe, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log(theta) - np.log1p(-theta) + np.log(exposure_ratio)
    val = np.where((total > 0) & (theta > 0) & np.isfinite(val), val, 0.0)
    val = np.maximum(val, 0.0)
    return val if val.ndim else float(val)


def poisson_epsilon_bound(tp, fn, fp, tn, *, inequality="event", confidence=0.95, details=None) -> EpsilonBound:
    """Epsilon lower bound from one event's counts on Poisson-sized held-out sets, exact at ``confidence``.

    The held-out sets hold ``N0 = tp + fn`` and ``N1 = fp + tn`` releases
    with ``N0``, ``N1`` independent Poisson(lambda) draws of one mean, made
    before any release was seen.  An event's counts are then independent
    Poisson variables with means ``lambda P_D(E)`` and ``lambda P_D'(E)``,
    and the conditional test of :func:`poisson_log_ratio` certifies one of
    the two inequalities the intervals of :func:`epsilon_lower_bound` cover:
    ``ln(P_D(E) / P_D'(E))`` (``inequality="event"``, from ``tp`` and
    ``fp``) or ``ln(P_D'(E^c) / P_D(E^c))`` (``"complement"``, from ``tn``
    and ``fn``), with the whole failure probability ``1 - confidence``, where
    the intervals split it between two rates and bound each separately.
    For rare events its loss is about half the two intervals' (a delta of 0
    only: the test is about a ratio, not a difference).

    The event and the inequality must be fixed before the counts are seen
    (chosen on calibration data).

    Examples
    --------
    >>> b = poisson_epsilon_bound(3000, 997_000, 1000, 999_000, confidence=0.95)
    >>> round(b.epsilon_lower_bound, 4), b.method, b.direction
    (1.0381, 'poisson-conditional', "D over D'")
    """
    tp, fn, fp, tn = _check_counts(tp, fn, fp, tn)
    confidence = check_confidence(confidence)
    check_choice(inequality, "inequality", ("event", "complement"))
    alpha = 1.0 - confidence
    num, den, n_num = (tn, fn, fp + tn) if inequality == "complement" else (tp, fp, tp + fn)
    bound = poisson_log_ratio(num, den, alpha)
    return EpsilonBound(
        epsilon_lower_bound=float(bound),
        tp=tp, fn=fn, fp=fp, tn=tn,
        delta=0.0, confidence=confidence,
        ceiling=float(poisson_log_ratio(n_num, 0, alpha)),
        method="poisson-conditional", directions="forward",
        direction="D' over D" if inequality == "complement" else "D over D'", event=inequality,
        details=dict(details or {}),
    )
