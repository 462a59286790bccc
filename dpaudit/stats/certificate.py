"""Certificates: evidence, a claim and a confidence in; one frozen result, which alone decides the verdict, out.

A certificate turns what an audit counted into a certified region: lower
bounds on the mechanism's epsilon at the claim's deltas, all valid at once
with probability ``confidence``.  Its :class:`CertificateResult` carries
everything a report reads from it: the method, the region against the claim
(``violation``, ``margin``, the reported point or witness), the ``ceiling``
(the most these sizes could certify) and the counts it used.  Every caller
asks the result, never which certificate it holds.

The protocol is a template method, as ``dp_accounting``'s ``compose`` and
``_compose``: the public :meth:`Certificate.certify` checks its inputs (the
evidence type, the claim, the confidence) and calls the one abstract hook
:meth:`Certificate._certify`.  A new certificate is a subclass with that one
method, made known by :func:`register_certificate` (or named by
``"module:attr"``); :func:`certificate_for` resolves a name, an import path,
a class or an instance.  Built in: Clopper-Pearson intervals
(:class:`ClopperPearson`), the Poisson conditional test
(:class:`PoissonConditional`, chosen for an event on calibration data) and
Gaussian DP (:class:`GaussianDP`, one delta, under an assumption).
:class:`IntervalCertificate` turns any jointly valid pair of rate bounds into
a certificate.  ``docs/certificates.md`` shows how to write one.

Examples
--------
>>> from dpaudit.claims import parse_claim
>>> r = ClopperPearson().certify(EventCounts(900, 100, 100, 900), parse_claim("eps:1"), confidence=0.95)
>>> r.method, r.violation, round(r.epsilon_lower_bound, 3), r.epsilon_lower_bound <= r.ceiling
('clopper-pearson', True, 1.99, True)
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar, Mapping

import numpy as np

from .._validation import check_confidence, check_int
from ..exceptions import ParameterTypeError, ParameterValueError
from .bounds import EpsilonBound, epsilon_lower_bound, poisson_epsilon_bound
from .clopper_pearson import cp_upper
from .curves import CurveTest, curve_test, interval_region
from .gdp import gaussian_epsilon, mu_from_rates

__all__ = [
    "EventCounts",
    "CertificateResult",
    "Certificate",
    "IntervalCertificate",
    "ClopperPearson",
    "PoissonConditional",
    "GaussianDP",
    "GDPResult",
    "register_certificate",
    "certificate_for",
    "registered_certificates",
    "CERTIFICATES",
    "POISSON_SHARE",
]

#: Share of a test's failure probability the Poisson conditional test uses: the share of the one interval it
#: replaces, so that an event whose ratio is exactly e^epsilon stays below the stated failure probability.
POISSON_SHARE = 0.5


@dataclass(frozen=True)
class EventCounts:
    """Held-out counts at one event: on D, ``tp`` hits and ``fn`` misses; on D', ``fp`` hits and ``tn`` misses.

    >>> EventCounts(3, 1, 1, 3).tpr
    0.75
    """

    tp: int
    fn: int
    fp: int
    tn: int

    def __post_init__(self):
        for name in ("tp", "fn", "fp", "tn"):
            object.__setattr__(self, name, check_int(getattr(self, name), name, low=0))

    @classmethod
    def at(cls, counts, event) -> "EventCounts":
        """The counts of ``event`` among held-out counts (:class:`~dpaudit.stats.estimators.HeldOutCounts`)."""
        tp, fp = counts.hits(event)
        return cls(tp, counts.n0 - tp, fp, counts.n1 - fp)

    @classmethod
    def of(cls, bound) -> "EventCounts":
        """The counts an :class:`~dpaudit.stats.bounds.EpsilonBound` was computed from."""
        return cls(bound.tp, bound.fn, bound.fp, bound.tn)

    @property
    def n0(self) -> int:
        return self.tp + self.fn

    @property
    def n1(self) -> int:
        return self.fp + self.tn

    @property
    def tpr(self) -> float:
        return self.tp / max(self.n0, 1)

    @property
    def fpr(self) -> float:
        return self.fp / max(self.n1, 1)

    @property
    def perfect(self) -> "EventCounts":
        """The counts of a perfect attack at these sizes (every release of D hit, none of D')."""
        return EventCounts(self.n0, 0, 0, self.n1)


@dataclass(frozen=True)
class CertificateResult:
    """What one certificate certified from one piece of evidence against one claim.

    ``region`` holds the certified lower curve on the claim's grid beside the
    claimed one (all points valid at once with probability ``confidence``);
    the verdict, the margin and the reported point (the witness of a
    violation) are its.  ``ceiling`` is the most these sizes could certify at
    ``delta``, the delta the point results are read at; ``bound`` the point
    bound there with its exact intervals, when the method has one; ``details``
    whatever else the method computed (a GDP mu, ...); ``caveat`` what a report
    must say when the region holds only under an assumption.
    """

    method: str
    confidence: float
    counts: Any
    region: CurveTest
    ceiling: float
    delta: float
    epsilon_at_delta: float
    bound: EpsilonBound | None = None
    details: Mapping = field(default_factory=dict)
    caveat: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))

    @property
    def violation(self) -> bool:
        return self.region.violation

    @property
    def margin(self) -> float:
        """The largest margin of the certified curve over the claimed one: > 0 exactly on a violation."""
        return self.region.margin

    @property
    def epsilon_lower_bound(self) -> float:
        """The certified epsilon at the reported point (the witness of a violation)."""
        return self.region.epsilon_lower_bound

    @property
    def witness(self) -> tuple[float, float]:
        """The reported point ``(epsilon, delta)``: the witness of a violation, else the closest approach."""
        return self.region.epsilon_lower_bound, self.region.delta

    @property
    def claimed_epsilon(self) -> float:
        return self.region.claimed_epsilon

    def certified_at(self, delta: float) -> float:
        return self.region.certified_at(delta)

    def as_bound_against(self, epsilon: float, delta: float | None = None) -> float:
        """This result as a bound against a point claim of ``epsilon``: above it exactly on a violation."""
        return self.region.as_bound_against(epsilon, delta)

    def reached_ceiling(self) -> bool:
        """Whether the point bound reached the ceiling of its sizes: more samples could certify more."""
        return self.epsilon_at_delta >= self.ceiling - 1e-9

    def to_dict(self) -> dict:
        counts = self.counts.__dict__ if hasattr(self.counts, "__dict__") else dict(self.counts)
        return {"method": self.method, "confidence": self.confidence, "counts": dict(counts),
                "ceiling": self.ceiling, "delta": self.delta, "epsilon_at_delta": self.epsilon_at_delta,
                "region": self.region.to_dict(), "details": dict(self.details), "caveat": self.caveat}


