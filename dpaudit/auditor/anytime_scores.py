"""Score audits as a stream: ``dpaudit.audit_scores`` on an iterator of (IN, OUT) score pairs, valid at every look.

Each item of the stream is one IN score and one OUT score (from one run with
the record and one without), or two equal-length arrays of them (a batch).
The stream is read in batches of 10 pairs with a look after each, bet on
exactly as an anytime audit's releases are (:mod:`dpaudit.auditor.anytime`;
the score itself and its distance to the past median are the witnesses), and
it stops on a certified violation, at ``max_samples`` pairs, at
``time_budget`` seconds, when the stream ends, or on Ctrl-C.  The bound holds
whenever it stops.  Scores are bet on in the order they come, so the runs that
made them must be independent of each other (a file sorted by score is not a
stream of independent pairs; ``audit_scores(..., stopping="anytime")`` on
arrays shuffles them with the seed first).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from ..exceptions import ParameterValueError
from .anytime import DEFAULT_BATCH, ScalarWitnesses, StreamInterrupted, curve_points, run_stream
from .anytime_report import build_anytime_report

__all__ = ["audit_score_stream"]


class _Reader:
    """Pulls ``m`` pairs at a time from an iterator of pairs (or of pairs of arrays), keeping any surplus."""

    def __init__(self, items):
        self.items = iter(items)
        self.buf_in: list = []
        self.buf_out: list = []
        self.done = False

    def take(self, m: int):
        held = sum(len(b) for b in self.buf_in)
        while held < m and not self.done:
            try:
                item = next(self.items)
            except StopIteration:
                self.done = True
                break
            try:
                a, b = item
            except (TypeError, ValueError):
                raise ParameterValueError(f"in_scores: a stream must yield (IN, OUT) score pairs; got {item!r}") \
                    from None
            a = np.atleast_1d(np.asarray(a, dtype=float))
            b = np.atleast_1d(np.asarray(b, dtype=float))
            if a.ndim != 1 or a.shape != b.shape or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
                raise ParameterValueError("in_scores: each item of the stream must be an IN score and an OUT score "
                                          f"(finite numbers, or two 1-D arrays of one length); got {item!r}")
            self.buf_in.append(a)
            self.buf_out.append(b)
            held += len(a)
        x0 = np.concatenate(self.buf_in) if self.buf_in else np.zeros(0)
        x1 = np.concatenate(self.buf_out) if self.buf_out else np.zeros(0)
        self.buf_in, self.buf_out = [x0[m:]], [x1[m:]]
        return x0[:m], x1[:m]


def audit_score_stream(pairs, *, claim, claim_given, confidence, entropy, max_samples=None, time_budget=None,
                       batch=DEFAULT_BATCH):
    """The anytime-valid audit of a stream of (IN, OUT) score pairs; see the module docstring.

    ``max_samples``: most pairs read (None: until the stream ends).  A ``KeyboardInterrupt`` goes on with
    ``audit_report``, the looks finished before it (None before the first).
    """
    t_start = time.perf_counter()
    reader = _Reader(pairs)
    deadline = None if time_budget is None else time.time() + time_budget
    epsilons, deltas = curve_points(claim)

    def draw(look, m):
        x0, x1 = reader.take(m)
        return x0[None], x1[None]

    limit = max_samples if max_samples is not None else 2**62
    source = SimpleNamespace(name="scores", seeded=True)
    settings = dict(claim=claim, claim_given=claim_given, confidence=confidence, entropy=entropy,
                    max_samples=max_samples, time_budget=time_budget, attack="auto", t_start=t_start,
                    kind="scalar", shape=(), batch=batch)
    try:
        res = run_stream(draw, ScalarWitnesses(), epsilons=epsilons, deltas=deltas, confidence=confidence,
                         batch=batch, max_pairs=limit, deadline=deadline)
    except StreamInterrupted as exc:
        err = KeyboardInterrupt()
        err.audit_report = _finish(build_anytime_report(source, exc.result, interrupted=True, **settings)) \
            if exc.result.looks else None
        raise err from None
    if res.looks == 0:
        raise ParameterValueError("in_scores: the stream gave no score pair, so nothing is certified")
    return _finish(build_anytime_report(source, res, **settings))


def _finish(report):
    notes = [n for n in report.notes if not n.startswith("floating-point")]
    return report.with_values(samples_in=report.samples, samples_out=report.samples, n_test_in=report.n_test,
                              n_test_out=report.n_test, notes=notes)
