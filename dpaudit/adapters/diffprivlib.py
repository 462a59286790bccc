"""Targets built from IBM diffprivlib's mechanisms (extra ``dpaudit[diffprivlib]``).

Registered as ``diffprivlib.laplace``, ``diffprivlib.gaussian``,
``diffprivlib.gaussian_analytic``, ``diffprivlib.geometric``,
``diffprivlib.exponential`` and ``diffprivlib.binary``.

Compatibility (diffprivlib 0.6.6): ``import diffprivlib`` fails
with scikit-learn >= 1.9 (``cannot import name 'DOUBLE' from
sklearn.tree._tree``) because its ``__init__`` imports ``diffprivlib.models``;
:func:`~dpaudit.adapters.compat.fix_diffprivlib_import` restores the two
dtype aliases it needs, and :func:`load_mechanisms` applies it before the
normal import, so the whole package (``tools`` and ``models`` too) is the
real one.  When the normal import still fails, :func:`load_mechanisms`
registers an empty *package stub* for ``diffprivlib`` (right ``__path__``, no
``__init__`` executed) and imports ``diffprivlib.mechanisms`` through it
(``diffprivlib.mechanisms`` itself only needs ``diffprivlib.utils``).  Side
effect of that route: in this process, ``import diffprivlib`` then yields the
stub.

Versions: 0.6.0 to 0.6.6 work (:data:`SUPPORTED`); 0.6.3 and 0.6.4 warn on import
(``numpy.core`` in ``diffprivlib.tools``), which is why any failure of the normal
import, not only an ``ImportError``, takes the stub route.  A version whose
mechanisms do not import or cannot be seeded raises one line naming it.

Randomness: diffprivlib mechanisms accept ``random_state`` (an int or a
``numpy.random.RandomState``); without it they use ``secrets.SystemRandom``.
The adapters pass a ``RandomState`` seeded from dpaudit's ``rng``, so these
targets *are* seedable and reproducible; the sampling algorithm is the same
either way.  diffprivlib has no vectorised API: one Python call per release
(docs/decisions/adapter-throughput.md has the rate).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import math
import sys
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_delta, check_int
from ..exceptions import MissingExtraError, ParameterValueError
from ..mechanisms.base import (
    BuiltinMechanism,
    PureAddRemove,
    set_epsilon,
    set_sensitivity,
    counting_queries,
    record_values,
)
from ..claims import PointClaim
from ._common import RandomizedResponseBits, installed_version
from .compat import fix_diffprivlib_import

__all__ = [
    "SUPPORTED",
    "load_mechanisms",
    "DiffprivlibLaplace",
    "DiffprivlibGaussian",
    "DiffprivlibGaussianAnalytic",
    "DiffprivlibGeometric",
    "DiffprivlibExponential",
    "DiffprivlibBinary",
]

_STATE: dict[str, Any] = {}
_EXTRA_HINT = "install it with: pip install 'dpaudit[diffprivlib]'"


def load_mechanisms() -> types.ModuleType:
    """Import ``diffprivlib.mechanisms``, bypassing the scikit-learn-dependent top level if needed.

    The top level is imported after :func:`~dpaudit.adapters.compat.fix_diffprivlib_import`, and bypassed (see the
    module docstring) when its import still fails in any way: an ``ImportError`` or a warning turned into an error (diffprivlib 0.6.3 and 0.6.4
    import the deprecated ``numpy.core`` from ``diffprivlib.tools``, an error under ``-W error``).
    Raises :class:`~dpaudit.exceptions.MissingExtraError` when diffprivlib is not installed, or when the
    installed version cannot be used (its mechanisms do not import, or lack a class or the
    ``random_state`` keyword the adapters need); the message names the installed version and
    :data:`SUPPORTED`.
    """
    if "module" in _STATE:
        return _STATE["module"]
    fix_diffprivlib_import()
    try:
        module = importlib.import_module("diffprivlib.mechanisms")
    except Exception as exc:  # any failure of the top level (a warning as an error too) sends us to the stub
        module = _import_through_stub(exc)
    _check_features(module)
    _STATE["module"] = module
    return module


#: The diffprivlib versions the adapters support (the message of an unusable one names it).
SUPPORTED = "diffprivlib >= 0.6.0 (checked with 0.6.0, 0.6.3, 0.6.4, 0.6.5 and 0.6.6)"
#: The mechanisms the adapters build; each must take ``random_state`` (diffprivlib 0.6 added it).
_NEEDED = ("Laplace", "Gaussian", "GaussianAnalytic", "Geometric", "Exponential", "Binary")


def _unusable(reason: str) -> MissingExtraError:
    return MissingExtraError(
        f"diffprivlib {installed_version('diffprivlib')} is installed but unusable ({reason}); "
        f"the diffprivlib adapters support {SUPPORTED}: {_EXTRA_HINT}"
    )


def _import_through_stub(exc: Exception) -> types.ModuleType:
    """``diffprivlib.mechanisms`` imported without running ``diffprivlib/__init__``.

    ``exc`` is why the normal import failed; raises :func:`_unusable` if this import fails too.
    """
    # Forget the half-imported package, then locate it without executing its __init__.
    for name in [m for m in sys.modules if m == "diffprivlib" or m.startswith("diffprivlib.")]:
        del sys.modules[name]
    spec = importlib.util.find_spec("diffprivlib")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError(f"the diffprivlib adapters need diffprivlib ({exc}); {_EXTRA_HINT}") from None
    stub = types.ModuleType("diffprivlib", "dpaudit stub: diffprivlib without models/tools")
    stub.__spec__ = importlib.machinery.ModuleSpec("diffprivlib", None, is_package=True)
    stub.__spec__.submodule_search_locations = list(spec.submodule_search_locations)
    stub.__path__ = list(spec.submodule_search_locations)
    sys.modules["diffprivlib"] = stub
    try:
        return importlib.import_module("diffprivlib.mechanisms")
    except Exception as exc2:  # reported as one line naming the version
        for name in [m for m in sys.modules if m == "diffprivlib" or m.startswith("diffprivlib.")]:
            del sys.modules[name]
        raise _unusable(f"{type(exc).__name__}: {exc}; its mechanisms alone: {type(exc2).__name__}: {exc2}") from None


def _check_features(module: types.ModuleType) -> None:
    """Raise :func:`_unusable` unless ``module`` has every mechanism in ``_NEEDED``, each taking ``random_state``."""
    for name in _NEEDED:
        cls = getattr(module, name, None)
        if cls is None:
            raise _unusable(f"diffprivlib.mechanisms has no {name}")
        try:
            parameters = inspect.signature(cls).parameters
        except (TypeError, ValueError):
            continue  # no signature to read: let the first call decide
        if "random_state" not in parameters and not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
            raise _unusable(f"its {name} takes no random_state, so it cannot be seeded")


def _library_error(name: str, exc: Exception) -> ParameterValueError:
    return ParameterValueError(f"{name}: diffprivlib rejected the parameters: {exc}")


@dataclass(frozen=True)
class _DiffprivlibBase(BuiltinMechanism):
    """Common loop: one diffprivlib ``randomise`` call per release, seeded from ``rng``."""

    def __post_init__(self) -> None:
        self._validate()
        try:
            self._make(load_mechanisms(), None)
        except (ValueError, TypeError) as exc:
            raise _library_error(self.name, exc) from None

    def _validate(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _make(self, lib: types.ModuleType, random_state: Any, prepared: Any = None) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _one(self, mech: Any, prepared: Any) -> Any:
        return mech.randomise(prepared)

    def _draw(self, prepared: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        random_state = np.random.RandomState(np.random.MT19937(np.random.SeedSequence(int(rng.integers(2**63)))))
        mech = self._make(load_mechanisms(), random_state, prepared)
        return np.array([self._one(mech, prepared) for _ in range(n)])

    def true_epsilon(self, delta: float = 0.0) -> float:
        """Not known independently: the library's claim is returned as is."""
        return super().true_epsilon(delta)


