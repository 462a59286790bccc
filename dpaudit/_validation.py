"""Boundary validation: one set of checks for Python parameters and config keys alike.

Every check takes the value and the name to blame, returns the value in its
canonical type, or raises :class:`~dpaudit.exceptions.ParameterTypeError` (wrong
type) or :class:`~dpaudit.exceptions.ParameterValueError` (wrong value) whose
message names the parameter: ``confidence must be in (0, 1); got 1.5``.

Interval ends are always spelled ``low_inclusive`` / ``high_inclusive``
(default ``True``: a closed interval), whichever check is used.

The errors also carry what was expected (``.parameter``, ``.expected``,
``.value``), so the experiment runner reuses these very checks for YAML keys
and only rephrases the failure as ``attack.params.queries: expected an integer
>= 1, got 'many'`` (:func:`dpaudit.runner._spec.config_value`).  One
implementation, one set of keywords, two phrasings for two audiences.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
from typing import Any, Iterable, Mapping, Sequence

from .exceptions import ParameterTypeError, ParameterValueError

__all__ = [
    "check_probability",
    "check_confidence",
    "check_delta",
    "check_epsilon",
    "check_int",
    "check_real",
    "check_choice",
    "check_str",
    "check_bool",
    "check_mapping",
    "check_plain",
    "did_you_mean",
    "number_text",
    "underscore_hint",
]


#: Types whose value ``float()`` reads exactly: the fast path of :func:`check_real` (a bool is not one).
_PLAIN_REAL = (float, int)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _as_float(value: Any) -> float:
    """``float(value)``, an int too large for a float read as an infinity (``float()`` raises OverflowError).

    >>> _as_float(-10**400)
    -inf
    """
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def show(value: Any) -> str:
    """``repr(value)``, cut to 80 characters for messages; an integer of more than 20 digits as ``1e+300``.

    >>> show(10**300)
    '1e+300'
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        digits = str(abs(value))  # int(1e300) is 301 digits, 300 of them noise: its first few and its size
        fraction = digits[1:6].rstrip("0")
        return f"{'-' if value < 0 else ''}{digits[0]}{'.' + fraction if fraction else ''}e+{len(digits) - 1}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


#: A number as people write one: decimal or scientific notation (``1``, ``-0.5``, ``.5``, ``1e6``, ``2.5E-3``).
_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: The spellings of infinity and NaN ``float()`` reads; kept, so a range check refuses them in its own words.
_SPECIAL_TEXT = {sign + word for sign in ("", "+", "-") for word in ("inf", "infinity", "nan")}


def underscore_hint(text: str) -> str:
    """What a message about ``text`` adds after "must be a number" when it holds a ``_`` (:func:`number_text`).

    >>> underscore_hint("1_0"), underscore_hint("x")
    (", written without '_' (1_0 is not read as 10)", '')
    """
    return ", written without '_' (1_0 is not read as 10)" if "_" in text else ""


def number_text(text: str) -> float:
    """The number ``text`` writes in decimal or scientific notation (or an infinity/NaN spelling), as a float.

    ``float()`` also reads ``1_0`` as 10 (Python's digit grouping) and non-ASCII digits; from a command line
    or a spec ``1_0`` is far more likely a typo of ``1.0`` than ten, so both raise ``ValueError``, whose
    message says why (the caller names the argument; :func:`underscore_hint` is the phrase for its message).
    Surrounding whitespace is ignored, as ``float()`` does.

    >>> number_text("1e6"), number_text(" -.5 "), number_text("inf")
    (1000000.0, -0.5, inf)
    >>> number_text("1_0")
    Traceback (most recent call last):
    ...
    ValueError: a number is written without '_' here; got '1_0'
    """
    stripped = text.strip()
    if _NUMBER_TEXT.fullmatch(stripped) or stripped.lower() in _SPECIAL_TEXT:
        return float(stripped)
    if "_" in stripped:
        raise ValueError(f"a number is written without '_' here; got {text!r}")
    raise ValueError(f"not a number in decimal or scientific notation; got {text!r}")


def did_you_mean(value: Any, choices: Iterable[Any]) -> str:
    """``" (did you mean 'x'?)"`` when ``value`` is a near miss of one of ``choices``, else ``""``.

    >>> did_you_mean("lapalce", ["laplace", "gaussian"])
    " (did you mean 'laplace'?)"
    >>> did_you_mean("zzz", ["laplace"])
    ''
    """
    if not isinstance(value, str):
        return ""
    names = [c for c in choices if isinstance(c, str)]
    close = difflib.get_close_matches(value, names, n=1, cutoff=0.75)
    if not close:
        lowered = {c.lower(): c for c in names}
        close = [lowered[value.lower()]] if value.lower() in lowered else []
    return f" (did you mean {close[0]!r}?)" if close else ""


