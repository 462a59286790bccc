"""The parts an :class:`~dpaudit.auditor.report.AuditReport` is made of: claim, sampling, events, certificate,
the target, extras, run facts and the floating-point finding.

Each part is a frozen dataclass whose field names (and the names in its ``DERIVED``) are keys of the report's
flat JSON, so the report can read every key from the part that owns it (:meth:`Part.keys`) and build every
part back from the flat JSON (:meth:`Part.from_flat`).  Derived values are properties, computed on demand.
Why parts: a reader (the summary, a plot) asks the part it is about, not one long flat record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from ._display import RocCurve

__all__ = ["Part", "ClaimPart", "SamplingPart", "EventPart", "CertifiedBound", "TargetPart", "Extras", "RunFacts",
           "FloatFinding", "PARTS"]


class Part:
    """A report part: its dataclass fields and its ``DERIVED`` properties are flat JSON keys of the report."""

    #: Flat keys the part computes from its fields (read-only; ignored when the part is built from the JSON).
    DERIVED: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The flat JSON keys this part owns: its fields, then its derived values."""
        return tuple(f.name for f in fields(cls)) + cls.DERIVED

    @classmethod
    def from_flat(cls, flat: Mapping[str, Any]):
        """The part from the report's flat keys (absent optional keys take their defaults)."""
        return cls(**{f.name: flat[f.name] for f in fields(cls) if f.name in flat})


@dataclass(frozen=True)
class ClaimPart(Part):
    """What was claimed: the point the report is read at, and the curve when the claim is one."""

    claimed_epsilon: float
    claimed_delta: float
    #: The claim as given (``--claim`` / ``claim=``), or None for ``epsilon``/``delta``.
    claim: str | None = None
    #: None, or the witness of a violation (the crossed point of largest factor in delta, see
    #: :meth:`dpaudit.stats.curves.CurveTest.witness_index`): ``delta``, ``epsilon_lower_bound`` (certified there),
    #: ``claimed_epsilon`` (the curve's there), ``certified_delta``, ``delta_factor``, ``margin`` (the largest)...
    curve_violation: dict | None = None
    #: The claimed curve and the certified one on up to 40 of the claim's deltas (one point for a point claim).
    claim_curve: dict | None = None

    def is_curve(self) -> bool:
        """Whether the report tested a curve of several points (and so says at which delta it reads)."""
        return bool(self.claim_curve) and len(self.claim_curve.get("delta", ())) > 1

    def at_text(self) -> str:
        """``" at delta = D"`` when a curve was tested, else nothing."""
        return f" at delta = {self.claimed_delta:g}" if self.is_curve() else ""


@dataclass(frozen=True)
class SamplingPart(Part):
    """What was drawn (or given) and why the drawing stopped."""

    #: Releases drawn per side (a score audit: the IN scores).
    samples: int
    seed: int
    n_calibration: int
    #: Held-out releases per side that certify.
    n_test: int
    rounds: int = 1
    stopping_reason: str = "fixed"
    max_samples: int | None = None
    #: Seconds a sequential audit was allowed (``--time-budget``), or None.
    time_budget: float | None = None
    #: Score audits (:func:`dpaudit.audit_scores`), whose sides may differ in size: the IN and OUT counts
    #: and how many of each certify (held out); None for an audit, which draws the same number per side.
    samples_in: int | None = None
    samples_out: int | None = None
    n_test_in: int | None = None
    n_test_out: int | None = None
    #: True when the audit was interrupted (Ctrl-C) and reports the sequential rounds finished before it,
    #: with ``stopping_reason`` "budget": the bound holds as at any round.
    interrupted: bool = False
    #: "planned" (rounds fixed before drawing) or "anytime" (e-processes: the bound holds at every look).
    stopping: str = "planned"
    #: An anytime audit's stream: ``valid_at_any_time``, ``releases_seen``, ``looks``, ``batch``, ``e_value``
    #: (at the reported point of the claim), ``threshold`` (1/alpha, shared among the points tested), ...; else None.
    anytime: dict | None = None

    def sides_differ(self) -> bool:
        """Whether the two sides had different sizes (a score audit with more IN than OUT scores, say)."""
        return self.samples_out is not None and (self.samples_in, self.n_test_in) != (self.samples_out,
                                                                                     self.n_test_out)

    def held_out_text(self, sep: str = "") -> str:
        """How many held-out samples certify (both sides' counts when they differ); ``sep=","`` groups digits."""
        if self.sides_differ():
            return f"{self.n_test_in:{sep}} IN and {self.n_test_out:{sep}} OUT held-out samples"
        return f"{self.n_test:{sep}} held-out samples per side"

    def stop_text(self) -> str:
        """The stopping reason for people: which budget, when a budget stopped the audit."""
        if self.stopping_reason != "budget":
            return self.stopping_reason
        if self.interrupted:
            return "budget (interrupted by hand: the rounds finished before it are reported)"
        if self.time_budget is not None and (self.max_samples is None or self.samples < self.max_samples):
            return f"budget (the time budget, {self.time_budget:g} s, before the sample budget)"
        return "budget (the sample budget)"


