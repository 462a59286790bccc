"""Sequential audits: a bound that stays valid whichever round the audit stops in.

A sequential audit fixes one event (a threshold and its orientation, chosen on
calibration data), then draws held-out releases in rounds and looks at the
cumulative counts after each round: after round ``r``, ``n_r`` releases per
side, ``tp_r`` of those on D and ``fp_r`` of those on D' fall in the event.
Looking after every round and stopping when the answer looks good is optional
stopping: a 95% interval recomputed at every look and read at the most
favourable one holds less than 95% of the time.

The cure used here is to plan the looks.  :func:`round_schedule` fixes the
cumulative sizes ``n_1 < n_2 < ... < n_R`` before any release is drawn (by
default doubling from ``ceil(max_samples / 1000)``, at least 100, up to
``max_samples``: 11 rounds for 10^6), and the failure probability
``1 - confidence`` is spent evenly across them: the bound after round ``r`` is
the ordinary Clopper-Pearson bound of
:func:`~dpaudit.stats.epsilon_lower_bound` at the *round confidence*
``1 - (1 - confidence) / R``.  By the union bound, with probability at least
``confidence`` every round's bound is below the true epsilon at once, so the
bound read at any stopping round, and the largest bound seen so far (what
:class:`SequentialBound` reports), are valid whatever rule decided to stop,
even one that peeks at the counts.  The price is the round confidence:
spending 0.05 over 11 rounds is 0.0045 per round, a small share of the bound
(docs/sequential.md has the price at each size and the alternatives compared).

Everything computed at round ``r`` with the round confidence (the main bound,
a privacy profile, a GDP bound) is valid at the stopping round by the same
argument, so a pipeline passes :attr:`SequentialBound.round_confidence` to
every estimator it evaluates at the round it stops in.

Stopping rules (:meth:`SequentialBound.stopping_reason`) decide only when to
stop, never what is certified, so they cannot make the bound invalid:

* ``"violation"``: the certified bound exceeds the claimed epsilon.
* ``"converged"``: more samples up to the budget can no longer change the
  answer.  The *reachable bound* (:func:`reachable_bound`) is the bound the
  full budget would certify if the event's rates sat at the optimistic corner
  of their round-confidence box; the audit has converged when it is at most
  the claim (the verdict cannot change: futility) or exceeds the bound
  already certified by at most ``tolerance`` times the claimed epsilon (the
  precision the budget allows has been reached; off by default, because a
  claim still inside that window could yet be certified as violated).
  Either way only once this round's bound is within ``max_anytime_cost``
  (default 5%) of the single-look bound of the same counts (the fixed-size
  bound at full confidence): an early stop never lands on a round where
  anytime validity still costs more than that, so after a "converged" stop
  the bound is at least 95% of a fixed-size audit's at the same number of
  samples.  (At the budget the price grows as the event's mass shrinks;
  docs/sequential.md has it.)
* ``"budget"``: the last planned round is done, or the time budget is spent
  (or the next round would overrun it).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from .._validation import check_choice, check_confidence, check_delta, check_epsilon, check_int, check_real
from ..exceptions import ParameterTypeError, ParameterValueError
from .bounds import DIRECTIONS, EpsilonBound, epsilon_bounds_array, epsilon_lower_bound
from .clopper_pearson import cp_lower, cp_upper
from .schedule import DEFAULT_GROWTH, DEFAULT_MIN_FIRST_ROUND, RoundSchedule, round_schedule
from .verdict import StoppingReason

__all__ = [
    "RoundSchedule",
    "round_schedule",
    "RoundBound",
    "SequentialBound",
    "reachable_bound",
    "STOPPING_REASONS",
    "DEFAULT_MIN_FIRST_ROUND",
    "DEFAULT_GROWTH",
    "DEFAULT_TOLERANCE",
    "DEFAULT_MAX_ANYTIME_COST",
]

#: Reasons a sequential audit stops (a fixed-size audit reports ``"fixed"``).
STOPPING_REASONS = (StoppingReason.VIOLATION, StoppingReason.CONVERGED, StoppingReason.BUDGET)
#: "converged" when the full budget could add at most this share of the claimed epsilon to the bound.
#: 0 by default: a positive tolerance saves samples on tight mechanisms but stops audits whose claim is
#: still within reach (the trade-off is in docs/sequential.md).
DEFAULT_TOLERANCE = 0.0
#: "converged" only at a round whose bound is at least (1 - this) times its single-look bound.
DEFAULT_MAX_ANYTIME_COST = 0.05


def reachable_bound(tp, fp, n_samples, *, max_samples, round_confidence, delta=0.0, directions="forward") -> float:
    """The bound the full budget could certify if the event's rates were at their optimistic corner.

    From the cumulative counts after ``n_samples`` releases per side, each
    rate gets a Clopper-Pearson box at failure probability
    ``(1 - round_confidence) / 2``; the bound that ``max_samples`` releases
    per side would give, with the counts equal to their expectations and the
    round confidence, is evaluated at the two corners that favour the event
    (TPR high, FPR low) and its complement (TPR low, FPR high), and the larger
    is returned.  Each candidate inequality is monotone in the two rates, so no
    point of the box does better.  It is a planning figure, used only to stop
    early: it never enters the certified bound.

    Parameters
    ----------
    tp, fp : int
        Cumulative hits of the event on D and on D'.
    n_samples : int
        Cumulative releases per side.
    max_samples : int
        The budget per side (``>= n_samples``).
    round_confidence : float
        The confidence of each round (:meth:`RoundSchedule.round_confidence`).
    delta, directions
        As in :func:`~dpaudit.stats.epsilon_lower_bound`.

    Returns
    -------
    float

    Examples
    --------
    Randomized response (TPR 0.75, FPR 0.25, true epsilon ln 3 = 1.0986) after
    10^4 of a budget of 10^6:

    >>> round(reachable_bound(7500, 2500, 10_000, max_samples=10**6, round_confidence=0.995), 3)
    1.157
    """
    n_samples = check_int(n_samples, "n_samples", low=1)
    max_samples = check_int(max_samples, "max_samples", low=n_samples)
    tp = check_int(tp, "tp", low=0, high=n_samples)
    fp = check_int(fp, "fp", low=0, high=n_samples)
    round_confidence = check_confidence(round_confidence, "round_confidence")
    delta = check_delta(delta)
    check_choice(directions, "directions", DIRECTIONS)
    return _round_and_reachable(tp, fp, n_samples, max_samples, round_confidence, delta, directions,
                                project=True)[1]


def _round_and_reachable(tp, fp, n, max_samples, round_confidence, delta, directions, project):
    """(this round's bound, reachable bound or None), in three interval calls.

    One vectorised call serves the round's own bound (counts over ``n``) and
    the two optimistic corners projected to ``max_samples`` counted
    releases; this is what keeps an update cheap enough for many-seed
    soundness runs.
    """
    a = (1.0 - round_confidence) / 2.0
    if not project:
        bound, _ = epsilon_bounds_array(tp, n - tp, fp, n - fp, delta=delta, confidence=round_confidence,
                                        directions=directions)
        return float(bound), None
    lo = cp_lower(np.array([tp, fp], dtype=float), n, a)
    hi = cp_upper(np.array([tp, fp], dtype=float), n, a)
    # Corners favouring the event (TPR high, FPR low) and the complement (TPR low, FPR high).
    k0 = np.array([tp, hi[0] * max_samples, lo[0] * max_samples])
    k1 = np.array([fp, lo[1] * max_samples, hi[1] * max_samples])
    size = np.array([n, max_samples, max_samples], dtype=float)
    bound, _ = epsilon_bounds_array(k0, size - k0, k1, size - k1, delta=delta, confidence=round_confidence,
                                    directions=directions)
    return float(bound[0]), float(np.max(bound[1:]))


@dataclass(frozen=True)
class RoundBound:
    """One row of a sequential audit's trajectory.

    Attributes
    ----------
    round : int
        1 for the first planned round.
    samples : int
        The planned cumulative size this round reached (releases per side).
    tp, fp : int
        Hits of the event on D and on D' among the ``counted`` releases.
    counted : int
        Releases per side the counts cover: ``samples`` when one event's
        counts accumulate over all held-out releases, fewer when the caller
        re-chose the event and counted afresh.
    epsilon_lower_bound : float
        This round's bound at the round confidence.
    certified : float
        The largest bound of this and earlier rounds: what the audit certifies
        if it stops here.
    reachable : float or None
        :func:`reachable_bound` for the rest of the budget (None after the last
        planned round).
    single_look_bound : float
        The same counts' bound at the full confidence, i.e. what a fixed-size
        audit of this many samples would report.  A reference for the price of
        anytime validity, *not* a valid bound when the stop depended on the
        data.
    """

    round: int
    samples: int
    tp: int
    fp: int
    counted: int
    epsilon_lower_bound: float
    certified: float
    reachable: float | None
    single_look_bound: float

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class SequentialBound:
    """Anytime-valid epsilon lower bound of one event, updated round by round.

    Immutable: :meth:`update` returns a new object with one more round.  With
    probability at least ``confidence``, :attr:`epsilon_lower_bound` is below
    the true epsilon (at ``delta``) whichever round the audit stops in.

    Parameters
    ----------
    schedule : RoundSchedule
        The planned rounds, fixed before drawing (:func:`round_schedule`).
    epsilon : float
        The claimed epsilon (for the stopping rules only).
    delta : float, default 0
        The delta the bound is for.
    confidence : float, default 0.95
        Probability that the bound holds at every round at once.
    directions : {"forward", "both"}
        As in :func:`~dpaudit.stats.epsilon_lower_bound`.
    tolerance : float, default 0
        "converged" once the full budget could add at most ``tolerance *
        epsilon`` to the bound (a share of the claim, so that it means the
        same at epsilon 0.1 and 8).
    max_anytime_cost : float, default 0.05
        "converged" only at a round whose bound is at least ``1 -
        max_anytime_cost`` times its single-look bound (see
        :attr:`RoundBound.single_look_bound`); 1 turns this guard off.
    time_budget : float, optional
        Seconds; "budget" once spent (see :meth:`stopping_reason`).
    stop_when_converged : bool, default True
        False: never stop as "converged", only on a violation or the budget
        (for an audit that expects a violation, so that a rare leak is not
        judged on early rounds).  Stopping is the caller's choice: the bound
        holds at every round whatever the rule.
    stop_on_violation : bool, default True
        False: a violation does not stop the audit, which draws on to its
        budget (sample or time) for a tighter bound; nor does "converged"
        after a violation.  Valid for the same reason: each planned round's
        bound has its share of the failure probability whether it is drawn
        or not, and the largest of those drawn is reported.
    trajectory : tuple of RoundBound
        Rounds done so far (empty at the start).

    Examples
    --------
    A mechanism that claims epsilon 1 but answers like randomized response
    with epsilon ln 9 (TPR 0.9, FPR 0.1):

    >>> seq = SequentialBound(schedule=round_schedule(10**6), epsilon=1.0)
    >>> seq = seq.update(tp=900, fp=100)              # round 1: 1000 per side
    >>> round(seq.epsilon_lower_bound, 3), seq.stopping_reason()
    (1.903, 'violation')
    >>> seq.rounds, seq.samples, round(seq.round_confidence, 6)
    (1, 1000, 0.995455)
    >>> SequentialBound.from_json(seq.to_json()) == seq
    True
    """

    schedule: RoundSchedule
    epsilon: float
    delta: float = 0.0
    confidence: float = 0.95
    directions: str = "forward"
    tolerance: float = DEFAULT_TOLERANCE
    max_anytime_cost: float = DEFAULT_MAX_ANYTIME_COST
    time_budget: float | None = None
    stop_when_converged: bool = True
    stop_on_violation: bool = True
    trajectory: tuple = field(default=())

    def __post_init__(self):
        if not isinstance(self.schedule, RoundSchedule):
            raise ParameterTypeError(f"schedule must be a RoundSchedule; got {self.schedule!r}")
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "confidence", check_confidence(self.confidence))
        check_choice(self.directions, "directions", DIRECTIONS)
        object.__setattr__(self, "tolerance", check_real(self.tolerance, "tolerance", low=0.0))
        object.__setattr__(self, "max_anytime_cost",
                           check_real(self.max_anytime_cost, "max_anytime_cost", low=0.0, high=1.0))
        if self.time_budget is not None:
            object.__setattr__(self, "time_budget",
                               check_real(self.time_budget, "time_budget", low=0.0, low_inclusive=False))
        object.__setattr__(self, "trajectory", tuple(self.trajectory))

    # ------------------------------------------------------------------ state
    @property
    def round_confidence(self) -> float:
        """Confidence of each round's bound; pass it to every estimator evaluated at a round."""
        return self.schedule.round_confidence(self.confidence)

    @property
    def rounds(self) -> int:
        """Rounds done."""
        return len(self.trajectory)

    @property
    def samples(self) -> int:
        """Cumulative held-out releases per side so far (0 before the first round)."""
        return self.trajectory[-1].samples if self.trajectory else 0

    @property
    def max_samples(self) -> int:
        return self.schedule.max_samples

    @property
    def _planned_done(self) -> int:
        """Planned rounds behind us (skipped ones included)."""
        return self.trajectory[-1].round if self.trajectory else 0

    @property
    def next_samples(self) -> int | None:
        """Cumulative size the next planned round reaches, or None after the last."""
        done = self._planned_done
        return self.schedule.sizes[done] if done < len(self.schedule) else None

    @property
    def epsilon_lower_bound(self) -> float:
        """The certified bound: the largest round bound so far (0 before the first round)."""
        return self.trajectory[-1].certified if self.trajectory else 0.0

    @property
    def ceiling(self) -> float:
        """The largest bound the last round's counts could certify (a perfect attack, round confidence).

        0 before the first round.  The budget's own ceiling is
        ``ceiling(max_samples, max_samples, confidence=round_confidence)``.
        """
        from .bounds import ceiling

        if not self.trajectory:
            return 0.0
        n = self.trajectory[-1].counted
        return ceiling(n, n, delta=self.delta, confidence=self.round_confidence, directions=self.directions)

    def trajectory_columns(self) -> dict:
        """The trajectory as columns, ready for JSON and for a plot of bound against samples.

        Keys: ``round``, ``samples`` (cumulative per side), ``counted``, ``epsilon_lower_bound``
        (certified so far), ``round_bound``, ``single_look_bound`` and
        ``reachable`` (None after the last planned round).
        """
        rows = self.trajectory
        return {
            "round": [r.round for r in rows],
            "samples": [r.samples for r in rows],
            "counted": [r.counted for r in rows],
            "epsilon_lower_bound": [r.certified for r in rows],
            "round_bound": [r.epsilon_lower_bound for r in rows],
            "single_look_bound": [r.single_look_bound for r in rows],
            "reachable": [r.reachable for r in rows],
        }

    def bound(self) -> EpsilonBound:
        """The :class:`EpsilonBound` of the round that gave the certified bound (the latest on ties).

        Its ``confidence`` is the round confidence; ``details`` names the
        round and the overall confidence of the sequence.
        """
        if not self.trajectory:
            raise ParameterValueError("no round has been counted yet; call update() first")
        best = max(self.trajectory, key=lambda row: (row.epsilon_lower_bound, row.round))
        n = best.counted
        return epsilon_lower_bound(
            best.tp, n - best.tp, best.fp, n - best.fp, delta=self.delta, confidence=self.round_confidence,
            directions=self.directions,
            details={"sequential": True, "round": best.round, "rounds": self.rounds,
                     "rounds_planned": len(self.schedule), "overall_confidence": self.confidence})

    # ----------------------------------------------------------------- update
    def update(self, *, tp, fp, samples=None, counted=None, same_event=True, projected=None,
               certified=None) -> "SequentialBound":
        """Add a round's counts; returns the new state.

        Parameters
        ----------
        tp, fp : int
            Hits of the event on D and on D' among the ``counted`` held-out
            releases per side: cumulative over all rounds so far when the
            event stays the same.
        samples : int, optional
            The planned cumulative size this round reached; defaults to the
            next planned size.  It must be a planned size: planned rounds may
            be skipped (their share of the failure probability is then
            unused), never invented, since a look at an unplanned size is not
            covered by the union bound.
        counted : int, optional
            Releases per side the counts cover (default ``samples``); fewer
            when the schedule's sizes include calibration releases, or when
            the event was re-chosen and counted afresh on new held-out
            releases (each round's bound is valid as long as its event was
            chosen without its counts).
        same_event : bool, default True
            The event is the one of the previous round and the counts extend
            its counts (checked: they may only grow, by at most the added
            releases).  False when the event was re-chosen.
        projected : int, optional
            Releases per side the event's counts would cover at the end of the
            budget, for :func:`reachable_bound`; default
            ``counted * max_samples / samples`` (the same share counted).
        certified : float, optional
            The round's bound as the caller certified it (another certificate,
            a share of the round's failure probability, or the largest of
            several tests' bounds); default: the event's Clopper-Pearson bound
            at the round confidence.  Whatever is given is what the stopping
            rules read and what :attr:`epsilon_lower_bound` reports, so a
            caller that passes the bound its verdict uses stops on
            ``"violation"`` exactly when its verdict is a violation.  The
            counts still drive the reachable bound (a planning figure).
        """
        planned = self.schedule.sizes
        done = self._planned_done
        if done >= len(planned):
            raise ParameterValueError(f"all {len(planned)} planned rounds are done; no further update is allowed")
        if samples is None:
            samples = planned[done]
        samples = check_int(samples, "samples", low=1)
        if samples not in planned[done:]:
            raise ParameterValueError(f"samples must be one of the remaining planned sizes "
                                      f"{list(planned[done:])}; got {samples}")
        counted = samples if counted is None else check_int(counted, "counted", low=1, high=samples)
        if not isinstance(same_event, (bool, np.bool_)):
            raise ParameterTypeError(f"same_event must be True or False; got {same_event!r}")
        tp = check_int(tp, "tp", low=0, high=counted)
        fp = check_int(fp, "fp", low=0, high=counted)
        if self.trajectory and same_event:
            prev = self.trajectory[-1]
            if counted < prev.counted:
                raise ParameterValueError(f"counted must not shrink for the same event: {prev.counted} before, got "
                                          f"{counted} (pass same_event=False after re-choosing the event)")
            added = counted - prev.counted
            for name, new, old in (("tp", tp, prev.tp), ("fp", fp, prev.fp)):
                if not old <= new <= old + added:
                    raise ParameterValueError(
                        f"{name} must be cumulative: between {old} and {old + added} after {added} more "
                        f"releases; got {new}")
        last_round = samples >= self.max_samples
        if projected is None:
            projected = max(counted, int(round(counted * self.max_samples / samples)))
        projected = check_int(projected, "projected", low=counted)
        r = planned.index(samples) + 1
        bound, reachable = _round_and_reachable(tp, fp, counted, projected, self.round_confidence,
                                                self.delta, self.directions, project=not last_round)
        if certified is not None:
            bound = check_real(certified, "certified", low=0.0)
        certified = max(bound, self.epsilon_lower_bound)
        single, _ = epsilon_bounds_array(tp, counted - tp, fp, counted - fp, delta=self.delta,
                                         confidence=self.confidence, directions=self.directions)
        row = RoundBound(round=r, samples=samples, tp=tp, fp=fp, counted=counted, epsilon_lower_bound=bound,
                         certified=certified, reachable=reachable, single_look_bound=float(single))
        return replace(self, trajectory=self.trajectory + (row,))

    # --------------------------------------------------------------- stopping
    def violation(self) -> bool:
        """The certified bound exceeds the claimed epsilon."""
        return self.epsilon_lower_bound > self.epsilon

    def futile(self) -> bool:
        """Even the reachable bound cannot exceed the claim: more samples cannot change the verdict."""
        row = self.trajectory[-1] if self.trajectory else None
        return row is not None and row.reachable is not None and row.reachable <= self.epsilon

    def converged(self) -> bool:
        """Futile, or the reachable bound exceeds the certified one by at most ``tolerance * epsilon``.

        Only at a round whose bound is at least ``1 - max_anytime_cost`` times
        its single-look bound (always when both are 0).
        """
        row = self.trajectory[-1] if self.trajectory else None
        if row is None or row.reachable is None:
            return False
        if row.epsilon_lower_bound < (1.0 - self.max_anytime_cost) * row.single_look_bound:
            return False
        return self.futile() or row.reachable - row.certified <= self.tolerance * self.epsilon

    def budget_spent(self, *, elapsed_seconds=None, next_round_seconds=None) -> bool:
        """The last planned round is done, or the time budget is spent or would be by the next round.

        Parameters
        ----------
        elapsed_seconds : float, optional
            Time spent so far (the caller's clock).
        next_round_seconds : float, optional
            The caller's estimate of the next round's duration; when given, the
            audit stops rather than start a round that would end past the budget.
        """
        if self.trajectory and self.samples >= self.max_samples:
            return True
        if self.time_budget is None or elapsed_seconds is None:
            return False
        elapsed = check_real(elapsed_seconds, "elapsed_seconds", low=0.0)
        ahead = 0.0 if next_round_seconds is None else check_real(next_round_seconds, "next_round_seconds", low=0.0)
        return elapsed >= self.time_budget or elapsed + ahead > self.time_budget

    def stopping_reason(self, *, elapsed_seconds=None, next_round_seconds=None) -> str | None:
        """Why to stop after the rounds so far, or None to draw the next round.

        In order: ``"violation"`` (certified above the claim; not with
        ``stop_on_violation=False``, which also skips "converged" then); ``"budget"``
        when the last planned round is done; ``"converged"``
        (:meth:`converged`); ``"budget"`` when the time budget is spent
        (:meth:`budget_spent`).  Before any round: None, unless the time
        budget is already spent.
        """
        violation = self.violation()
        if violation and self.stop_on_violation:
            return "violation"
        if self.trajectory and self.samples >= self.max_samples:
            return "budget"
        if self.stop_when_converged and not violation and self.converged():
            return "converged"
        if self.budget_spent(elapsed_seconds=elapsed_seconds, next_round_seconds=next_round_seconds):
            return "budget"
        return None

    # ---------------------------------------------------------------- results
    def to_dict(self) -> dict:
        """Plain data: the settings, the schedule and one dict per round."""
        return {
            "schedule": self.schedule.to_list(),
            "epsilon": self.epsilon,
            "delta": self.delta,
            "confidence": self.confidence,
            "round_confidence": self.round_confidence,
            "directions": self.directions,
            "tolerance": self.tolerance,
            "max_anytime_cost": self.max_anytime_cost,
            "time_budget": self.time_budget,
            "stop_when_converged": self.stop_when_converged,
            "stop_on_violation": self.stop_on_violation,
            "rounds": self.rounds,
            "samples": self.samples,
            "epsilon_lower_bound": self.epsilon_lower_bound,
            "trajectory": [row.to_dict() for row in self.trajectory],
        }

    @classmethod
    def from_dict(cls, d: dict) -> "SequentialBound":
        return cls(schedule=RoundSchedule(tuple(d["schedule"])), epsilon=d["epsilon"], delta=d["delta"],
                   confidence=d["confidence"], directions=d["directions"], tolerance=d["tolerance"],
                   max_anytime_cost=d["max_anytime_cost"], time_budget=d["time_budget"],
                   stop_when_converged=d.get("stop_when_converged", True),
                   stop_on_violation=d.get("stop_on_violation", True),
                   trajectory=tuple(RoundBound(**row) for row in d["trajectory"]))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "SequentialBound":
        return cls.from_dict(json.loads(text))

    def __repr__(self) -> str:
        return (f"SequentialBound(epsilon_lower_bound={self.epsilon_lower_bound:.5g}, rounds={self.rounds}/"
                f"{len(self.schedule)}, samples={self.samples}, epsilon={self.epsilon!r}, delta={self.delta!r}, "
                f"confidence={self.confidence!r})")
