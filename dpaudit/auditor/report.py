"""The audit report: a frozen record that echoes its inputs and round-trips through JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields

from ._display import RocCurve, report_html
from ._summary import summary_lines

__all__ = ["AuditReport", "TIMING_FIELDS"]

#: Fields that depend on the machine, not the seed; excluded from equality checks.
TIMING_FIELDS = ("elapsed_seconds",)


@dataclass(frozen=True)
class AuditReport:
    """Result of :func:`dpaudit.audit`; attribute names are the keys of ``dpaudit audit --json``.

    ``epsilon_lower_bound`` is valid with probability ``confidence`` for the
    mechanism on this pair of datasets (at ``claimed_delta``); ``ceiling`` is
    the most these sample sizes could have certified, so "no violation found"
    means nothing above it.

    ``print(report)`` shows the human summary (:meth:`summary`); in a notebook
    the report draws itself as a table; ``report.roc.fpr`` and
    ``report.roc.tpr`` are numpy arrays (``to_dict()`` gives lists).
    """

    epsilon_lower_bound: float
    claimed_epsilon: float
    claimed_delta: float
    confidence: float
    samples: int
    attack: str
    seed: int
    verdict: str
    ceiling: float
    estimator: str
    target: str
    seeded: bool
    output_kind: str
    output_shape: list
    event: str
    threshold: float
    direction: str
    tp: int
    fn: int
    fp: int
    tn: int
    tpr: float
    fpr: float
    tpr_interval: list
    fpr_interval: list
    n_calibration: int
    n_test: int
    gdp_mu_lower_bound: float
    privacy_profile: dict
    roc: dict
    posterior: dict
    explanation: str
    notes: list = field(default_factory=list)
    rounds: int = 1
    stopping_reason: str = "fixed"
    max_samples: int | None = None
    #: Seconds a sequential audit was allowed (``--time-budget``), or None.
    time_budget: float | None = None
    trajectory: dict = field(default_factory=dict)
    floating_point: dict | None = None
    distribution_epsilon_lower_bound: float | None = None
    ideal: bool = False
    #: How the bound was certified from held-out counts: "clopper-pearson"
    #: (two one-sided intervals on all ``n_test`` releases per side) or
    #: "poisson-conditional" (one exact test on Poisson-sized held-out sets of
    #: ``tp + fn`` and ``fp + tn`` releases).
    certificate: str = "clopper-pearson"
    version: str = ""
    elapsed_seconds: float = 0.0
    #: The claim as given (``--claim`` / ``claim=``), or None for ``epsilon``/``delta``.
    claim: str | None = None
    #: None, or the witness of a violation (the crossed point of largest factor in delta, see
    #: :meth:`dpaudit.stats.curves.CurveTest.witness_index`): ``delta``, ``epsilon_lower_bound`` (certified there),
    #: ``claimed_epsilon`` (the curve's there), ``certified_delta``, ``delta_factor``, ``margin`` (the largest)...
    curve_violation: dict | None = None
    #: The claimed curve and the certified one on up to 40 of the claim's deltas (one point for a point claim).
    claim_curve: dict | None = None
    #: Score audits (:func:`dpaudit.audit_scores`), whose sides may differ in size: the IN and OUT counts
    #: and how many of each certify (held out); None for an audit, which draws the same number per side.
    samples_in: int | None = None
    samples_out: int | None = None
    n_test_in: int | None = None
    n_test_out: int | None = None
    #: True when the audit was interrupted (Ctrl-C) and reports the sequential rounds finished before it,
    #: with ``stopping_reason`` "budget": the bound holds as at any round.
    interrupted: bool = False
    #: Score audits: the TPR on the held-out scores at thresholds chosen on the selection split for FPR 0.001,
    #: 0.01 and 0.1, and the held-out AUC, each with an exact interval (:mod:`dpaudit.stats.score_metrics`);
    #: None for an audit of a target.
    tpr_at_fpr: list | None = None
    auc: dict | None = None
    #: A grey-box audit's analysis (``grey_box=True``; :class:`dpaudit.greybox.GreyBoxResult` as a dict), else None.
    grey_box: dict | None = None
    #: "grey-box" (the exact upper bound exceeds the claim), "black-box" (a certified lower bound does), or None.
    violation_source: str | None = None
    #: "planned" (rounds fixed before drawing) or "anytime" (e-processes: the bound holds at every look).
    stopping: str = "planned"
    #: An anytime audit's stream: ``valid_at_any_time``, ``releases_seen``, ``looks``, ``batch``, ``e_value``
    #: (at the reported point of the claim), ``threshold`` (1/alpha, shared among the points tested), ...; else None.
    anytime: dict | None = None

    def __post_init__(self):
        if not isinstance(self.roc, RocCurve):
            object.__setattr__(self, "roc", RocCurve(self.roc))

    @property
    def violation(self) -> bool:
        return self.verdict == "violation"

    def to_dict(self) -> dict:
        out = asdict(self)
        out["roc"] = self.roc.to_dict()
        return out

    def to_json(self, **kw) -> str:
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_dict(cls, d: dict) -> "AuditReport":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

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

    def _sides_differ(self) -> bool:
        """Whether the two sides had different sizes (a score audit with more IN than OUT scores, say)."""
        return self.samples_out is not None and (self.samples_in, self.n_test_in) != (self.samples_out,
                                                                                     self.n_test_out)

    def _held_out_text(self, sep: str = "") -> str:
        """How many held-out samples certify (both sides' counts when they differ); ``sep=","`` groups digits."""
        if self._sides_differ():
            return f"{self.n_test_in:{sep}} IN and {self.n_test_out:{sep}} OUT held-out samples"
        return f"{self.n_test:{sep}} held-out samples per side"

    def _stop_text(self) -> str:
        """The stopping reason for people: which budget, when a budget stopped the audit."""
        if self.stopping_reason != "budget":
            return self.stopping_reason
        if self.interrupted:
            return "budget (interrupted by hand: the rounds finished before it are reported)"
        if self.time_budget is not None and (self.max_samples is None or self.samples < self.max_samples):
            return f"budget (the time budget, {self.time_budget:g} s, before the sample budget)"
        return "budget (the sample budget)"

    def summary(self) -> str:
        """A few lines for people (the CLI prints them to stderr): the verdict, then a block per test."""
        return "\n".join(summary_lines(self))