@dataclass(frozen=True)
class EventPart(Part):
    """The distribution test's event and its held-out counts: tp, fn on D (IN); fp, tn on D' (OUT)."""

    DERIVED: ClassVar[tuple[str, ...]] = ("tpr", "fpr")

    #: The distinguisher (or, for an anytime audit, the witness of the latest bet).
    attack: str
    event: str
    threshold: float
    #: Which inequality gave the bound: ``"D over D', event"``, ``"D' over D, complement"``...
    direction: str
    tp: int
    fn: int
    fp: int
    tn: int
    tpr_interval: list
    fpr_interval: list

    @property
    def tpr(self) -> float:
        """The event's rate on D: ``tp / (tp + fn)`` (0 with no held-out sample)."""
        n = self.tp + self.fn
        return self.tp / n if n else 0.0

    @property
    def fpr(self) -> float:
        """The event's rate on D': ``fp / (fp + tn)`` (0 with no held-out sample)."""
        n = self.fp + self.tn
        return self.fp / n if n else 0.0

    def counts(self) -> dict:
        """What a summary block shows of a test: the counts, their intervals, the event and the inequality."""
        return dict(tp=self.tp, fn=self.fn, fp=self.fp, tn=self.tn, tpr_interval=self.tpr_interval,
                    fpr_interval=self.fpr_interval, direction=self.direction, event=self.event)


@dataclass(frozen=True)
class CertifiedBound(Part):
    """What the counts certify: the headline bound, at what confidence, how, and the most they could certify."""

    epsilon_lower_bound: float
    confidence: float
    #: The most these sample sizes could have certified: a verdict without a violation says nothing above it.
    ceiling: float
    estimator: str
    #: How the bound was certified from held-out counts: "clopper-pearson" (two one-sided intervals on all
    #: ``n_test`` releases per side), "poisson-conditional" (one exact test on Poisson-sized held-out sets of
    #: ``tp + fn`` and ``fp + tn`` releases) or "e-process".
    certificate: str = "clopper-pearson"
    #: The distribution test's own bound (the headline may be the floating-point test's).
    distribution_epsilon_lower_bound: float | None = None

    def distribution_bound(self) -> float:
        """The distribution test's bound (the headline when none is recorded)."""
        dist = self.distribution_epsilon_lower_bound
        return self.epsilon_lower_bound if dist is None else dist


@dataclass(frozen=True)
class TargetPart(Part):
    """What was audited: the target's name, whether it was seeded, its output, and the attack families run."""

    target: str
    seeded: bool
    output_kind: str
    output_shape: list
    #: True when the floating-point attacks were left out (the mathematics only).
    ideal: bool = False


@dataclass(frozen=True)
class Extras(Part):
    """What the audit shows beside its bound: GDP, the privacy profile, the ROC, the meaning, the trajectory."""

    gdp_mu_lower_bound: float
    privacy_profile: dict
    #: The empirical ROC as read-only arrays (``roc.fpr``, ``roc.tpr``); lists in the JSON.
    roc: RocCurve
    #: The attacker's posterior from a 50% prior, at the bound and at the claim.
    posterior: dict
    explanation: str
    #: The running best certified epsilon after each round.
    trajectory: dict = field(default_factory=dict)
    #: Score audits: the TPR on the held-out scores at thresholds chosen on the selection split for FPR 0.001,
    #: 0.01 and 0.1, and the held-out AUC, each with an exact interval (:mod:`dpaudit.stats.score_metrics`);
    #: None for an audit of a target.
    tpr_at_fpr: list | None = None
    auc: dict | None = None

    def __post_init__(self):
        if not isinstance(self.roc, RocCurve):
            object.__setattr__(self, "roc", RocCurve(self.roc))


@dataclass(frozen=True)
class RunFacts(Part):
    """Which dpaudit wrote the report and how long it took (the only keys that vary with the machine)."""

    version: str = ""
    elapsed_seconds: float = 0.0


@dataclass(frozen=True, eq=False)
class FloatFinding(Mapping):
    """The floating-point test's finding (the report's ``floating_point``), also a read-only mapping of its JSON.

    ``fn`` ... ``certificate`` are None only in a report read from JSON written before they were recorded; the
    mapping then leaves them out, as that JSON did.

    >>> f = FloatFinding("float-lsb", 3.2, "low bit set", 90, 10, 100, 5.3)
    >>> f["epsilon_lower_bound"], "fn" in f, f.epsilon_lower_bound
    (3.2, False, 3.2)
    """

    attack: str
    epsilon_lower_bound: float
    event: str
    tp: int
    fp: int
    n_test: int
    ceiling: float
    fn: int | None = None
    tn: int | None = None
    tpr_interval: list | None = None
    fpr_interval: list | None = None
    direction: str | None = None
    certificate: str | None = None

    _OPTIONAL: ClassVar[tuple[str, ...]] = ("fn", "tn", "tpr_interval", "fpr_interval", "direction", "certificate")

    def to_dict(self) -> dict:
        """The JSON form, the keys in field order."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if not (f.name in self._OPTIONAL and getattr(self, f.name) is None)}

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self):
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def held_out(self) -> tuple[int, int]:
        """Held-out samples on each side (recorded since ``fn`` and ``tn`` were)."""
        return self.tp + self.fn, self.fp + self.tn


#: The report's parts by their attribute on the report.
PARTS: dict[str, type[Part]] = {"claimed": ClaimPart, "certified": CertifiedBound, "sampling": SamplingPart,
                                "events": EventPart, "subject": TargetPart, "extras": Extras, "run": RunFacts}