def _fail(cls: type, name: str, must: str, value: Any, *, expected: str | None = None, hint: str = "",
          message: str | None = None, problem: str | None = None) -> None:
    """Raise ``cls("<name> <must>; got <value><hint>")``.

    The error also carries ``parameter`` (the name), ``expected``, ``value`` and
    ``problem``: the same failure phrased for a config key path,
    ``expected <what>, got <value><hint>``.
    """
    expected = expected if expected is not None else must.removeprefix("must be ")
    err = cls(message if message is not None else f"{name} {must}; got {show(value)}{hint}")
    err.parameter = name
    err.expected = expected
    err.value = value
    err.problem = problem if problem is not None else f"expected {expected}, got {show(value)}{hint}"
    raise err


def _range_text(low, high, low_inclusive=True, high_inclusive=True) -> str:
    if low is not None and high is not None:
        return f"in {'[' if low_inclusive else '('}{low:g}, {high:g}{']' if high_inclusive else ')'}"
    if low is not None:
        return f"{'>=' if low_inclusive else '>'} {low:g}"
    if high is not None:
        return f"{'<=' if high_inclusive else '<'} {high:g}"
    return ""


def _interval(low, high, low_inclusive, high_inclusive, finite) -> str:
    """``[0, inf)``: the range as an interval; an infinite end is in it only when infinity is accepted."""
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    opening = "[" if low_inclusive and not (finite and low is None) else "("
    closing = "]" if high_inclusive and not (finite and high is None) else ")"
    return f"{opening}{lo}, {hi}{closing}"


def _finite_range_text(low, high, low_inclusive, high_inclusive) -> str:
    """``, in (0, inf)``: the range of a finite number with an open end, so "finite" and the range agree."""
    if low is not None and high is not None:
        return ""
    return f", in {_interval(low, high, low_inclusive, high_inclusive, finite=True)}"


def check_real(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    finite: bool = False,
) -> float:
    """Return ``value`` as a float inside the given range or raise.

    NaN is always rejected; infinity only with ``finite=True`` or when a
    range excludes it.

    Examples
    --------
    >>> check_real(0.5, "confidence", low=0, high=1)
    0.5
    >>> check_real(1.5, "confidence", low=0, high=1, low_inclusive=False, high_inclusive=False)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: confidence must be in (0, 1); got 1.5
    >>> check_real("x", "epsilon")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterTypeError: epsilon must be a real number; got 'x'
    """
    if type(value) in _PLAIN_REAL:  # the common case, checked without building the error text
        v = _as_float(value)
        if (v == v and not (finite and math.isinf(v))
                and (low is None or (v >= low if low_inclusive else v > low))
                and (high is None or (v <= high if high_inclusive else v < high))):
            return v
    rng = _range_text(low, high, low_inclusive, high_inclusive)
    expected = f"a number {rng}".rstrip()
    if not _is_real(value):
        _fail(ParameterTypeError, name, "must be a real number", value, expected=expected)
    original, value = value, _as_float(value)
    if math.isnan(value):
        _fail(ParameterValueError, name, "must not be NaN", original, expected=expected)
    if finite and math.isinf(value):
        _fail(ParameterValueError, name,
              "must be finite" + _finite_range_text(low, high, low_inclusive, high_inclusive), original,
              expected=expected)
    too_low = low is not None and (value < low if low_inclusive else value <= low)
    too_high = high is not None and (value > high if high_inclusive else value >= high)
    if too_low or too_high:
        interval = _interval(low, high, low_inclusive, high_inclusive, finite)
        _fail(ParameterValueError, name, f"must be in {interval}", value, expected=expected,
              problem=f"expected {expected}, got {show(original)}")
    return value


def check_probability(value: Any, name: str, *, low_inclusive: bool = True, high_inclusive: bool = True) -> float:
    """A probability in [0, 1] (either end may be open).

    >>> check_probability(1.0, "p", high_inclusive=False)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: p must be in [0, 1); got 1.0
    """
    return check_real(value, name, low=0.0, high=1.0, low_inclusive=low_inclusive, high_inclusive=high_inclusive)


def check_confidence(value: Any, name: str = "confidence") -> float:
    """A confidence level in the open interval (0, 1).

    >>> check_confidence(1.5)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: confidence must be in (0, 1); got 1.5
    """
    return check_probability(value, name, low_inclusive=False, high_inclusive=False)


def check_delta(value: Any, name: str = "delta") -> float:
    """A delta in [0, 1).

    >>> check_delta(1e-5)
    1e-05
    """
    return check_real(value, name, low=0.0, high=1.0, high_inclusive=False)


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    """A non-negative finite epsilon.

    >>> check_epsilon(float("inf"))
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: epsilon must be finite, in [0, inf); got inf
    """
    return check_real(value, name, low=0.0, finite=True)


