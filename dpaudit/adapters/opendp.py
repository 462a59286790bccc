"""Targets built from OpenDP measurements (extra ``dpaudit[opendp]``).

Registered as ``opendp.laplace`` and ``opendp.gaussian`` (``domain="float"`` or
``"int"``; the int versions are OpenDP's discrete Laplace and discrete
Gaussian) and ``opendp.randomized_response``.

OpenDP 0.16 needs ``dp.enable_features("contrib")`` for these constructors;
the adapter enables it when it first builds a measurement.  The noise scale is
found with ``dp.binary_search_param`` so that OpenDP's own privacy map certifies
the claimed budget: Laplace maps to epsilon directly; the Gaussian measurement
is zCDP and is converted with ``make_zCDP_to_approxDP`` + ``make_fix_delta``
(OpenDP's conversion is looser than the analytic Gaussian: at epsilon = 1,
delta = 1e-5 it picks sigma ~4.05 where Balle-Wang needs ~3.73).

Versions (:data:`SUPPORTED`), found by feature detection: 0.8 to 0.16 through
``opendp.prelude``; 0.4 and 0.5, which have no prelude, through their
``opendp.meas`` and ``opendp.trans`` (:mod:`dpaudit.adapters.opendp_legacy`).  A
version with neither, or without a constructor the adapters call, raises one
line naming it.

Randomness: OpenDP samples from its own cryptographic RNG, which cannot be
seeded, so these targets take no ``rng`` (``seeded=False``) and audits of them
are not reproducible.  Releases are vectorised: ``size`` releases are one call
of the same measurement on a vector domain (i.i.d. noise per coordinate, the
same sampler), much faster than one call per release (docs/decisions/adapter-throughput.md).
"""

from __future__ import annotations

import importlib.util
import inspect
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_choice, check_int
from ..exceptions import MissingExtraError, ParameterValueError
from ..mechanisms.base import (
    BuiltinMechanism,
    check_gaussian_delta,
    PureAddRemove,
    set_epsilon,
    set_sensitivity,
    check_size,
    record_values,
)
from ..claims import PointClaim
from ._common import RandomizedResponseBits, installed_version
from .opendp_legacy import LEGACY_SUPPORTED, LegacyOpenDP

__all__ = ["SUPPORTED", "load_opendp", "load_api", "OpenDPLaplace", "OpenDPGaussian", "OpenDPRandomizedResponse"]

_CHUNK = 1 << 20


#: The OpenDP versions the adapters support (the message of an unusable one names it).
SUPPORTED = ("OpenDP >= 0.8 (checked with 0.8.0, 0.9.2, 0.10.0, 0.11.0, 0.11.1, 0.12.0, 0.12.1, 0.13.0, 0.14.2, "
             f"0.15.1 and 0.16.0); {LEGACY_SUPPORTED}")
#: What the adapters call, as (namespace in ``opendp.prelude`` or "", name); 0.7 has no ``make_laplace``.
_NEEDED = [("", n) for n in ("enable_features", "binary_search_param", "atom_domain", "vector_domain",
                             "absolute_distance", "l1_distance", "l2_distance")]
_NEEDED += [("m", n) for n in ("make_laplace", "make_gaussian", "make_randomized_response_bool")]
_NEEDED += [("c", n) for n in ("make_zCDP_to_approxDP", "make_fix_delta")]
_EXTRA_HINT = "install it with: pip install 'dpaudit[opendp]'"


def load_opendp() -> Any:
    """``opendp.prelude`` with the ``contrib`` feature enabled.

    Raises :class:`MissingExtraError` when OpenDP is not installed, or when the installed version lacks
    ``opendp.prelude`` (before 0.8) or anything else the adapters call (feature detection, not a version
    list); the message names the installed version and :data:`SUPPORTED`.
    """
    try:
        import opendp  # noqa: F401 - distinguishes "not installed" from "too old for the prelude"
    except ImportError as exc:
        raise MissingExtraError(f"the opendp adapters need OpenDP ({exc}); {_EXTRA_HINT}") from None
    try:
        import opendp.prelude as dp
    except ImportError as exc:
        raise _unusable(f"{exc}") from None
    missing = [f"{ns}.{name}" if ns else name for ns, name in _NEEDED
               if not hasattr(getattr(dp, ns, None) if ns else dp, name)]
    if missing:
        raise _unusable(f"its prelude has no {', '.join(missing)}")
    dp.enable_features("contrib")
    return dp


