"""One-run audits: many canaries, one training run, a certified epsilon lower bound.

:func:`audit_one_run` takes a score per canary and whether each canary was
included (each independently with probability 1/2) and returns the bound of
Steinke, Nasr and Jagielski (2023), Theorem 3 (statistics in
:mod:`dpaudit.stats.one_run`).  :func:`one_run` is the harness: it draws the
inclusion bits, trains once on the dataset plus the included canaries, scores
every canary and audits.  ``docs/one-run.md`` explains when to use it.

Examples
--------
>>> import numpy as np, dpaudit
>>> rng = np.random.default_rng(0)
>>> included = rng.integers(0, 2, 1000)
>>> scores = included + rng.laplace(0.0, 1.0, 1000)      # each canary's score is 1-DP in its own bit
>>> r = dpaudit.audit_one_run(scores, included, epsilon=1.0)
>>> r.verdict, 0.0 < r.epsilon_lower_bound <= 1.0
('no violation found', True)
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ._rng import as_seed_sequence, seed_entropy
from .claims import as_claim
from .datasets import parse_dataset
from .exceptions import DatasetError, ParameterValueError
from .params import ONE_RUN_OPTIONS
from .stats.curves import curve_test
from .stats.one_run import guess_grid, one_run_counts, one_run_epsilon

__all__ = ["OneRunReport", "audit_one_run", "load_one_run_inputs", "one_run"]

#: Most deltas of a claimed curve a one-run audit certifies at (log-spaced over the claim's grid, ends kept).
CURVE_POINTS = 40


@dataclass(frozen=True)
class OneRunReport:
    """Result of :func:`audit_one_run` / :func:`one_run`; attribute names are the keys of ``dpaudit one-run --json``.

    ``epsilon_lower_bound`` holds with probability ``confidence`` (at
    ``claimed_delta``); ``guesses`` and ``correct`` are the counts it came
    from; ``ceiling`` is the bound had every one of the guesses been right at
    the best number of guesses (the most these canaries could show).
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    claimed_delta: float
    confidence: float
    canaries: int
    guesses: int
    correct: int
    verdict: str
    ceiling: float
    guess_rule: str
    grid: list
    grid_confidence: float
    counts: list
    claim: str | None = None
    curve_violation: dict | None = None
    included: int = 0
    seed: int | None = None
    scores: np.ndarray | None = field(default=None, repr=False, compare=False)
    inclusion: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def violation(self) -> bool:
        return self.verdict == "violation"

    def to_dict(self) -> dict:
        """The JSON object (no arrays: ``scores`` and ``inclusion`` stay attributes)."""
        out = asdict(self)
        out.pop("scores")
        out.pop("inclusion")
        return out

    def __str__(self) -> str:
        return self.summary()

    def summary(self) -> str:
        """A few lines for people."""
        up = (self.guesses + 1) // 2
        lines = [f"verdict     {self.verdict.upper()}: epsilon >= {self.epsilon_lower_bound:.4f} with "
                 f"{self.confidence:.0%} confidence; claimed epsilon = {self.claimed_epsilon:g}"
                 + (f", delta = {self.claimed_delta:g}" if self.claimed_delta else "")]
        if self.claim is not None:
            where = "largest margin over the curve" if self.curve_violation else "the point the audit came closest to"
            lines.append(f"claim       {self.claim}: reported at delta = {self.claimed_delta:g} ({where})")
        lines += [
            f"canaries    {self.canaries} in one run ({self.included} included, each with probability 1/2)"
            + (f"; seed {self.seed}" if self.seed is not None else ""),
            f"guesses     {self.correct} of {self.guesses} right (the {up} highest scores guessed 'included', the "
            f"{self.guesses - up} lowest 'excluded')",
            "choice      " + (f"--guesses {self.guesses}, fixed in advance" if self.guess_rule == "fixed" else
                              f"the best of {len(self.grid)} guess counts {self.grid}, each certified at "
                              f"{self.grid_confidence:.4%} (Bonferroni over the grid)"),
            f"ceiling     {self.ceiling:.3f} (every guess right: the most {self.canaries} canaries can certify "
            "this way)",
        ]
        return "\n".join(lines)


