"""One black-box audit: target -> samples -> distinguisher -> events -> held-out counts -> certificate -> report.

The steps, each owned by its own module:

1. **Samples** (:mod:`dpaudit.sampling`): releases on D and D' in chunks,
   each with its own seed, every output checked.
2. **Calibration** (:mod:`dpaudit.auditor.calibrate`): each distinguisher
   fitted on the first half of the calibration releases, its event chosen on
   the second (and the attack too, under ``auto``).
3. **Held-out counts** (:mod:`dpaudit.auditor.count`): fresh releases drawn
   chunk by chunk and only counted, so memory stays bounded by one chunk and
   the calibration cap.
4. **Certificate** (:mod:`dpaudit.auditor.certify`): the audit's certificate
   (:mod:`dpaudit.stats.certificate`) turns those counts alone into the result
   that decides the verdict.
5. **Rounds** (:mod:`dpaudit.auditor.track`): one for a fixed-size audit,
   else rounds of growing size until a stopping rule says stop.
6. **Report** (:mod:`dpaudit.auditor.report`).

A sequential audit (the default) draws, in each round, fresh calibration
releases (pooled with earlier ones, up to the cap) and fresh held-out
releases, and certifies from its own held-out counts with the failure
probability ``1 - confidence`` shared equally among the rounds planned for
the budget.  Every round's result is then valid at once (union bound), so the
largest of them is valid whatever round the audit stopped in.  See
:mod:`dpaudit.auditor.sequential` for the schedule and the stopping rules.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from .._executor import LINES
from .._progress import progress_wanted
from .._rng import as_seed_sequence, seed_entropy
from ..datasets import align_empty, load_dataset
from ..exceptions import ParameterValueError
from ..params import AUDIT_OPTIONS
# DEFAULT_CHUNK_SIZE is re-exported: the one chunk size.
from ..sampling import DEFAULT_CHUNK_SIZE, memory_limits, probe_releases, release_bytes
from ..stats.certificate import POISSON_SHARE, ClopperPearson  # noqa: F401  POISSON_SHARE: re-exported
# The certificates by name: the registry itself, so a registered one is listed too.
from ..stats.estimators import ESTIMATORS
# The stages' public names stay importable from here.
from .calibrate import (  # noqa: F401
    FIT_COST,
    RARE_EVENT_NOTE,
    RARE_TRUST,
    SELECTION_TRUST,
    TAIL_RATIO,
    TRUST_FROM,
    ChosenTest,
    calibrate,
    choose_test,
)
from .certify import CertifiedRound, certify_round, resolve_claim  # noqa: F401
from .context import AuditContext, make_sampler
from .count import count_held_out, poisson_sizes  # noqa: F401
from .distinguishers import output_kind
from .assemble import build_report, ceiling_note  # noqa: F401  re-exported
from .report import AuditReport
from .track import DEFAULT_SAMPLES_PER_CALL, DEFAULT_SAMPLES_VECTORISED, AuditRun, default_max_samples, plan_rounds

__all__ = [
    "audit",
    "DEFAULT_SAMPLES_VECTORISED",
    "DEFAULT_SAMPLES_PER_CALL",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_CALIBRATION_CAP",
    "ESTIMATORS",
]

#: Most calibration releases kept per side; everything beyond is only counted.
DEFAULT_CALIBRATION_CAP = AUDIT_OPTIONS["calibration_cap"].default
#: Earlier names of two stages' parts, kept for the code that reads them from here.
_Run = AuditRun
_poisson_sizes = poisson_sizes

# ----------------------------------------------------------------------------- inputs
# ----------------------------------------------------------------------------- inputs
def _resolve_pair(tgt, dataset, neighbor):
    """The datasets, or the built-in's own stress pair when both are omitted."""
    if dataset is None and neighbor is None:
        pair = getattr(getattr(tgt, "fn", None), "neighbouring_pair", None)
        if pair is None:
            raise ParameterValueError(f"dataset and neighbor are required for target {tgt.name!r} (only a "
                                      "built-in mechanism has a default pair)")
        dataset, neighbor = pair()
    return align_empty(load_dataset(dataset, name="dataset"), load_dataset(neighbor, name="neighbor"))


