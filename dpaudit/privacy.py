"""``Neighbouring`` (the relation), and ``PrivacyClaim``, the deprecated name of :class:`dpaudit.claims.PointClaim`.

A claim (the privacy promise) is one of :mod:`dpaudit.claims`' types; a mechanism's ``.claim`` is a
:class:`~dpaudit.claims.PointClaim`.  :class:`Neighbouring` lives in :mod:`dpaudit.neighbouring`, which the
claims import, and is importable from here as before.
"""

from __future__ import annotations

import warnings

from .claims.stated import PointClaim
from .neighbouring import Neighbouring

__all__ = ["Neighbouring", "PrivacyClaim"]


class _PointClaimAlias(type):
    """``isinstance``/``issubclass`` against the deprecated name answer for :class:`~dpaudit.claims.PointClaim`."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, PointClaim)

    def __subclasscheck__(cls, sub) -> bool:
        return isinstance(sub, type) and issubclass(sub, PointClaim)


_DEPRECATED = ("PrivacyClaim is deprecated and will be removed in the next release: use "
               "dpaudit.claims.PointClaim(epsilon, delta, neighbouring=...), which it now builds; its numbers are "
               "point_epsilon and point_delta (epsilon(delta) is the claimed curve, a method of every claim)")


class PrivacyClaim(metaclass=_PointClaimAlias):
    """Deprecated name of :class:`~dpaudit.claims.PointClaim`, kept for one release.

    ``PrivacyClaim(epsilon, delta=0.0, neighbouring="add-remove")`` warns (``DeprecationWarning``)
    and returns the :class:`~dpaudit.claims.PointClaim`; ``isinstance(c, PrivacyClaim)`` is
    ``isinstance(c, PointClaim)``.  The point's numbers are ``point_epsilon`` and ``point_delta``:
    on a claim, ``epsilon`` is the method ``epsilon(delta)``, not a number.
    Why: one claim type family, whose every member answers ``epsilon(delta)``.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     c = PrivacyClaim(1.0, 1e-5)
    >>> c, isinstance(c, PrivacyClaim)
    (PointClaim(point_epsilon=1.0, point_delta=1e-05, neighbouring='add-remove'), True)
    """

    def __new__(cls, epsilon, delta=0.0, neighbouring=Neighbouring.ADD_REMOVE):
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
        return PointClaim(epsilon, delta, neighbouring=neighbouring)

    @classmethod
    def from_dict(cls, d: dict):
        """:meth:`PointClaim.from_dict <dpaudit.claims.PointClaim.from_dict>`, with the deprecation warning."""
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
        return PointClaim.from_dict(d)
