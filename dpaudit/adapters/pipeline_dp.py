"""PipelineDP's aggregations as dpaudit targets, for ``dpaudit survey``.

:func:`aggregate` runs ``DPEngine.aggregate`` on the local backend, the way PipelineDP's README does, with
every record its own privacy unit (``max_partitions_contributed = max_contributions_per_partition = 1``), one
public partition, and a fresh ``NaiveBudgetAccountant`` of (epsilon, delta) per release; it releases the
metric's value.  PipelineDP's claim is (epsilon, delta)-DP for one privacy unit added or removed (its
contribution bounding).  Its noise comes from python-dp's or its own samplers, which take no seed: the target
takes no ``rng``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..mechanisms.base import check_size

__all__ = ["aggregate"]


class _Aggregate:
    def __init__(self, metric: str, epsilon: float, delta: float, noise_kind: str, min_value: float | None,
                 max_value: float | None, percentile: float | None):
        import pipeline_dp

        self.pdp, self.metric, self.epsilon, self.delta = pipeline_dp, metric.upper(), float(epsilon), float(delta)
        self.noise_kind, self.min_value, self.max_value = noise_kind.upper(), min_value, max_value
        self.percentile = percentile
        self._metric_object()  # a metric this version lacks fails here, with PipelineDP's own message

    def _metric_object(self) -> Any:
        if self.metric == "PERCENTILE":
            return self.pdp.Metrics.PERCENTILE(self.percentile)
        return getattr(self.pdp.Metrics, self.metric)

    def _one(self, records: list) -> float:
        pdp = self.pdp
        accountant = pdp.NaiveBudgetAccountant(total_epsilon=self.epsilon, total_delta=self.delta)
        engine = pdp.DPEngine(accountant, pdp.LocalBackend())
        bounds = {} if self.min_value is None else {"min_value": self.min_value, "max_value": self.max_value}
        params = pdp.AggregateParams(noise_kind=getattr(pdp.NoiseKind, self.noise_kind), metrics=[self._metric_object()],
                                     max_partitions_contributed=1, max_contributions_per_partition=1, **bounds)
        extractors = pdp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: 0,
                                        value_extractor=lambda r: r[1])
        result = engine.aggregate(list(enumerate(records)), params, extractors, public_partitions=[0])
        accountant.compute_budgets()
        rows = list(result)
        if not rows:
            return float("nan")
        return float(tuple(rows[0][1])[0])

    def __call__(self, dataset: Any, *, size: int | None = None) -> Any:
        size = check_size(size)
        records = np.asarray(dataset, dtype=float).ravel().tolist()
        out = np.array([self._one(records) for _ in range(1 if size is None else size)])
        return out[0] if size is None else out


def aggregate(metric: str, epsilon: float, delta: float = 0.0, noise_kind: str = "laplace",
              min_value: float | None = None, max_value: float | None = None,
              percentile: float | None = None) -> _Aggregate:
    """A target releasing PipelineDP's ``metric`` (COUNT, PRIVACY_ID_COUNT, SUM, MEAN, VARIANCE, PERCENTILE)."""
    return _Aggregate(metric, epsilon, delta, noise_kind, min_value, max_value, percentile)