def replaced_record_note(claim, dataset, neighbor) -> str | None:
    """A note when ``claim`` is a curve accounted for add/remove neighbours (DP-SGD's, a ``DpEvent``'s) and the pair
    replaces one record: replacing is removing one record and adding another, so the pair may rightly show more
    than the curve allows (twice the sensitivity, for opposing gradients) and a "violation" is no evidence against
    the accountant: without the note a correct DP-SGD audited on such a pair reads as broken."""
    from ..pairs import Relation, compare_pair

    if getattr(claim, "accounted_for", None) is not Relation.ADD_REMOVE:
        return None
    diff = compare_pair(dataset, neighbor)
    if diff.is_neighbouring(Relation.ADD_REMOVE) or not diff.is_neighbouring(Relation.REPLACE_ONE):
        return None
    return (f"the claim {claim.spec} is accounted for add/remove neighbours, but the pair differs by a replaced "
            "record (a removal and an addition), so a bound on it may exceed the curve without any violation; "
            "audit the dataset with the record against the dataset without it")


def non_neighbour_note(dataset, neighbor) -> str | None:
    """A note when the pair is neighbouring under no relation (:func:`dpaudit.pairs.non_neighbour_note`): a bound on
    it may exceed the claim of a correct mechanism."""
    from ..pairs import non_neighbour_note as note

    return note(dataset, neighbor)


def _is_builtin(tgt) -> bool:
    """Built-in mechanisms: fast vectorised numpy whose arrays are cheaper to draw than to ship."""
    from ..mechanisms.base import BuiltinMechanism

    return isinstance(getattr(tgt, "fn", None), BuiltinMechanism)


# ----------------------------------------------------------------------------- the audit
# ----------------------------------------------------------------------------- the audit
def _probe(tgt, dataset, entropy, timeout) -> np.ndarray:
    """The target's first releases (:func:`probe_releases`); Ctrl-C there leaves nothing certified."""
    try:
        return probe_releases(tgt, dataset, entropy, timeout=timeout)
    except KeyboardInterrupt as exc:
        exc.audit_report = None  # interrupted in the target's first call: nothing drawn, nothing certified
        raise


def _grey_box(args: dict) -> AuditReport:
    """:func:`audit` with ``grey_box`` True or ``"auto"``: the black-box audit wrapped by :mod:`dpaudit.greybox`."""
    from ..greybox.audit import audit_grey_box

    options = {k: v for k, v in args.items() if k not in ("target", "dataset", "neighbor", "grey_box", "traces",
                                                          "sensitivity")}
    return audit_grey_box(audit, args["target"], args["dataset"], args["neighbor"], resolve_pair=_resolve_pair,
                          traces=args["traces"], sensitivity=args["sensitivity"], fallback=args["grey_box"] == "auto",
                          **options)


