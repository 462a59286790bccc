"""Declarative checks for configuration values; every failure names its key path.

Messages follow one pattern, ``<key path>: expected <what>, got <repr>``, e.g.
``attack.params.queries: expected an integer >= 1, got 'many'``.  Nothing here
evaluates a string as code.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..exceptions import ConfigError

__all__ = ["REQUIRED", "Param", "expect_mapping", "expect_plain", "expect_int", "expect_real", "expect_str", "expect_bool"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""Sentinel default: the key must be given."""


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _range_text(low, high, low_open=False, high_open=False) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return ""


def expect_mapping(value: Any, path: str, *, allowed: Sequence[str] | None = None) -> dict:
    """A mapping with string keys, optionally restricted to ``allowed`` keys.

    >>> expect_mapping({"a": 1}, "estimator", allowed=["a"])
    {'a': 1}
    >>> expect_mapping({"b": 1}, "estimator", allowed=["a"])
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: estimator.b: unknown key; expected one of ['a']
    """
    if not isinstance(value, Mapping):
        raise ConfigError(path, f"expected a mapping, got {_show(value)}")
    for key in value:
        if not isinstance(key, str):
            raise ConfigError(path, f"expected string keys, got {_show(key)}")
        if allowed is not None and key not in allowed:
            sub = f"{path}.{key}" if path else key
            raise ConfigError(sub, f"unknown key; expected one of {sorted(allowed)}")
    return dict(value)


def expect_int(value: Any, path: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (not a bool; ``3.0`` is accepted as 3).

    >>> expect_int("many", "attack.params.queries", low=1)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: attack.params.queries: expected an integer >= 1, got 'many'
    """
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not ok and _is_real(value) and math.isfinite(value) and float(value).is_integer():
        value, ok = int(value), True
    rng = _range_text(low, high)
    what = f"an integer {rng}".rstrip()
    if not ok:
        raise ConfigError(path, f"expected {what}, got {_show(value)}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ConfigError(path, f"expected {what}, got {_show(value)}")
    return value


def expect_real(
    value: Any,
    path: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """A finite real number in the given range.

    >>> expect_real(1.5, "estimator.confidence", low=0, high=1, low_open=True, high_open=True)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: estimator.confidence: expected a number in (0, 1), got 1.5
    """
    what = f"a number {_range_text(low, high, low_open, high_open)}".rstrip()
    if not _is_real(value) or not math.isfinite(float(value)):
        raise ConfigError(path, f"expected {what}, got {_show(value)}")
    original, value = value, float(value)
    if low is not None and (value <= low if low_open else value < low):
        raise ConfigError(path, f"expected {what}, got {_show(original)}")
    if high is not None and (value >= high if high_open else value > high):
        raise ConfigError(path, f"expected {what}, got {_show(original)}")
    return value


def expect_str(value: Any, path: str, *, choices: Sequence[str] | None = None) -> str:
    """A string, optionally one of ``choices``."""
    if choices is not None:
        if not isinstance(value, str) or value not in choices:
            raise ConfigError(path, f"expected one of {list(choices)}, got {_show(value)}")
        return value
    if not isinstance(value, str) or not value:
        raise ConfigError(path, f"expected a non-empty string, got {_show(value)}")
    return value


def expect_bool(value: Any, path: str) -> bool:
    """A YAML boolean (``true``/``false``), not a string or a number."""
    if not isinstance(value, bool):
        raise ConfigError(path, f"expected true or false, got {_show(value)}")
    return value


def expect_plain(value: Any, path: str) -> Any:
    """Plain data only: numbers, strings, booleans, null, and lists/mappings of them.

    >>> expect_plain([1, "a", None, {"b": 2.5}], "mechanisms[0].params")
    [1, 'a', None, {'b': 2.5}]
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if _is_real(value):
        if not math.isfinite(float(value)):
            raise ConfigError(path, f"expected a finite number, got {_show(value)}")
        return value
    if isinstance(value, Mapping):
        return {k: expect_plain(v, f"{path}.{k}") for k, v in expect_mapping(value, path).items()}
    if isinstance(value, (list, tuple)):
        return [expect_plain(v, f"{path}[{i}]") for i, v in enumerate(value)]
    raise ConfigError(path, f"expected a number, string, boolean, null or a list of them, got {_show(value)}")


@dataclass(frozen=True)
class Param:
    """One parameter of an experiment kind: its type, default and range.

    ``type`` is one of ``"int"``, ``"real"``, ``"str"``, ``"bool"``,
    ``"real_list"`` or ``"int_list"``.  ``nullable`` admits ``null``.

    Examples
    --------
    >>> Param("int", 100, low=1).check(7, "attack.params.n")
    7
    >>> Param("real", 1.0, low=0, low_open=True).check(-1, "attack.params.noise_scale")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: attack.params.noise_scale: expected a number > 0, got -1
    """

    type: str
    default: Any = REQUIRED
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple | None = None
    nullable: bool = False
    help: str = ""

    def check(self, value: Any, path: str) -> Any:
        if value is None and self.nullable:
            return None
        t = self.type
        if t == "int":
            return expect_int(value, path, low=self.low, high=self.high)
        if t == "real":
            return expect_real(
                value, path, low=self.low, high=self.high, low_open=self.low_open, high_open=self.high_open
            )
        if t == "str":
            return expect_str(value, path, choices=self.choices)
        if t == "bool":
            return expect_bool(value, path)
        if t in ("real_list", "int_list"):
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) == 0:
                raise ConfigError(path, f"expected a non-empty list, got {_show(value)}")
            item = Param(t[:-5], low=self.low, high=self.high, low_open=self.low_open, high_open=self.high_open)
            return [item.check(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if t == "any":
            return expect_plain(value, path)
        raise AssertionError(f"unknown Param type {t!r}")  # a programming error, not a config error

    def resolve(self, params: Mapping, name: str, path: str) -> Any:
        """The checked value of ``params[name]``, or the default."""
        if name in params:
            return self.check(params[name], f"{path}.{name}")
        if self.default is REQUIRED:
            raise ConfigError(f"{path}.{name}", "required key is missing")
        return self.default
