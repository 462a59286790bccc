"""The mechanism seam and the shared machinery of the built-in mechanisms.

A *mechanism* is any callable ``m(dataset, *, size=None, rng=None)``
(:class:`Mechanism`): it returns one release for ``size=None`` and ``size``
releases stacked on axis 0 otherwise.  Users never inherit from anything;
the built-ins derive from :class:`BuiltinMechanism` only to share the
vectorised sampling loop, the validation of ``size`` and the description.

Datasets are what every target gets: 1-D (one value per individual) or 2-D
(one row per individual).  Two small helpers turn them into the statistic a
mechanism perturbs:

* :func:`record_values` -- one number per individual (a 2-D row is summed);
* :func:`counting_queries` -- ``k`` counting queries: for 1-D data the number of
  records equal to each label ``0..k-1``; for 2-D data the column sums of the
  rows clipped to ``[0, 1]``.  Adding or removing one individual moves every
  query by at most 1, all in the same direction (monotone counting queries).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_delta, check_epsilon, check_int, check_real
from ..exceptions import ParameterTypeError, ParameterValueError
from ..claims import PointClaim
from ..privacy import Neighbouring

#: Shared by the built-in mechanism modules (their internal API: named, documented, not
#: re-exported from ``dpaudit``): claims, field checks and query helpers every built-in uses.
INTERNAL_API = (
    "PureAddRemove", "PureClaim", "PureLinf", "answers_vector", "as_1d_array", "as_numeric_array",
    "check_gaussian_delta", "positive_epsilon", "set_answers", "set_epsilon", "set_sensitivity",
)

__all__ = [
    "Mechanism",
    "BuiltinMechanism",
    "OUTPUT_KINDS",
    "record_values",
    "counting_queries",
    "check_size",
    "RELATIONS",
    "input_domain",
]

#: Hints for the auditor's ``auto`` attack.
OUTPUT_KINDS = ("scalar", "discrete", "vector")

# Vector mechanisms draw at most this many numbers at once, so that 10^7
# releases of a 10-query mechanism do not allocate gigabytes.
_CHUNK_ELEMENTS = 1 << 23


@runtime_checkable
class Mechanism(Protocol):
    """Anything that releases from a dataset.

    ``m(dataset)`` returns one release (a scalar or a 1-D array of fixed length);
    ``m(dataset, size=n)`` returns ``n`` releases stacked on axis 0;
    ``rng`` is a :class:`numpy.random.Generator`, a seed or ``None``.
    """

    def __call__(self, dataset: Any, *, size: int | None = None, rng: RNGLike = None) -> Any: ...


def check_size(size: Any) -> int | None:
    """Validate the ``size`` keyword: ``None`` or an integer >= 0."""
    if size is None:
        return None
    return check_int(size, "size", low=0)


def as_numeric_array(dataset: Any) -> np.ndarray:
    arr = np.asarray(dataset)
    if arr.dtype.kind not in "biuf":
        raise ParameterTypeError(f"dataset must be numeric; got an array of dtype {arr.dtype}")
    if arr.ndim > 2:
        raise ParameterValueError(f"dataset must be 1-D or 2-D; got {arr.ndim}-D")
    return np.atleast_1d(arr)


def as_1d_array(dataset: Any, owner: str, content: str) -> np.ndarray:
    """The dataset as a 1-D numeric array; ``owner`` (a mechanism name) and ``content`` word the error."""
    arr = as_numeric_array(dataset)
    if arr.ndim != 1:
        raise ParameterValueError(f"{owner} expects a 1-D dataset of {content}; got shape {arr.shape}")
    return arr


def positive_epsilon(value: Any, name: str = "epsilon") -> float:
    value = check_epsilon(value, name)
    if value <= 0:
        raise ParameterValueError(f"{name} must be > 0; got {value!r}")
    return value


def check_gaussian_delta(value: Any) -> float:
    """A delta in (0, 1): Gaussian noise is never pure DP, so 0 is refused."""
    delta = check_delta(value)
    if delta <= 0:
        raise ParameterValueError(f"delta must be in (0, 1) for a Gaussian mechanism; got {value!r}")
    return delta


# The built-ins are frozen dataclasses: __post_init__ normalises a field in place
# through object.__setattr__.  These two are the checks almost every one repeats.
def set_epsilon(mechanism: Any) -> None:
    """Validate ``mechanism.epsilon`` (> 0) and store it as a float."""
    object.__setattr__(mechanism, "epsilon", positive_epsilon(mechanism.epsilon))


def set_sensitivity(mechanism: Any) -> None:
    """Validate ``mechanism.sensitivity`` (a real > 0) and store it as a float."""
    object.__setattr__(
        mechanism, "sensitivity", check_real(mechanism.sensitivity, "sensitivity", low=0, low_inclusive=False)
    )


class PureAddRemove:
    """Mixin for a mechanism that claims pure ``epsilon``-DP under add/remove neighbours.

    Put it before the mechanism base class (``class M(PureAddRemove, BuiltinMechanism)``)
    so that its ``claim`` replaces the abstract one.
    """

    epsilon: float

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, 0.0, neighbouring="add/remove")


class PureClaim:
    """Mixin for a mechanism with an ``answers`` switch that claims pure ``epsilon``-DP.

    ``answers=False`` (the default): the dataset holds records and the claim is
    for add/remove neighbours.  ``answers=True``: the dataset *is* the vector of
    query answers (DP-Sniper's and StatDP's setting) and neighbours move every
    answer by at most 1 (``linf``).
    """

    epsilon: float
    answers: bool

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, 0.0, neighbouring="linf" if self.answers else "add/remove")


def set_answers(mechanism: Any) -> None:
    """Validate the ``answers`` switch (a bool)."""
    if not isinstance(mechanism.answers, (bool, np.bool_)):
        raise ParameterTypeError(f"answers must be a bool; got {mechanism.answers!r}")
    object.__setattr__(mechanism, "answers", bool(mechanism.answers))


def answers_vector(dataset: Any, n: int, owner: str, content: str = "query answers") -> np.ndarray:
    """The dataset as ``n`` finite numbers (a 1-D float array of length ``n``); ``content`` words the error."""
    arr = as_numeric_array(dataset)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ParameterValueError(f"{owner} expects a 1-D dataset of {n} {content}; got shape {arr.shape}")
    arr = arr.astype(float)
    if not np.all(np.isfinite(arr)):
        raise ParameterValueError(f"{owner} expects finite {content}; got {arr.tolist()}")
    return arr


class PureLinf:
    """Mixin for a mechanism on query answers that claims pure ``epsilon``-DP for ``linf`` neighbours."""

    epsilon: float

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, 0.0, neighbouring="linf")


#: Neighbouring relations of an input domain: one record changed, one record
#: added or removed, or every coordinate moved by at most 1 (query answers).
RELATIONS = tuple(r.value for r in Neighbouring)


def input_domain(*, size: int, low: float, high: float, integer: bool, relation: str) -> dict:
    """The input domain of a mechanism: 1-D datasets of ``size`` records in ``[low, high]``.

    The dict a pair search reads (``--size --low --high --integer --relation``).

    >>> input_domain(size=5, low=-10, high=10, integer=False, relation="linf")
    {'size': 5, 'low': -10.0, 'high': 10.0, 'integer': False, 'relation': 'linf'}
    """
    size = check_int(size, "size", low=1)
    low, high = check_real(low, "low"), check_real(high, "high")
    if not low < high:
        raise ParameterValueError(f"low must be < high; got low={low!r}, high={high!r}")
    if relation not in RELATIONS:
        raise ParameterValueError(f"relation must be one of {list(RELATIONS)}; got {relation!r}")
    return {"size": size, "low": low, "high": high, "integer": bool(integer), "relation": relation}


def record_values(dataset: Any) -> np.ndarray:
    """One float per individual: the entries of a 1-D dataset, the row sums of a 2-D one.

    Examples
    --------
    >>> record_values([[1, 2], [3, 4]])
    array([3., 7.])
    """
    arr = as_numeric_array(dataset).astype(float, copy=False)
    return arr if arr.ndim == 1 else arr.sum(axis=1)


def counting_queries(dataset: Any, n_queries: int) -> np.ndarray:
    """Answers to ``n_queries`` monotone counting queries (sensitivity 1 each).

    A 1-D dataset holds labels: query ``j`` counts the records equal to ``j``
    (labels are rounded; labels outside ``0..n_queries-1`` are counted nowhere).
    A 2-D dataset of shape ``(n, n_queries)`` holds each record's contribution
    to each query, clipped to ``[0, 1]``; query ``j`` is the column sum.

    Examples
    --------
    >>> counting_queries([1, 1, 2, 3, 3, 3], 4)
    array([0., 2., 1., 3.])
    >>> counting_queries([[1, 0, 5], [1, 1, -2]], 3)
    array([2., 1., 1.])
    """
    arr = as_numeric_array(dataset)
    if arr.ndim == 1:
        labels = np.rint(arr.astype(float, copy=False))
        inside = (labels >= 0) & (labels < n_queries)
        return np.bincount(labels[inside].astype(np.int64), minlength=n_queries).astype(float)
    if arr.shape[1] != n_queries:
        raise ParameterValueError(
            f"dataset must have {n_queries} columns (one per query, n_queries={n_queries}); "
            f"got shape {arr.shape}"
        )
    return np.clip(arr.astype(float, copy=False), 0.0, 1.0).sum(axis=0)


class BuiltinMechanism:
    """Shared behaviour of the built-in mechanisms (frozen dataclasses).

    Subclasses define ``name``, ``output_kind``, ``broken``, ``float_safe``, the ``claim``
    property (:class:`PureAddRemove` gives the pure add/remove one),
    ``neighbouring_pair()``, and two hooks: ``_prepare(dataset)``
    computes the exact statistic once, ``_draw(prepared, n, rng)`` draws ``n``
    releases of it, shape ``(n,)`` or ``(n, k)``, fully vectorised.
    """

    name: ClassVar[str] = "builtin"
    output_kind: ClassVar[str] = "scalar"
    broken: ClassVar[bool] = False
    #: True when the claim covers the implementation, floating point included: the release is computed
    #: from exactly sampled integers (lattice or integer outputs, :mod:`dpaudit.mechanisms.float_safe`), or
    #: it is an integer / index / bit pattern whose probabilities float noise perturbs only at rounding
    #: level.  False (the default, and numpy's float samplers): the mechanism is private as mathematics
    #: only, and the floating-point attacks may certify a leak that ``ideal=True`` audits leave out.
    float_safe: ClassVar[bool] = False

    # -- to be provided by subclasses ------------------------------------------------
    @property
    def claim(self) -> PointClaim:  # pragma: no cover - abstract
        raise NotImplementedError

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _prepare(self, dataset: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _draw(self, prepared: Any, n: int, rng: np.random.Generator) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _width(self, prepared: Any) -> int:
        """Numbers drawn per release (used to bound memory)."""
        return 1

    # -- shared ------------------------------------------------------------------------
    def __call__(self, dataset: Any, *, size: int | None = None, rng: RNGLike = None) -> Any:
        """Release once (``size=None``) or ``size`` times (stacked on axis 0)."""
        size = check_size(size)
        gen = as_generator(rng)
        prepared = self._prepare(dataset)
        n = 1 if size is None else size
        rows = max(1, _CHUNK_ELEMENTS // max(1, self._width(prepared)))
        if n <= rows:
            out = self._draw(prepared, n, gen)
        else:
            first = self._draw(prepared, rows, gen)
            out = np.empty((n,) + first.shape[1:], dtype=first.dtype)
            out[:rows] = first
            for start in range(rows, n, rows):
                stop = min(n, start + rows)
                out[start:stop] = self._draw(prepared, stop - start, gen)
        return out[0] if size is None else out

    def true_epsilon(self, delta: float = 0.0) -> float:
        """The mechanism's true epsilon at ``delta``, or the best known upper bound.

        Never an underestimate: an auditor's lower bound must stay below it.
        ``math.inf`` when no finite epsilon holds.  The default for a correct
        pure-DP mechanism is its claimed epsilon (valid for every delta >= 0).
        """
        claim = self.claim
        if claim.point_delta > 0 and delta < claim.point_delta:
            return math.inf
        return claim.point_epsilon

    def params(self) -> dict:
        """The constructor parameters, for reports and for :func:`get_mechanism`."""
        from dataclasses import fields

        return {f.name: getattr(self, f.name) for f in fields(self) if f.init and f.repr}  # type: ignore[arg-type]

    def describe(self) -> str:
        """One line: what it releases, its claim, and whether it is known-broken."""
        doc = (type(self).__doc__ or "").strip().splitlines()
        first = doc[0].rstrip(".") if doc else type(self).__name__
        c = self.claim
        delta = f", delta={c.point_delta:g}" if c.point_delta else ""
        tag = " [BROKEN]" if self.broken and not first.startswith("BROKEN") else ""
        return f"{first}; claims epsilon={c.point_epsilon:.4g}{delta} ({c.neighbouring.value}){tag}"