@AUDIT_OPTIONS.validates
def audit(
    target,
    dataset=None,
    neighbor=None,
    *,
    epsilon=None,
    delta=0.0,
    claim=None,
    samples=None,
    max_samples=None,
    time_budget=None,
    confidence=0.95,
    seed=None,
    attack="auto",
    ideal=False,
    n_jobs=1,
    backend="loky",
    scheduler=None,
    estimator="clopper-pearson",
    calibration_fraction=0.5,
    calibration_cap=DEFAULT_CALIBRATION_CAP,
    chunk_size=DEFAULT_CHUNK_SIZE,
    timeout=None,
    progress=None,
    stop_when_converged=True,
    on_round=None,
    keep_drawing=False,
    grey_box=False,
    traces=1000,
    sensitivity=None,
    stopping="planned",
) -> AuditReport:
    """Audit a mechanism on one pair of neighbouring datasets.

    Parameters
    ----------
    target : str or callable
        ``"package.module:attr"``, ``"path/file.py:attr"``, a built-in
        mechanism name or object, or any callable ``f(dataset)`` returning one
        release (a number or a 1-D array); it may accept ``size`` (many
        releases at once, much faster) and ``rng`` (a numpy Generator).
    dataset, neighbor : array_like or str, optional
        The neighbouring pair: arrays, JSON array literals or paths to
        ``.json``, ``.npy`` or ``.csv`` files.  Omitted for a built-in
        mechanism, its own stress pair is used.
    epsilon, delta : float
        The claimed budget (a point; omit them when ``claim`` is given).
    claim : str, Claim or dp_accounting DpEvent, optional
        A claimed privacy curve instead of a point: ``"gdp:mu=MU"``,
        ``"dpsgd:noise=SIGMA,rate=Q,steps=T"``, ``"profile:FILE.json"``,
        ``"eps:EPS[,delta=DELTA]"``, a :class:`dpaudit.claims.Claim` or a
        ``DpEvent`` (see :mod:`dpaudit.claims`).  The verdict is a violation
        when some certified (epsilon, delta) lies above the curve, at
        ``confidence`` for the whole curve; giving ``epsilon`` too is an error.
    samples : int, optional
        A fixed-size audit of exactly ``samples`` releases per side.  Without
        it the audit is sequential: rounds of growing size until a violation
        is certified, more samples could not change the verdict, or the budget
        is spent.
    max_samples : int, optional
        Budget of a sequential audit in releases per side: 1,000,000 for
        targets that take ``size``, 20,000 for targets called once per release.
    time_budget : float, optional
        Seconds a sequential audit may take; no round starts that would
        probably overrun it.
    confidence : float
        Probability that the reported bound is below the true epsilon.
    seed : int, optional
        Seed of all randomness; drawn and reported when not given.
    attack : str
        ``"auto"`` or a name from :func:`dpaudit.attacks.list_attacks`.
    ideal : bool
        Audit the mechanism as mathematics: no floating-point attacks.
    n_jobs : int
        Worker processes; the result does not depend on it.
    backend : {"loky", "dask"}
        Where chunks are drawn and counted: loky processes on this machine, or
        a Dask cluster.  Same chunks, same seeds, so the same report.
    scheduler : str, optional
        A Dask scheduler address (``tcp://host:8786``; implies ``backend="dask"``);
        without it ``backend="dask"`` starts a local cluster for the audit.
    estimator : str or Certificate
        The certificate whose result decides the verdict
        (:mod:`dpaudit.stats.certificate`).  ``"clopper-pearson"`` (default)
        certifies epsilon for any mechanism.  ``"gdp"`` certifies a Gaussian-DP
        mu (valid for any mechanism) and reports the epsilon(delta) of a
        Gaussian mechanism with that mu: a valid bound only for mechanisms
        whose trade-off curve is Gaussian (Nasr et al. 2023); it needs
        ``delta > 0``.  Also any registered certificate's name, a
        ``"module:attr"`` naming one, or a :class:`~dpaudit.stats.certificate.Certificate`.
    calibration_fraction : float
        Share of a round's releases used to fit the distinguisher and choose the event.
    calibration_cap : int
        Most calibration releases kept per side; releases beyond it are only
        counted, so memory does not grow with ``samples``.
    chunk_size : int
        Releases per chunk; part of the reproducibility key with the seed.
    timeout : float, optional
        Seconds allowed per target call.
    progress : bool or "lines", optional
        Progress bars on stderr; default: when the audit is long and stderr is
        a terminal, or ``DPAUDIT_PROGRESS`` says 1 (0: never).  ``"lines"``:
        no bar, one plain line every 30 s once 10 s have passed (for a log).
    stop_when_converged : bool
        False: a sequential audit stops only on a violation or its budget,
        never as "converged" (:func:`dpaudit.search` when its screening
        expects a violation).  Valid either way: the bound holds at every round.
    on_round : callable, optional
        Called after each finished round of a sequential audit with a
        :class:`~dpaudit._progress.RoundProgress` (round, samples, bound so
        far, seconds); ``dpaudit audit`` prints it as a line when stderr is
        not a terminal.  It only watches: what it does cannot change the report.
    keep_drawing : bool
        True: a sequential audit that certifies a violation draws on to its
        budget (``max_samples`` or ``time_budget``) for a tighter bound,
        where by default it stops at once; ``stopping_reason`` is then
        "budget".  Valid either way: every planned round's bound holds at
        once, and the largest of those drawn is reported.
    grey_box : bool or "auto"
        Also audit grey-box (:mod:`dpaudit.greybox`): record the target's draws
        from ``rng`` on ``dataset``, replay them coupled on ``neighbor``, and
        report findings and an upper bound on the pair's epsilon
        (``report.grey_box``); an exact upper bound above the claim is a
        violation too (``violation_source``).  ``True``: a target whose
        randomness cannot be recorded (no ``rng``, noise from another
        generator) is an error; ``"auto"``: it gets the black-box audit alone,
        ``grey_box`` None and a note saying why.
    traces : int
        Traces of the grey-box analysis.
    sensitivity : float, optional
        Declared sensitivity the grey-box analysis checks the noise locations'
        moves against (default: a built-in mechanism's own).
    stopping : {"planned", "anytime"}
        How a sequential audit may stop.  ``"planned"``: rounds doubling from
        2,000 releases per side (200 for a per-call target), the failure
        probability shared among them.  ``"anytime"``: batches of 10 per side
        and a look after each, certified by e-processes, so the bound holds
        whenever the audit stops (Ctrl-C and the time budget included); it
        catches gross violations after tens to hundreds of releases, runs no
        floating-point attacks and reports no privacy profile (see
        ``docs/sequential.md``).  It takes no ``samples``.

    Returns
    -------
    AuditReport

    Raises
    ------
    KeyboardInterrupt
        Passed on as raised (the round being drawn is dropped).  Its
        ``audit_report`` attribute is the report of the sequential rounds
        already finished (``interrupted=True``, ``stopping_reason="budget"``),
        valid at the stated confidence like any round's; None when no round
        finished or the audit is fixed-size (a fixed-size bound holds only at
        its planned size, so nothing is certified).

    Examples
    --------
    >>> import numpy as np
    >>> def laplace_count(dataset, size=None, rng=None):
    ...     return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)
    >>> r = audit(laplace_count, [0, 1], [0, 0], epsilon=1.0, samples=200_000, seed=1, ideal=True)
    >>> r.violation, 0.9 < r.epsilon_lower_bound <= 1.0, r.stopping_reason
    (False, True, 'fixed')
    """
    if grey_box:
        return _grey_box(dict(locals()))
    t_start = time.perf_counter()
    ctx, probe = _context(dict(locals()), t_start)
    if stopping == "anytime":
        return _anytime(ctx, probe)
    plan, tracker, max_samples = plan_rounds(ctx)
    ctx = replace(ctx, max_samples=max_samples)
    total_planned = sum(p.n_calibration + p.n_test for p in plan)
    if progress is None:
        # DPAUDIT_PROGRESS=1/0 overrides the terminal test, as for every other bar.
        progress = progress_wanted(None) and (total_planned > 4 * ctx.chunk_size or not ctx.vectorised)
    sampler = make_sampler(ctx, probe.shape[1:], progress=progress if progress == LINES else bool(progress))
    run = AuditRun(ctx, sampler, plan, tracker)
    try:
        run.rounds_until_stop()
    except KeyboardInterrupt as exc:
        # Not swallowed: the same KeyboardInterrupt goes on, carrying what the finished rounds certified.
        exc.audit_report = _report(run, interrupted=True) if run.rounds and tracker is not None else None
        raise
    finally:
        sampler.close()
    report = _report(run)
    notes = [n for n in (_pair_note(ctx), ceiling_note(report)) if n]
    return replace(report, notes=[*report.notes, *notes]) if notes else report


