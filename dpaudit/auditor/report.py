"""The audit report: a frozen record in parts that echoes its inputs and round-trips through its flat JSON.

:class:`AuditReport` holds a few parts (:mod:`dpaudit.auditor.report_parts`: the claim, the sampling, the
event counts, the certified bound, the target, extras, run facts) beside the verdict, the notes and the
floating-point and grey-box findings.  Every key of the flat JSON is also a read-only attribute of the report,
read from the part that owns it; :meth:`AuditReport.to_dict` writes them in :data:`FLAT_KEYS` order.
:class:`Report` is what every report of the package offers (audit, scores, one-run, search, attacks).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol, runtime_checkable

from ._display import RocCurve, report_html
from ._summary import summary_lines
from .report_parts import (PARTS, CertifiedBound, ClaimPart, EventPart, Extras, FloatFinding, RunFacts,
                           SamplingPart, TargetPart)

__all__ = ["AuditReport", "Report", "FLAT_KEYS", "TIMING_FIELDS"]

#: Fields that depend on the machine, not the seed; excluded from equality checks.
TIMING_FIELDS = ("elapsed_seconds",)

#: The keys of the report's JSON, in the order ``to_dict()`` writes them (the order of ``dpaudit audit --json``).
FLAT_KEYS = (
    "epsilon_lower_bound", "claimed_epsilon", "claimed_delta", "confidence", "samples", "attack", "seed", "verdict",
    "ceiling", "estimator", "target", "seeded", "output_kind", "output_shape", "event", "threshold", "direction",
    "tp", "fn", "fp", "tn", "tpr", "fpr", "tpr_interval", "fpr_interval", "n_calibration", "n_test",
    "gdp_mu_lower_bound", "privacy_profile", "roc", "posterior", "explanation", "notes", "rounds", "stopping_reason",
    "max_samples", "time_budget", "trajectory", "floating_point", "distribution_epsilon_lower_bound", "ideal",
    "certificate", "version", "elapsed_seconds", "claim", "curve_violation", "claim_curve", "samples_in",
    "samples_out", "n_test_in", "n_test_out", "interrupted", "tpr_at_fpr", "auc", "grey_box", "violation_source",
    "stopping", "anytime",
)


@runtime_checkable
class Report(Protocol):
    """What every report of dpaudit offers: the verdict, the certified bound, a summary for people, the JSON.

    The audit's and the score audit's :class:`AuditReport`, :class:`~dpaudit.OneRunReport`,
    :class:`~dpaudit.SearchReport` and the attacks' results satisfy it, so code that only reports a verdict
    takes any of them.
    """

    @property
    def verdict(self) -> str: ...

    @property
    def epsilon_lower_bound(self) -> float: ...

    def summary(self) -> str: ...

    def to_dict(self) -> dict: ...


def _plain(value: Any) -> Any:
    """A flat value as the JSON holds it: mappings of the report as dicts, tuples as lists, containers copied."""
    if isinstance(value, (RocCurve, FloatFinding)):
        return value.to_dict()
    if isinstance(value, tuple):
        return list(value)
    return copy.deepcopy(value)


@dataclass(frozen=True)
class AuditReport:
    """Result of :func:`dpaudit.audit`; attribute names are the keys of ``dpaudit audit --json``.

    ``epsilon_lower_bound`` is valid with probability ``confidence`` for the
    mechanism on this pair of datasets (at ``claimed_delta``); ``ceiling`` is
    the most these sample sizes could have certified, so a verdict without a
    violation says nothing about epsilons above it.

    The report is made of parts (``report.claimed``, ``.certified``, ``.sampling``, ``.events``, ``.subject``,
    ``.extras``, ``.run``); every JSON key is also a read-only attribute (``report.tp`` is
    ``report.events.tp``).  :meth:`with_values` and :meth:`with_notes` give a changed copy.

    ``print(report)`` shows the human summary (:meth:`summary`); in a notebook
    the report draws itself as a table; ``report.roc.fpr`` and
    ``report.roc.tpr`` are numpy arrays (``to_dict()`` gives lists).
    """

    verdict: str
    claimed: ClaimPart
    certified: CertifiedBound
    sampling: SamplingPart
    events: EventPart
    subject: TargetPart
    extras: Extras
    run: RunFacts = field(default_factory=RunFacts)
    notes: tuple = ()
    #: The floating-point test's finding (a read-only mapping of its JSON), or None.
    floating_point: FloatFinding | None = None
    #: A grey-box audit's analysis (``grey_box=True``; :class:`dpaudit.greybox.GreyBoxResult` as a dict), else None.
    grey_box: dict | None = None
    #: "grey-box" (the exact upper bound exceeds the claim), "black-box" (a certified lower bound does), or None.
    violation_source: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "notes", tuple(self.notes))
        fp = self.floating_point
        if fp is not None and not isinstance(fp, FloatFinding):
            names = FloatFinding.__dataclass_fields__
            object.__setattr__(self, "floating_point", FloatFinding(**{k: v for k, v in fp.items() if k in names}))

    @property
    def violation(self) -> bool:
        return self.verdict == "violation"

    @classmethod
    def from_values(cls, **flat) -> "AuditReport":
        """The report from its flat keys (those of :meth:`to_dict`); derived keys (``tpr``, ``fpr``) are recomputed.

        Raises ``TypeError`` naming an unknown key, or a missing one that has no default.
        """
        unknown = sorted(set(flat) - set(FLAT_KEYS))
        if unknown:
            raise TypeError(f"AuditReport has no key {unknown[0]!r}")
        parts = {name: part.from_flat(flat) for name, part in PARTS.items()}
        return cls(**parts, **{k: flat[k] for k in _OWN_KEYS if k in flat})

    @classmethod
    def from_dict(cls, d: dict) -> "AuditReport":
        """The report back from :meth:`to_dict` (or ``dpaudit audit --json``); keys it does not know are ignored."""
        return cls.from_values(**{k: v for k, v in d.items() if k in FLAT_KEYS})

    def with_values(self, **flat) -> "AuditReport":
        """A copy with some flat keys changed (``report.with_values(confidence=0.99, target="t")``)."""
        return self.from_values(**{**{k: getattr(self, k) for k in FLAT_KEYS}, **flat})

    def with_notes(self, *notes: str) -> "AuditReport":
        """A copy with ``notes`` added after the report's own."""
        return replace(self, notes=(*self.notes, *notes)) if notes else self

    def to_dict(self) -> dict:
        """The flat JSON form: every key of :data:`FLAT_KEYS`, in that order."""
        return {k: _plain(getattr(self, k)) for k in FLAT_KEYS}

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    def __repr__(self) -> str:
        return (f"AuditReport(verdict={str(self.verdict)!r}, epsilon_lower_bound={self.epsilon_lower_bound:.4g}, "
                f"claimed_epsilon={self.claimed_epsilon!r}, claimed_delta={self.claimed_delta!r}, "
                f"ceiling={self.ceiling:.3g}, attack={self.attack!r}, samples={self.samples}, "
                f"confidence={self.confidence!r}, seed={self.seed})")

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        return report_html(self)

    def plot(self, *, size: str = "two-column"):
        """A matplotlib Figure of this audit: ROC with the claim's frontier, privacy profile, trajectory.

        The sequential panel appears when the audit ran in rounds.  The figure
        is returned, never shown; see :func:`dpaudit.plots.plot_report`.
        """
        from ..plots import plot_report  # matplotlib only when a figure is asked for

        return plot_report(self, size=size)

    def summary(self) -> str:
        """A few lines for people (the CLI prints them to stderr): the verdict, then a block per test."""
        return "\n".join(summary_lines(self))


#: The report's own fields that are flat keys themselves (the rest are parts).
_OWN_KEYS = tuple(f.name for f in fields(AuditReport) if f.name not in PARTS)


def _flat_property(part: str, key: str) -> property:
    return property(lambda self: getattr(getattr(self, part), key), doc=f"``{key}``: ``report.{part}.{key}``.")


def _add_flat_attributes() -> None:
    """Make each part's keys read-only attributes of the report; the parts and :data:`FLAT_KEYS` must agree."""
    owned = [*_OWN_KEYS] + [k for part in PARTS.values() for k in part.keys()]
    if sorted(owned) != sorted(FLAT_KEYS):
        raise TypeError(f"AuditReport: the parts' keys and FLAT_KEYS differ: {sorted(set(owned) ^ set(FLAT_KEYS))}")
    for name, part in PARTS.items():
        for key in part.keys():
            setattr(AuditReport, key, _flat_property(name, key))


_add_flat_attributes()