@dataclass(frozen=True)
class _DplAdditive(_DiffprivlibBase):
    epsilon: float = 1.0
    sensitivity: float = 1.0

    output_kind = "scalar"

    def _validate(self) -> None:
        set_epsilon(self)
        set_sensitivity(self)

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0.0]), np.array([0.0, float(self.sensitivity)])

    def _prepare(self, dataset: Any) -> float:
        return float(np.clip(record_values(dataset), 0.0, self.sensitivity).sum())


@dataclass(frozen=True)
class DiffprivlibLaplace(PureAddRemove, _DplAdditive):
    """diffprivlib Laplace on a sum clipped to [0, sensitivity]."""

    name = "diffprivlib.laplace"

    def _make(self, lib, random_state, prepared=None):
        return lib.Laplace(epsilon=self.epsilon, delta=0.0, sensitivity=self.sensitivity, random_state=random_state)


@dataclass(frozen=True)
class DiffprivlibGaussian(_DplAdditive):
    """diffprivlib Gaussian (classic calibration, epsilon <= 1) on a clipped sum."""

    epsilon: float = 0.5
    delta: float = 1e-5

    name = "diffprivlib.gaussian"

    def _validate(self) -> None:
        super()._validate()
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, self.delta, neighbouring="add/remove")

    def _make(self, lib, random_state, prepared=None):
        return lib.Gaussian(epsilon=self.epsilon, delta=self.delta, sensitivity=self.sensitivity,
                            random_state=random_state)


