"""The neighbouring relation: of a claim, of a search domain, of a pair."""

from __future__ import annotations

import enum

__all__ = ["Neighbouring"]


class Neighbouring(str, enum.Enum):
    """The neighbouring relation: of a claim, of a search domain, of a pair (one enum for all three).

    The values are the canonical spellings (those of ``--relation``);
    :meth:`parse` also reads the usual aliases (``"add/remove"``,
    ``"unbounded"``, ``"bounded"``, ...).

    >>> Neighbouring.parse("add/remove"), Neighbouring.parse("bounded").value
    (<Neighbouring.ADD_REMOVE: 'add-remove'>, 'replace-one')
    """

    REPLACE_ONE = "replace-one"
    ADD_REMOVE = "add-remove"
    #: The dataset is a vector of query answers; neighbours move every answer by at most 1
    #: (sensitivity-1 queries whose answers may move in different directions, as in DP-Sniper and StatDP).
    LINF = "linf"

    @classmethod
    def spellings(cls) -> tuple:
        """Every name :meth:`parse` reads: the canonical values, then the aliases."""
        return tuple(_ALIASES)

    @classmethod
    def parse(cls, value: "str | Neighbouring", name: str = "relation") -> "Neighbouring":
        """The relation named by ``value`` (the enum, a canonical spelling or an alias)."""
        if isinstance(value, cls):
            return value
        from .exceptions import ParameterTypeError, ParameterValueError

        text = getattr(value, "value", value)
        if not isinstance(text, str):
            raise ParameterTypeError(f"{name} must be one of {[r.value for r in cls]}; got {value!r}")
        try:
            return _ALIASES[text.strip().lower()]
        except KeyError:
            raise ParameterValueError(f"{name} must be one of {[r.value for r in cls]} (or an alias: "
                                      f"{sorted(set(_ALIASES) - {r.value for r in cls})}); got {value!r}") from None


_ALIASES = {
    **{r.value: r for r in Neighbouring},
    "add/remove": Neighbouring.ADD_REMOVE, "add_remove": Neighbouring.ADD_REMOVE, "unbounded": Neighbouring.ADD_REMOVE,
    "replace_one": Neighbouring.REPLACE_ONE, "replace": Neighbouring.REPLACE_ONE, "bounded": Neighbouring.REPLACE_ONE,
    "substitute": Neighbouring.REPLACE_ONE, "l-inf": Neighbouring.LINF, "l_inf": Neighbouring.LINF,
}
