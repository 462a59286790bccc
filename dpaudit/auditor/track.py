"""The rounds of one audit: calibrate on the growing pool, count held out, certify, ask the tracker whether to stop.

A fixed-size audit (``samples=N``) is one round.  A sequential audit runs
rounds of growing size, each certified at the round confidence of a schedule
fixed before drawing (:mod:`dpaudit.stats.sequential`), so by the union bound
every planned round's result holds at once and the largest of the finished
ones is valid whatever stopped the audit.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from .._progress import RoundProgress
from ..exceptions import ParameterValueError, TimeBudgetSpent
from ..stats.sequential import SequentialBound
from . import sequential
from .calibrate import calibrate, held_out_total
from .certify import CertifiedRound, certify_round, decisive_point
from .context import AuditContext
from .count import count_held_out
from .distinguishers import output_kind

__all__ = ["AuditRun", "plan_rounds", "DEFAULT_SAMPLES_VECTORISED", "DEFAULT_SAMPLES_PER_CALL"]

#: Most releases per side of a sequential audit (and of a fixed one without
#: ``samples``) when the target takes ``size`` (one numpy call per chunk).
DEFAULT_SAMPLES_VECTORISED = 1_000_000
#: The same for a target called once per release.
DEFAULT_SAMPLES_PER_CALL = 20_000

_CAL, _TEST = (0,), (1,)  # seed phases of a fixed-size audit (fixed: a seed must keep giving the same report)


def _cal_phase(r: int) -> tuple:
    return (2, r)


def _test_phase(r: int) -> tuple:
    return (3, r)


def default_max_samples(ctx: AuditContext) -> int:
    """The sample budget when none is given: by how the target draws."""
    return DEFAULT_SAMPLES_VECTORISED if ctx.vectorised else DEFAULT_SAMPLES_PER_CALL


def plan_rounds(ctx: AuditContext):
    """(rounds, sequential tracker or None, sample budget): one round for a fixed audit, else a schedule."""
    if ctx.samples is not None:
        n_cal = min(max(int(round(ctx.samples * ctx.calibration_fraction)), 10), ctx.samples - 10,
                    ctx.calibration_cap)
        return [sequential.RoundPlan(n_cal, ctx.samples - n_cal, _CAL, _TEST)], None, ctx.max_samples
    max_samples = default_max_samples(ctx) if ctx.max_samples is None else ctx.max_samples
    sched, plan = sequential.schedule(max_samples, vectorised=ctx.vectorised,
                                      calibration_fraction=ctx.calibration_fraction,
                                      calibration_cap=ctx.calibration_cap, cal_phase=_cal_phase,
                                      test_phase=_test_phase)
    # The statistics core owns the rounds' confidence and the stopping rules.
    epsilon, delta = ctx.claim.finite_point
    tracker = SequentialBound(schedule=sched, epsilon=epsilon, delta=delta, confidence=ctx.confidence,
                              time_budget=ctx.time_budget, stop_when_converged=bool(ctx.stop_when_converged),
                              stop_on_violation=not ctx.keep_drawing)
    return plan, tracker, max_samples


def _no_round_in_budget(time_budget: float, step, target) -> str:
    per_call = "" if getattr(target, "vectorised", False) else ", called once per release"
    return (f"time_budget: {time_budget:g} s (--time-budget) ran out before the first round of the sequential audit "
            f"was drawn ({step.n_calibration + step.n_test} releases per side of target {target.name!r}{per_call}), "
            "so nothing is certified; allow more time, or give a smaller fixed --samples")


class AuditRun:
    """One audit's rounds: calibrate on the growing pool, count held out, certify, ask the tracker whether to stop."""

    def __init__(self, ctx: AuditContext, sampler, plan, tracker):
        self.ctx, self.sampler, self.plan, self.tracker = ctx, sampler, plan, tracker
        # The point the per-delta extras (GDP event, sequential planning) start from: the claim's own for a
        # point, a point of the curve (updated after each round) for a curve.
        self.epsilon, self.delta = ctx.claim.finite_point
        self.reason = "fixed" if ctx.samples is not None else "budget"
        self.confidence = tracker.round_confidence if tracker is not None else ctx.confidence
        # Candidates are fitted here, on this machine: as many at once as the local workers (1 on Dask).
        self.threads = sampler.executor.n_jobs if sampler.executor._dask is None else 1
        self.pool: list = [None, None]
        self.kind = None
        self.test = self.float_test = None
        self.rounds: list[CertifiedRound] = []
        self.updates: list[dict] = []  # each round's counts for the tracker, replayed when its point moves
        self.drawn = 0

    def rounds_until_stop(self) -> None:
        """Draw and certify rounds until a stopping rule (or the one round of a fixed audit) says stop.

        A ``KeyboardInterrupt`` goes through untouched; the caller reports the rounds already finished,
        dropping the one being drawn, as a time budget that runs out mid-round does.
        """
        for r, step in enumerate(self.plan):
            t_round = time.perf_counter()
            self.sampler.stage = f"round {r + 1} of {len(self.plan)}: " if len(self.plan) > 1 else ""
            try:
                rd, same_event = self._round(r, step)
            except TimeBudgetSpent:
                # A look at a size chosen by the clock is not covered: the last completed round is the result.
                if not self.rounds:
                    raise ParameterValueError(_no_round_in_budget(self.tracker.time_budget, step,
                                                                  self.sampler.target)) from None
                self.reason = "budget"
                return
            self.rounds.append(rd)
            if self.tracker is None:
                return
            stop = self._track(r, step, rd, same_event, round_seconds=time.perf_counter() - t_round)
            self._progress(r, rd)
            if stop is not None:
                self.reason = stop
                return

    def _progress(self, r: int, rd: CertifiedRound) -> None:
        if self.ctx.on_round is None:
            return
        self.ctx.on_round(RoundProgress(round=r + 1, rounds_planned=len(self.plan), samples=rd.samples,
                                        epsilon_lower_bound=self.tracker.epsilon_lower_bound,
                                        claimed_epsilon=self.epsilon,
                                        elapsed_seconds=time.perf_counter() - self.ctx.t_start,
                                        # a claimed curve: the point the rounds are reported at moves
                                        claimed_delta=self.delta if self.ctx.claim.is_curve else None,
                                        samples_planned=sum(p.n_calibration + p.n_test for p in self.plan),
                                        time_budget=self.tracker.time_budget))

    def _round(self, r, step) -> tuple[CertifiedRound, bool]:
        ctx = self.ctx
        previous = None
        if step.n_calibration or not self.rounds:
            x0, x1 = self.sampler.draw(step.cal_phase, step.n_calibration)
            self.pool = [x if p is None else np.concatenate([p, x]) for p, x in zip(self.pool, (x0, x1))]
            if self.kind is None:
                self.kind = output_kind(np.concatenate([self.pool[0][:10_000], self.pool[1][:10_000]]))
            self.test, self.float_test = calibrate(self.pool, attack=ctx.attack, ideal=ctx.ideal, kind=self.kind,
                                                   cert=ctx.cert, confidence=self.confidence,
                                                   n_test=held_out_total(self.plan, r), threads=self.threads,
                                                   certificate=ctx.certificate)
        else:
            # No new calibration data: the events stay, so their held-out counts add up.
            previous = self.rounds[-1]
        tests = [self.test] + ([self.float_test] if self.float_test is not None else [])
        held = count_held_out(self.sampler, tests, n_test=step.n_test, test_phase=step.test_phase, entropy=ctx.entropy,
                              previous=previous)
        self.drawn += step.n_calibration + step.n_test + held.drawn_beyond
        rd = certify_round(r, self.drawn, len(self.pool[0]), self.test, self.float_test, held.counts, held.poisson,
                           described=held.described, delta=self.delta, confidence=self.confidence, cert=ctx.cert)
        return rd, previous is not None

    def _track(self, r, step, rd, same_event, *, round_seconds) -> str | None:
        # The tracker plans at the point of the claim this round came closest to (a point claim's own
        # point; for a curve it moves with the event, so that futility is judged where the event is
        # strongest).  It is fed each round's certified result against that point, the one the verdict
        # reads (float leak and its share of the failure probability included), which exceeds its
        # epsilon exactly when some point of the claim is violated, so it stops on "violation" exactly
        # when the report says "violation"; the main event's counts only plan the rest (its reachable
        # bound).  When the point moves, the rounds so far are replayed against it.
        self.epsilon, self.delta = decisive_point(rd, self.epsilon, self.delta)
        self.updates.append(dict(tp=rd.tracked.tp, fp=rd.tracked.fp, samples=step.cumulative, counted=rd.n_test,
                                 same_event=same_event,
                                 projected=sequential.held_out_at_budget(self.plan, r, rd.n_test)))
        tracker = replace(self.tracker, epsilon=self.epsilon, delta=self.delta, trajectory=())
        for done, kw in zip(self.rounds, self.updates):
            tracker = tracker.update(**kw, certified=done.bound_against(self.epsilon, self.delta))
        self.tracker = tracker
        nxt = self.plan[r + 1] if r + 1 < len(self.plan) else None
        next_seconds = None if nxt is None else round_seconds * (nxt.n_calibration + nxt.n_test) / max(
            step.n_calibration + step.n_test, 1)
        stop = self.tracker.stopping_reason(elapsed_seconds=time.perf_counter() - self.ctx.t_start,
                                            next_round_seconds=next_seconds)
        if stop == "converged" and any(p.n_calibration for p in self.plan[r + 1:]):
            # "Converged" judges this round's event; while the calibration pool
            # still grows, a later round may choose a far better one (an SVT leak
            # can hide from an event chosen on a few thousand releases).
            return None
        return stop
