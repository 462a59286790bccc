"""SmartNoise SQL's aggregates (``snsql``) as dpaudit targets, for ``dpaudit survey``.

:func:`aggregate` releases ``SELECT <AGG>(x) FROM T.T`` as SmartNoise SQL's ``PrivateReader`` answers it over a
pandas table whose one column ``x`` is declared with bounds ``[lower, upper]``, every row an individual
(``row_privacy``), under ``Privacy(epsilon, delta)``.  SmartNoise spends ``epsilon`` per noisy column it
computes (``AVG`` is a noisy ``SUM`` over a noisy ``COUNT``: two; ``PrivateReader.get_privacy_cost`` says how
many), for one row added or removed (OpenDP's symmetric distance, its ``max_contrib`` rows per individual).

Many releases per query: every ``execute`` calibrates each column's noise anew (an OpenDP binary search over
the Laplace scale) before drawing, which costs far more than the draw.  The target instead puts ``batch`` copies of the dataset in one table, each copy its own group, and
asks ``SELECT g, <AGG>(x) FROM T.T GROUP BY g`` with ``censor_dims: False``: each group's answer is the same
query on one copy (its own noise, drawn independently per row of the result by the same mechanism), so one
calibration serves ``batch`` releases.  The noise comes from OpenDP's samplers, which take no seed: the target
takes no ``rng``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..exceptions import TargetError
from ..mechanisms.base import check_size

__all__ = ["aggregate"]


class _Aggregate:
    def __init__(self, expression: str, epsilon: float, delta: float, lower: float, upper: float, batch: int):
        import snsql  # noqa: F401 - an environment without SmartNoise SQL fails here, with its own message

        self.expression, self.epsilon, self.delta = expression, float(epsilon), float(delta)
        self.batch = int(batch)
        self.metadata = {"": {"T": {"T": {
            "row_privacy": True, "censor_dims": False,
            "g": {"type": "int", "nullable": False},
            "x": {"type": "float", "lower": float(lower), "upper": float(upper), "nullable": False}}}}}
        self.query = f"SELECT g, {expression} AS v FROM T.T GROUP BY g"

    def _batch(self, records: np.ndarray, k: int) -> list[float]:
        import pandas as pd
        import snsql

        table = pd.DataFrame({"g": np.repeat(np.arange(k), len(records)), "x": np.tile(records, k)})
        reader = snsql.from_df(table, privacy=snsql.Privacy(epsilon=self.epsilon, delta=self.delta),
                               metadata=self.metadata)
        rows = reader.execute(self.query)[1:]  # the first row is the header
        if len(rows) != k:
            raise TargetError(f"smartnoise_sql.aggregate: {len(rows)} groups answered of {k} (censored?)")
        return [float("nan") if r[1] is None else float(r[1]) for r in rows]

    def __call__(self, dataset: Any, *, size: int | None = None) -> Any:
        size = check_size(size)
        records = np.asarray(dataset, dtype=float).ravel()
        if records.size == 0:
            raise TargetError("smartnoise_sql.aggregate: an empty table has no group to answer for")
        n = 1 if size is None else size
        out: list[float] = []
        while len(out) < n:
            out += self._batch(records, min(self.batch, n - len(out)))
        values = np.array(out)
        return values[0] if size is None else values


def aggregate(expression: str, epsilon: float, delta: float = 0.0, lower: float = 0.0, upper: float = 1.0,
              batch: int = 500) -> _Aggregate:
    """A target releasing SmartNoise SQL's answer to ``SELECT <expression> FROM T.T`` (``COUNT(*)``, ``SUM(x)``,
    ``AVG(x)``, ``VAR(x)``, ...) on a table of the dataset's records in column ``x`` bounded by ``[lower, upper]``."""
    return _Aggregate(expression, epsilon, delta, lower, upper, batch)
