"""Find the pair, then audit it: :func:`search`.

An audit certifies a lower bound on the privacy loss *between the two datasets
it is given*; the mechanism's epsilon is the worst case over all neighbouring
pairs.  Searching for that pair is what DP-Sniper, StatDP and DP-Auditorium do
before they test, and it is what this module does, in three steps:

1. **Screen.**  Candidate pairs inside the declared domain
   (:func:`dpaudit.pairs.candidate_pairs`: StatDP's and DP-Sniper's patterns,
   records at the ends of the range, random pairs) are each scored on a small
   sample by the audit's own calibration (:func:`screen_pair`: the
   distinguishers of ``attack="auto"`` fitted on one half, the event chosen on
   the other by the claim's certificate), ranked by the bound the event would
   give at the final audit's size, penalised for its noise.  A local search
   then moves the best pairs towards larger scores, and the leaders are
   screened again on larger samples (:mod:`dpaudit.pair_search_steps`).
2. **Keep the best** ``finalists`` pairs (default 1).
3. **Audit them on fresh samples**: each finalist gets one full
   :func:`dpaudit.audit` seeded from a stream the search never drew from
   (``SeedSequence(seed, spawn_key=(1, j))``; screening uses ``(0, stage, level)``, one stream
   shared by every pair of a stage: common random numbers).

Why the bound holds whatever the search did: the screening samples only choose
*which* pair is audited; given that choice, the final audit's samples are
independent of it, so its bound is valid for that pair at its confidence, and
the pair is neighbouring, so the pair's epsilon is at most the mechanism's.
With ``k`` finalists each is audited at confidence ``1 - (1 - C) / k`` and the
largest bound is reported: by the union bound all ``k`` hold together with
probability at least ``C`` (Bonferroni).

Cost: by default screening draws about as many releases as the final
audit (``screen_samples`` per side per candidate, ``max_candidates``
candidates); ``budget`` bounds the screening time in seconds.  A search
stopped by the budget depends on the machine's speed; its bound stays valid.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._progress import progress_wanted
from ._rng import as_seed_sequence, seed_entropy
from .pair_search_screen import (MIN_PROJECTED_COUNT, POOL_PER_OUTCOME, SCREEN_CONFIDENCE, SCREEN_PENALTY,
                                 STRUCTURE_ATTACKS, point_certificate, screen_pair)
from .pair_search_steps import (MAX_PATTERNS_REFINED, PATTERN_RANK_LIMIT, QUICK_SAMPLES, REFINE_LEVELS, Screener,
                                ScreenSettings, distinct_rows, run_screening, screening_sizes)
from .pairs import Domain, compare_pair
from .params import SEARCH_OPTIONS

__all__ = ["search", "SearchReport", "screen_pair", "SCREEN_CONFIDENCE", "STRUCTURE_ATTACKS", "MIN_PROJECTED_COUNT",
           "SCREEN_PENALTY", "POOL_PER_OUTCOME", "REFINE_LEVELS", "QUICK_SAMPLES", "MAX_PATTERNS_REFINED",
           "PATTERN_RANK_LIMIT", "PROGRESS_EVERY", "SCREEN_BASIS_CAP", "TABLE_ROWS"]

#: Seconds between progress lines on stderr (read when a search starts).
PROGRESS_EVERY = 5.0
#: The screening is sized (and its scores projected) on at most this many final releases per side: a
#: cap meant as "no limit" (``--max-samples 1e19``) would otherwise screen for ever.
SCREEN_BASIS_CAP = 10**8
#: Rows of the screening table kept in the report (best first).
TABLE_ROWS = 25


def _audit_function():
    from .auditor import audit

    return audit


def _default_final_samples(vectorised: bool) -> int:
    """Releases per side the final audit draws at most when ``max_samples`` is not given."""
    from . import auditor

    return int(auditor.DEFAULT_SAMPLES_VECTORISED if vectorised else auditor.DEFAULT_SAMPLES_PER_CALL)


# ----------------------------------------------------------------------------- the report
@dataclass(frozen=True)
class SearchReport:
    """Result of :func:`search`: the final audit plus the pair it was run on.

    Attribute names are the JSON keys: every field of the final
    :class:`~dpaudit.AuditReport` (``epsilon_lower_bound``, ``verdict``, ...;
    read through to ``audit``) plus ``dataset``, ``neighbor`` and
    ``candidates_screened``.  ``confidence`` is the stated confidence of the
    whole procedure; with several finalists each audit ran at
    ``finalist_confidence``.  ``seed`` is the search's own (the one given, or the one drawn): it
    reproduces the whole search, the final audit's included; each finalist's audit seed, derived
    from it, is in ``finalists``.
    """

    audit: Any
    dataset: list
    neighbor: list
    candidates_screened: int
    confidence: float
    finalist_confidence: float
    domain: dict
    origin: str
    difference: str
    finalists: list
    screening: list
    screen_samples: int
    stopping: str
    search_seconds: float
    budget: float | None = None
    notes: list = field(default_factory=list)
    seed: int | None = None
    #: Screenings done, repeats of a pair included (``candidates_screened`` counts distinct pairs).
    screenings: int | None = None
    #: True when the search was interrupted (Ctrl-C) during its final audits: the finished audits and the
    #: interrupted one's finished rounds are reported (an audit's own ``interrupted`` says which).
    interrupted: bool = False
    #: What the screening drew: ``releases_per_side`` (summed over the black-box screenings) and
    #: ``grey_box_calls`` (target calls, one release each, of the grey-box screenings).
    screening_draws: dict = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not fields: the audit's attributes.
        if name.startswith("_") or name == "audit":
            raise AttributeError(name)
        return getattr(self.audit, name)

    @property
    def violation(self) -> bool:
        return self.audit.verdict == "violation"

    @property
    def verdict(self) -> str:
        """The final audit's verdict (declared, not only read through, so the :class:`~dpaudit.Report` check sees it)."""
        return self.audit.verdict

    @property
    def epsilon_lower_bound(self) -> float:
        return self.audit.epsilon_lower_bound

    def to_dict(self) -> dict:
        out = dict(self.audit.to_dict())
        out["confidence"] = self.confidence
        if self.seed is not None:
            out["seed"] = self.seed
        out["notes"] = list(out.get("notes") or []) + list(self.notes)
        out["dataset"] = list(self.dataset)
        out["neighbor"] = list(self.neighbor)
        out["candidates_screened"] = self.candidates_screened
        out["interrupted"] = bool(self.interrupted or out.get("interrupted"))
        out["search"] = {
            "domain": self.domain,
            "origin": self.origin,
            "difference": self.difference,
            "finalists": self.finalists,
            "finalist_confidence": self.finalist_confidence,
            "screen_samples": self.screen_samples,
            "screenings": self.screenings,
            "stopping": self.stopping,
            "budget": self.budget,
            "search_seconds": self.search_seconds,
            "screening": self.screening,
            "screening_draws": self.screening_draws,
        }
        return out

    def __repr__(self) -> str:
        return (f"SearchReport(verdict={str(self.audit.verdict)!r}, epsilon_lower_bound="
                f"{self.audit.epsilon_lower_bound:.4g}, dataset={self.dataset}, neighbor={self.neighbor}, "
                f"candidates_screened={self.candidates_screened}, confidence={self.confidence!r})")

    def summary(self) -> str:
        """Lines for people: the search, the pair, then the audit's own summary."""
        k = len(self.finalists)
        lines = [
            f"search      {self.candidates_screened} distinct candidate pairs screened{self._repeats_text()} in "
            f"{self.search_seconds:.1f} s "
            f"({self.domain['relation']}, {self.domain['size']} records in [{self.domain['low']:g}, "
            f"{self.domain['high']:g}]{', integers' if self.domain['integer'] else ''}; {_STOPPING.get(self.stopping, self.stopping)})",
            f"pair        {_short(self.dataset)} vs {_short(self.neighbor)} ({self.origin}; {self.difference})",
            f"finalists   {k} audited on fresh samples" + (
                f", each at confidence {self.finalist_confidence:.4g} (Bonferroni)"
                if self.finalist_confidence != self.confidence else ""),
        ]
        text = self.audit.summary() if hasattr(self.audit, "summary") else str(self.audit)
        return "\n".join(lines + [text] + [f"note        {n}" for n in self.notes])

    def _repeats_text(self) -> str:
        """`` (N screenings)`` when screenings outnumber the distinct pairs, else nothing."""
        if self.screenings is None or self.screenings == self.candidates_screened:
            return ""
        return f" ({self.screenings} screenings: a pair is screened again on larger samples, or revisited)"

    def __str__(self) -> str:
        return self.summary()