def load_api() -> Any:
    """``opendp.prelude`` (:func:`load_opendp`), or for an OpenDP without one but with ``opendp.meas``, its old API.

    The old API is a :class:`~dpaudit.adapters.opendp_legacy.LegacyOpenDP` with the features enabled; an old
    version whose modules do not import or lack a constructor the adapters call raises the same one-line
    :class:`MissingExtraError` as :func:`load_opendp`.
    """
    try:
        import opendp  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError(f"the opendp adapters need OpenDP ({exc}); {_EXTRA_HINT}") from None
    if importlib.util.find_spec("opendp.prelude") is not None or importlib.util.find_spec("opendp.meas") is None:
        return load_opendp()
    try:
        legacy = LegacyOpenDP.load()
    except Exception as exc:  # OpenDP 0.4's typing reads numpy.bool8, gone in numpy 2: an AttributeError
        raise _unusable(f"its opendp.meas does not import: {type(exc).__name__}: {exc}") from None
    missing = legacy.missing()
    if missing:
        raise _unusable(f"it has no {', '.join(missing)}")
    return legacy


def _unusable(reason: str) -> MissingExtraError:
    return MissingExtraError(f"OpenDP {installed_version('opendp')} is installed but unusable ({reason}); "
                             f"the opendp adapters support {SUPPORTED}: {_EXTRA_HINT}")


def _float_atom_domain(dp: Any) -> Any:
    """OpenDP's domain of non-NaN floats, which the Laplace and Gaussian measurements need.

    OpenDP 0.8 to 0.12 spell it ``atom_domain(T=float)`` (its ``nullable`` defaults to False and has no ``nan``);
    0.13 and later take ``nan=`` and default it to True for floats, so it must be said.
    """
    if "nan" in inspect.signature(dp.atom_domain).parameters:
        return dp.atom_domain(T=float, nan=False)
    return dp.atom_domain(T=float)