def _context(args: dict, t_start: float) -> tuple[AuditContext, np.ndarray]:
    """The audit's checked settings from :func:`audit`'s (checked) arguments, and the target's first releases."""
    from ..targets import load_target

    claim, cert, certificate = resolve_claim(args["claim"], args["epsilon"], args["delta"], args["estimator"])
    tgt = load_target(args["target"])
    pair = _resolve_pair(tgt, args["dataset"], args["neighbor"])
    entropy = seed_entropy(as_seed_sequence(args["seed"]))
    # Wide releases (a 10,000-bin histogram, a model's weights) get shorter chunks and a smaller calibration pool.
    probe = _probe(tgt, pair[0], entropy, args["timeout"])
    chunk_size, calibration_cap = memory_limits(release_bytes(probe), args["chunk_size"], args["calibration_cap"])
    given = args["claim"]
    ctx = AuditContext(
        target=tgt, pair=pair, claim=claim,
        claim_spec=None if given is None else (given if isinstance(given, str) else claim.spec),
        cert=cert, certificate=certificate, confidence=args["confidence"], entropy=entropy, attack=args["attack"],
        ideal=bool(args["ideal"]), t_start=t_start, samples=args["samples"], max_samples=args["max_samples"],
        time_budget=args["time_budget"], calibration_fraction=args["calibration_fraction"],
        calibration_cap=calibration_cap, chunk_size=chunk_size, n_jobs=args["n_jobs"], backend=args["backend"],
        scheduler=args["scheduler"], timeout=args["timeout"], in_process=_is_builtin(tgt),
        stop_when_converged=bool(args["stop_when_converged"]), keep_drawing=args["keep_drawing"],
        on_round=args["on_round"])
    return ctx, probe


