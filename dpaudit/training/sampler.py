"""Does the data loader sample as the accountant assumes?  Recorded batches tested against Poisson sampling.

DP-SGD accountants (Abadi et al. 2016; dp-accounting's PLD accountant) assume *Poisson sampling*:
at every step each of the n records is in the batch independently with probability q.  Loaders
often do something else: fixed-size batches of a shuffled epoch (Chua et al. 2024; Annamalai et
al. 2024), fixed-size uniform batches, a weighted sampler (Opacus #813), or the right mechanism at
another rate.  :func:`audit_sampler` reads the batches a loop actually drew and tests them against
Poisson(q) directly; that is cheap and, unlike an audit of the trained models, needs no luck.

Under Poisson(q) over T steps the batch sizes are i.i.d. Binomial(n, q), the per-record counts
(how many batches hold each record) are i.i.d. Binomial(T, q), and every (step, record) pair is an
independent Bernoulli(q).  Six statements are made, each at failure probability
``(1 - confidence) / 6`` (Bonferroni), so the whole report holds at ``confidence``:

1. *rate*: the total count is Binomial(nT, q); an exact two-sided binomial test (its Clopper-Pearson
   interval is the measured overall rate);
2. *batch sizes*: the squared deviations ``(size - nq)^2`` have mean ``nq(1-q)``; fixed-size batches
   make their sum far too small.  Maurer's (2003) bound for the lower tail of a sum of independent
   non-negative variables, ``P(S <= E S - t) <= exp(-t^2 / (2 sum E Y^2))``, with the binomial's
   fourth central moment, is exact arithmetic, no approximation;
3. *most sampled record*: under Poisson the largest count of n i.i.d. Binomial(T, q) counts has
   ``P(max >= m) = 1 - F(m - 1)^n``; a weighted sampler's favoured record exceeds it;
4. *least sampled record*: ``P(min <= m) = 1 - (1 - F(m))^n``: records never sampled;
5. *count regularity* (independence across steps): shuffled epochs put each record in exactly one
   batch per epoch, so the counts vary far less than Binomial(T, q); Maurer's bound again, on
   ``(count - Tq)^2``;
6. ``measured_rate_max``: the Clopper-Pearson upper limit of the most sampled record's rate.  It
   bounds the largest per-record rate of any sampler whose steps are independent (the record with
   the largest rate has its count at most the largest count, so no union over records is needed).

A record twice in one batch is a departure no statistics is needed for (Poisson never does it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_confidence, check_delta, check_int, check_probability, check_real
from ..exceptions import ParameterTypeError, ParameterValueError
from ..stats.verdict import verdict_of

__all__ = ["TESTS", "SamplerReport", "SamplerTest", "audit_sampler", "batch_counts"]

#: The statements a report makes; the failure probability is split equally among them (Bonferroni).
TESTS = ("rate", "batch sizes", "most sampled record", "least sampled record", "count regularity",
         "largest per-record rate")


@dataclass(frozen=True)
class BatchCounts:
    """What the tests read of the batches: per-step sizes, per-record counts, and repeats within a batch."""

    sizes: np.ndarray            #: (T,) distinct records per step
    counts: np.ndarray           #: (n,) steps whose batch holds each record
    repeated_steps: int          #: steps whose batch holds some record more than once
    first_repeat: tuple | None   #: (step, record) of the first repeat seen


def batch_counts(batches, n_records: int) -> BatchCounts:
    """Read ``batches`` (an iterable of index arrays, one per step, or a boolean mask ``(T, n)``) once.

    Indices may be any integer-valued array-likes (lists, numpy arrays, torch tensors).

    >>> c = batch_counts([[0, 2], [2], []], 3)
    >>> c.sizes.tolist(), c.counts.tolist()
    ([2, 1, 0], [1, 0, 2])
    """
    n = check_int(n_records, "n_records", low=1)
    if isinstance(batches, (str, bytes)) or not isinstance(batches, (Iterable, np.ndarray)):
        raise ParameterTypeError(f"batches must be an iterable of index arrays (one per step); got {batches!r:.80}")
    if isinstance(batches, np.ndarray) and batches.dtype == bool:
        if batches.ndim != 2 or batches.shape[1] != n:
            raise ParameterValueError(f"batches: a boolean mask must have shape (steps, n_records={n}); "
                                      f"got {batches.shape}")
        return BatchCounts(batches.sum(axis=1).astype(np.int64), batches.sum(axis=0).astype(np.int64), 0, None)
    sizes, counts = [], np.zeros(n, dtype=np.int64)
    repeated, first = 0, None
    for t, batch in enumerate(batches):
        idx = np.asarray(batch).ravel()
        if idx.size and not np.issubdtype(idx.dtype, np.integer):
            as_int = idx.astype(np.int64) if np.issubdtype(idx.dtype, np.number) else None
            if as_int is None or not np.array_equal(as_int, idx):
                raise ParameterValueError(f"batches: step {t} holds {idx[:5].tolist()!r}...; expected record indices "
                                          "(integers)")
            idx = as_int
        idx = idx.astype(np.int64, copy=False)
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            bad = int(idx[(idx < 0) | (idx >= n)][0])
            raise ParameterValueError(f"batches: step {t} holds index {bad}, outside [0, n_records={n})")
        uniq = np.unique(idx)
        if len(uniq) < len(idx):
            repeated += 1
            if first is None:
                vals, k = np.unique(idx, return_counts=True)
                first = (t, int(vals[k > 1][0]))
        counts[uniq] += 1
        sizes.append(len(uniq))
    if not sizes:
        raise ParameterValueError("batches: no steps; record at least one batch")
    return BatchCounts(np.asarray(sizes, dtype=np.int64), counts, repeated, first)


@dataclass(frozen=True)
class SamplerTest:
    """One test of the report: its statistic, exact p-value under Poisson(q), and its share of the failure probability."""

    name: str
    statistic: float
    expected: float
    p_value: float
    alpha: float

    @property
    def flagged(self) -> bool:
        return self.p_value <= self.alpha

    def to_dict(self) -> dict:
        return {"name": self.name, "statistic": self.statistic, "expected": self.expected,
                "p_value": self.p_value, "alpha": self.alpha, "flagged": self.flagged}


def _maurer_lower_p(total: float, terms: int, mean: float, second_moment: float) -> float:
    """``P(sum <= total)`` bound for ``terms`` i.i.d. non-negative variables (Maurer 2003)."""
    t = terms * mean - total
    if t <= 0 or second_moment <= 0:
        return 1.0
    return math.exp(-t * t / (2.0 * terms * second_moment))


def _binomial_moments(n: int, q: float) -> tuple[float, float]:
    """Variance and fourth central moment of Binomial(n, q)."""
    var = n * q * (1.0 - q)
    return var, var * (1.0 + 3.0 * (n - 2) * q * (1.0 - q))


def _tests(c: BatchCounts, n: int, q: float, alpha: float) -> tuple[SamplerTest, ...]:
    from scipy import stats

    steps = len(c.sizes)
    total = int(c.sizes.sum())
    lo, hi = stats.binom.cdf(total, n * steps, q), stats.binom.sf(total - 1, n * steps, q)
    rate = SamplerTest("rate", total / (n * steps), q, float(min(1.0, 2.0 * min(lo, hi))), alpha)
    var_b, m4_b = _binomial_moments(n, q)
    dev_b = float(((c.sizes - n * q) ** 2).sum())
    sizes = SamplerTest("batch sizes", dev_b / steps, var_b, _maurer_lower_p(dev_b, steps, var_b, m4_b), alpha)
    top, low = int(c.counts.max()), int(c.counts.min())
    # 1 - F(top - 1)^n and 1 - (1 - F(low))^n, through log1p so that tiny tails keep their digits
    p_top = -math.expm1(n * math.log1p(-min(1.0, float(stats.binom.sf(top - 1, steps, q))))) if top > 0 else 1.0
    cdf_low = float(stats.binom.cdf(low, steps, q))
    p_low = 1.0 if cdf_low >= 1.0 else -math.expm1(n * math.log1p(-cdf_low))
    most = SamplerTest("most sampled record", top, steps * q, p_top, alpha)
    least = SamplerTest("least sampled record", low, steps * q, p_low, alpha)
    var_c, m4_c = _binomial_moments(steps, q)
    dev_c = float(((c.counts - steps * q) ** 2).sum())
    regular = SamplerTest("count regularity", dev_c / n, var_c, _maurer_lower_p(dev_c, n, var_c, m4_c), alpha)
    return rate, sizes, most, least, regular


def _critical_count(steps: int, q: float, n: int, alpha: float) -> int:
    """The smallest m with P(max of n Binomial(steps, q) >= m) <= alpha."""
    from scipy import stats

    # 1 - F(m-1)^n <= alpha  <=>  F(m-1) >= (1 - alpha)^(1/n)
    return int(stats.binom.ppf((1.0 - alpha) ** (1.0 / n), steps, q)) + 1


def _findings(c: BatchCounts, n: int, q: float, tests, alpha: float, interval) -> list[str]:
    steps = len(c.sizes)
    rate, sizes, most, least, regular = tests
    out = []
    if c.repeated_steps:
        t, i = c.first_repeat
        out.append(f"{c.repeated_steps:,} of {steps:,} batches hold a record more than once (first: record {i} in "
                   f"step {t}), as sampling with replacement does; Poisson sampling never does")
    if rate.flagged:
        out.append(f"the rate is off by a factor {rate.statistic / q:.3g}: the batches hold {int(c.sizes.sum()):,} "
                   f"records where Poisson({q:g}) gives {n * steps * q:,.0f} on average (measured rate "
                   f"{rate.statistic:.4g}, {interval[0]:.4g}-{interval[1]:.4g})")
    if sizes.flagged:
        fixed = len(np.unique(c.sizes)) == 1
        out.append(f"batch sizes vary too little for Poisson sampling: mean squared deviation {sizes.statistic:.3g} "
                   f"from the expected {n * q:.3g}, where Binomial({n:,}, {q:g}) gives {sizes.expected:.3g}"
                   + (f" (every batch has {int(c.sizes[0])} records: fixed-size batches)" if fixed else ""))
    if most.flagged:
        i = int(np.argmax(c.counts))
        over = int((c.counts >= _critical_count(steps, q, n, alpha)).sum())
        always = " (in every batch)" if most.statistic == steps else ""
        out.append(f"record {i} is over-sampled: in {int(most.statistic):,} of {steps:,} batches{always} (rate "
                   f"{most.statistic / steps:.3g}, {most.statistic / (steps * q):.3g} times {q:g}); {over:,} "
                   f"record(s) in more batches than Poisson sampling allows at this confidence")
    if least.flagged:
        never = int((c.counts == 0).sum())
        i = int(np.argmin(c.counts))
        out.append(f"{never:,} record(s) were never sampled" if never else
                   f"record {i} is under-sampled: in {int(least.statistic):,} of {steps:,} batches where "
                   f"{steps * q:.3g} are expected")
    if regular.flagged:
        out.append(f"inclusion counts are too regular for independent steps: their variance across records is "
                   f"{regular.statistic:.3g} where Binomial({steps:,}, {q:g}) gives {regular.expected:.3g}"
                   + (" (each record in the same number of batches, as shuffled epochs do)"
                      if int(c.counts.max()) - int(c.counts.min()) <= 1 else ""))
    return out


@dataclass(frozen=True)
class SamplerReport:
    """What :func:`audit_sampler` found: the tests, a sentence per departure, the certified largest rate.

    ``findings`` holds one sentence per departure from Poisson(``rate``) sampling found at
    ``confidence`` (all statements of a report together); ``measured_rate_max`` is an upper
    confidence limit of the largest per-record inclusion rate.  With a claim,
    ``epsilon_at_measured_rate`` is the accountant's epsilon at ``delta`` with the claim's rate
    replaced by ``measured_rate_max`` (``claimed_epsilon``: at the claim's own rate).
    """

    n_records: int
    steps: int
    rate: float
    confidence: float
    tests: tuple[SamplerTest, ...]
    findings: tuple[str, ...]
    measured_rate: float
    measured_rate_interval: tuple[float, float]
    measured_rate_max: float
    batch_size_mean: float
    batch_size_variance: float
    repeated_steps: int = 0
    claim: str | None = None
    delta: float | None = None
    claimed_epsilon: float | None = None
    epsilon_at_measured_rate: float | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def violation(self) -> bool:
        return bool(self.findings)

    @property
    def verdict(self) -> str:
        return verdict_of(self.violation)

    def summary(self) -> str:
        """The report for people: verdict, rates, and one line per finding."""
        q, n = self.rate, self.n_records
        lo, hi = self.measured_rate_interval
        lines = [f"sampler check: {self.verdict} (confidence {self.confidence:g} for the whole report, split over "
                 f"{len(TESTS)} statements by Bonferroni)",
                 f"  {self.steps:,} steps over {n:,} records, tested against Poisson sampling at rate {q:g} "
                 f"(expected batch {n * q:.4g})",
                 f"  measured rate {self.measured_rate:.4g} ({lo:.4g}-{hi:.4g}); largest per-record rate <= "
                 f"{self.measured_rate_max:.4g} (upper confidence limit)",
                 f"  batch sizes: mean {self.batch_size_mean:.4g}, variance {self.batch_size_variance:.4g} "
                 f"(Poisson: {n * q:.4g}, {n * q * (1 - q):.4g})"]
        if self.findings:
            lines.append("  findings:")
            lines += [f"    - {f}" for f in self.findings]
        if self.claim is not None:
            lines.append(f"  claim {self.claim}: epsilon {self.claimed_epsilon:.4g} at delta {self.delta:g} at its "
                         f"rate; {self.epsilon_at_measured_rate:.4g} at the measured rate {self.measured_rate_max:.4g}")
        lines += [f"  note: {s}" for s in self.notes]
        return "\n".join(lines)

    __str__ = summary

    @classmethod
    def from_dict(cls, d: dict) -> SamplerReport:
        """The report back from :meth:`to_dict` (or ``dpaudit sampler --json``)."""
        tests = tuple(SamplerTest(t["name"], t["statistic"], t["expected"], t["p_value"], t["alpha"])
                      for t in d["tests"])
        return cls(d["n_records"], d["steps"], d["rate"], d["confidence"], tests, tuple(d["findings"]),
                   d["measured_rate"], tuple(d["measured_rate_interval"]), d["measured_rate_max"],
                   d["batch_size_mean"], d["batch_size_variance"], d["repeated_steps"], d["claim"], d["delta"],
                   d["claimed_epsilon"], d["epsilon_at_measured_rate"], tuple(d["notes"]))

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "measured_rate_max": self.measured_rate_max, "findings": list(self.findings),
                "rate": self.rate, "n_records": self.n_records, "steps": self.steps, "confidence": self.confidence,
                "measured_rate": self.measured_rate, "measured_rate_interval": list(self.measured_rate_interval),
                "batch_size_mean": self.batch_size_mean, "batch_size_variance": self.batch_size_variance,
                "repeated_steps": self.repeated_steps, "tests": [t.to_dict() for t in self.tests],
                "claim": self.claim, "delta": self.delta, "claimed_epsilon": self.claimed_epsilon,
                "epsilon_at_measured_rate": self.epsilon_at_measured_rate, "notes": list(self.notes)}


def _dpsgd_claim(claim):
    from ..claims import DPSGDClaim, parse_claim

    c = parse_claim(claim) if isinstance(claim, str) else claim
    if not isinstance(c, DPSGDClaim):
        raise ParameterValueError(f"claim must be a DP-SGD claim 'dpsgd:noise=SIGMA,rate=Q,steps=T' (its rate is "
                                  f"replaced by the measured one); got {str(claim)!r}")
    return c


def _stated_rate(rate, batch_size, n: int, claim) -> float:
    given = {}
    if rate is not None:
        given["rate"] = check_probability(rate, "rate", low_inclusive=False)
    if batch_size is not None:
        b = check_real(batch_size, "batch_size", low=0.0, high=float(n), low_inclusive=False)
        given["batch_size"] = b / n
    if claim is not None:
        given["claim"] = claim.rate
    if not given:
        raise ParameterValueError("rate: a sampling rate is required (rate, batch_size, the expected batch size, or a "
                                  "dpsgd: claim)")
    values = set(given.values())
    if max(values) - min(values) > 1e-12 * max(values):
        parts = ", ".join(f"{k} gives {v:g}" for k, v in given.items())
        raise ParameterValueError(f"rate: the stated rates differ ({parts}); give one")
    return next(iter(given.values()))


def audit_sampler(batches, n_records: int, *, rate=None, batch_size=None, confidence: float = 0.95, claim=None,
                  delta: float = 1e-5) -> SamplerReport:
    """Test the batches a training loop drew against Poisson sampling at ``rate``.

    Parameters
    ----------
    batches : iterable of array_like of int, or bool ndarray (steps, n_records)
        The record indices of each step's batch, over one or more epochs (a torch
        ``DataLoader``'s ``batch_sampler``, any iterator, a list of lists), or a mask.
    n_records : int
        The dataset's size n: indices are in ``[0, n)``.
    rate : float, optional
        The sampling rate q the accountant assumes.
    batch_size : float, optional
        The expected batch size instead (``rate = batch_size / n_records``).
    confidence : float
        For the whole report: each of the :data:`TESTS` gets ``(1 - confidence) / 6``.
    claim : str or DPSGDClaim, optional
        ``dpsgd:noise=SIGMA,rate=Q,steps=T``: the accountant's epsilon at ``delta`` is reported
        at its rate and at ``measured_rate_max``; its rate is the stated rate when none is given.
    delta : float
        The delta the claim's epsilons are read at.

    Returns
    -------
    SamplerReport

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> poisson = [np.flatnonzero(rng.random(1000) < 0.01) for _ in range(1500)]
    >>> audit_sampler(poisson, 1000, rate=0.01).verdict
    'no violation found'
    >>> shuffled = [p for _ in range(15) for p in rng.permutation(1000).reshape(100, 10)]
    >>> rep = audit_sampler(shuffled, 1000, rate=0.01)
    >>> rep.verdict, len(rep.findings)
    ('violation', 2)
    """
    n = check_int(n_records, "n_records", low=1)
    confidence = check_confidence(confidence)
    delta = check_delta(delta)
    dpsgd = _dpsgd_claim(claim) if claim is not None else None
    q = _stated_rate(rate, batch_size, n, dpsgd)
    c = batch_counts(batches, n)
    alpha = (1.0 - confidence) / len(TESTS)
    tests = _tests(c, n, q, alpha)
    from ..stats.clopper_pearson import cp_lower, cp_upper

    steps, total = len(c.sizes), int(c.sizes.sum())
    interval = (float(cp_lower(total, n * steps, alpha / 2)), float(cp_upper(total, n * steps, alpha / 2)))
    rate_max = float(cp_upper(int(c.counts.max()), steps, alpha))
    extra = {}
    if dpsgd is not None:
        from ..claims import DPSGDClaim

        at_measured = DPSGDClaim(dpsgd.noise, rate_max, dpsgd.steps)
        extra = {"claim": dpsgd.spec, "delta": delta, "claimed_epsilon": float(dpsgd.epsilon(delta)),
                 "epsilon_at_measured_rate": float(at_measured.epsilon(delta))}
    notes = ()
    if steps * q < 1:
        notes = (f"{steps:,} steps at rate {q:g} put each record in fewer than one batch on average: the per-record "
                 "tests see little; record more steps",)
    return SamplerReport(n, steps, q, confidence, tests, tuple(_findings(c, n, q, tests, alpha, interval)),
                         total / (n * steps), interval, rate_max, float(c.sizes.mean()), float(c.sizes.var()),
                         c.repeated_steps, notes=notes, **extra)
