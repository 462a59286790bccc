"""Grey-box screening of candidate pairs for :func:`dpaudit.search` (``grey_box=True``).

A pair whose few traces give an *exact* upper bound is ranked by it: that is the pair's epsilon, read
from a handful of target calls where a black-box screening draws thousands of releases per side.  A
pair the traces cannot settle (a finding, no bound, or a bound that is not exact) returns None, and
the search screens it black-box, as without ``grey_box``.  The screening only ranks pairs; the final audit, on fresh
draws, certifies.
"""

from __future__ import annotations

import numpy as np

from .analysis import analyse

__all__ = ["grey_screen", "SCREEN_TRACES"]

#: Traces per screened pair.
SCREEN_TRACES = 3


def grey_screen(target, dataset, neighbor, *, delta: float, seed, traces: int = SCREEN_TRACES) -> dict | None:
    """``{"score", "bound", "attack", "calls"}`` for a pair the traces settle exactly, else None.

    ``calls`` is the number of target calls (one release each) the traces and their probe made.
    """
    calls = [0]
    fn = target.fn

    def counted(data, rng):
        calls[0] += 1
        return fn(data, rng=rng)

    r = analyse(counted, np.asarray(dataset), np.asarray(neighbor), traces=traces, delta=delta, seed=seed,
                name=str(target.name))
    if not (r.exact and r.epsilon_upper_bound is not None):
        return {"calls": calls[0]} | {"score": None}
    return {"score": float(r.epsilon_upper_bound), "bound": float(r.epsilon_upper_bound), "attack": "grey-box",
            "calls": calls[0]}
