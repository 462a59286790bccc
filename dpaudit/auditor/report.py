"""The audit report: a frozen record that echoes its inputs and round-trips through JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields

from ..stats.bayes import format_confidence
from ._display import RocCurve, report_html

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
    #: None, or the certified point above the claimed curve where the margin is largest:
    #: ``delta``, ``epsilon_lower_bound`` (certified there), ``claimed_epsilon`` (the curve's there), ``margin``...
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
        return (f"AuditReport(verdict={self.verdict!r}, epsilon_lower_bound={self.epsilon_lower_bound:.4g}, "
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
        """A few lines for people (the CLI prints them to stderr)."""
        lines = [
            f"target      {self.target} ({'seeded' if self.seeded else 'UNSEEDED: not reproducible'};"
            f" {self.output_kind} output)",
            f"verdict     {self.verdict.upper()}: epsilon >= {self.epsilon_lower_bound:.4f} with "
            f"{format_confidence(self.confidence)} confidence; claimed epsilon = {self.claimed_epsilon:g}"
            + (f", delta = {self.claimed_delta:g}" if self.claimed_delta else ""),
        ]
        if self.claim is not None:
            where = ("largest margin over the curve" if self.curve_violation else
                     "the point of the curve the audit came closest to")
            lines.append(f"claim       {self.claim}: reported at delta = {self.claimed_delta:g} ({where})")
        if self.violation:
            lines.append(f"            the claim is exceeded by at least {self.epsilon_lower_bound - self.claimed_epsilon:.4f}"
                         f" (a factor e^{self.epsilon_lower_bound - self.claimed_epsilon:.3f} ="
                         f" {_safe_exp(self.epsilon_lower_bound - self.claimed_epsilon):.3g} in probability)")
        if self.floating_point and self.floating_point["attack"] == self.attack:  # the float attack was asked for
            lines.append(f"float       {self.attack} is the audit's attack: the bound above comes from the bit "
                         "patterns the releases can take (audit with attack auto or --ideal for the distribution)")
        elif self.floating_point:
            fp = self.floating_point
            lines.append(f"float       {fp['attack']}: epsilon >= {fp['epsilon_lower_bound']:.4f} from the bit patterns "
                         f"the releases can take; the distribution alone gives "
                         f"{self.distribution_epsilon_lower_bound:.4f}")
        if self._sides_differ():
            lines.append(f"samples     {self.samples_in} IN and {self.samples_out} OUT (fixed size)")
        elif self.anytime is not None:
            lines.append(f"samples     {self.samples} per side seen in {self.rounds} looks of an anytime-valid audit "
                         + (f"(budget {self.max_samples})" if self.max_samples is not None else "(until the stream ended)")
                         + f"; stopped: {self._stop_text()}; the bound holds whenever it "
                         f"stops (e-value {self.anytime['e_value']:.3g}, threshold {self.anytime['threshold']:.3g})")
        elif self.stopping_reason == "fixed":
            lines.append(f"samples     {self.samples} per side (fixed size)")
        else:
            lines.append(f"samples     {self.samples} per side in {self.rounds} round{'s' * (self.rounds != 1)}"
                         f" of a sequential audit (budget {self.max_samples}); stopped: {self._stop_text()}")
        lines += [
            f"ceiling     {self.ceiling:.3f} (the most {self._held_out_text()} could certify)",
            f"attack      {self.attack} [{self.estimator}]; event: {self.event}",
            f"rates       TPR {self.tpr:.5g} in [{self.tpr_interval[0]:.5g}, {self.tpr_interval[1]:.5g}], "
            f"FPR {self.fpr:.5g} in [{self.fpr_interval[0]:.5g}, {self.fpr_interval[1]:.5g}] "
            + (f"({self._held_out_text()})" if self.certificate != "poisson-conditional" else
               f"({self.tp + self.fn} and {self.fp + self.tn} held-out samples, a Poisson number per side: "
               "certified by the exact conditional test of their ratio)"),
            f"GDP         mu >= {self.gdp_mu_lower_bound:.4f}",
            f"meaning     {self.explanation}",
        ]
        if self.anytime is not None:  # rates of events re-chosen along the way: shown, not certified one by one
            lines[-3:-1] = [f"rates       {self.tpr:.4g} and {self.fpr:.4g} of the {self.n_test} pairs bet on fell "
                            "in the events bet on (D's side first)"]
        lines += [f"note        {n}" for n in self.notes]
        return "\n".join(lines)


def _safe_exp(x: float) -> float:
    import math

    return math.exp(min(x, 700.0))
