"""Anytime-valid audits of a stream of release pairs: draw a small batch, look, bet, repeat.

The statistics (the e-processes, the bets and the confidence sequence) are
the core's (:mod:`dpaudit.stats.anytime`); this module runs them on a stream:

1. draw a batch of releases per side (``batch``, 10 by default; later
   batches grow with the releases seen, 1/16 of them, so that a budget of
   10^6 costs a few hundred looks, not 10^5);
2. bet on the batch with the event chosen before it was drawn;
3. look: the claim is rejected when some family's e-value reaches its
   threshold (stop on "violation"), else the clock and the budget decide;
4. choose the next event from all releases so far: at every look while
   fewer than :data:`RECHOOSE_ALL_UNTIL` pairs were seen, then each time
   the pool has grown by a tenth (the choice reads the past only, so it
   never spoils a bet's fairness).

Witnesses (the scores an event thresholds) for scalar releases are the
release itself and its distance to the pooled past median (a leak in the
spread, such as noise scaled by the true count); other releases use the
package's distinguishers fitted on the past pool.  Every stop is valid:
the bound is a running maximum that holds at all times at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..stats.anytime import AnytimeAudit, BetChoice, choose_bets

__all__ = ["ScalarWitnesses", "DistinguisherWitnesses", "StreamResult", "StreamInterrupted", "run_stream",
           "DEFAULT_BATCH", "RECHOOSE_ALL_UNTIL", "SELECTION_CAP", "curve_points"]

#: Releases per side in a batch (the first ones; batches grow to 1/16 of the releases seen).
DEFAULT_BATCH = 10
#: The event is re-chosen at every look until this many pairs were seen, then when the pool grew by a tenth.
RECHOOSE_ALL_UNTIL = 400
#: Most past releases per side the event choice reads (the latest ones).
SELECTION_CAP = 20_000
#: The next event is chosen to beat the running bound plus this share of its gap to the claim (see ``_choose``).
TARGET_SHARE = 0.25
#: Points of a claimed curve tested (each at its share of the failure probability).
CURVE_POINTS = 4


def curve_points(claim) -> tuple[np.ndarray, np.ndarray]:
    """``(epsilons, deltas)`` tested for ``claim``: a point claim's own point; for a curve, :data:`CURVE_POINTS`
    points of its grid spread evenly in epsilon from its smallest (delta largest) up to its epsilon at 1e-6.

    >>> from dpaudit.claims import parse_claim
    >>> e, d = curve_points(parse_claim("gdp:mu=1"))
    >>> len(e), float(e[0])
    (4, 0.0)
    """
    deltas, epsilons = claim.grid()
    if len(epsilons) == 1:
        return np.asarray(epsilons, dtype=float), np.asarray(deltas, dtype=float)
    order = np.argsort(epsilons)
    eps, dl = np.asarray(epsilons)[order], np.asarray(deltas)[order]
    top = float(claim.epsilon(1e-6)) if np.isfinite(claim.epsilon(1e-6)) else float(eps[-1])
    targets = np.linspace(float(eps[0]), min(top, float(eps[-1])), CURVE_POINTS)
    idx = np.unique(np.searchsorted(eps, targets).clip(0, len(eps) - 1))
    return eps[idx], dl[idx]


class ScalarWitnesses:
    """Scores of scalar releases: the release and its distance to the pooled past median (per run)."""

    names = ("release", "distance to median")

    def fit(self, x0, x1):
        """``x0``, ``x1``: (runs, n) past releases; returns a function of (runs, m) releases -> (2, runs, m)."""
        center = np.median(np.concatenate([x0, x1], axis=1), axis=1)[:, None]

        def score(x):
            x = np.asarray(x, dtype=float)
            return np.stack([x, np.abs(x - center)])

        return score


class DistinguisherWitnesses:
    """Scores from the package's distinguishers (one run), each fitted on the older half of the past pool at each
    choice (the newer half chooses the event, so that an over-fitted score does not win on its own fit)."""

    fitted = True

    def __init__(self, names):
        self.names = tuple(names)

    def fit(self, x0, x1):
        from .distinguishers import make_distinguisher

        fitted = []
        for name in self.names:
            try:
                fitted.append(make_distinguisher(name).fit(x0[0], x1[0]))
            except (ValueError, ArithmeticError, IndexError, np.linalg.LinAlgError):
                continue  # a distinguisher that cannot fit this little data waits for more
        if not fitted:
            fitted = [_Constant()]

        def score(x):
            with np.errstate(all="ignore"):
                rows = [np.nan_to_num(np.asarray(f.score(x[0]), dtype=float), nan=0.0, posinf=1e300, neginf=-1e300)
                        for f in fitted]
            return np.stack(rows)[:, None, :]

        return score


class _Constant:
    def score(self, x):
        return np.zeros(len(x))


@dataclass
class StreamResult:
    """What a stream of looks certified (arrays over runs; an audit has one run)."""

    audit: AnytimeAudit
    pairs: int
    looks: int
    first_violation: np.ndarray  # releases per side at the first look that certified a violation, 0 when none
    trajectory: dict = field(default_factory=dict)  # per look: pairs and each run's bound (reported family)
    choice: BetChoice | None = None
    witness_names: tuple = ()
    stopped_by: str = "budget"
    seconds_drawing: float = 0.0
    seconds_looking: float = 0.0
    interrupted: bool = False


def _choose(score, keep0, keep1, audit: AnytimeAudit) -> BetChoice:
    """Each family's next bet: the event the past favours against the epsilon ``TARGET_SHARE`` of the way from
    its running bound (the confidence sequence's edge) to its claim.

    Aiming between the two serves both ends: the bound keeps growing below a claim that holds, and as it
    nears the claim the aim reaches the claim, where a violation is decided.  Aiming at the claim itself
    from the start was no faster on gross violations and slower on near ones, and below a claim that holds
    it followed noise (docs/decisions/anytime.md).
    """
    low = np.minimum(audit.bounds(), audit.epsilons[None, :])
    target = low + TARGET_SHARE * (audit.epsilons[None, :] - low)
    return choose_bets(score(keep0), score(keep1), epsilons=target, deltas=audit.deltas)


def _next_batch(pairs: int, batch: int) -> int:
    return max(batch, pairs // 16)


class _Learner:
    """The past releases, the fitted witnesses and the current bet of a stream (see :func:`run_stream`)."""

    def __init__(self, witnesses, audit: AnytimeAudit, max_pairs: int):
        self.witnesses, self.audit, self.max_pairs = witnesses, audit, max_pairs
        self.past0 = self.past1 = self.score = self.choice = None
        self.chosen_at = 0

    def absorb(self, x0, x1, pairs: int) -> int:
        """Bet on a batch pair by pair group, learning as it goes; returns the pairs seen after it."""
        m, start = x0.shape[1], 0
        while start < m:
            # Early on the event is re-chosen within the batch (pairs are i.i.d., so a bet on pair i may
            # read pairs before i): the first bet comes after 1 pair, not after a whole batch.
            stop = m if pairs >= RECHOOSE_ALL_UNTIL else min(m, start + max(1, pairs // 32))
            a0, a1 = x0[:, start:stop], x1[:, start:stop]
            if self.choice is not None:
                ind0, ind1 = self.choice.indicators(self.score(a0), self.score(a1))
                self.audit.update(ind0, ind1, self.choice)
            self.past0 = a0 if self.past0 is None else np.concatenate([self.past0, a0], axis=1)
            self.past1 = a1 if self.past1 is None else np.concatenate([self.past1, a1], axis=1)
            pairs += stop - start
            start = stop
            if pairs < RECHOOSE_ALL_UNTIL or pairs >= 1.1 * self.chosen_at:
                keep0, keep1 = self.past0[:, -SELECTION_CAP:], self.past1[:, -SELECTION_CAP:]
                if getattr(self.witnesses, "fitted", False) and keep0.shape[1] >= 20:
                    # Fitted scores are chosen among on releases they were not fitted on (the older half fits).
                    h = keep0.shape[1] // 2
                    self.score = self.witnesses.fit(keep0[:, :h], keep1[:, :h])
                    keep0, keep1 = keep0[:, h:], keep1[:, h:]
                else:
                    self.score = self.witnesses.fit(keep0, keep1)
                self.choice = _choose(self.score, keep0, keep1, self.audit)
                self.chosen_at = pairs
        return pairs


def run_stream(draw, witnesses, *, epsilons, deltas, runs=1, confidence=0.95, batch=DEFAULT_BATCH,
               max_pairs=2_000, full_grid=True, stop_on_violation=True, deadline=None, on_look=None,
               track=True, multipliers=None, interrupt_on=()) -> StreamResult:
    """Draw batches from ``draw(look, m) -> (x0, x1)`` (arrays (runs, m, ...)) and bet until a stop.

    Stops when every run has certified a violation (``stop_on_violation``), the
    next batch would pass ``max_pairs`` per side, ``time.time()`` passes
    ``deadline``, the stream ends (``draw`` returns no pair), or
    ``KeyboardInterrupt`` (the batch being drawn is dropped; the result covers
    the looks before it and ``interrupted`` is True).  ``on_look(result)`` is
    called after every look (it only watches).  An exception of a type in
    ``interrupt_on`` raised by ``draw`` (a time budget spent mid-batch) is a
    stop like the deadline's.
    """
    kw = {} if multipliers is None else {"multipliers": multipliers}
    audit = AnytimeAudit(runs, epsilons, deltas, confidence=confidence, full_grid=full_grid, **kw)
    res = StreamResult(audit=audit, pairs=0, looks=0, first_violation=np.zeros(runs, dtype=np.int64),
                       witness_names=tuple(getattr(witnesses, "names", ())))
    if track:
        res.trajectory = {"samples": [], "epsilon_lower_bound": [], "log_evalue": []}
    learner = _Learner(witnesses, audit, max_pairs)
    try:
        while True:
            m = min(_next_batch(res.pairs, batch), max_pairs - res.pairs)
            if m <= 0 or (deadline is not None and time.time() >= deadline):
                break
            t0 = time.perf_counter()
            try:
                x0, x1 = draw(res.looks, m)
            except interrupt_on:
                break
            t1 = time.perf_counter()
            res.seconds_drawing += t1 - t0
            if x0.shape[1] == 0:  # the stream ended
                break
            res.pairs = learner.absorb(x0, x1, res.pairs)
            res.looks += 1
            viol = audit.violations().any(axis=1)
            res.first_violation = np.where((res.first_violation == 0) & viol, res.pairs, res.first_violation)
            res.choice = learner.choice
            res.seconds_looking += time.perf_counter() - t1
            if track:
                res.trajectory["samples"].append(res.pairs)
                res.trajectory["epsilon_lower_bound"].append(audit.bounds())
                res.trajectory["log_evalue"].append(audit.claim_log_evalue())
            if on_look is not None:
                on_look(res)
            if stop_on_violation and viol.all():
                res.stopped_by = "violation"
                break
    except KeyboardInterrupt:
        res.interrupted = True
        raise StreamInterrupted(res) from None
    return res


class StreamInterrupted(KeyboardInterrupt):
    """A KeyboardInterrupt carrying the stream's result so far (the batch being drawn was dropped)."""

    def __init__(self, result: StreamResult):
        super().__init__()
        self.result = result