_STOPPING = {"candidates": "every planned candidate screened", "budget": "stopped by the time budget",
             "exceeded": "stopped early: a pattern already exceeded the claim"}


def _short(values: list, limit: int = 12) -> str:
    shown = ", ".join(f"{v:g}" for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"


# ----------------------------------------------------------------------------- the search
@SEARCH_OPTIONS.validates
def search(
    target,
    *,
    epsilon=None,
    delta=0.0,
    claim=None,
    size,
    low,
    high,
    integer=False,
    relation="replace-one",
    budget=None,
    samples=None,
    max_samples=None,
    confidence=0.95,
    seed=None,
    attack="auto",
    ideal=False,
    n_jobs=1,
    backend="loky",
    scheduler=None,
    estimator="clopper-pearson",
    time_budget=None,
    finalists=1,
    screen_samples=None,
    max_candidates=None,
    timeout=None,
    progress=None,
    keep_drawing=False,
    grey_box=False,
    traces=1000,
    sensitivity=None,
    stopping="planned",
):
    """Search the declared input domain for the pair that leaks most, then audit it on fresh samples.

    Parameters
    ----------
    target : str or callable
        As for :func:`dpaudit.audit`; it receives 1-D datasets of the domain.
    epsilon, delta : float
        The claimed budget (omit them when ``claim`` is given).
    claim : str, Claim or dp_accounting DpEvent, optional
        A claimed curve, as for :func:`dpaudit.audit`: the final audit tests
        the whole curve at ``confidence``; the screening ranks pairs at one
        point of it (the claim's reference point, delta 1e-5 for a computed curve).
    size : int
        Records per dataset (under ``add-remove`` the smaller has ``size - 1``).
    low, high : float
        Every record lies in ``[low, high]``.
    integer : bool
        Records are integers.
    relation : {"replace-one", "add-remove", "linf"}
        Which pairs are neighbours: one record changed; one record added or
        removed; every coordinate moved by at most 1 (query answers of
        sensitivity 1, as in DP-Sniper and StatDP).
    budget : float, optional
        Seconds the screening may take (default: no time limit; the default
        sizes keep it near the final audit's cost).
    samples : int, optional
        A fixed-size final audit of exactly ``samples`` releases per side
        (then the screening always runs in full, for the strongest pair).
    max_samples : int, optional
        Budget of the sequential final audit in releases per side (default:
        the audit's).  A sequential search first screens the fixed patterns
        on 1,000 releases per side and, when one already exceeds the claim,
        audits the best of them at once.
    confidence : float
        Probability that the reported bound is below the mechanism's true
        epsilon, whatever the search did.
    seed : int, optional
        Seed of everything (screening and final audits use disjoint streams).
    attack : str
        Distinguisher of the final audit (screening always uses the cheap ones).
    ideal : bool
        Audit the mechanism as mathematics (no floating-point attacks in the final audit).
    n_jobs : int
        Workers of the final audit; the result does not depend on it.
    backend, scheduler
        Where the final audit's chunks are drawn and counted, as for
        :func:`dpaudit.audit` (the screening runs in this process).
    estimator : {"clopper-pearson", "gdp"}
        The final audit's certificate, as for :func:`dpaudit.audit`.
    time_budget : float, optional
        Time limit of a sequential final audit in seconds (``budget`` limits the screening).
    finalists : int
        Pairs audited at the end, each at confidence ``1 - (1 - confidence) / finalists``.
    screen_samples : int, optional
        Releases per side per screened pair (default: 1% of the final audit's,
        between 1,000 and 20,000).
    max_candidates : int, optional
        Pairs screened at most (default: as many as keep the screening's draws
        near those of the final audit).
    timeout : float, optional
        Seconds allowed per target call.
    progress : bool, optional
        Print a line on stderr every few seconds (default: when stderr is a terminal).
    keep_drawing : bool
        The final audit draws on to its budget after certifying a violation, as
        :func:`dpaudit.audit`'s ``keep_drawing``.
    grey_box, traces, sensitivity
        The final audits are grey-box audits too, as :func:`dpaudit.audit`'s,
        and the screening ranks a pair that a few traces settle exactly by its
        exact epsilon (:mod:`dpaudit.greybox.screen`), screening the others
        black-box.
    stopping : {"planned", "anytime"}
        How the final audit may stop, as :func:`dpaudit.audit`'s ``stopping``.

    Returns
    -------
    SearchReport

    Raises
    ------
    KeyboardInterrupt
        Passed on as raised, as by :func:`dpaudit.audit`.  Its ``audit_report``
        attribute is a :class:`SearchReport` (``interrupted=True``) of what the
        final audits certified (the finished ones and the sequential rounds the
        interrupted one finished); None when nothing was certified: interrupted
        while screening (the screening only chooses the pair), or before the
        final audit's first round (or a fixed-size one) finished.  Its
        ``search_progress`` dict says where: ``stage`` ("screening" or "final
        audit"), ``candidates_screened``, ``screenings``, ``max_candidates``,
        and ``dataset``/``neighbor``, the first finalist (None while screening).

    Examples
    --------
    >>> import numpy as np
    >>> def unclipped_sum(dataset, size=None, rng=None):      # forgets to clip to [0, 1]
    ...     return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)
    >>> r = search(unclipped_sum, epsilon=1.0, size=3, low=0, high=10, max_samples=20_000, seed=1)
    >>> r.verdict, r.epsilon_lower_bound > 3
    ('violation', True)
    >>> from dpaudit.pairs import compare_pair     # one record moved far across the range
    >>> d = compare_pair(r.dataset, r.neighbor); len(d.changed), d.linf > 5
    (1, True)
    """
    final_stopping = stopping
    from .claims import as_claim

    claim_obj = as_claim(claim, epsilon=epsilon, delta=delta)
    final_claim = {"claim": claim} if claim is not None else {"epsilon": epsilon, "delta": delta}
    # The screening ranks pairs at one point of the claim (a point claim's own).
    epsilon, delta = claim_obj.finite_point
    domain = Domain(size, low, high, integer=integer, relation=relation)
    from .stats.estimators import make_estimator

    make_estimator(estimator).check(delta=delta, claim=claim_obj)  # before the screening, not after it
    from .targets import load_target

    tgt = load_target(target)
    n_final = samples or max_samples or _default_final_samples(bool(tgt.vectorised))
    n_final = min(n_final, SCREEN_BASIS_CAP)  # what the screening plans for; the final audit keeps its own size
    screen_samples, levels, max_candidates = screening_sizes(n_final, screen_samples, max_candidates)

    entropy = seed_entropy(as_seed_sequence(seed))
    cand_rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(2,)))
    # Scores are projected to the final audit's held-out size (half its releases per side).
    screen = Screener(ScreenSettings(tgt, entropy, screen_samples, delta, budget, progress_wanted(progress),
                                     project_to=n_final // 2, grey_box=grey_box if tgt.accepts_rng else False,
                                     certificate=point_certificate(epsilon, delta), progress_every=PROGRESS_EVERY))
    try:
        chosen, early = run_screening(screen, domain, cand_rng, max_candidates=max_candidates, levels=levels,
                                      finalists=finalists, quick=samples is None and screen_samples > QUICK_SAMPLES,
                                      epsilon=epsilon)
    except KeyboardInterrupt as exc:
        _attach_progress(exc, "screening", screen, max_candidates)
        raise
    stopping = "budget" if screen.out_of_time else ("exceeded" if early else "candidates")
    search_seconds = screen.elapsed()

    # 4. Final audits on fresh samples, Bonferroni over the finalists.
    final_conf = 1.0 - (1.0 - confidence) / len(chosen)
    kwargs = dict(**final_claim, confidence=final_conf, attack=attack, ideal=ideal, estimator=estimator,
                  n_jobs=n_jobs, backend=backend, scheduler=scheduler, timeout=timeout,
                  **({"grey_box": grey_box, "traces": traces, "sensitivity": sensitivity} if grey_box else {}),
                  **_final_size(samples, max_samples, time_budget, stopping=final_stopping,
                                expect_violation=not early and chosen and chosen[0]["score"] > epsilon),
                  **({"keep_drawing": True} if keep_drawing else {}))
    report = functools.partial(_search_report, _SearchContext(tgt, screen, domain, confidence, final_conf, stopping,
                                                              search_seconds, budget, entropy))
    reports: list = []
    try:
        _final_audits(tgt, chosen, entropy, kwargs, reports)
    except KeyboardInterrupt as exc:
        # Not swallowed, as audit's: the interrupt goes on with the report of what the final audits certified.
        _attach_progress(exc, "final audit", screen, max_candidates, chosen[0])
        exc.audit_report = report(chosen[:len(reports)], reports, planned=len(chosen)) if reports else None
        raise
    return report(chosen, reports)


