"""The open registry of named mechanisms: ``REGISTRY``, :func:`get_mechanism`, :func:`list_mechanisms`.

Names map to factories.  Built-ins are always present; the third-party
adapters (``diffprivlib.*``, ``opendp.*``) are registered too (by
:mod:`dpaudit.adapters`, which the ``dpaudit`` package imports: mechanisms
never import adapters, adapters build on mechanisms), but their
factories import the library only when called and raise
:class:`~dpaudit.exceptions.MissingExtraError` naming the extra to install
when it is missing.  Register your own with :func:`register`.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ..exceptions import ParameterValueError
from . import (additive, dpsgd, floating_point, gaussian, histogram, ldp, ldp_approximate, ldp_longitudinal, ldp_multidim,
               noisy_max, numerical_svt, parallel,
               prefix_sum, randomized_response, rappor, selection, sparse_vector, truncated_geometric, wrappers)

__all__ = ["REGISTRY", "register", "get_mechanism", "list_mechanisms"]

_BUILTINS: tuple[type, ...] = (
    randomized_response.RandomizedResponse,
    additive.LaplaceMechanism,
    additive.GeometricMechanism,
    gaussian.GaussianMechanism,
    gaussian.AnalyticGaussianMechanism,
    selection.ExponentialMechanism,
    selection.ReportNoisyMaxLaplace,
    selection.ReportNoisyMaxExponential,
    histogram.NoisyHistogram,
    sparse_vector.SparseVector,
    # Added for DP-Sniper's table (correct at their defaults; ``broken`` follows their parameters).
    sparse_vector.SVTLyuAlg2,
    numerical_svt.NumericalSVT,
    parallel.LaplaceParallel,
    truncated_geometric.TruncatedGeometric,
    rappor.Rappor,
    rappor.OneTimeRappor,
    dpsgd.SubsampledGaussianSteps,
    # Local DP frequency oracles (LDP-Auditor's protocols).
    *ldp.LDP_PROTOCOLS,
    *ldp_approximate.APPROXIMATE_LDP_PROTOCOLS,
    # Longitudinal LDP (repeated reports; memoized L-GRR, L-UE).
    *ldp_longitudinal.LONGITUDINAL_LDP,
    # Multidimensional LDP (RS+FD is among the known-broken: its epsilon covers one changed attribute).
    ldp_multidim.SplitBudget,
    ldp_multidim.SampleOne,
    # Known-broken variants.
    sparse_vector.SVTLyuAlg3,
    sparse_vector.SVTLyuAlg4,
    sparse_vector.SVTLyuAlg5,
    sparse_vector.SVTLyuAlg6,
    selection.ReportNoisyMaxWithValue,
    histogram.HistogramReplaceOneBug,
    additive.UnclippedSum,
    floating_point.FloatLaplaceMironov,
    histogram.HistogramScaleBug,
    noisy_max.NoisyMaxValueLaplace,
    noisy_max.NoisyMaxValueExponential,
    parallel.SVT34Parallel,
    prefix_sum.PrefixSum,
    ldp_multidim.RSFD,
)

#: name -> factory returning a mechanism.
REGISTRY: dict[str, Callable[..., Any]] = {cls.name: cls for cls in _BUILTINS}

# Static descriptions, so that listing never imports a third-party library.
_DESCRIPTIONS: dict[str, tuple[str, bool]] = {}


def register(name: str, factory: Callable[..., Any], *, description: str | None = None, broken: bool = False) -> None:
    """Add ``factory`` under ``name`` (replacing nothing: names are unique)."""
    if not isinstance(name, str) or not name:
        raise ParameterValueError(f"name must be a non-empty string; got {name!r}")
    if name in REGISTRY:
        raise ParameterValueError(f"a mechanism named {name!r} is already registered")
    if not callable(factory):
        raise ParameterValueError(f"factory for {name!r} must be callable; got {factory!r}")
    REGISTRY[name] = factory
    if description is not None:
        _DESCRIPTIONS[name] = (description, broken)


def _compose_factory(mechanism: str = "laplace", k: int = 2, advanced: bool = False,
                     delta_prime: float = 1e-6, params: dict | None = None) -> wrappers.Composed:
    """k-fold composition of a named mechanism (``params`` are its parameters)."""
    return wrappers.compose(get_mechanism(mechanism, **(params or {})), k, advanced, delta_prime)


def _subsample_factory(mechanism: str = "laplace", rate: float = 0.5, params: dict | None = None) -> wrappers.Subsampled:
    """Poisson subsampling before a named mechanism (``params`` are its parameters)."""
    return wrappers.subsample(get_mechanism(mechanism, **(params or {})), rate)


REGISTRY["compose"] = _compose_factory
REGISTRY["subsample"] = _subsample_factory


def get_mechanism(name: str, **params: Any) -> Any:
    """Build the mechanism registered as ``name`` with validated ``params``.

    Examples
    --------
    >>> get_mechanism("laplace", epsilon=2.0).claim.point_epsilon
    2.0
    >>> get_mechanism("laplace", eps=2.0)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: mechanism 'laplace' has no parameter 'eps'; its parameters are: epsilon, sensitivity, query, answers
    """
    if not isinstance(name, str):
        raise ParameterValueError(f"mechanism name must be a string; got {name!r}")
    try:
        factory = REGISTRY[name]
    except KeyError:
        raise ParameterValueError(
            f"unknown mechanism {name!r}; known mechanisms: {', '.join(sorted(REGISTRY))}"
        ) from None
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # pragma: no cover - builtins without signature
        sig = None
    if sig is not None and not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        allowed = [p for p in sig.parameters if not p.startswith("_")]
        for key in params:
            if key not in allowed:
                raise ParameterValueError(
                    f"mechanism {name!r} has no parameter {key!r}; its parameters are: {', '.join(allowed)}"
                )
    return factory(**params)


def list_mechanisms() -> list[tuple[str, str, bool]]:
    """``(name, one-line description with the default claim, broken flag)`` for every registered name.

    >>> rows = dict((n, d) for n, d, _ in list_mechanisms())
    >>> rows["laplace"]
    'Laplace noise of scale sensitivity/epsilon on a clipped sum or a count; claims epsilon=1 (add-remove)'
    """
    rows = []
    for name, factory in REGISTRY.items():
        if name in _DESCRIPTIONS:
            desc, broken = _DESCRIPTIONS[name]
        elif name in ("compose", "subsample"):
            m = factory()
            desc, broken = f"{(factory.__doc__ or '').strip().rstrip('.').replace('``', '')}; default {m.name} claims epsilon={m.claim.point_epsilon:.4g}", False
        else:
            m = factory()
            desc, broken = m.describe(), bool(getattr(m, "broken", False))
        rows.append((name, desc, broken))
    return rows
