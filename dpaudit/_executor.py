"""The one process pool: ordered results, serial when one worker, loky processes otherwise.

numpy's samplers hold the GIL, so threads gave no speed-up (measured 1.0x);
processes do, and they also keep a misbehaving target out of our process.
Results come back in task order, so nothing that depends on them can depend
on the number of workers.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Sequence

__all__ = ["run_ordered"]


def run_ordered(fn: Callable[..., Any], tasks: Sequence[tuple], *, n_jobs: int = 1, progress: bool = False,
                desc: str = "", unit: str = "chunk") -> list:
    """``[fn(*t) for t in tasks]``, in loky worker processes when ``n_jobs > 1``.

    >>> run_ordered(pow, [(2, 3), (3, 2)], n_jobs=1)
    [8, 9]
    """
    bar = None
    if progress and tasks:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), desc=desc, unit=unit, file=sys.stderr, leave=False)
    try:
        out = []
        if n_jobs == 1 or len(tasks) <= 1:
            results = (fn(*t) for t in tasks)
        else:
            from joblib import Parallel, delayed

            results = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator")(delayed(fn)(*t) for t in tasks)
        for r in results:
            out.append(r)
            if bar is not None:
                bar.update(1)
        return out
    finally:
        if bar is not None:
            bar.close()