def check_int(value: Any, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer (not a bool; an integral float such as ``3.0`` or ``1e6`` counts) in [low, high].

    >>> check_int(3, "samples", low=1)
    3
    >>> check_int(1e6, "samples", low=1)
    1000000
    >>> check_int(0, "samples", low=1)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: samples must be an integer >= 1; got 0
    """
    if type(value) is int and (low is None or value >= low) and (high is None or value <= high):
        return value  # the common case, checked without building the error text
    expected = f"an integer {_range_text(low, high)}".rstrip()
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if _is_real(value) and math.isfinite(_as_float(value)) and _as_float(value).is_integer():
            value = int(value)
        else:
            _fail(ParameterTypeError, name, "must be an integer", value, expected=expected)
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        _fail(ParameterValueError, name, f"must be {expected}", value, expected=expected)
    return value


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """One of a fixed set of choices; a near miss gets a "did you mean".

    >>> check_choice("split", "selection", ["split", "gdp"])
    'split'
    >>> check_choice("spilt", "selection", ["split", "gdp"])
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: selection must be one of ['split', 'gdp']; got 'spilt' (did you mean 'split'?)
    """
    choices = list(choices)
    try:
        ok = value in choices
    except TypeError:  # an unhashable value compared with a set-like
        ok = False
    if not ok:
        _fail(ParameterValueError, name, f"must be one of {choices}", value, hint=did_you_mean(value, choices))
    return value


def check_switch(value: Any, name: str, choices: Iterable[str]) -> bool | str:
    """A boolean, or one of the named ``choices`` a switch also takes.

    >>> check_switch("auto", "grey_box", ["auto"]), check_switch(True, "grey_box", ["auto"])
    ('auto', True)
    >>> check_switch("yes", "grey_box", ["auto"])
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: grey_box must be true, false or 'auto'; got 'yes'
    """
    choices = list(choices)
    if isinstance(value, bool) or (isinstance(value, str) and value in choices):
        return value
    named = ", ".join(["true", "false", *map(repr, choices[:-1])]) + f" or {choices[-1]!r}"
    _fail(ParameterValueError, name, f"must be {named}", value, hint=did_you_mean(value, choices))


def check_str(value: Any, name: str) -> str:
    """A non-empty string.

    >>> check_str("", "target")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: target must be a non-empty string; got ''
    """
    if not isinstance(value, str):
        _fail(ParameterTypeError, name, "must be a non-empty string", value)
    if not value:
        _fail(ParameterValueError, name, "must be a non-empty string", value)
    return value


def check_bool(value: Any, name: str) -> bool:
    """A boolean: ``True``/``False`` (YAML ``true``/``false``), not a string or a number.

    >>> check_bool("yes", "resume")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterTypeError: resume must be true or false; got 'yes'
    """
    if not isinstance(value, bool):
        _fail(ParameterTypeError, name, "must be true or false", value)
    return value


def check_mapping(value: Any, name: str, *, allowed: Sequence[str] | None = None) -> dict:
    """A mapping with string keys, optionally restricted to ``allowed`` keys.

    An unknown key is blamed on its own path (``name.key``).

    >>> check_mapping({"a": 1}, "estimator", allowed=["a"])
    {'a': 1}
    >>> check_mapping({"confidnce": 1}, "estimator", allowed=["confidence"])
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: estimator.confidnce: unknown key; expected one of ['confidence'] (did you mean 'confidence'?)
    """
    if not isinstance(value, Mapping):
        _fail(ParameterTypeError, name, "must be a mapping", value)
    for key in value:
        if not isinstance(key, str):
            _fail(ParameterTypeError, name, "must have string keys", key, expected="string keys")
        if allowed is not None and key not in allowed:
            sub = f"{name}.{key}" if name else key
            options = sorted(allowed)
            problem = f"unknown key; expected one of {options}{did_you_mean(key, options)}"
            _fail(ParameterValueError, sub, "", key, message=f"{sub}: {problem}", problem=problem)
    return dict(value)


def check_plain(value: Any, name: str) -> Any:
    """Plain data only: numbers, strings, booleans, null, and lists/mappings of them.

    >>> check_plain([1, "a", None, {"b": 2.5}], "mechanisms[0].params")
    [1, 'a', None, {'b': 2.5}]
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if _is_real(value):
        if not math.isfinite(_as_float(value)):
            _fail(ParameterValueError, name, "must be a finite number", value)
        return value
    if isinstance(value, Mapping):
        return {k: check_plain(v, f"{name}.{k}") for k, v in check_mapping(value, name).items()}
    if isinstance(value, (list, tuple)):
        return [check_plain(v, f"{name}[{i}]") for i, v in enumerate(value)]
    _fail(ParameterTypeError, name, "must be a number, string, boolean, null or a list of them", value)
