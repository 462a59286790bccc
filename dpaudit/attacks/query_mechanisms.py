"""Query mechanisms: how a data curator answers linear (counting) queries.

The attacks in :mod:`dpaudit.attacks` (differencing, reconstruction, tracing)
all ask *linear* queries of a secret column and differ only in how the answers
are perturbed.  That perturbation is pluggable; one protocol serves all:

``answer(queries, x, *, rng) -> numpy.ndarray``

* ``queries``: a ``(k, n)`` 0/1 (or real) matrix, dense or ``scipy.sparse``;
  row ``i`` selects (weights) the individuals counted by query ``i``.
* ``x``: the secret data, shape ``(n,)`` (one bit per person) or ``(n, d)``
  (``d`` attributes per person).
* the exact answers are ``queries @ x``; the mechanism returns an array of the
  same shape, perturbed as it likes.  Passing the data (not only the exact
  answers) lets mechanisms such as :class:`SubsampleAnswers` compute their
  answers on a subsample of rows.

A mechanism may carry two optional attributes: ``name`` (a string) and
``claim`` (the :class:`~dpaudit.claims.PointClaim` of *one* answer whose
sensitivity is ``sensitivity``), and a method ``claim_for(k)`` giving the
claimed budget of ``k`` answers (by default, basic composition of ``claim``).
:func:`claimed_budget` reads them for any object.

Third-party callables are accepted by :func:`as_query_mechanism`:

* ``f(queries, x, *, rng)`` (two positional parameters): used as is;
* ``f(true_answers, *, rng)`` (one positional parameter): a user function that
  perturbs exact answers, wrapped in :class:`NoisyAnswers`.

``rng`` is passed only when ``f`` accepts it.

Examples
--------
>>> import numpy as np
>>> q = np.array([[1, 1, 0], [0, 1, 1]])
>>> x = np.array([1, 0, 1])
>>> ExactAnswers()(q, x, rng=0)
array([1., 1.])
>>> mech = LaplaceNoise(epsilon=0.5)
>>> mech.claim_for(10).point_epsilon
5.0
>>> as_query_mechanism(lambda a, rng: a + 0.25).__class__.__name__
'NoisyAnswers'
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from dpaudit._rng import as_generator
from dpaudit._validation import check_int, check_real
from dpaudit.exceptions import ParameterTypeError, ParameterValueError, TargetError
from dpaudit.mechanisms.gaussian import gaussian_epsilon
from dpaudit.claims import PointClaim
from dpaudit.privacy import Neighbouring

__all__ = [
    "QueryMechanism",
    "ExactAnswers",
    "BoundedNoise",
    "LaplaceNoise",
    "GaussianNoise",
    "RoundedGaussianNoise",
    "SubsampleAnswers",
    "NoisyAnswers",
    "QUERY_MECHANISMS",
    "as_query_mechanism",
    "claimed_budget",
    "exact_answers",
]


@runtime_checkable
class QueryMechanism(Protocol):
    """Anything that answers linear queries: ``answer(queries, x, *, rng)``."""

    def __call__(self, queries: Any, x: np.ndarray, *, rng: Any = None) -> np.ndarray: ...


def _is_identity(queries: Any) -> bool:
    return (
        sp.issparse(queries) and queries.format == "dia" and queries.shape[0] == queries.shape[1]
        and list(queries.offsets) == [0] and bool(np.all(queries.data == 1))
    )


def exact_answers(queries: Any, x: np.ndarray) -> np.ndarray:
    """``queries @ x`` as a float array (dense result even for sparse queries).

    >>> exact_answers(np.eye(2), np.array([3, 4]))
    array([3., 4.])
    """
    if _is_identity(queries):  # one release per row (e.g. the tracing games): skip the product
        return np.array(x, dtype=float)
    out = queries @ np.asarray(x, dtype=float)
    if sp.issparse(out):
        out = out.toarray()
    return np.asarray(out, dtype=float)


def _composed(claim: PointClaim | None, k: int) -> PointClaim | None:
    return None if claim is None else claim.compose(k)


class _NoClaim:
    """Answers that promise no privacy (exact, or subsampled without noise)."""

    @property
    def claim(self) -> None:
        return None

    def claim_for(self, k: int) -> None:
        return None


@dataclass(frozen=True)
class ExactAnswers(_NoClaim):
    """The exact server: answers ``queries @ x``, no privacy claim."""

    name: str = field(default="exact", init=False)

    def __call__(self, queries, x, *, rng=None) -> np.ndarray:
        return exact_answers(queries, x)


@dataclass(frozen=True)
class BoundedNoise:
    """Uniform noise on ``[-bound, bound]`` added to every answer.

    Bounded noise is never pure DP; shifting an answer by the sensitivity
    ``s <= 2 bound`` changes its distribution in total variation by
    ``s / (2 bound)``, so one answer is ``(0, s / (2 bound))``-DP.

    >>> BoundedNoise(5.0).claim
    PointClaim(point_epsilon=0.0, point_delta=0.1, neighbouring='replace-one')
    """

    bound: float
    sensitivity: float = 1.0
    name: str = field(default="bounded", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bound", check_real(self.bound, "bound", low=0.0))
        object.__setattr__(self, "sensitivity", check_real(self.sensitivity, "sensitivity", low=0.0, low_inclusive=False))

    @property
    def claim(self) -> PointClaim | None:
        delta = self.sensitivity / (2 * self.bound) if self.bound > 0 else math.inf
        return PointClaim(0.0, delta, neighbouring=Neighbouring.REPLACE_ONE) if delta < 1 else None

    def claim_for(self, k: int) -> PointClaim | None:
        claim = self.claim
        if claim is None or k * claim.point_delta >= 1:
            return None
        return claim.compose(k)

    def __call__(self, queries, x, *, rng=None) -> np.ndarray:
        a = exact_answers(queries, x)
        return a + as_generator(rng).uniform(-self.bound, self.bound, size=a.shape)


@dataclass(frozen=True)
class LaplaceNoise:
    """Laplace noise of ``scale`` (or ``scale = sensitivity / epsilon``).

    Give exactly one of ``scale`` and ``epsilon``; one answer is
    ``sensitivity / scale``-DP.

    >>> LaplaceNoise(scale=2.0).claim.point_epsilon
    0.5
    """

    scale: float | None = None
    epsilon: float | None = None
    sensitivity: float = 1.0
    name: str = field(default="laplace", init=False)

    def __post_init__(self) -> None:
        sens = check_real(self.sensitivity, "sensitivity", low=0.0, low_inclusive=False)
        object.__setattr__(self, "sensitivity", sens)
        if (self.scale is None) == (self.epsilon is None):
            raise ParameterValueError(
                f"give exactly one of scale and epsilon for Laplace noise; got scale={self.scale!r}, epsilon={self.epsilon!r}"
            )
        if self.epsilon is not None:
            eps = check_real(self.epsilon, "epsilon", low=0.0, low_inclusive=False)
            object.__setattr__(self, "epsilon", eps)
            object.__setattr__(self, "scale", sens / eps)
        else:
            scale = check_real(self.scale, "scale", low=0.0, low_inclusive=False)
            object.__setattr__(self, "scale", scale)
            object.__setattr__(self, "epsilon", sens / scale)

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, 0.0, neighbouring=Neighbouring.REPLACE_ONE)

    def claim_for(self, k: int) -> PointClaim:
        return self.claim.compose(k)

    def __call__(self, queries, x, *, rng=None) -> np.ndarray:
        a = exact_answers(queries, x)
        return a + as_generator(rng).laplace(0.0, self.scale, size=a.shape)


@dataclass(frozen=True)
class GaussianNoise:
    """Gaussian noise N(0, sigma^2) on every answer.

    The claim of one answer is the exact (analytic) Gaussian epsilon at
    ``delta``; the claim of ``k`` answers treats them as one Gaussian release
    of L2 sensitivity ``sqrt(k) * sensitivity`` at the same total ``delta``
    (tighter than basic composition, and still an upper bound).

    >>> round(GaussianNoise(sigma=10.0).claim_for(4).point_epsilon, 3)
    0.726
    """

    sigma: float
    sensitivity: float = 1.0
    delta: float = 1e-5
    name: str = field(default="gaussian", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real(self.sigma, "sigma", low=0.0, low_inclusive=False))
        object.__setattr__(self, "sensitivity", check_real(self.sensitivity, "sensitivity", low=0.0, low_inclusive=False))
        object.__setattr__(self, "delta", check_real(self.delta, "delta", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False))

    @property
    def claim(self) -> PointClaim:
        return self.claim_for(1)

    def claim_for(self, k: int) -> PointClaim:
        # Balle-Wang's exact eps(delta); dpaudit.stats.gaussian_epsilon(mu, delta) is the same function
        # of mu = sqrt(k) sensitivity / sigma but returns inf above eps = 1e4 (mu > ~140), not a claim.
        eps = gaussian_epsilon(self.sigma, self.delta, math.sqrt(k) * self.sensitivity)
        return PointClaim(eps, self.delta, neighbouring=Neighbouring.REPLACE_ONE)

    def __call__(self, queries, x, *, rng=None) -> np.ndarray:
        a = exact_answers(queries, x)
        return a + as_generator(rng).normal(0.0, self.sigma, size=a.shape)


@dataclass(frozen=True)
class RoundedGaussianNoise(GaussianNoise):
    """Gaussian noise, then rounding to the nearest integer (Cohen and Nissim 2018).

    Rounding is post-processing, so the claim is the Gaussian one.

    >>> RoundedGaussianNoise(sigma=2.0)(np.eye(3), np.ones(3), rng=1).dtype
    dtype('float64')
    """

    name: str = field(default="rounded_gaussian", init=False)

    def __call__(self, queries, x, *, rng=None) -> np.ndarray:
        return np.rint(super().__call__(queries, x, rng=rng))


@dataclass(frozen=True)
class SubsampleAnswers(_NoClaim):
    """A subsampling curator: answer on ``m`` rows drawn with replacement (sampling error, no privacy claim).

    Every call draws one subsample of ``subsample_size`` rows (uniformly, with
    replacement) and answers all queries on it, scaled by ``n / m``.  With high
    probability every answer is within about ``sqrt(n log k)`` of the truth
    when ``m ~ n / log k`` (more error for smaller ``m``).  No DP claim: a
    person in the subsample is exposed as much as with exact answers.

    >>> m = SubsampleAnswers(2)
    >>> m(np.ones((1, 4)), np.array([1, 1, 1, 1]), rng=0)
    array([4.])
    """

    subsample_size: int
    name: str = field(default="subsample", init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "subsample_size", check_int(self.subsample_size, "subsample_size", low=1))

    def __call__(self, queries, x, *, rng=None) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        n = x.shape[0]
        rows = as_generator(rng).integers(0, n, size=self.subsample_size)
        weights = np.bincount(rows, minlength=n).astype(float) * (n / self.subsample_size)
        return exact_answers(queries, x * (weights if x.ndim == 1 else weights[:, None]))


def _accepts_rng(fn: Callable) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "rng" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _n_required_positional(fn: Callable) -> int | None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(1 for p in params if p.kind in kinds and p.default is inspect.Parameter.empty and p.name != "rng")


@dataclass(frozen=True)
class NoisyAnswers:
    """Wrap a third-party function that perturbs the exact answers.

    ``noise_fn(true_answers, *, rng)`` (``rng`` optional) must return an
    array of the same shape.  ``claim`` is the claim of one answer, if known.

    >>> NoisyAnswers(lambda a: a + 1)(np.eye(2), np.ones(2), rng=0)
    array([2., 2.])
    """

    noise_fn: Callable
    claim: PointClaim | None = None
    name: str = "third-party"

    def claim_for(self, k: int) -> PointClaim | None:
        return _composed(self.claim, k)

    def __call__(self, queries, x, *, rng=None) -> np.ndarray:
        a = exact_answers(queries, x)
        kwargs = {"rng": as_generator(rng)} if _accepts_rng(self.noise_fn) else {}
        return _checked_output(self.noise_fn(a.copy(), **kwargs), a.shape, self.name)


@dataclass(frozen=True)
class _ThirdPartyMechanism:
    fn: Callable
    name: str
    claim: PointClaim | None = None

    def claim_for(self, k: int) -> PointClaim | None:
        own = getattr(self.fn, "claim_for", None)
        return own(k) if callable(own) else _composed(self.claim, k)

    def __call__(self, queries, x, *, rng=None) -> np.ndarray:
        kwargs = {"rng": as_generator(rng)} if _accepts_rng(self.fn) else {}
        x = np.asarray(x)
        expected = (queries.shape[0],) + x.shape[1:]
        return _checked_output(self.fn(queries, x.copy(), **kwargs), expected, self.name)


def _checked_output(out: Any, shape: tuple, name: str) -> np.ndarray:
    try:
        arr = np.asarray(out, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TargetError(f"query mechanism {name!r} returned a non-numeric answer: {exc}") from None
    if arr.shape != tuple(shape):
        raise TargetError(f"query mechanism {name!r} returned shape {arr.shape}; expected {tuple(shape)}")
    if not np.all(np.isfinite(arr)):
        raise TargetError(f"query mechanism {name!r} returned NaN or infinite answers")
    return arr


QUERY_MECHANISMS: dict[str, Callable[..., Any]] = {
    "exact": lambda **p: ExactAnswers(),
    "bounded": lambda *, noise_scale, sensitivity=1.0, **p: BoundedNoise(noise_scale, sensitivity),
    "laplace": lambda *, noise_scale=None, epsilon=None, sensitivity=1.0, **p: LaplaceNoise(
        scale=noise_scale, epsilon=epsilon, sensitivity=sensitivity
    ),
    "gaussian": lambda *, noise_scale, sensitivity=1.0, delta=1e-5, **p: GaussianNoise(noise_scale, sensitivity, delta),
    "rounded_gaussian": lambda *, noise_scale, sensitivity=1.0, delta=1e-5, **p: RoundedGaussianNoise(
        noise_scale, sensitivity, delta
    ),
    "subsample": lambda *, subsample_size, **p: SubsampleAnswers(subsample_size),
}
"""Registry of built-in query mechanisms by name (open: add your own factory)."""


def as_query_mechanism(
    spec: Any,
    *,
    noise_scale: float | None = None,
    epsilon: float | None = None,
    sensitivity: float = 1.0,
    delta: float = 1e-5,
    subsample_size: int | None = None,
    claim: PointClaim | None = None,
    name: str = "mechanism",
) -> Any:
    """Resolve a mechanism given by name, as a mechanism object, or as a plain callable.

    Parameters
    ----------
    spec : str or callable
        A name from :data:`QUERY_MECHANISMS` (``"exact"``, ``"bounded"``,
        ``"laplace"``, ``"gaussian"``, ``"rounded_gaussian"``,
        ``"subsample"``), a built-in mechanism object, or a third-party
        callable (see the module docstring for the two accepted signatures).
    noise_scale : float, optional
        Bound ``E`` (bounded), Laplace scale ``b``, or Gaussian ``sigma``.
    epsilon : float, optional
        Laplace only: per-answer epsilon instead of ``noise_scale``.
    sensitivity : float, default 1.0
        Sensitivity of one answer (1 for counts, ``1/n`` for means).
    delta : float, default 1e-5
        Gaussian only: the delta at which the claim is stated.
    subsample_size : int, optional
        Subsample only: rows ``m`` drawn per release.
    claim : PointClaim, optional
        Third-party callables only: the claim of one answer.
    name : str
        The parameter name used in error messages.

    Returns
    -------
    QueryMechanism

    Examples
    --------
    >>> as_query_mechanism("laplace", epsilon=1.0)
    LaplaceNoise(scale=1.0, epsilon=1.0, sensitivity=1.0, name='laplace')
    >>> as_query_mechanism("gaussian")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: mechanism='gaussian' needs noise_scale
    """
    if isinstance(spec, str):
        if spec not in QUERY_MECHANISMS:
            raise ParameterValueError(f"{name} must be one of {sorted(QUERY_MECHANISMS)} or a callable; got {spec!r}")
        params = {"sensitivity": sensitivity, "delta": delta}
        if noise_scale is not None:
            params["noise_scale"] = noise_scale
        if epsilon is not None:
            params["epsilon"] = epsilon
        if subsample_size is not None:
            params["subsample_size"] = subsample_size
        try:
            return QUERY_MECHANISMS[spec](**params)
        except TypeError:
            needed = "subsample_size" if spec == "subsample" else "noise_scale"
            if spec == "laplace":
                needed = "noise_scale or epsilon"
            raise ParameterValueError(f"{name}={spec!r} needs {needed}") from None
    if isinstance(spec, (ExactAnswers, BoundedNoise, LaplaceNoise, GaussianNoise, SubsampleAnswers, NoisyAnswers, _ThirdPartyMechanism)):
        return spec
    if callable(spec):
        label = getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__
        own_claim = claim if claim is not None else getattr(spec, "claim", None)
        if own_claim is not None and not isinstance(own_claim, PointClaim):
            raise ParameterTypeError(f"{name}.claim must be a PointClaim; got {own_claim!r}")
        if _n_required_positional(spec) == 1:
            return NoisyAnswers(spec, own_claim, str(label))
        return _ThirdPartyMechanism(spec, str(label), own_claim)
    raise ParameterTypeError(f"{name} must be a mechanism name or a callable; got {spec!r}")


def claimed_budget(mechanism: Any, k: int) -> PointClaim | None:
    """The claimed privacy budget of ``k`` answers of ``mechanism`` (``None``: no claim).

    Uses ``mechanism.claim_for(k)`` when present, else basic composition of
    ``mechanism.claim``.

    >>> claimed_budget(LaplaceNoise(epsilon=0.1), 20).point_epsilon
    2.0
    >>> claimed_budget(ExactAnswers(), 5) is None
    True
    """
    k = check_int(k, "k", low=1)
    own = getattr(mechanism, "claim_for", None)
    if callable(own):
        return own(k)
    return _composed(getattr(mechanism, "claim", None), k)


def mechanism_label(mechanism: Any) -> str:
    return str(getattr(mechanism, "name", None) or type(mechanism).__name__)
