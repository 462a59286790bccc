"""How many scores are >= each threshold: the held-out count of every chosen event, chunk by chunk.

One function, :func:`count_at_least`, exact for every float64 input (NaN
included: a NaN score counts as at least every threshold, as it sorts after
every number; a NaN threshold counts the NaN scores).  How it counts depends
on the number of thresholds; the answer never does.  The measurements behind
the strategies are in ``docs/decisions/scoring-cost.md``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["count_at_least"]

#: Up to this many thresholds each is counted by one comparison pass over the scores; more, and the scores
#: are sorted once (a pass costs about a tenth of a sort).
PASS_LIMIT = 6
#: Thresholds that some score equals in float32 are recounted in float64, one pass each; past this many the
#: float64 scores are sorted instead (discrete scores, which sit on the thresholds).
TIE_LIMIT = 4
#: Scores looked at first for ties with the thresholds, to send discrete scores straight to the float64 sort.
PROBE = 256


def count_at_least(scores: np.ndarray, thresholds: np.ndarray, *, overwrite: bool = False) -> np.ndarray:
    """How many ``scores`` are >= each of the ``thresholds`` (int64, one per threshold, in their order).

    Few thresholds: one comparison pass each.  Many: the scores' float32
    images are sorted and looked up, since rounding to float32 keeps order,
    a score whose image is above a threshold's is above the threshold
    itself; a threshold some score's image equals is recounted exactly.
    ``overwrite=True`` lets the float64 sort, when it is needed, sort
    ``scores`` in place (an array the caller drops afterwards).

    >>> count_at_least(np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 2.5]))
    array([3, 1])
    """
    s = np.asarray(scores, dtype=float).ravel()
    t = np.asarray(thresholds, dtype=float)
    flat = t.ravel()
    if len(flat) <= PASS_LIMIT:
        out = np.array([_at_least(s, v) for v in flat], dtype=np.int64)
    else:
        out = _by_float32(s, flat)
        if out is None:
            out = _by_sort(s, flat, overwrite=overwrite and (s is scores or s.base is scores))
    return out.reshape(t.shape) if t.ndim else out[0]


def _at_least(s: np.ndarray, v: float) -> int:
    """Scores >= ``v`` in one pass: those not below it (NaN scores are never below anything)."""
    if v != v:
        return int(np.count_nonzero(np.isnan(s)))
    return len(s) - int(np.count_nonzero(s < v))


def _by_sort(s: np.ndarray, t: np.ndarray, *, overwrite: bool) -> np.ndarray:
    """Sort the float64 scores (in place when allowed) and look the thresholds up."""
    if overwrite and s.flags.writeable:
        s.sort()
    else:
        s = np.sort(s)
    return (len(s) - np.searchsorted(s, t, side="left")).astype(np.int64)


def _by_float32(s: np.ndarray, t: np.ndarray) -> np.ndarray | None:
    """Counts from the sorted float32 images of the scores, or None when too many thresholds tie with a score.

    Rounding is monotone, so f(x) > f(t) implies x > t and x >= t implies f(x) >= f(t): only the scores
    whose image equals f(t) are undecided, and a threshold with any is recounted in float64.
    """
    if not len(s):
        return np.zeros(len(t), dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        t32 = t.astype(np.float32)
        head = s[:PROBE].astype(np.float32)
        if (t32.take(np.searchsorted(t32, head), mode="clip") == head).any():
            return None
        s32 = s.astype(np.float32)
    s32.sort()
    above = np.searchsorted(s32, t32, side="right")
    # A threshold ties when the image just below its insertion point is its own (NaN with NaN too); with
    # no image below it (0), index -1 reads the largest image, above the threshold or NaN: no tie.
    last = s32[above - 1]
    tied = np.flatnonzero((last == t32) | (np.isnan(last) & np.isnan(t32)))
    if len(tied) > TIE_LIMIT:
        return None
    out = len(s) - above
    for j in tied:
        out[j] = _at_least(s, t[j])
    return out