def _as_1d(values, name: str) -> np.ndarray:
    arr = parse_dataset(values, name=name)
    if arr.ndim != 1:
        raise DatasetError(f"{name}: expected one value per canary (a 1-D array or one CSV column); got shape "
                           f"{arr.shape}")
    return arr


def load_one_run_inputs(scores, included, *, names=("scores", "included")) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, included)`` as checked 1-D arrays (arrays, JSON literals or .npy/.csv/.json files).

    Errors are :class:`~dpaudit.exceptions.DatasetError` naming ``names``: a bad
    file, NaN, lengths that differ, an inclusion bit other than 0/1.
    """
    s = _as_1d(scores, names[0]).astype(float)
    inc = _as_1d(included, names[1])
    where = [n + (f" {os.fspath(v)!r}" if isinstance(v, (str, os.PathLike)) else "")
             for n, v in zip(names, (scores, included))]
    bad = np.flatnonzero((inc != 0) & (inc != 1))
    if bad.size:
        raise DatasetError(f"{where[1]}: values must be 0 or 1 (whether each canary was included); got "
                           f"{inc[bad[0]].item()!r} at index {int(bad[0])}")
    if s.size != inc.size:
        raise DatasetError(f"{where[0]} and {where[1]}: lengths differ ({s.size} scores, {inc.size} inclusion bits); "
                           "give one of each per canary")
    return s, inc.astype(np.int64)


def _deltas(claim) -> np.ndarray:
    """The claim's deltas the audit certifies at: its whole grid, or :data:`CURVE_POINTS` log-spaced ones."""
    gd, _ = claim.grid()
    gd = np.unique(np.asarray(gd, dtype=float))
    if gd.size <= CURVE_POINTS:
        return gd
    logs = np.log(np.maximum(gd, 1e-300))
    idx = np.searchsorted(logs, np.linspace(logs[0], logs[-1], CURVE_POINTS)).clip(0, gd.size - 1)
    return gd[np.unique(idx)]


def _bounds(counts, m: int, deltas: np.ndarray, confidence: float) -> np.ndarray:
    """``(len(counts), len(deltas))`` bounds, each number of guesses at ``confidence`` (already split)."""
    return np.array([np.atleast_1d(one_run_epsilon(m, c.guesses, c.correct, delta=deltas, confidence=confidence))
                     for c in counts])


def audit_one_run(scores, included, *, epsilon=None, delta=0.0, claim=None, guesses=None,
                  confidence=0.95) -> OneRunReport:
    """The one-run epsilon lower bound from a score and an inclusion bit per canary.

    Parameters
    ----------
    scores : array-like or path
        One score per canary, higher meaning "more likely included".
    included : array-like or path
        0/1 per canary: whether it was in the training data (each independently with probability 1/2).
    epsilon, delta : float
        The claim under test (or ``claim``: a spec such as ``"gdp:mu=1"``, a Claim or a DpEvent).
    guesses : int, optional
        Guess on exactly this many canaries.  Default: every count of
        :func:`dpaudit.stats.one_run.guess_grid`, each at confidence
        ``1 - (1 - confidence) / len(grid)``, the largest bound reported.
    confidence : float
        Probability that the bound is valid (for a curve claim, at every delta at once).
    """
    ONE_RUN_OPTIONS.check({"epsilon": epsilon, "delta": delta, "claim": claim}, "epsilon", "delta", "claim")
    guesses, confidence = ONE_RUN_OPTIONS.check({"guesses": guesses, "confidence": confidence}, "guesses",
                                                "confidence")
    s, inc = load_one_run_inputs(scores, included)
    claim_obj = as_claim(claim, epsilon=epsilon, delta=delta)
    m = s.size
    if guesses is not None and guesses > m:
        raise ParameterValueError(f"guesses must be at most the number of canaries ({m}); got {guesses}")
    ks = (guesses,) if guesses is not None else guess_grid(m)
    counts = one_run_counts(s, inc, ks)
    split = 1.0 - (1.0 - confidence) / len(ks)
    deltas = _deltas(claim_obj)
    table = _bounds(counts, m, deltas, split)
    test = curve_test(claim_obj, confidence=confidence, deltas=deltas, epsilon_lower_bounds=table.max(axis=0))
    col = int(np.searchsorted(deltas, test.delta))
    best = int(np.argmax(table[:, col]))
    ceiling = max(float(one_run_epsilon(m, c.guesses, c.guesses, delta=test.delta, confidence=split)) for c in counts)
    return OneRunReport(
        epsilon_lower_bound=test.epsilon_lower_bound, claimed_epsilon=test.claimed_epsilon,
        claimed_delta=test.delta, confidence=confidence, canaries=m, guesses=counts[best].guesses,
        correct=counts[best].correct, verdict="violation" if test.violation else "no violation found",
        ceiling=ceiling, guess_rule="fixed" if guesses is not None else "grid", grid=list(ks), grid_confidence=split,
        counts=[{"guesses": c.guesses, "correct": c.correct, "epsilon_lower_bound": float(table[i, col])}
                for i, c in enumerate(counts)],
        claim=None if claim is None else str(claim_obj), curve_violation=test.curve_violation(),
        included=int(inc.sum()), scores=s, inclusion=inc)


