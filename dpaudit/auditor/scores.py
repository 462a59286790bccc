"""Audits from attack scores someone else computed: :func:`audit_scores`.

A membership-inference attack (or any test) gives one score per run with the
target record IN and one per run with it OUT.  The scores are split at random
on each side: one part chooses the threshold event (exactly as an audit's
calibration data does), the other certifies it.  When the other tail's best
event is nearly as good on the choosing part, both are certified at half the
failure probability each and the better is kept: the two tails' counts are
disjoint, so the better of two nearly independent bounds gains more than the
halving costs (docs/decisions/event-selection.md, "A score audit certifies both
tails").  The certified counts never
saw the choice, so the bound holds at the stated confidence whatever the
scores are, however they were made (Nasr et al. 2023 and most MIA audits
choose the threshold on the scores they certify with, which overstates the
bound when the scores are few or the threshold search is wide).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from .._rng import as_seed_sequence, seed_entropy
from ..datasets import load_scores
from ..exceptions import ParameterValueError
from ..params import SCORES_OPTIONS
from ..stats.certificate import ClopperPearson, certificate_for
from ..stats.estimators import HeldOutCounts
from ..stats.score_metrics import score_metrics
from .calibrate import choose_test
from .certify import certify_round, resolve_claim
from .pipeline import build_report
from .report import AuditReport

__all__ = ["audit_scores", "split_scores_at_random"]

#: Spawn key of the split's random stream (apart from every stream an audit uses).
_SPLIT_STREAM = 11
#: Fewest scores per side: each part needs a few to choose or certify anything.
MIN_SCORES = 20


def split_scores_at_random(scores: np.ndarray, fraction: float, rng: np.random.Generator):
    """(selection part, certifying part) of one side's scores: a random ``fraction`` chooses, the rest certify.

    Each part keeps at least 10 scores (a threshold chosen on fewer, or certified on fewer, says nothing), so
    a side of 20 to 33 scores is split 10 and the rest, whatever the fraction."""
    perm = rng.permutation(len(scores))
    k = min(max(int(round(fraction * len(scores))), 10), len(scores) - 10)
    return scores[perm[:k]], scores[perm[k:]]


@SCORES_OPTIONS.validates
def audit_scores(in_scores, out_scores=None, *, epsilon=None, delta=0.0, claim=None, confidence=0.95, seed=None,
                 estimator="clopper-pearson", selection_fraction=0.3, stopping="planned", max_samples=None,
                 time_budget=None) -> AuditReport:
    """Certify an epsilon lower bound from attack scores: higher means "more likely IN".

    Parameters
    ----------
    in_scores, out_scores : array_like or str
        One score per run with the record present (IN) and absent (OUT): arrays,
        JSON literals or ``.npy``/``.csv``/``.json`` files; the counts may differ.
    epsilon, delta, claim
        The claim: a point, or a curve (``claim="gdp:mu=1"``, ...), as for :func:`dpaudit.audit`.
    confidence : float
        Probability that the bound is valid, whatever the scores.
    seed : int, optional
        Seed of the random split (drawn and reported when absent).
    estimator : str or Certificate
        The certificate whose result decides the verdict, as for :func:`dpaudit.audit` (a registered
        name, ``"module:attr"`` or a :class:`~dpaudit.stats.certificate.Certificate`).
    selection_fraction : float
        Share of each side that chooses the event; the rest certify it (each part at least 10 scores).
    stopping : {"planned", "anytime"}
        ``"anytime"``: bet on the scores as a stream of (IN, OUT) pairs, a look every 10, and stop on a
        certified violation (:mod:`dpaudit.auditor.anytime_scores`; arrays are paired after a seeded
        shuffle, the surplus of the longer side unused).  Given an iterator of pairs as ``in_scores``
        and no ``out_scores``, the audit is anytime whatever ``stopping`` says.
    max_samples, time_budget
        An anytime score audit's budget: most pairs read, seconds (default: the whole stream).

    Returns
    -------
    AuditReport
        The audit's report; ``samples`` is the number of IN scores (``n_test`` of them certify);
        ``samples_in``/``samples_out`` give both sides' counts and ``n_test_in``/``n_test_out`` how many
        of each certify (a note and the summary say both when they differ).  ``tpr_at_fpr`` and ``auc``
        give the TPR at FPR 0.001, 0.01 and 0.1 (thresholds chosen on the selection split) and the AUC,
        on the held-out scores, each with an exact interval (:mod:`dpaudit.stats.score_metrics`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> r = audit_scores(rng.normal(1, 1, 100_000), rng.normal(0, 1, 100_000), claim="gdp:mu=0.5", seed=1)
    >>> r.verdict
    'violation'
    """
    t_start = time.perf_counter()
    fraction = selection_fraction
    if stopping != "anytime" and out_scores is not None and (max_samples is not None or time_budget is not None):
        raise ParameterValueError("max_samples/time_budget: a score audit takes them only with stopping='anytime' "
                                  "(--stopping anytime); the planned one certifies all the scores at once")
    if out_scores is None or stopping == "anytime":
        return _anytime_scores(in_scores, out_scores, epsilon=epsilon, delta=delta, claim=claim,
                               confidence=confidence, seed=seed, estimator=estimator, max_samples=max_samples,
                               time_budget=time_budget)
    s_in = load_scores(in_scores, name="in_scores", min_count=MIN_SCORES)
    s_out = load_scores(out_scores, name="out_scores", min_count=MIN_SCORES)
    claim_given = claim
    claim, cert, est = resolve_claim(claim, epsilon, delta, estimator)
    epsilon, delta = claim.finite_point
    entropy = seed_entropy(as_seed_sequence(seed))
    rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(_SPLIT_STREAM,)))
    sel_in, held_in = split_scores_at_random(s_in, fraction, rng)
    sel_out, held_out = split_scores_at_random(s_out, fraction, rng)
    # The held-out sets have the sizes they were given, not Poisson sizes: no Poisson certificate.
    test = choose_test(("threshold",), (sel_in, sel_out), cert=cert, confidence=confidence, full=True, poisson=False,
                       tails=True, certificate=est)
    thresholds = [e.threshold for e in test.events()]
    counts = [HeldOutCounts.from_scores(thresholds, test.scorer.score(held_in), test.scorer.score(held_out))]
    rd = certify_round(0, len(s_in), len(sel_in), test, None, counts, None, delta=delta, confidence=confidence,
                       cert=cert)
    source = SimpleNamespace(name="scores", seeded=True)
    report = build_report(source, [rd], "scalar", (), reason="fixed", attack="threshold", ideal=True, est=est,
                          epsilon=epsilon, claim=_spec(claim_given, claim), confidence=confidence, entropy=entropy,
                          drawn=len(s_in), max_samples=None, t_start=t_start)
    metrics = score_metrics(sel_out, held_in, held_out, confidence=confidence)
    notes = []
    if rd.test.alt_events:
        notes.append("both tails' best events were certified, each at half the failure probability; the "
                     "better against the claim is reported")
    if len(s_in) != len(s_out):
        notes.append(f"{len(s_in)} IN scores and {len(s_out)} OUT scores; {len(held_in)} and "
                     f"{len(held_out)} of them certify")
    return report.with_values(samples_in=len(s_in), samples_out=len(s_out), n_test_in=len(held_in),
                              n_test_out=len(held_out), **metrics).with_notes(*notes)


def _anytime_scores(in_scores, out_scores, *, epsilon, delta, claim, confidence, seed, estimator, max_samples,
                    time_budget):
    """``audit_scores`` as a stream (:func:`~dpaudit.auditor.anytime_scores.audit_score_stream`)."""
    from .anytime_scores import audit_score_stream

    if type(certificate_for(estimator)) is not ClopperPearson:  # e-processes certify it: no certificate to choose
        raise ParameterValueError(f"estimator: an anytime score audit is certified by e-processes; got {estimator!r}")
    claim_given = claim
    claim, _, _ = resolve_claim(claim, epsilon, delta, "clopper-pearson")
    entropy = seed_entropy(as_seed_sequence(seed))
    if out_scores is None:
        if isinstance(in_scores, (str, bytes, np.ndarray, list, tuple)) or not hasattr(in_scores, "__iter__"):
            raise ParameterValueError("out_scores: required, unless in_scores is an iterator of (IN, OUT) score "
                                      "pairs (a stream)")
        pairs = in_scores
    else:
        s_in = load_scores(in_scores, name="in_scores", min_count=1)
        s_out = load_scores(out_scores, name="out_scores", min_count=1)
        rng = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(_SPLIT_STREAM,)))
        n = min(len(s_in), len(s_out))
        pairs = zip(rng.permutation(s_in)[:n], rng.permutation(s_out)[:n])
    return audit_score_stream(pairs, claim=claim, claim_given=claim_given, confidence=confidence, entropy=entropy,
                              max_samples=max_samples, time_budget=time_budget)


def _spec(given, claim):
    if given is None:
        return None
    return given if isinstance(given, str) else claim.spec