def _report(run: AuditRun, *, interrupted: bool = False) -> AuditReport:
    """The report of the rounds finished so far (``interrupted``: the round being drawn was dropped).

    Valid at any round: each round's result was certified at the round confidence of the
    schedule fixed before drawing (:mod:`dpaudit.stats.sequential`), so by the union bound every
    planned round's result holds at once with probability ``confidence``, and the largest of the
    finished ones is valid whatever stopped the audit, a person's Ctrl-C included.
    """
    ctx = run.ctx
    report = build_report(ctx.target, run.rounds, run.kind, run.sampler.shape, reason=run.reason, attack=ctx.attack,
                          ideal=ctx.ideal, est=ctx.certificate, epsilon=run.epsilon, claim=ctx.claim_spec,
                          confidence=ctx.confidence, entropy=ctx.entropy, drawn=run.rounds[-1].samples,
                          max_samples=ctx.max_samples, t_start=ctx.t_start, time_budget=ctx.time_budget,
                          interrupted=interrupted)
    if any(rd.test.alt_events for rd in run.rounds):
        report = report.with_notes(RARE_EVENT_NOTE)
    return report


def _pair_note(ctx: AuditContext) -> str | None:
    return replaced_record_note(ctx.claim, *ctx.pair) or non_neighbour_note(*ctx.pair)


def _anytime(ctx: AuditContext, probe) -> AuditReport:
    """The anytime-valid audit (:mod:`dpaudit.auditor.anytime_report`) on the package's sampler."""
    from .anytime_report import anytime_audit

    if type(ctx.certificate) is not ClopperPearson:  # e-processes certify it: no certificate of counts to choose
        raise ParameterValueError(f"estimator: an anytime audit is certified by e-processes; got "
                                  f"{ctx.certificate.name!r} (leave estimator out, or use stopping='planned')")
    max_samples = default_max_samples(ctx) if ctx.max_samples is None else ctx.max_samples
    sampler = make_sampler(ctx, probe.shape[1:])
    try:
        report = anytime_audit(sampler, ctx.target, claim=ctx.claim, claim_given=ctx.claim_spec,
                               confidence=ctx.confidence, entropy=ctx.entropy, max_samples=max_samples,
                               time_budget=ctx.time_budget, attack=ctx.attack, t_start=ctx.t_start,
                               deadline=ctx.deadline, kind=output_kind(np.asarray(probe)), probe=probe,
                               on_round=ctx.on_round)
    finally:
        sampler.close()
    notes = [n for n in (_pair_note(ctx),) if n]
    return replace(report, notes=[*report.notes, *notes]) if notes else report
