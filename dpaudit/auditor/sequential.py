"""Sequential audits: the round schedule, the confidence each round gets, and when to stop.

A sequential audit plans its rounds before drawing anything: round ``r``
draws ``first * 2**r`` releases per side (the last one trimmed so that the
total is the budget ``max_samples``), half of them for calibration (pooled
across rounds, up to the calibration cap) and the rest held out.  Each round
certifies a bound from its own held-out counts at failure probability
``(1 - confidence) / R`` for the ``R`` planned rounds, so that all rounds'
bounds hold at once with probability ``confidence`` (union bound), and the
largest one is valid whatever round the audit stopped in: stopping early,
for any reason, never makes the bound optimistic.

The price is the smaller failure probability per round: for a Laplace
mechanism at 10^6 releases per side, about 1% of the bound (0.982 against
0.991 for a fixed-size audit with the same total).

Stopping reasons:

* ``"violation"``: the bound exceeds the claim; more samples cannot undo it.
* ``"converged"``: more samples can no longer change the verdict: an upper
  confidence bound on the privacy loss of the round's event is at most the
  claim, or the bound the rest of the budget could add is below the
  precision the budget allows.
* ``"budget"``: ``max_samples`` or the time budget is spent (no round
  starts that would probably overrun the time budget).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats.bounds import ceiling, epsilon_bounds_array
from ..stats.clopper_pearson import cp_lower, cp_upper

__all__ = ["RoundPlan", "schedule", "round_confidence", "stopping_reason", "FIRST_ROUND"]

#: Releases per side in the first round (vectorised targets, per-call targets).
FIRST_ROUND = {True: 2_000, False: 200}
#: A bound that the rest of the budget could raise by less than this (absolute, plus relative) has converged.
CONVERGENCE_TOLERANCE = (0.005, 0.01)


@dataclass(frozen=True)
class RoundPlan:
    """Releases per side that one round draws for calibration and to count, and their seed phases."""

    n_calibration: int
    n_test: int
    cal_phase: tuple
    test_phase: tuple


def schedule(max_samples: int, *, vectorised: bool, calibration_fraction: float = 0.5,
             calibration_cap: int = 1_000_000, cal_phase=lambda r: (2, r), test_phase=lambda r: (3, r)
             ) -> list[RoundPlan]:
    """The planned rounds: doubling sizes from :data:`FIRST_ROUND` up to ``max_samples`` in all.

    >>> [p.n_calibration + p.n_test for p in schedule(20_000, vectorised=False)]
    [200, 400, 800, 1600, 3200, 6400, 7400]
    """
    first = min(FIRST_ROUND[bool(vectorised)], max_samples)
    # Calibrate until the pool holds half of what a fixed-size audit of the
    # whole budget would use; afterwards the events stay and counts add up.
    cal_target = min(calibration_cap, max(int(max_samples * calibration_fraction / 2), 10))
    plan, total, pool, r = [], 0, 0, 0
    while total < max_samples:
        m = min(first << r, max_samples - total)
        if m < 40 and plan:  # too small to split: give the rest to the previous round
            last = plan.pop()
            m += last.n_calibration + last.n_test
            pool -= last.n_calibration
            total -= last.n_calibration + last.n_test
            r -= 1
        n_cal = min(max(int(round(m * calibration_fraction)), 10), m - 10, cal_target - pool)
        n_cal = max(n_cal, 0)
        plan.append(RoundPlan(n_cal, m - n_cal, cal_phase(r), test_phase(r)))
        pool += n_cal
        total += m
        r += 1
    return plan


def round_confidence(confidence: float, n_rounds: int) -> float:
    """Each round's confidence: the failure probability shared equally among the planned rounds."""
    return 1.0 - (1.0 - confidence) / max(int(n_rounds), 1)


def _upper_loss(tp, n0, fp, n1, alpha) -> float:
    """An upper confidence bound on the privacy loss of the event and its complement, both orientations."""
    tpr_hi, tpr_lo = cp_upper(tp, n0, alpha), cp_lower(tp, n0, alpha)
    fpr_hi, fpr_lo = cp_upper(fp, n1, alpha), cp_lower(fp, n1, alpha)
    with np.errstate(divide="ignore"):
        vals = [np.log(tpr_hi) - np.log(fpr_lo), np.log(1 - tpr_lo) - np.log(1 - fpr_hi),
                np.log(fpr_hi) - np.log(tpr_lo), np.log(1 - fpr_lo) - np.log(1 - tpr_hi)]
    return float(np.nanmax(vals))


def stopping_reason(*, bound, claimed_epsilon, delta, round_confidence, counts, remaining, elapsed,
                    round_seconds, last_round_size, time_budget, drawn, max_samples) -> str | None:
    """Why the audit stops after this round, or ``None`` to go on.

    ``counts`` are the last round's ``(tp, n0, fp, n1)`` for its main event;
    ``remaining`` the rounds still planned; ``drawn`` the releases per side so far.

    The rules that judge the event (its upper confidence bound, the gain
    projected from its rates) apply only once half the budget is drawn: an
    event chosen on a small calibration pool can be far from the best one,
    and later rounds, with more calibration data, choose again.
    """
    if bound > claimed_epsilon:
        return "violation"
    if not remaining:
        return "budget"
    tp, n0, fp, n1 = counts
    n_next = max(p.n_test for p in remaining)
    if ceiling(n_next, n_next, delta=delta, confidence=round_confidence) <= claimed_epsilon:
        return "converged"  # even a perfect attack on the rest of the budget could not certify a violation
    if time_budget is not None:
        nxt = remaining[0].n_calibration + remaining[0].n_test
        predicted = round_seconds * nxt / max(last_round_size, 1)
        if elapsed + predicted > time_budget:
            return "budget"
    if 2 * drawn < max_samples:
        return None
    alpha = (1.0 - round_confidence) / 4.0
    if delta == 0 and _upper_loss(tp, n0, fp, n1, alpha) <= claimed_epsilon:
        return "converged"
    # What the largest remaining round would certify if its rates were the ones just seen.
    scale0, scale1 = n_next / n0, n_next / n1
    b, _ = epsilon_bounds_array(np.array([tp * scale0]), np.array([n_next - tp * scale0]), np.array([fp * scale1]),
                                np.array([n_next - fp * scale1]), delta=delta, confidence=round_confidence)
    projected = float(b[0])
    atol, rtol = CONVERGENCE_TOLERANCE
    if projected - bound < atol + rtol * bound and projected <= claimed_epsilon:
        return "converged"
    return None
