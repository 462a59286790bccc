"""The privacy claim: an immutable value object, separate from the mechanism."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from ._validation import check_delta, check_epsilon, check_int, check_real

__all__ = ["Neighbouring", "PrivacyClaim"]

# Composed deltas are capped just below 1 (a vacuous but valid claim; 1.0 itself is not a delta).
_DELTA_CAP = math.nextafter(1.0, 0.0)


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


@dataclass(frozen=True)
class PrivacyClaim:
    """What a mechanism promises: (epsilon, delta)-DP under a neighbouring relation.

    Examples
    --------
    >>> c = PrivacyClaim(1.0)
    >>> c
    PrivacyClaim(epsilon=1.0, delta=0.0, neighbouring='add-remove')
    >>> (c + c).epsilon
    2.0
    """

    epsilon: float
    delta: float = 0.0
    neighbouring: Neighbouring = field(default=Neighbouring.ADD_REMOVE)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "neighbouring", Neighbouring.parse(self.neighbouring, "neighbouring"))

    def __repr__(self) -> str:
        return (
            f"PrivacyClaim(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"neighbouring={self.neighbouring.value!r})"
        )

    def __add__(self, other: "PrivacyClaim") -> "PrivacyClaim":
        """Basic sequential composition: budgets add."""
        if not isinstance(other, PrivacyClaim):
            return NotImplemented
        if other.neighbouring is not self.neighbouring:
            from .exceptions import ParameterValueError

            raise ParameterValueError(
                f"cannot compose claims under different neighbouring relations; got "
                f"{self.neighbouring.value!r} and {other.neighbouring.value!r}")
        return PrivacyClaim(self.epsilon + other.epsilon, min(_DELTA_CAP, self.delta + other.delta), self.neighbouring)

    def compose(self, k: int) -> "PrivacyClaim":
        """k-fold basic composition (k * epsilon, k * delta)."""
        k = check_int(k, "k", low=1)
        return PrivacyClaim(k * self.epsilon, min(k * self.delta, _DELTA_CAP), self.neighbouring)

    def advanced_composition(self, k: int, delta_prime: float) -> "PrivacyClaim":
        """Advanced composition (Dwork, Rothblum, Vadhan 2010) for k-fold use.

        epsilon' = sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1), delta' + k delta.
        """
        k = check_int(k, "k", low=1)
        delta_prime = check_real(delta_prime, "delta_prime", low=0.0, high=1.0, low_inclusive=False,
                                 high_inclusive=False)
        eps = self.epsilon
        eps_total = math.sqrt(2 * k * math.log(1 / delta_prime)) * eps + k * eps * math.expm1(eps)
        return PrivacyClaim(eps_total, min(k * self.delta + delta_prime, _DELTA_CAP), self.neighbouring)

    def to_dict(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "neighbouring": self.neighbouring.value}

    @classmethod
    def from_dict(cls, d: dict) -> "PrivacyClaim":
        return cls(d["epsilon"], d.get("delta", 0.0), d.get("neighbouring", "add/remove"))