@dataclass(frozen=True)
class DiffprivlibGaussianAnalytic(DiffprivlibGaussian):
    """diffprivlib GaussianAnalytic (Balle and Wang 2018) on a clipped sum."""

    epsilon: float = 1.0

    name = "diffprivlib.gaussian_analytic"

    def _make(self, lib, random_state, prepared=None):
        return lib.GaussianAnalytic(epsilon=self.epsilon, delta=self.delta, sensitivity=self.sensitivity,
                                    random_state=random_state)


@dataclass(frozen=True)
class DiffprivlibGeometric(PureAddRemove, _DiffprivlibBase):
    """diffprivlib Geometric (two-sided geometric) on an integer sum clipped to [0, sensitivity]."""

    epsilon: float = 1.0
    sensitivity: int = 1

    name = "diffprivlib.geometric"
    output_kind = "discrete"

    def _validate(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "sensitivity", check_int(self.sensitivity, "sensitivity", low=1))

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0]), np.array([0, self.sensitivity])

    def _prepare(self, dataset: Any) -> int:
        return int(np.rint(np.clip(record_values(dataset), 0, self.sensitivity)).sum())

    def _make(self, lib, random_state, prepared=None):
        return lib.Geometric(epsilon=self.epsilon, sensitivity=self.sensitivity, random_state=random_state)

    def _draw(self, prepared: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return super()._draw(prepared, n, rng).astype(np.int64)


@dataclass(frozen=True)
class DiffprivlibExponential(PureAddRemove, _DiffprivlibBase):
    """diffprivlib Exponential over n_candidates counting-query utilities (index released)."""

    epsilon: float = 1.0
    n_candidates: int = 4
    sensitivity: float = 1.0

    name = "diffprivlib.exponential"
    output_kind = "discrete"

    def _validate(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "n_candidates", check_int(self.n_candidates, "n_candidates", low=1))
        set_sensitivity(self)

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        d = np.repeat(np.arange(1, self.n_candidates), 3).astype(float)
        return d, np.append(d, 0.0)

    def _prepare(self, dataset: Any) -> list:
        return counting_queries(dataset, self.n_candidates).tolist()

    def _make(self, lib, random_state, prepared=None):
        utility = prepared if prepared is not None else [0.0] * self.n_candidates
        return lib.Exponential(epsilon=self.epsilon, sensitivity=self.sensitivity, utility=utility,
                               random_state=random_state)

    def _one(self, mech: Any, prepared: Any) -> Any:
        return mech.randomise()

    def _draw(self, prepared: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return super()._draw(prepared, n, rng).astype(np.int64)


@dataclass(frozen=True)
class DiffprivlibBinary(RandomizedResponseBits, _DiffprivlibBase):
    """diffprivlib Binary (randomized response) on every respondent's bit; releases the count of 1 answers."""

    epsilon: float = math.log(3.0)

    name = "diffprivlib.binary"
    output_kind = "discrete"

    def _prepare(self, dataset: Any) -> list:
        return ["1" if v else "0" for v in self._bits(dataset)]

    def _make(self, lib, random_state, prepared=None):
        return lib.Binary(epsilon=self.epsilon, value0="0", value1="1", random_state=random_state)

    def _one(self, mech: Any, prepared: Any) -> Any:
        return sum(mech.randomise(bit) == "1" for bit in prepared)

    def _draw(self, prepared: Any, n: int, rng: np.random.Generator) -> np.ndarray:
        return super()._draw(prepared, n, rng).astype(np.int64)
