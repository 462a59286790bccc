"""Specs to claims: :func:`parse_claim` (``eps:``, ``gdp:``, ``dpsgd:``, ``profile:``) and :func:`as_claim`,
the claim of an entry point (a spec, a claim object, a ``DpEvent``, or ``epsilon``/``delta``).
"""

from __future__ import annotations

import json
from typing import Callable

from .._validation import check_delta, check_epsilon, check_int, check_real, number_text, underscore_hint
from ..exceptions import ParameterTypeError, ParameterValueError
from .accountant import MAX_STEPS, AccountantClaim, DPSGDClaim
from .base import Claim
from .stated import MAX_MU, GaussianDPClaim, PointClaim, ProfileClaim

__all__ = ["CLAIM_KINDS", "CLAIM_PARSERS", "as_claim", "parse_claim", "register_claim_kind"]


def _fields(spec: str, body: str, allowed: tuple[str, ...], *, first: str | None = None) -> dict[str, str]:
    """``key=value`` pairs of a spec body; a bare first value is ``first`` (``eps:1``)."""
    out: dict[str, str] = {}
    for i, part in enumerate(p.strip() for p in body.split(",")):
        key, sep, value = part.partition("=")
        if not sep and i == 0 and first is not None:
            key, value = first, key
        elif not sep:
            raise ParameterValueError(f"claim {spec!r}: expected KEY=VALUE, got {part!r}")
        key = key.strip().lower()
        if key not in allowed:
            raise ParameterValueError(f"claim {spec!r}: unknown key {key!r}; expected {', '.join(allowed)}")
        if key in out:
            raise ParameterValueError(f"claim {spec!r}: {key} is given twice")
        out[key] = value.strip()
    missing = [k for k in allowed if k not in out and k not in ("delta",)]
    if missing:
        raise ParameterValueError(f"claim {spec!r}: missing {', '.join(missing)}")
    return out


def _number(spec: str, key: str, text: str) -> float:
    """``text`` in decimal or scientific notation (:func:`~dpaudit._validation.number_text`): ``mu=1_0`` is refused,
    not read as 10 the way ``float()`` reads it."""
    try:
        return number_text(text)
    except ValueError:
        raise ParameterValueError(f"claim {spec!r}: {key} must be a number{underscore_hint(text)}; got {text!r}"
                                  ) from None


def _named(text: str, fn, *args, **kw):
    """Run a check and prefix its message with the spec ``text``."""
    try:
        return fn(*args, **kw)
    except (ParameterValueError, ParameterTypeError) as exc:
        # a spec is text: any flaw is a wrong value; a message that names "claim:" itself names the spec instead
        raise ParameterValueError(f"claim {text!r}: {str(exc).removeprefix('claim: ')}") from None


def parse_claim(spec: str) -> Claim:
    """The claim a spec names (the spec kinds: :mod:`dpaudit.claims`).

    Raises :class:`~dpaudit.exceptions.ParameterValueError` naming the part
    of the spec that is wrong.

    Examples
    --------
    >>> parse_claim("dpsgd:noise=1,rate=0.1,steps=10").kind
    'dpsgd'
    >>> parse_claim("dpsgd:noise=1,rate=2,steps=10")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: claim 'dpsgd:noise=1,rate=2,steps=10': rate must be in (0, 1]; got 2.0
    """
    if not isinstance(spec, str):
        raise ParameterTypeError(f"claim must be a spec string, a claim object or a dp_accounting DpEvent; got {spec!r}")
    text = spec.strip()
    kind, sep, body = text.partition(":")
    kind = kind.strip().lower()
    if not sep or kind not in CLAIM_PARSERS:
        raise ParameterValueError(f"claim {spec!r}: unknown kind {kind!r}; expected one of "
                                  + ", ".join(f"{k}:..." for k in CLAIM_PARSERS))
    if not body.strip():
        raise ParameterValueError(f"claim {spec!r}: nothing after '{kind}:'")
    return CLAIM_PARSERS[kind](spec, text, body)


def _parse_eps(spec: str, text: str, body: str) -> Claim:
    f = _fields(spec, body, ("epsilon", "delta"), first="epsilon")
    eps = _named(spec, check_epsilon, _number(spec, "epsilon", f["epsilon"]))
    delta = _named(spec, check_delta, _number(spec, "delta", f.get("delta", "0")))
    return PointClaim(eps, delta, spec=text)


def _parse_gdp(spec: str, text: str, body: str) -> Claim:
    f = _fields(spec, body, ("mu",))
    mu = _named(spec, check_real, _number(spec, "mu", f["mu"]), "mu", low=0.0, low_inclusive=False, high=MAX_MU)
    return GaussianDPClaim(mu, spec=text)


