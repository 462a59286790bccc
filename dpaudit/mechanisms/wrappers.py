"""Wrappers that build a mechanism from another: composition, Poisson subsampling, post-processing."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._validation import check_delta, check_int, check_probability
from ..exceptions import ParameterTypeError, ParameterValueError
from ..claims import PointClaim
from ..privacy import Neighbouring
from .base import BuiltinMechanism, as_numeric_array

__all__ = ["Composed", "Subsampled", "PostProcessed", "compose", "subsample", "postprocess"]


def _check_inner(mechanism: Any, who: str) -> Any:
    if not callable(mechanism):
        raise ParameterTypeError(f"{who}: mechanism must be callable; got {mechanism!r}")
    if not isinstance(getattr(mechanism, "claim", None), PointClaim):
        raise ParameterTypeError(
            f"{who}: mechanism must carry a PointClaim as .claim (a built-in or a wrapper); got {mechanism!r}"
        )
    return mechanism


def _inner_name(mechanism: Any) -> str:
    return getattr(mechanism, "name", None) or type(mechanism).__name__


def _inner_true(mechanism: Any, delta: float) -> float:
    fn = getattr(mechanism, "true_epsilon", None)
    return float(fn(delta)) if callable(fn) else math.inf


def _stack(out: Any, n: int) -> np.ndarray:
    arr = np.asarray(out)
    return arr.reshape(n, -1)


@dataclass(frozen=True)
class Composed(BuiltinMechanism):
    """k-fold sequential composition: k independent releases concatenated into one vector.

    Claims the summed budget ``(k epsilon, k delta)`` (basic composition), or
    with ``advanced=True`` the advanced composition bound of Dwork, Rothblum and
    Vadhan (2010) with slack ``delta_prime``.

    Examples
    --------
    >>> from dpaudit.mechanisms import LaplaceMechanism
    >>> c = compose(LaplaceMechanism(epsilon=0.5), 3)
    >>> c.claim.point_epsilon
    1.5
    >>> c([1.0], size=2, rng=0).shape
    (2, 3)
    """

    mechanism: Any = None
    k: int = 2
    advanced: bool = False
    delta_prime: float = 1e-6

    output_kind = "vector"

    def __post_init__(self) -> None:
        _check_inner(self.mechanism, "compose")
        object.__setattr__(self, "k", check_int(self.k, "k", low=1))
        if not isinstance(self.advanced, bool):
            raise ParameterTypeError(f"advanced must be a bool; got {self.advanced!r}")
        dp = check_delta(self.delta_prime, "delta_prime")
        if self.advanced and dp <= 0:
            raise ParameterValueError(f"delta_prime must be in (0, 1) for advanced composition; got {dp!r}")
        object.__setattr__(self, "delta_prime", dp)

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"compose({_inner_name(self.mechanism)}, k={self.k})"

    @property
    def broken(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.mechanism, "broken", False))

    @property
    def float_safe(self) -> bool:  # type: ignore[override]
        """Float-safe when the wrapped mechanism is."""
        return bool(getattr(self.mechanism, "float_safe", False))

    @property
    def claim(self) -> PointClaim:
        inner = self.mechanism.claim
        return inner.advanced_composition(self.k, self.delta_prime) if self.advanced else inner.compose(self.k)

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return self.mechanism.neighbouring_pair()

    def _prepare(self, dataset: Any) -> Any:
        return dataset

    def _width(self, prepared: Any) -> int:
        return 4 * self.k

    def _draw(self, prepared: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        parts = [_stack(self.mechanism(prepared, size=n, rng=rng), n) for _ in range(self.k)]
        return np.hstack(parts)

    def true_epsilon(self, delta: float = 0.0) -> float:
        """k times the inner true epsilon at delta/k (basic composition of the truth; an upper bound)."""
        return self.k * _inner_true(self.mechanism, delta / self.k)


@dataclass(frozen=True)
class Subsampled(BuiltinMechanism):
    """Poisson subsampling: each record kept independently with probability ``rate``, then the mechanism.

    Claims the amplified budget ``(ln(1 + rate (e^epsilon - 1)), rate delta)``
    for add/remove neighbours.  Releases are vectorised by grouping the draws
    that keep the same subset of records (fast for the small datasets of an
    audit; the inner mechanism must accept an empty dataset).

    Examples
    --------
    >>> from dpaudit.mechanisms import LaplaceMechanism
    >>> s = subsample(LaplaceMechanism(epsilon=1.0), 0.1)
    >>> round(s.claim.point_epsilon, 4)
    0.1586
    """

    mechanism: Any = None
    rate: float = 0.5

    def __post_init__(self) -> None:
        _check_inner(self.mechanism, "subsample")
        rate = check_probability(self.rate, "rate", low_inclusive=False)
        object.__setattr__(self, "rate", rate)
        if self.mechanism.claim.neighbouring is not Neighbouring.ADD_REMOVE:
            raise ParameterValueError(
                "subsample: Poisson subsampling amplification holds for add/remove neighbours; "
                f"the mechanism claims {self.mechanism.claim.neighbouring.value}"
            )

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"subsample({_inner_name(self.mechanism)}, rate={self.rate:g})"

    @property
    def output_kind(self) -> str:  # type: ignore[override]
        return getattr(self.mechanism, "output_kind", "scalar")

    @property
    def broken(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.mechanism, "broken", False))

    @property
    def float_safe(self) -> bool:  # type: ignore[override]
        """Float-safe when the wrapped mechanism is."""
        return bool(getattr(self.mechanism, "float_safe", False))

    def _amplify(self, epsilon: float) -> float:
        return math.log1p(self.rate * math.expm1(epsilon)) if math.isfinite(epsilon) else math.inf

    @property
    def claim(self) -> PointClaim:
        inner = self.mechanism.claim
        return PointClaim(self._amplify(inner.point_epsilon), self.rate * inner.point_delta,
                          neighbouring=inner.neighbouring)

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return self.mechanism.neighbouring_pair()

    def _prepare(self, dataset: Any) -> np.ndarray:
        return as_numeric_array(dataset)

    def _width(self, prepared: np.ndarray) -> int:
        return max(4, prepared.shape[0])

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        n_records = prepared.shape[0]
        keep = rng.random((n, n_records)) < self.rate
        if n_records <= 62:
            codes = keep @ (np.int64(1) << np.arange(n_records, dtype=np.int64)) if n_records else np.zeros(n, np.int64)
            uniques, inverse = np.unique(codes, return_inverse=True)
            masks = [((int(u) >> np.arange(n_records)) & 1).astype(bool) for u in uniques]
        else:
            uniq_rows, inverse = np.unique(keep, axis=0, return_inverse=True)
            masks = list(uniq_rows)
        inverse = np.asarray(inverse).reshape(-1)
        out: np.ndarray | None = None
        for j, mask in enumerate(masks):
            where = np.flatnonzero(inverse == j)
            part = np.asarray(self.mechanism(prepared[mask], size=where.size, rng=rng))
            if out is None:
                out = np.empty((n,) + part.shape[1:], dtype=part.dtype)
            out[where] = part
        assert out is not None
        return out

    def true_epsilon(self, delta: float = 0.0) -> float:
        """The amplification of the inner true epsilon (an upper bound)."""
        inner_delta = min(delta / self.rate, 1.0) if self.mechanism.claim.point_delta else delta
        return self._amplify(_inner_true(self.mechanism, inner_delta))


@dataclass(frozen=True)
class PostProcessed(BuiltinMechanism):
    """Post-processing: ``fn`` applied to the releases; the claim is unchanged.

    ``fn`` receives the releases stacked on axis 0 (shape ``(n,)`` or ``(n, k)``)
    and must return ``n`` results stacked on axis 0 (a vectorised function such
    as ``np.round`` or ``lambda r: np.clip(r, 0, None)``).

    Examples
    --------
    >>> from dpaudit.mechanisms import LaplaceMechanism
    >>> p = postprocess(LaplaceMechanism(), np.round)
    >>> float(p([1.0], rng=0)).is_integer()
    True
    """

    mechanism: Any = None
    fn: Callable[[np.ndarray], Any] | None = field(default=None, compare=False)
    kind: str | None = None

    def __post_init__(self) -> None:
        _check_inner(self.mechanism, "postprocess")
        if not callable(self.fn):
            raise ParameterTypeError(f"postprocess: fn must be callable; got {self.fn!r}")

    @property
    def name(self) -> str:  # type: ignore[override]
        fname = getattr(self.fn, "__name__", "fn")
        return f"postprocess({_inner_name(self.mechanism)}, {fname})"

    @property
    def output_kind(self) -> str:  # type: ignore[override]
        return self.kind or getattr(self.mechanism, "output_kind", "scalar")

    @property
    def broken(self) -> bool:  # type: ignore[override]
        return bool(getattr(self.mechanism, "broken", False))

    @property
    def float_safe(self) -> bool:  # type: ignore[override]
        """Float-safe when the wrapped mechanism is."""
        return bool(getattr(self.mechanism, "float_safe", False))

    @property
    def claim(self) -> PointClaim:
        return self.mechanism.claim

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return self.mechanism.neighbouring_pair()

    def _prepare(self, dataset: Any) -> Any:
        return dataset

    def _width(self, prepared: Any) -> int:
        return 8

    def _draw(self, prepared: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        out = np.asarray(self.fn(np.asarray(self.mechanism(prepared, size=n, rng=rng))))  # type: ignore[misc]
        if out.ndim == 0 or out.shape[0] != n:
            raise ParameterValueError(
                f"postprocess: fn must return one result per release ({n} stacked on axis 0); got shape {out.shape}"
            )
        return out

    def true_epsilon(self, delta: float = 0.0) -> float:
        """The inner true epsilon (post-processing cannot increase it; an upper bound)."""
        return _inner_true(self.mechanism, delta)


def compose(mechanism: Any, k: int, advanced: bool = False, delta_prime: float = 1e-6) -> Composed:
    """k-fold composition of ``mechanism`` (see :class:`Composed`)."""
    return Composed(mechanism, k, advanced, delta_prime)


def subsample(mechanism: Any, rate: float) -> Subsampled:
    """Poisson subsampling of the records at ``rate`` before ``mechanism`` (see :class:`Subsampled`)."""
    return Subsampled(mechanism, rate)


def postprocess(mechanism: Any, fn: Callable[[np.ndarray], Any], output_kind: str | None = None) -> PostProcessed:
    """``fn`` applied to the releases of ``mechanism`` (see :class:`PostProcessed`)."""
    return PostProcessed(mechanism, fn, output_kind)