@dataclass(frozen=True)
class _OpenDPBase(BuiltinMechanism):
    def __post_init__(self) -> None:
        self._validate()
        try:
            api = load_api()
            built = self._build_legacy(api) if isinstance(api, LegacyOpenDP) else self._build(api)
            object.__setattr__(self, "_built", built)
        except MissingExtraError:
            raise
        except Exception as exc:  # OpenDP raises its own OpenDPException for bad parameters
            raise ParameterValueError(f"{self.name}: OpenDP rejected the parameters: {exc}") from None

    def _validate(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _build(self, dp: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _build_legacy(self, legacy: LegacyOpenDP) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    # No ``rng``: OpenDP cannot be seeded, and saying so lets targets report it.
    def __call__(self, dataset: Any, *, size: int | None = None) -> Any:  # type: ignore[override]
        """Release once (``size=None``) or ``size`` times stacked on axis 0 (unseeded)."""
        size = check_size(size)
        prepared = self._prepare(dataset)
        n = 1 if size is None else size
        parts = [self._draw_unseeded(prepared, min(_CHUNK, n - s)) for s in range(0, n, _CHUNK)]
        out = np.concatenate(parts) if parts else self._draw_unseeded(prepared, 0)
        return out[0] if size is None else out

    def _draw_unseeded(self, prepared: Any, n: int) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Not known independently: the claim (what OpenDP certifies) is returned as is."""
        return super().true_epsilon(delta)


@dataclass(frozen=True)
class _OpenDPAdditive(_OpenDPBase):
    epsilon: float = 1.0
    sensitivity: float = 1.0
    domain: str = "float"

    def _validate(self) -> None:
        set_epsilon(self)
        check_choice(self.domain, "domain", ("float", "int"))
        if self.domain == "int":
            object.__setattr__(self, "sensitivity", check_int(self.sensitivity, "sensitivity", low=1))
        else:
            set_sensitivity(self)

    @property
    def output_kind(self) -> str:  # type: ignore[override]
        return "discrete" if self.domain == "int" else "scalar"

    def _spaces(self, dp: Any, l2: bool = False) -> tuple[tuple, tuple]:
        t = int if self.domain == "int" else float
        atom = dp.atom_domain(T=t) if t is int else _float_atom_domain(dp)
        scalar = (atom, dp.absolute_distance(T=t))
        vector = (dp.vector_domain(atom), (dp.l2_distance if l2 else dp.l1_distance)(T=t))
        return scalar, vector

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        s = self.sensitivity
        return np.array([0.0]), np.array([0.0, s])

    def _prepare(self, dataset: Any) -> Any:
        total = np.clip(record_values(dataset), 0, self.sensitivity).sum()
        return int(np.rint(total)) if self.domain == "int" else float(total)

    def _draw_unseeded(self, prepared: Any, n: int) -> np.ndarray:
        vector_meas = self._built[1]  # type: ignore[attr-defined]
        dtype = np.int64 if self.domain == "int" else float
        if n == 0:
            return np.empty(0, dtype=dtype)
        return np.asarray(vector_meas([prepared] * n), dtype=dtype)

    @property
    def scale(self) -> float:
        """The noise scale OpenDP was configured with."""
        return self._built[2]  # type: ignore[attr-defined]


@dataclass(frozen=True)
class OpenDPLaplace(PureAddRemove, _OpenDPAdditive):
    """OpenDP Laplace (float) or discrete Laplace (int) on a sum clipped to [0, sensitivity]."""

    name = "opendp.laplace"

    def _build(self, dp: Any) -> Any:
        scalar, vector = self._spaces(dp)
        d_in = self.sensitivity
        scale = dp.binary_search_param(lambda s: dp.m.make_laplace(*scalar, scale=s), d_in=d_in, d_out=self.epsilon)
        return dp.m.make_laplace(*scalar, scale=scale), dp.m.make_laplace(*vector, scale=scale), scale

    def _build_legacy(self, legacy: LegacyOpenDP) -> Any:
        return legacy.additive("laplace", self.domain, self.epsilon, self.sensitivity)


@dataclass(frozen=True)
class OpenDPGaussian(_OpenDPAdditive):
    """OpenDP Gaussian (float) or discrete Gaussian (int), zCDP converted to (epsilon, delta)."""

    delta: float = 1e-5

    name = "opendp.gaussian"

    def _validate(self) -> None:
        super()._validate()
        object.__setattr__(self, "delta", check_gaussian_delta(self.delta))

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, self.delta, neighbouring="add/remove")

    def _build(self, dp: Any) -> Any:
        scalar, vector = self._spaces(dp, l2=True)

        def approx(s: float) -> Any:
            meas = dp.m.make_gaussian(*scalar, scale=s)
            return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(meas), self.delta)

        scale = dp.binary_search_param(approx, d_in=self.sensitivity, d_out=(self.epsilon, self.delta))
        return dp.m.make_gaussian(*scalar, scale=scale), dp.m.make_gaussian(*vector, scale=scale), scale

    def _build_legacy(self, legacy: LegacyOpenDP) -> Any:
        return legacy.additive("gaussian", self.domain, self.epsilon, self.sensitivity, self.delta)


@dataclass(frozen=True)
class OpenDPRandomizedResponse(RandomizedResponseBits, _OpenDPBase):
    """OpenDP randomized response on every respondent's bit (truthful w.p. e^eps/(1+e^eps)); releases the count of 1s."""

    epsilon: float = math.log(3.0)

    name = "opendp.randomized_response"
    output_kind = "discrete"

    @property
    def truth_probability(self) -> float:
        """Probability of reporting the true bit, e^eps / (1 + e^eps)."""
        return 1.0 / (1.0 + math.exp(-self.epsilon))

    def _build(self, dp: Any) -> Any:
        return dp.m.make_randomized_response_bool(prob=self.truth_probability)

    def _build_legacy(self, legacy: LegacyOpenDP) -> Any:
        return legacy.randomized_response(self.truth_probability)

    def _prepare(self, dataset: Any) -> list:
        return [bool(v) for v in self._bits(dataset)]

    def _draw_unseeded(self, prepared: list, n: int) -> np.ndarray:
        meas = self._built  # type: ignore[attr-defined]
        return np.array([sum(meas(b) for b in prepared) for _ in range(n)], dtype=np.int64)
