"""Config values checked with :mod:`dpaudit._validation`; every failure names its key path.

The runner has no checks of its own: it calls the same ``check_*`` functions as
the Python API (same keywords, e.g. ``low_inclusive``), with the key path as the
name, and :func:`config_value` rephrases a failure as ``<key path>: expected
<what>, got <repr>``, e.g. ``attack.params.queries: expected an integer >= 1,
got 'many'``.  Nothing here evaluates a string as code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .._validation import (
    check_bool,
    check_switch,
    check_choice,
    check_int,
    check_plain,
    check_real,
    check_str,
    _range_text,
)
from ..exceptions import ConfigError, ParameterTypeError, ParameterValueError

__all__ = ["REQUIRED", "Param", "config_value"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""Sentinel default: the key must be given."""


def config_value(check: Callable[..., Any], value: Any, path: str, **kwargs: Any) -> Any:
    """``check(value, path, **kwargs)``; a failure becomes a :class:`ConfigError` at its key path.

    Examples
    --------
    >>> from dpaudit._validation import check_int, check_mapping
    >>> config_value(check_int, "many", "attack.params.queries", low=1)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: attack.params.queries: expected an integer >= 1, got 'many'
    >>> config_value(check_mapping, {"b": 1}, "estimator", allowed=["a"])
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: estimator.b: unknown key; expected one of ['a']
    """
    try:
        return check(value, path, **kwargs)
    except (ParameterTypeError, ParameterValueError) as err:
        if isinstance(err, ConfigError) or not hasattr(err, "problem"):
            raise
        raise ConfigError(err.parameter, err.problem) from None


@dataclass(frozen=True)
class Param:
    """One parameter of an experiment kind: its type, default and range.

    ``type`` is one of ``"int"``, ``"real"``, ``"str"``, ``"bool"``,
    ``"real_list"``, ``"int_list"`` or ``"samples"`` (an integer, or
    ``"auto"`` for a sequential audit).  ``nullable`` admits ``null``.

    Examples
    --------
    >>> Param("int", 100, low=1).check(7, "attack.params.n")
    7
    >>> Param("samples", "auto", low=20).check("auto", "audit.samples"), Param("samples", low=20).check("1e6", "audit.samples")
    ('auto', 1000000)
    >>> Param("samples", low=20, high=10**15).check("many", "audit.samples")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: audit.samples: expected 'auto' or an integer in [20, 1e+15], got 'many'
    >>> Param("real", 1.0, low=0, low_inclusive=False).check(-1, "attack.params.noise_scale")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: attack.params.noise_scale: expected a number > 0, got -1
    """

    type: str
    default: Any = REQUIRED
    low: float | None = None
    high: float | None = None
    low_inclusive: bool = True
    high_inclusive: bool = True
    choices: tuple | None = None
    nullable: bool = False
    help: str = ""

    def check(self, value: Any, path: str) -> Any:
        if value is None and self.nullable:
            return None
        t = self.type
        if t == "int":
            return config_value(check_int, value, path, low=self.low, high=self.high)
        if t == "samples":
            if isinstance(value, str) and value.strip().lower() == "auto":
                return "auto"
            if isinstance(value, str):
                # YAML reads 1e6 as a string: accept the integer forms the command line accepts.
                try:
                    number = float(value)
                except ValueError:
                    number = None
                if number is not None and number.is_integer():
                    value = int(number)
            try:
                return check_int(value, path, low=self.low, high=self.high)
            except (ParameterTypeError, ParameterValueError):
                # The range the command line states for --samples (MAX_SAMPLES included), in the same words.
                within = _range_text(self.low, self.high)
                raise ConfigError(path, f"expected 'auto' or an integer{' ' + within if within else ''}, "
                                        f"got {value!r}") from None
        if t == "real":
            return config_value(check_real, value, path, low=self.low, high=self.high, finite=True,
                                low_inclusive=self.low_inclusive, high_inclusive=self.high_inclusive)
        if t == "str":
            if self.choices is not None:
                return config_value(check_choice, value, path, choices=self.choices)
            return config_value(check_str, value, path)
        if t == "bool":
            return config_value(check_bool, value, path)
        if t == "switch":
            return config_value(check_switch, value, path, choices=self.choices)
        if t in ("real_list", "int_list"):
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) == 0:
                raise ConfigError(path, f"expected a non-empty list, got {value!r}")
            item = Param(t[:-5], low=self.low, high=self.high, low_inclusive=self.low_inclusive,
                         high_inclusive=self.high_inclusive)
            return [item.check(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if t == "any":
            return config_value(check_plain, value, path)
        raise AssertionError(f"unknown Param type {t!r}")  # a programming error, not a config error

    def resolve(self, params: Mapping, name: str, path: str) -> Any:
        """The checked value of ``params[name]``, or the default."""
        if name in params:
            return self.check(params[name], f"{path}.{name}")
        if self.default is REQUIRED:
            raise ConfigError(f"{path}.{name}", "required key is missing")
        return self.default