class Certificate(ABC):
    """Evidence and a claim in, a :class:`CertificateResult` out: the one seam every verdict goes through.

    Subclasses implement :meth:`_certify`; :meth:`certify` checks the
    inputs first.  Class attributes: ``name`` (how users name it),
    ``description`` (one line for ``dpaudit list``), ``caveat`` (what a
    report must say when the result holds only under an assumption),
    ``point_only`` (it certifies at one delta, so it takes point claims only),
    ``positive_delta`` (it needs delta > 0) and ``evidence`` (the evidence
    type it reads).  The audit's hooks (:meth:`choose_event`,
    :meth:`poisson_variant`, :attr:`float_certificate`,
    :attr:`poisson_sized`) have defaults that fit most certificates.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    caveat: ClassVar[str | None] = None
    point_only: ClassVar[bool] = False
    positive_delta: ClassVar[bool] = False
    evidence: ClassVar[type] = EventCounts
    #: Whether the evidence must be counted on Poisson-sized held-out sets (drawn from the seed before any release).
    poisson_sized: ClassVar[bool] = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def check(self, claim, *, delta: float | None = None) -> None:
        """Raise a ParameterValueError naming the estimator when it cannot serve ``claim`` (at ``delta``)."""
        if self.point_only and claim.is_curve:
            raise ParameterValueError(f"estimator {self.name!r} certifies at one delta; it takes a point claim, "
                                      f"got claim {claim.spec!r}")
        at = claim.finite_point[1] if delta is None else delta
        if self.positive_delta and at <= 0:
            raise ParameterValueError(f"estimator {self.name!r} needs delta > 0 (a Gaussian mechanism has no "
                                      "finite epsilon at delta = 0); got delta = 0")

    def certify(self, evidence, claim, *, confidence: float, delta: float | None = None) -> CertificateResult:
        """The certified region of ``evidence`` against ``claim``, valid at ``confidence``.

        ``claim`` is a :class:`~dpaudit.claims.Claim` or a spec; ``delta`` the
        delta the point results (``ceiling``, ``bound``) are read at (default:
        the claim's own finite point).
        """
        from ..claims import as_claim

        claim = as_claim(claim)
        confidence = check_confidence(confidence)
        if not isinstance(evidence, self.evidence):
            raise ParameterTypeError(f"estimator {self.name!r} certifies {self.evidence.__name__}; got "
                                     f"{type(evidence).__name__}")
        self.check(claim, delta=delta)
        return self._certify(evidence, claim, confidence=confidence,
                             delta=float(claim.finite_point[1] if delta is None else delta))

    @abstractmethod
    def _certify(self, evidence, claim, *, confidence: float, delta: float) -> CertificateResult:
        """The result, from checked inputs."""

    # ----------------------------------------------------------------- the audit's hooks
    def choose_event(self, rates):
        """The event this certificate certifies, chosen on calibration ``rates``; None: the claim's event."""
        return None

    def poisson_variant(self, inequality: str) -> "Certificate | None":
        """A certificate to use instead for an event whose calibration favours the Poisson conditional test of
        ``inequality`` (a pure claim only); None: keep this one."""
        return None

    @property
    def float_certificate(self) -> "Certificate":
        """The certificate of a floating-point test: this one, unless its result needs an assumption about the
        trade-off curve that bit patterns do not meet."""
        return self


# ----------------------------------------------------------------------------- interval certificates
class IntervalCertificate(Certificate):
    """A certificate from jointly valid bounds on one event's rates: a lower bound on TPR, an upper on FPR.

    Subclasses implement :meth:`rate_bounds`; the whole certified curve
    follows from the two (Kairouz, Oh and Viswanath 2015), read on the claim's
    grid, and the ceiling is the curve of a perfect attack's counts.
    """

    @abstractmethod
    def rate_bounds(self, counts: EventCounts, *, confidence: float) -> tuple[float, float]:
        """``(tpr_lower, fpr_upper)``, valid together with probability ``confidence``."""

    def _certify(self, evidence, claim, *, confidence, delta):
        tpr_lo, fpr_hi = (float(np.clip(v, 0.0, 1.0)) for v in self.rate_bounds(evidence, confidence=confidence))
        region = interval_region(claim, tpr_lo, fpr_hi, confidence=confidence)
        top_lo, top_hi = self.rate_bounds(evidence.perfect, confidence=confidence)
        top = interval_region(claim, float(np.clip(top_lo, 0, 1)), float(np.clip(top_hi, 0, 1)),
                              confidence=confidence).epsilon_lower_bound_at(delta)
        at = float(region.epsilon_lower_bound_at(delta))
        return CertificateResult(self.name, confidence, evidence, region, float(max(top, at)), delta, at,
                                 details={"tpr_lower": tpr_lo, "fpr_upper": fpr_hi}, caveat=self.caveat)


class ClopperPearson(Certificate):
    """Exact one-sided Clopper-Pearson intervals on the event's TPR and FPR; valid for any mechanism."""

    name = "clopper-pearson"
    description = "exact one-sided intervals on TPR/FPR of a held-out event; valid for any mechanism"

    def bound(self, counts, event, *, delta: float, confidence: float, n_comparisons: int = 1) -> EpsilonBound:
        """The point bound at ``delta`` from the held-out counts of ``event``."""
        tp, fp = counts.hits(event)
        return epsilon_lower_bound(tp, counts.n0 - tp, fp, counts.n1 - fp, delta=delta, confidence=confidence,
                                   n_comparisons=n_comparisons)

    def _certify(self, evidence, claim, *, confidence, delta):
        b = epsilon_lower_bound(evidence.tp, evidence.fn, evidence.fp, evidence.tn, delta=delta,
                                confidence=confidence)
        region = interval_region(claim, b.tpr_interval()[0], b.fpr_interval()[1], confidence=confidence,
                                 point=(b.delta, b.epsilon_lower_bound))
        return CertificateResult(self.name, confidence, evidence, region, b.ceiling, delta,
                                 max(0.0, b.epsilon_lower_bound), bound=b)

    def poisson_variant(self, inequality):
        return PoissonConditional(inequality)


class PoissonConditional(Certificate):
    """The exact conditional test of one of the event's two ratios, on Poisson-sized held-out sets.

    ``inequality`` ("event" or "complement") is fixed on calibration data;
    the test runs at :data:`POISSON_SHARE` of the failure probability (the
    share of the interval it replaces).  It holds at delta 0 only, so its
    region is the one point it certifies.
    """

    name = "poisson-conditional"
    description = "exact conditional test of one ratio on Poisson-sized held-out sets (delta = 0); chosen per event"
    poisson_sized = True

    def __init__(self, inequality: str = "event", share: float = POISSON_SHARE):
        self.inequality, self.share = inequality, share

    def __repr__(self) -> str:
        return f"PoissonConditional({self.inequality!r})"

    def _certify(self, evidence, claim, *, confidence, delta):
        conf = 1.0 - (1.0 - confidence) * self.share
        details = {"certificate": self.name}
        if evidence.n0 == 0 or evidence.n1 == 0:  # an empty Poisson draw (probability e^-lambda) certifies nothing
            b = poisson_epsilon_bound(0, 1, 0, 1, inequality=self.inequality, confidence=conf, details=details)
        else:
            b = poisson_epsilon_bound(evidence.tp, evidence.fn, evidence.fp, evidence.tn,
                                      inequality=self.inequality, confidence=conf, details=details)
        region = curve_test(claim, deltas=[b.delta], epsilon_lower_bounds=[b.epsilon_lower_bound],
                            confidence=b.confidence)
        return CertificateResult(self.name, confidence, evidence, region, b.ceiling, delta,
                                 max(0.0, b.epsilon_lower_bound), bound=b)


@dataclass(frozen=True)
class GDPResult:
    """A certified Gaussian-DP mu and the epsilon(delta) of a Gaussian mechanism with that mu."""

    mu_lower_bound: float
    epsilon_lower_bound: float
    fpr_upper: float
    fnr_upper: float
    confidence: float
    #: The most these held-out sizes could certify with this estimator: the epsilon of a perfect attack.
    ceiling: float = 0.0


class GaussianDP(Certificate):
    """A certified mu (Nasr et al. 2023), reported as the epsilon(delta) of a Gaussian mechanism.

    The mu is valid for any mechanism; its epsilon(delta) is a valid bound only
    when the mechanism's trade-off curve is Gaussian, so it certifies one point.
    """

    name = "gdp"
    description = "certified Gaussian-DP mu (Nasr et al. 2023) turned into epsilon(delta); assumes a Gaussian curve"
    caveat = ("estimator 'gdp': epsilon(delta) of a Gaussian mechanism with the certified mu; valid only if the "
              "target's trade-off curve is Gaussian (Nasr et al. 2023)")
    point_only = True
    positive_delta = True

    def bound(self, counts, event, *, delta: float, confidence: float) -> GDPResult:
        """The GDP result at ``delta`` from the held-out counts of ``event``."""
        return self._gdp(EventCounts.at(counts, event), delta=delta, confidence=confidence)

    @staticmethod
    def _gdp(c: EventCounts, *, delta: float, confidence: float) -> GDPResult:
        alpha = (1.0 - confidence) / 2.0
        fpr_hi = float(cp_upper(c.fp, c.n1, alpha))
        fnr_hi = float(cp_upper(c.fn, c.n0, alpha))
        mu = float(mu_from_rates(fpr_hi, fnr_hi))
        eps = gaussian_epsilon(mu, delta) if (mu > 0 and delta > 0) else 0.0
        # A perfect attack has the smallest upper rates, hence the largest mu and epsilon: the sizes' ceiling.
        top = float(mu_from_rates(float(cp_upper(0, c.n1, alpha)), float(cp_upper(0, c.n0, alpha))))
        top_eps = gaussian_epsilon(top, delta) if (top > 0 and delta > 0) else 0.0
        return GDPResult(mu, float(eps), fpr_hi, fnr_hi, confidence, float(max(top_eps, eps)))

    def _certify(self, evidence, claim, *, confidence, delta):
        g = self._gdp(evidence, delta=delta, confidence=confidence)
        headline = float(max(0.0, g.epsilon_lower_bound))
        region = curve_test(claim, deltas=[delta], epsilon_lower_bounds=[headline], confidence=confidence)
        return CertificateResult(self.name, confidence, evidence, region, float(max(0.0, g.ceiling)), delta,
                                 headline, details={"mu_lower_bound": g.mu_lower_bound, "fpr_upper": g.fpr_upper,
                                                    "fnr_upper": g.fnr_upper}, caveat=self.caveat)

    def choose_event(self, rates):
        return rates.choose(gdp=True)

    @property
    def float_certificate(self):
        return ClopperPearson()


# ----------------------------------------------------------------------------- the registry
#: The registered certificates by name (live: what ``--estimator`` and ``dpaudit list`` read).
CERTIFICATES: dict[str, Certificate] = {}


def register_certificate(certificate, *, name: str | None = None, replace_existing: bool = False):
    """Make ``certificate`` (a :class:`Certificate` subclass or instance) known by its ``name``; returns it.

    Usable as a class decorator.  A name already taken by another certificate
    is refused unless ``replace_existing``; registering the same class again
    (a module imported twice) replaces it.
    """
    inst = certificate() if isinstance(certificate, type) else certificate
    if not isinstance(inst, Certificate):
        raise ParameterTypeError(f"register_certificate: expected a Certificate subclass or instance; got "
                                 f"{certificate!r}")
    key = name or inst.name
    if not key:
        raise ParameterValueError(f"register_certificate: {type(inst).__name__} has no name")
    old = CERTIFICATES.get(key)
    if old is not None and not replace_existing and type(old).__qualname__ != type(inst).__qualname__:
        raise ParameterValueError(f"register_certificate: the name {key!r} is taken by {type(old).__name__}")
    CERTIFICATES[key] = inst
    return certificate


def registered_certificates() -> dict[str, Certificate]:
    """The registered certificates by name, in registration order (what ``dpaudit list`` shows)."""
    return dict(CERTIFICATES)


def certificate_for(spec, *, name: str = "estimator") -> Certificate:
    """The certificate ``spec`` names: an instance, a subclass, a registered name or ``"module:attr"``.

    ``name`` is the option the messages name (a flag, a YAML key).

    >>> certificate_for("clopper-pearson").name, certificate_for(GaussianDP).name
    ('clopper-pearson', 'gdp')
    >>> certificate_for("bayes")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: estimator must be one of ['clopper-pearson', 'gdp'] or 'module:attr'; got 'bayes'
    """
    if isinstance(spec, Certificate):
        return spec
    if isinstance(spec, type) and issubclass(spec, Certificate):
        return spec()
    if not isinstance(spec, str):
        raise ParameterTypeError(f"{name} must be a name, 'module:attr' or a Certificate; got {spec!r}")
    if spec in CERTIFICATES:
        return CERTIFICATES[spec]
    if ":" not in spec:
        raise ParameterValueError(f"{name} must be one of {sorted(CERTIFICATES)} or 'module:attr'; got {spec!r}")
    return certificate_for(_imported(spec, name))


def _imported(spec: str, name: str):
    """The object ``"module:attr"`` names (the attribute may be dotted), as a Certificate class or instance."""
    module_name, _, attr = spec.rpartition(":")
    try:
        obj = importlib.import_module(module_name)
    except ImportError as exc:
        raise ParameterValueError(f"{name} {spec!r}: cannot import module {module_name!r}: {exc}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ParameterValueError(f"{name} {spec!r}: module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not (isinstance(obj, Certificate) or (isinstance(obj, type) and issubclass(obj, Certificate))):
        raise ParameterValueError(f"{name} {spec!r}: {attr!r} is not a Certificate (it is a "
                                  f"{type(obj).__name__})")
    return obj


def with_method(bound: EpsilonBound, result: CertificateResult) -> EpsilonBound:
    """``bound`` (a description of the event's counts) relabelled with ``result``'s method and point results."""
    return replace(bound, method=result.method, ceiling=result.ceiling, epsilon_lower_bound=result.epsilon_at_delta)


register_certificate(ClopperPearson)
register_certificate(GaussianDP)