def _final_size(samples, max_samples, time_budget, *, expect_violation: bool, stopping="planned") -> dict[str, Any]:
    """The final audit's size keywords: ``samples`` fixes it, else it is sequential, as ``dpaudit audit``'s.

    A sequential audit may stop as "converged" when its first rounds see nothing, and a leak that
    shows in one release in a hundred can hide there.  When the screening expects the chosen pair to
    exceed the claim, the final audit stops only on a violation or its budget (``max_samples``,
    ``time_budget``), which it keeps as given (the screening is sized on at most
    :data:`SCREEN_BASIS_CAP`).  The choice depends on screening samples only, so the final samples stay fresh.
    """
    if samples is not None:
        return {"samples": samples}
    anytime = {"stopping": "anytime"} if stopping == "anytime" else {}  # the final audit's, as dpaudit audit's
    return {"max_samples": max_samples, "time_budget": time_budget, "stop_when_converged": not expect_violation,
            **anytime}


def _final_audits(tgt, chosen: list[dict], entropy: int, kwargs: dict, reports: list) -> None:
    """4. Each finalist audited on its own fresh seed stream, its report appended to ``reports``.

    Interrupted, ``reports`` holds the finished audits and then the interrupted one's finished rounds
    (when it has any): each finalist's bound holds at the Bonferroni confidence, so any of them do together.
    """
    audit = _audit_function()
    for j, r in enumerate(chosen):
        final_seed = int(np.random.SeedSequence(entropy, spawn_key=(1, j)).generate_state(1, np.uint64)[0]) >> 1
        try:
            reports.append(audit(tgt, r["dataset"], r["neighbor"], seed=final_seed, **kwargs))
        except KeyboardInterrupt as exc:
            if getattr(exc, "audit_report", None) is not None:
                reports.append(exc.audit_report)
            raise


