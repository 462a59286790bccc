"""The privacy claim: an immutable value object, separate from the mechanism."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from ._validation import check_delta, check_epsilon

__all__ = ["Neighbouring", "PrivacyClaim"]


class Neighbouring(str, enum.Enum):
    """The neighbouring relation a claim is made for."""

    ADD_REMOVE = "add/remove"
    REPLACE_ONE = "replace-one"

    @classmethod
    def parse(cls, value: "str | Neighbouring") -> "Neighbouring":
        if isinstance(value, cls):
            return value
        aliases = {
            "add/remove": cls.ADD_REMOVE, "add-remove": cls.ADD_REMOVE, "add_remove": cls.ADD_REMOVE,
            "unbounded": cls.ADD_REMOVE, "replace-one": cls.REPLACE_ONE, "replace_one": cls.REPLACE_ONE,
            "replace": cls.REPLACE_ONE, "bounded": cls.REPLACE_ONE, "substitute": cls.REPLACE_ONE,
        }
        try:
            return aliases[str(value).lower()]
        except KeyError:
            from .exceptions import ParameterValueError

            raise ParameterValueError(
                f"neighbouring must be one of {sorted(set(aliases))}; got {value!r}"
            ) from None


@dataclass(frozen=True)
class PrivacyClaim:
    """What a mechanism promises: (epsilon, delta)-DP under a neighbouring relation.

    Examples
    --------
    >>> c = PrivacyClaim(1.0)
    >>> c
    PrivacyClaim(epsilon=1.0, delta=0.0, neighbouring='add/remove')
    >>> (c + c).epsilon
    2.0
    """

    epsilon: float
    delta: float = 0.0
    neighbouring: Neighbouring = field(default=Neighbouring.ADD_REMOVE)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "neighbouring", Neighbouring.parse(self.neighbouring))

    def __repr__(self) -> str:
        return (
            f"PrivacyClaim(epsilon={self.epsilon!r}, delta={self.delta!r}, "
            f"neighbouring={self.neighbouring.value!r})"
        )

    def __add__(self, other: "PrivacyClaim") -> "PrivacyClaim":
        """Basic sequential composition: budgets add."""
        if not isinstance(other, PrivacyClaim):
            return NotImplemented
        return PrivacyClaim(self.epsilon + other.epsilon, min(1.0 - 1e-300, self.delta + other.delta), self.neighbouring)

    def compose(self, k: int) -> "PrivacyClaim":
        """k-fold basic composition (k * epsilon, k * delta)."""
        return PrivacyClaim(k * self.epsilon, min(k * self.delta, 1.0 - 1e-300) if self.delta else 0.0, self.neighbouring)

    def advanced_composition(self, k: int, delta_prime: float) -> "PrivacyClaim":
        """Advanced composition (Dwork, Rothblum, Vadhan 2010) for k-fold use.

        epsilon' = sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1), delta' + k delta.
        """
        eps = self.epsilon
        eps_total = math.sqrt(2 * k * math.log(1 / delta_prime)) * eps + k * eps * math.expm1(eps)
        return PrivacyClaim(eps_total, min(k * self.delta + delta_prime, 1.0 - 1e-300), self.neighbouring)

    def to_dict(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "neighbouring": self.neighbouring.value}

    @classmethod
    def from_dict(cls, d: dict) -> "PrivacyClaim":
        return cls(d["epsilon"], d.get("delta", 0.0), d.get("neighbouring", "add/remove"))
