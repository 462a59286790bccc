"""Adapters that turn third-party DP libraries' mechanisms into dpaudit targets.

Importing this package imports neither library: the adapter classes import
diffprivlib or OpenDP when they are instantiated, and raise
:class:`~dpaudit.exceptions.MissingExtraError` naming the extra to install
(``pip install 'dpaudit[diffprivlib]'`` / ``'dpaudit[opendp]'``) when it is
missing.  Importing it also calls :func:`~dpaudit.adapters.compat.install_diffprivlib_import_fix`,
so that diffprivlib 0.6.6 imports beside scikit-learn 1.9, in the adapters and in users' own code
(see :mod:`dpaudit.adapters.compat`).

:func:`library_call` wraps any library's function or mechanism class as a target from a short description
(what ``dpaudit survey`` builds its catalogue entries with); ``docs/survey.md`` has the recipe.
"""

from __future__ import annotations

from ..mechanisms.registry import REGISTRY, register
from .compat import install_diffprivlib_import_fix
from .diffprivlib import (
    DiffprivlibBinary,
    DiffprivlibExponential,
    DiffprivlibGaussian,
    DiffprivlibGaussianAnalytic,
    DiffprivlibGeometric,
    DiffprivlibLaplace,
)
from .library import import_dotted, library_call, seeded_random_state
from .ldp_libraries import MULTI_FREQ_TARGETS, PURE_LDP_TARGETS
from .opendp import OpenDPGaussian, OpenDPLaplace, OpenDPRandomizedResponse

__all__ = ["ADAPTERS", "available", "library_call", "import_dotted", "seeded_random_state"]

#: registry name -> (class, extra)
ADAPTERS = {
    cls.name: (cls, extra)
    for cls, extra in [
        (DiffprivlibLaplace, "diffprivlib"),
        (DiffprivlibGaussian, "diffprivlib"),
        (DiffprivlibGaussianAnalytic, "diffprivlib"),
        (DiffprivlibGeometric, "diffprivlib"),
        (DiffprivlibExponential, "diffprivlib"),
        (DiffprivlibBinary, "diffprivlib"),
        (OpenDPLaplace, "opendp"),
        (OpenDPGaussian, "opendp"),
        (OpenDPRandomizedResponse, "opendp"),
        *((cls, "pure-ldp") for cls in PURE_LDP_TARGETS),
        *((cls, "multi-freq-ldpy") for cls in MULTI_FREQ_TARGETS),
    ]
}

install_diffprivlib_import_fix()

_SEEDING = {"diffprivlib": "seeded via a RandomState", "opendp": "unseeded: OpenDP's own RNG",
            "pure-ldp": "its global generators seeded per chunk", "multi-freq-ldpy": "numba's generator seeded per chunk"}

for _name, (_cls, _extra) in ADAPTERS.items():
    if _name not in REGISTRY:
        _doc = (_cls.__doc__ or _name).strip().splitlines()[0].rstrip(".")
        register(_name, _cls, description=f"{_doc} (extra '{_extra}'; {_SEEDING[_extra]})")


def available(extra: str) -> bool:
    """Whether the library behind ``extra`` ("diffprivlib" or "opendp") can be used here (imports it)."""
    from ..exceptions import MissingExtraError

    try:
        if extra == "diffprivlib":
            from .diffprivlib import load_mechanisms

            load_mechanisms()
        else:
            from .opendp import load_api

            load_api()
    except MissingExtraError:
        return False
    return True