def _attach_progress(exc: KeyboardInterrupt, stage: str, screen: Screener, max_candidates: int,
                     pair: dict | None = None) -> None:
    """Say on an interrupt where the search was stopped: ``exc.search_progress``, and ``exc.audit_report`` None
    unless a final audit certified something (set by the caller after this).

    The command line's one line of an interrupt that certified nothing names what was done with it.
    """
    exc.audit_report = None
    exc.search_progress = {
        "stage": stage, "candidates_screened": len(screen.pairs), "screenings": len(screen.rows),
        "max_candidates": max_candidates,
        "dataset": None if pair is None else np.asarray(pair["dataset"]).tolist(),
        "neighbor": None if pair is None else np.asarray(pair["neighbor"]).tolist()}


@dataclass(frozen=True)
class _SearchContext:
    """What a search's report reads besides its final audits: the target, the screening and the settings."""

    tgt: Any
    screen: Screener
    domain: Domain
    confidence: float
    final_conf: float
    stopping: str
    search_seconds: float
    budget: float | None
    seed: int


def _search_report(ctx: _SearchContext, chosen, reports, planned: int | None = None) -> SearchReport:
    """The report of the final audits in ``reports`` (of ``chosen``, in order).

    ``planned``: the search was interrupted during its final audits, of which ``planned`` were to run;
    ``reports`` are the finished ones and the interrupted one's finished rounds (the last may be partial).
    """
    # The finalist whose audit came closest to (or went furthest past) the claim; for a point claim: the largest bound.
    best_j = max(range(len(reports)), key=lambda j: (reports[j].violation, reports[j].epsilon_lower_bound
                                                     - reports[j].claimed_epsilon, reports[j].epsilon_lower_bound,
                                                     -j))
    winner, best_report = chosen[best_j], reports[best_j]
    final_rows = [{"dataset": r["dataset"].tolist(), "neighbor": r["neighbor"].tolist(), "origin": r["origin"],
                   "screen_score": r["score"], "epsilon_lower_bound": rep.epsilon_lower_bound, "seed": rep.seed}
                  for r, rep in zip(chosen, reports)]
    table = [{"origin": r["origin"], "stage": r["stage"], "dataset": r["dataset"].tolist(),
              "neighbor": r["neighbor"].tolist(), "score": r["score"], "bound": r["bound"], "attack": r["attack"],
              "samples": r["samples"]}
             for r in sorted(ctx.screen.rows, key=lambda r: -r["score"])[:TABLE_ROWS]]
    interrupted = planned is not None
    return SearchReport(
        audit=best_report, dataset=winner["dataset"].tolist(), neighbor=winner["neighbor"].tolist(),
        candidates_screened=len(distinct_rows(ctx.screen.rows)), confidence=ctx.confidence,
        finalist_confidence=ctx.final_conf, domain=ctx.domain.to_dict(), origin=winner["origin"],
        difference=compare_pair(winner["dataset"], winner["neighbor"]).describe(), finalists=final_rows,
        screening=table, screen_samples=ctx.screen.n_samples, stopping=ctx.stopping, screenings=len(ctx.screen.rows),
        search_seconds=round(ctx.search_seconds, 4), budget=ctx.budget, notes=_search_notes(ctx, reports, planned),
        seed=ctx.seed, interrupted=interrupted,
        screening_draws={"releases_per_side": sum(r["samples"] for r in ctx.screen.rows),
                         "grey_box_calls": ctx.screen.grey_calls})


def _search_notes(ctx: _SearchContext, reports, planned: int | None) -> list[str]:
    """The search's own notes: a budget that ran out, an unseeded target, an interrupt among several finalists."""
    notes = []
    if ctx.stopping == "budget":
        notes.append(f"the screening budget of {ctx.budget:g} s ran out after {ctx.screen.count_text()}; "
                     "a longer budget may find a stronger pair")
    if not ctx.tgt.seeded:
        notes.append("the target takes no rng: the search itself is not reproducible")
    if ctx.screen.grey_off:
        notes.append(f"grey-box screening stopped after {ctx.screen.grey_tried} pairs ({ctx.screen.grey_off}): the "
                     "other pairs were screened black-box")
    if planned is not None and planned > 1:
        notes.append(f"interrupted: the search was stopped by hand during its final audits; {len(reports)} of the "
                     f"{planned} finalists are reported (each at confidence {ctx.final_conf:.4g}, so together at "
                     f"{ctx.confidence:g}, whatever was not audited)")
    return notes