def _parse_dpsgd(spec: str, text: str, body: str) -> Claim:
    f = _fields(spec, body, ("noise", "rate", "steps"))
    noise = _named(spec, check_real, _number(spec, "noise", f["noise"]), "noise", low=0.0, low_inclusive=False,
                   finite=True)
    rate = _named(spec, check_real, _number(spec, "rate", f["rate"]), "rate", low=0.0, high=1.0,
                  low_inclusive=False)
    steps = _named(spec, check_int, _number(spec, "steps", f["steps"]), "steps", low=1, high=MAX_STEPS)
    return _named(spec, DPSGDClaim, noise, rate, steps, spec=text)  # dp_accounting may refuse the event


def _parse_profile(spec: str, text: str, body: str) -> Claim:
    from ..datasets import expand_user

    path = expand_user(body.strip())  # the shell leaves ~ after 'profile:' alone, as it is not a word's start
    try:
        points = json.loads(path.read_text(encoding="utf-8-sig"))  # a BOM, as score files allow
    except OSError as exc:
        raise ParameterValueError(f"claim {spec!r}: cannot read {str(path)!r} ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ParameterValueError(f"claim {spec!r}: {str(path)!r} is not valid JSON ({exc})") from None
    if not isinstance(points, list):
        raise ParameterValueError(f"claim {spec!r}: {str(path)!r} must hold a list [[epsilon, delta], ...]")
    return _named(spec, ProfileClaim, tuple(points), spec=text)


#: Spec prefix -> its parser ``(spec as given, spec stripped, text after the colon) -> Claim``: the one table
#: :func:`parse_claim` reads (a new claim kind is a new entry).
CLAIM_PARSERS: dict[str, Callable[[str, str, str], Claim]] = {
    "eps": _parse_eps, "gdp": _parse_gdp, "dpsgd": _parse_dpsgd, "profile": _parse_profile,
}
#: The built-in spec prefixes (:data:`CLAIM_PARSERS` holds every kind :func:`parse_claim` reads).
CLAIM_KINDS = tuple(CLAIM_PARSERS)


def register_claim_kind(kind: str, parse) -> None:
    """Make specs ``"KIND:BODY"`` parse as ``parse(BODY, spec=SPEC)``, a :class:`Claim`, at every entry point.

    A new kind is one more entry of :data:`CLAIM_PARSERS`; the built-in kinds cannot be replaced.
    """
    if kind.lower() in CLAIM_KINDS or not kind.isidentifier():
        raise ParameterValueError(f"register_claim_kind: {kind!r} is built in or not a name")

    def parser(spec: str, text: str, body: str) -> Claim:
        return _named(spec, parse, body.strip(), spec=text)

    CLAIM_PARSERS[kind.lower()] = parser


def as_claim(claim=None, *, epsilon=None, delta=None, neighbouring=None) -> Claim:
    """The claim of an entry point: ``claim`` (a spec, a :class:`Claim`, a ``DpEvent``) or ``epsilon``/``delta``.

    Giving both is an error: a point and a curve would be two claims, and
    which one the verdict answered would be a guess.  ``delta`` alone (with
    ``claim``) counts as given only when it is not ``None`` or 0.

    >>> as_claim(epsilon=1.0).spec
    'eps:1'
    >>> as_claim("gdp:mu=1", epsilon=1.0)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: claim: give either claim or epsilon/delta, not both (got epsilon too)
    """
    from ..param_rules import broken_rule, rule_error

    given = {k: v for k, v in (("claim", claim), ("epsilon", epsilon), ("delta", delta))
             if v is not None and not (k == "delta" and v == 0)}  # a delta of 0 is the default, not a claim
    rule = broken_rule(("claim_needed", "one_claim"), given)  # the rules every entry point's table keeps
    if rule is not None:
        raise rule_error(rule, given)
    if claim is None:
        kw = {} if neighbouring is None else {"neighbouring": neighbouring}
        return PointClaim(epsilon, 0.0 if delta is None else delta, **kw)
    if isinstance(claim, Claim):
        return claim
    if isinstance(claim, str):
        return parse_claim(claim)
    try:
        from dp_accounting import dp_event
    except ImportError:  # pragma: no cover
        dp_event = None
    if dp_event is not None and isinstance(claim, dp_event.DpEvent):
        return AccountantClaim(claim)
    raise ParameterTypeError("claim must be a spec string ('gdp:mu=1', 'dpsgd:noise=1,rate=0.01,steps=100', "
                             f"'profile:FILE.json', 'eps:1'), a Claim or a dp_accounting DpEvent; got {claim!r}")