def one_run(train: Callable, dataset, canaries, score: Callable, *, epsilon=None, delta=0.0, claim=None, seed=None,
            guesses=None, confidence=0.95) -> OneRunReport:
    """Audit a training algorithm in one run: include each canary with probability 1/2, train once, score, audit.

    Parameters
    ----------
    train : callable
        ``train(data, rng=generator)`` returning a model; called once, on
        ``dataset`` with the included canaries appended along axis 0.
    dataset : array-like
        The training data without canaries (``n`` rows; may be empty, shape ``(0, ...)``).
    canaries : array-like
        ``m`` candidate records, same trailing shape as ``dataset``.
    score : callable
        ``score(model, canary)``: a number, higher meaning "more likely included".
    seed : int, optional
        Seeds the inclusion bits and ``train``'s generator; drawn and reported when absent.

    The rest as :func:`audit_one_run`.  The report's ``seed`` recreates the run.
    """
    (seed,) = ONE_RUN_OPTIONS.check({"seed": seed}, "seed")
    data, cans = _as_records(dataset, "dataset"), _as_records(canaries, "canaries")
    if data.size and data.shape[1:] != cans.shape[1:]:
        raise ParameterValueError(f"canaries must have the records' shape {data.shape[1:]}; got {cans.shape[1:]}")
    seq = as_seed_sequence(seed)
    bits_seq, train_seq = seq.spawn(2)
    inc = np.random.default_rng(bits_seq).integers(0, 2, size=len(cans))
    chosen = cans[inc == 1]
    model = train(np.concatenate([data.astype(np.result_type(data, cans)), chosen]) if data.size else chosen,
                  rng=np.random.default_rng(train_seq))
    scores = np.array([_score(score, model, c, i) for i, c in enumerate(cans)])
    report = audit_one_run(scores, inc, epsilon=epsilon, delta=delta, claim=claim, guesses=guesses,
                           confidence=confidence)
    return _with_seed(report, seed_entropy(seq))


def _as_records(values, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim == 0:
        raise ParameterValueError(f"{name} must be an array of records (rows along axis 0); got a scalar")
    if name == "canaries" and len(arr) == 0:
        raise ParameterValueError("canaries must hold at least one record; got none")
    return arr


def _score(score: Callable, model: Any, canary, i: int) -> float:
    value = score(model, canary)
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ParameterValueError(f"score(model, canary) must return a number; got {value!r} for canary {i}") from None
    if not math.isfinite(out):
        raise ParameterValueError(f"score(model, canary) returned {out} for canary {i}; scores must be finite")
    return out


def _with_seed(report: OneRunReport, seed: int) -> OneRunReport:
    from dataclasses import replace

    return replace(report, seed=seed)
