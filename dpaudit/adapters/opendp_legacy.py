"""OpenDP before ``opendp.prelude`` (0.4 and 0.5): the opendp adapters' measurements through the old API.

Those versions spell the measurements ``opendp.meas.make_base_laplace(scale, D=...)``,
``make_base_gaussian``, ``make_base_geometric`` and ``make_randomized_response_bool``, the transformations
``opendp.trans.make_bounded_sum``, ``make_count``, ``make_sized_bounded_mean`` and
``make_count_by_categories``, chain them with ``>>``, and need
``opendp.mod.enable_features("floating-point", "contrib")``.  Domains are type strings
(``"AllDomain<f64>"``, ``"VectorDomain<AllDomain<f64>>"``); integers are ``i32`` (their Python default).
The noise scale is found with ``opendp.mod.binary_search_param``, so the library's own privacy relation
certifies the claim, as the prelude adapters do, then written as a user writes it (``scale=1.0``).  OpenDP 0.4's Gaussian relation takes ``(epsilon, delta)``
itself; 0.5's Gaussian is zCDP and goes through ``opendp.comb.make_zCDP_to_approxDP`` and ``make_fix_delta``.
Neither has a discrete Gaussian.  OpenDP 0.4 imports ``numpy.bool8``, so it needs numpy < 2.

Why a separate path: the float Laplace and Gaussian of OpenDP 0.4 and earlier add exact noise to the input
and round the sum to a double, which leaks the input through the rounding (Mironov 2012; OpenDP 0.5's
changelog lists the discretised replacement under "Security"); auditing them needs their own API.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["LEGACY_SUPPORTED", "LegacyOpenDP"]

#: The pre-prelude OpenDP versions the adapters support.
LEGACY_SUPPORTED = "OpenDP 0.4 and 0.5 through opendp.meas and opendp.trans (checked with 0.4.0 and 0.5.0)"

_NEEDED = {"meas": ("make_base_laplace", "make_base_gaussian", "make_base_geometric",
                    "make_randomized_response_bool"),
           "trans": ("make_bounded_sum", "make_count", "make_sized_bounded_mean", "make_count_by_categories"),
           "mod": ("enable_features", "binary_search_param")}

_FLOAT, _INT = "f64", "i32"
#: Where the scale is searched: OpenDP 0.4's default upper end, the largest double, overflows its Laplace
#: relation (``epsilon * scale``) for epsilon > 1, and 0.5's zCDP conversion fails at a scale of 0.
_SCALE_BOUNDS = (1e-3, 1e6)


def _scalar(t: str) -> str:
    return f"AllDomain<{t}>"


def _vector(t: str) -> str:
    return f"VectorDomain<AllDomain<{t}>>"


@dataclass(frozen=True)
class LegacyOpenDP:
    """OpenDP 0.4 or 0.5's ``meas``, ``trans``, ``mod`` and (0.5) ``comb`` modules, with the builds the adapters need.

    Every ``laplace``/``gaussian`` build returns ``(scalar measurement, vector measurement, scale)``, the
    vector one drawing i.i.d. noise per coordinate with the same sampler (one call, many releases); the
    aggregate builds return one measurement on a list of records.
    """

    meas: Any
    trans: Any
    mod: Any
    comb: Any = None

    @classmethod
    def load(cls) -> "LegacyOpenDP":
        """Import the old modules (errors propagate: the caller names the version) and enable the features."""
        mods = {name: importlib.import_module(f"opendp.{name}") for name in ("meas", "trans", "mod")}
        try:
            comb = importlib.import_module("opendp.comb")
        except ImportError:
            comb = None
        api = cls(mods["meas"], mods["trans"], mods["mod"], comb)
        if not api.missing():
            api.mod.enable_features("floating-point", "contrib")
        return api

    def missing(self) -> list[str]:
        """The names the builds call that these modules lack (``"meas.make_base_laplace"``), empty when usable."""
        return [f"{ns}.{name}" for ns, names in _NEEDED.items() for name in names
                if not hasattr(getattr(self, ns), name)]

    @property
    def zcdp_gaussian(self) -> bool:
        """Whether ``make_base_gaussian`` is zCDP (0.5) rather than ``(epsilon, delta)`` (0.4)."""
        return self.comb is not None and hasattr(self.comb, "make_zCDP_to_approxDP")

    def _search(self, build: Callable[[float], Any], d_in: Any, d_out: Any) -> float:
        """``binary_search_param``'s scale written as the shortest decimal within 0.1% of it that the relation accepts.

        Why: users write ``make_base_laplace(scale=1.0)`` (OpenDP 0.4's docs do), not where a search with an
        absolute tolerance stops; the privacy relation still certifies the claim at the scale used.
        """
        scale = self.mod.binary_search_param(build, d_in=d_in, d_out=d_out, bounds=_SCALE_BOUNDS)
        for digits in range(17):
            short = round(scale, digits)
            if 0 < short and abs(short - scale) <= 1e-3 * scale and build(short).check(d_in, d_out):
                return short
        return scale

    def _noise(self, kind: str, domain: str, delta: float = 0.0) -> Callable[[float, str], Any]:
        """``(scale, D) -> measurement`` for Laplace/geometric (``kind="laplace"``) or the Gaussian."""
        if kind == "laplace":
            if domain == "int":
                return lambda s, d: self.meas.make_base_geometric(s, D=d)
            return lambda s, d: self.meas.make_base_laplace(s, D=d)
        if domain == "int":
            raise ValueError("OpenDP before 0.8 has no discrete Gaussian that the adapter can build")
        if not self.zcdp_gaussian:
            return lambda s, d: self.meas.make_base_gaussian(s, D=d)
        return lambda s, d: self.comb.make_fix_delta(
            self.comb.make_zCDP_to_approxDP(self.meas.make_base_gaussian(s, D=d)), delta)

    def additive(self, kind: str, domain: str, epsilon: float, sensitivity: float,
                 delta: float = 0.0) -> tuple[Any, Any, float]:
        """Laplace (``kind="laplace"``; ``domain="int"``: geometric) or Gaussian noise calibrated to the claim."""
        t = _INT if domain == "int" else _FLOAT
        make = self._noise(kind, domain, delta)
        d_in = int(sensitivity) if domain == "int" else float(sensitivity)
        d_out = float(epsilon) if kind == "laplace" else (float(epsilon), float(delta))
        scale = self._search(lambda s: make(s, _scalar(t)), d_in, d_out)
        return make(scale, _scalar(t)), make(scale, _vector(t)), scale

    def randomized_response(self, prob: float) -> Any:
        """``make_randomized_response_bool(prob)``: the true bit with probability ``prob``."""
        return self.meas.make_randomized_response_bool(prob)

    def _calibrated(self, build: Callable[[float], Any], d_in: int, epsilon: float) -> Any:
        return build(self._search(build, d_in, float(epsilon)))

    def sum_laplace(self, epsilon: float, lower: float, upper: float, integer: bool) -> Any:
        """``make_bounded_sum >> make_base_laplace`` (integers: ``>> make_base_geometric``); add-remove."""
        cast = int if integer else float
        total = self.trans.make_bounded_sum(bounds=(cast(lower), cast(upper)))
        noise = self._noise("laplace", "int" if integer else "float")
        t = _INT if integer else _FLOAT
        return self._calibrated(lambda s: total >> noise(s, _scalar(t)), 1, epsilon)

    def count_laplace(self, epsilon: float) -> Any:
        """``make_count >> make_base_geometric`` on integer records; add-remove."""
        count = self.trans.make_count(TIA=_INT)
        return self._calibrated(lambda s: count >> self.meas.make_base_geometric(s, D=_scalar(_INT)), 1, epsilon)

    def mean_laplace(self, epsilon: float, lower: float, upper: float, size: int) -> Any:
        """``make_sized_bounded_mean >> make_base_laplace`` over exactly ``size`` records; replace-one (d_in 2)."""
        mean = self.trans.make_sized_bounded_mean(size=int(size), bounds=(float(lower), float(upper)))
        return self._calibrated(lambda s: mean >> self.meas.make_base_laplace(s, D=_scalar(_FLOAT)), 2, epsilon)

    def histogram_laplace(self, epsilon: float, categories: list) -> Any:
        """``make_count_by_categories >> make_base_geometric`` per bin (one more bin for the rest); add-remove."""
        counts = self.trans.make_count_by_categories(categories=[int(c) for c in categories], TIA=_INT)
        return self._calibrated(lambda s: counts >> self.meas.make_base_geometric(s, D=_vector(_INT)), 1, epsilon)
