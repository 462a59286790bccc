"""OpenDP aggregates (sum, count, mean, histogram) as dpaudit targets, for ``dpaudit survey``.

Each factory builds the measurement users build from OpenDP's documented pipeline (a vector domain, the
symmetric distance, a transformation, then ``then_laplace``), with the noise scale found by
``dp.binary_search_param`` so that OpenDP's own privacy map certifies ``epsilon`` at the stated ``d_in``:
1 (one record added or removed) for sum, count and histogram; 2 (one record replaced) for the mean over a
known size.  Integer bounds give OpenDP's discrete Laplace.  Checked with OpenDP 0.8.0 and 0.16.0 (the
``then_`` constructors exist in both).  OpenDP 0.4 and 0.5, which have no ``opendp.prelude``, build the same
pipelines from ``opendp.trans`` and ``opendp.meas`` (:class:`~dpaudit.adapters.opendp_legacy.LegacyOpenDP`:
``make_bounded_sum``, ``make_count``, ``make_sized_bounded_mean``, ``make_count_by_categories``, then
``make_base_laplace`` or, for integers, ``make_base_geometric``).  OpenDP's noise cannot be seeded: the
targets take no ``rng``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..mechanisms.base import check_size
from .opendp_legacy import LegacyOpenDP

__all__ = ["sum_laplace", "count_laplace", "mean_laplace", "histogram_laplace"]


def _dp() -> Any:
    from .opendp import load_api

    return load_api()


def _calibrated(build: Callable[[float], Any], d_in: int, epsilon: float) -> Any:
    dp = _dp()
    return build(dp.binary_search_param(build, d_in=d_in, d_out=float(epsilon)))


class _Measured:
    """Releases ``measurement(records)`` once per release (unseeded: OpenDP's own generator)."""

    def __init__(self, measurement: Any, cast: type, name: str):
        self.measurement, self.cast, self.name = measurement, cast, name

    def __call__(self, dataset: Any, *, size: int | None = None) -> Any:
        size = check_size(size)
        records = [self.cast(v) for v in np.asarray(dataset).ravel().tolist()]
        out = np.array([np.asarray(self.measurement(records), dtype=float) for _ in range(1 if size is None else size)])
        return out[0] if size is None else out


def _atom(dp: Any, lower: float, upper: float, integer: bool) -> tuple[Any, type]:
    cast = int if integer else float
    return dp.atom_domain(bounds=(cast(lower), cast(upper))), cast


def sum_laplace(epsilon: float, lower: float, upper: float, integer: bool = False) -> _Measured:
    """``then_sum`` of records in [lower, upper], Laplace noise; epsilon-DP for one record added or removed."""
    dp = _dp()
    if isinstance(dp, LegacyOpenDP):
        return _Measured(dp.sum_laplace(epsilon, lower, upper, integer), int if integer else float, "opendp sum")
    atom, cast = _atom(dp, lower, upper, integer)
    space = (dp.vector_domain(atom), dp.symmetric_distance())
    meas = _calibrated(lambda s: space >> dp.t.then_sum() >> dp.m.then_laplace(s), 1, epsilon)
    return _Measured(meas, cast, "opendp sum")


def count_laplace(epsilon: float) -> _Measured:
    """``then_count`` (an integer), discrete Laplace noise; epsilon-DP for one record added or removed."""
    dp = _dp()
    if isinstance(dp, LegacyOpenDP):
        return _Measured(dp.count_laplace(epsilon), int, "opendp count")
    space = (dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    meas = _calibrated(lambda s: space >> dp.t.then_count() >> dp.m.then_laplace(s), 1, epsilon)
    return _Measured(meas, int, "opendp count")


def mean_laplace(epsilon: float, lower: float, upper: float, size: int) -> _Measured:
    """``then_mean`` of exactly ``size`` records in [lower, upper]; epsilon-DP for one record replaced (d_in 2)."""
    dp = _dp()
    if isinstance(dp, LegacyOpenDP):
        return _Measured(dp.mean_laplace(epsilon, lower, upper, size), float, "opendp mean")
    atom, cast = _atom(dp, lower, upper, False)
    space = (dp.vector_domain(atom, size=int(size)), dp.symmetric_distance())
    meas = _calibrated(lambda s: space >> dp.t.then_mean() >> dp.m.then_laplace(s), 2, epsilon)
    return _Measured(meas, cast, "opendp mean")


def histogram_laplace(epsilon: float, categories: list) -> _Measured:
    """``then_count_by_categories`` (one more bin for the rest), discrete Laplace per bin; add-remove."""
    dp = _dp()
    if isinstance(dp, LegacyOpenDP):
        return _Measured(dp.histogram_laplace(epsilon, categories), int, "opendp histogram")
    space = (dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    cats = [int(c) for c in categories]
    meas = _calibrated(lambda s: space >> dp.t.then_count_by_categories(categories=cats) >> dp.m.then_laplace(s),
                       1, epsilon)
    return _Measured(meas, int, "opendp histogram")
