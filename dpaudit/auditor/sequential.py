"""How a sequential audit splits its planned rounds between calibration and held-out releases.

The rounds themselves, the confidence each gets and the stopping rules are
the statistics core's (:mod:`dpaudit.stats.sequential`): cumulative sizes
fixed before anything is drawn (doubling from :data:`FIRST_ROUND` up to the
budget), the failure probability shared equally among them, so that every
round's bound holds at once and the largest is valid whatever round the
audit stopped in.

This module decides what each round's releases are for.  Early rounds give
half of their releases to calibration (pooled across rounds) and count the
other half with an event chosen afresh on the grown pool.  Once the pool
holds half of what a fixed-size audit of the whole budget would use for
calibration, the events stay, every further release is held out, and the
counts of the same events add up across rounds.  So a grossly broken
mechanism is caught in the first round (2,000 releases per side for a
vectorised target, 200 for one called per release), and a subtle one ends
with a large calibration pool and a held-out count larger than a fixed-size
audit's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..stats.sequential import round_schedule

__all__ = ["RoundPlan", "schedule", "held_out_at_budget", "FIRST_ROUND"]

#: Releases per side in the first round (vectorised targets, per-call targets).
FIRST_ROUND = {True: 2_000, False: 200}


@dataclass(frozen=True)
class RoundPlan:
    """One round: releases per side for calibration and to count, their seed phases, and the cumulative size."""

    n_calibration: int
    n_test: int
    cal_phase: tuple
    test_phase: tuple
    cumulative: int = 0


def schedule(max_samples: int, *, vectorised: bool, calibration_fraction: float = 0.5,
             calibration_cap: int = 1_000_000, cal_phase=lambda r: (2, r), test_phase=lambda r: (3, r)):
    """The statistics core's round schedule, and each round's calibration / held-out split.

    Returns ``(RoundSchedule, [RoundPlan, ...])``; the plans' cumulative sizes
    are the schedule's.

    >>> sched, plan = schedule(20_000, vectorised=False)
    >>> sched.sizes
    (200, 400, 800, 1600, 3200, 6400, 12800, 20000)
    >>> [(p.n_calibration, p.n_test) for p in plan][-3:]
    [(1600, 1600), (1800, 4600), (0, 7200)]
    """
    first = min(FIRST_ROUND[bool(vectorised)], max_samples)
    sched = round_schedule(max_samples, first=first)
    cal_target = min(calibration_cap, max(int(max_samples * calibration_fraction / 2), 10))
    plan, previous, pool = [], 0, 0
    for r, size in enumerate(sched.sizes):
        m = size - previous
        n_cal = min(max(int(round(m * calibration_fraction)), min(10, m // 2)), m - min(10, m // 2),
                    cal_target - pool)
        n_cal = max(n_cal, 0) if r else max(n_cal, 1)
        plan.append(RoundPlan(n_cal, m - n_cal, cal_phase(r), test_phase(r), size))
        pool += n_cal
        previous = size
    return sched, plan


def held_out_at_budget(plan, r: int, counted: int) -> int:
    """Held-out releases per side the event of round ``r`` (0-based) would be counted on at the end of the budget.

    Once no later round calibrates, the event stays and every later release is
    held out: ``counted`` plus all later rounds' releases.  While calibration
    goes on the event will be re-chosen, so only this round's ``counted`` is
    certain (and the pipeline does not stop as "converged" then).  This is the
    ``projected`` count of :meth:`~dpaudit.stats.SequentialBound.update`; the
    core's default (the same share as now) would read the 2,000 held-out
    releases of a round in which half went to calibration as 4,000 at the
    end of a 16,000 budget, where 10,000 are counted.

    >>> sched, plan = schedule(16_000, vectorised=True)
    >>> [(p.cumulative, p.n_calibration, p.n_test) for p in plan]
    [(2000, 1000, 1000), (4000, 1000, 1000), (8000, 2000, 2000), (16000, 0, 8000)]
    >>> held_out_at_budget(plan, 2, 2000), held_out_at_budget(plan, 3, 10_000), held_out_at_budget(plan, 1, 1000)
    (10000, 10000, 1000)
    """
    later = plan[r + 1:]
    if any(p.n_calibration for p in later):
        return counted
    return counted + sum(p.n_test for p in later)
