"""Membership inference by correlation ("tracing"; Dwork, Smith, Steinke, Ullman, Vadhan 2015).

``n`` people have ``d`` binary attributes, attribute ``j`` drawn
Bernoulli(``p_j``) with population means ``p_j ~ U[0, 1]``.  The curator
releases the ``d`` attribute means, perturbed by a query mechanism at noise
level ``alpha`` (Gaussian sigma, Laplace scale, or uniform bound).  The
attacker holds a target record ``z`` and the population means ``p`` (or an
estimate from a reference sample) and says IN when

``<a - p, z - p> >= tau``.

Two thresholds:

* ``"theory"``: for a non-member, ``z`` is independent of ``a`` and each term
  lies in an interval of length ``|a_j - p_j|``, so Hoeffding's inequality
  gives ``P(score >= tau) <= delta`` for ``tau = ||a - p||_2 sqrt(ln(1/delta) / 2)``
  (about ``sqrt(d log(1/delta))`` times the per-coordinate error); exact only
  with the true ``p``.
* ``"calibrated"``: the ``(1 - fpr)`` quantile of the scores of known
  non-members, from calibration games *separate* from the evaluation games.

The game.  Following the definition of DP (replace-one neighbours, which
holds for every fixed dataset), the other ``n - 1`` rows are drawn once and
fixed; each game draws a fresh target ``z``.  In an IN game the release is
computed from the others plus ``z``; in an OUT game from the others plus an
independent ``z'``, and the attacker is asked about ``z``.  Every game has its
own noise, so the games are independent and their counts ``tp, fn`` (IN) and
``fp, tn`` (OUT) feed :func:`dpaudit.stats.epsilon_lower_bound`, compared with
the claimed budget of the ``d`` released means (composition).

All games are vectorised: the mechanism is called once with the ``(G, d)``
matrix of exact means of ``G`` releases (``queries`` = the ``G x G``
identity), so built-in additive mechanisms and third-party noise functions
perturb every release independently.  The subsampling curator
(:class:`~dpaudit.attacks.query_mechanisms.SubsampleAnswers`) needs the rows,
so it is not offered here.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dpaudit._rng import RNGLike, as_generator, as_seed_sequence, seed_entropy
from dpaudit._validation import check_choice, check_confidence, check_int, check_probability, check_real
from dpaudit.attacks._result import AttackResult, certify_counts
from dpaudit.attacks.query_mechanisms import (
    SubsampleAnswers,
    mechanism_label,
    as_query_mechanism,
    claimed_budget,
)
from dpaudit.exceptions import ParameterValueError

__all__ = [
    "tracing_scores",
    "hoeffding_threshold",
    "TracingGames",
    "simulate_tracing_games",
    "TracingResult",
    "run_tracing",
    "tracing_curve",
]

THRESHOLDS = ("calibrated", "theory")


def tracing_scores(releases: np.ndarray, targets: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """The tracing statistic ``<a - p, z - p>``.

    ``releases`` is ``(d,)`` (one release, scored against every target: one
    matrix product) or ``(G, d)`` (one release per target, row by row);
    ``targets`` is ``(G, d)``; ``reference`` is ``p``, ``(d,)``.

    >>> p = np.array([0.5, 0.5])
    >>> tracing_scores(np.array([0.75, 0.25]), np.array([[1, 0], [0, 1]]), p)
    array([ 0.25, -0.25])
    """
    a = np.asarray(releases, dtype=float) - reference
    z = np.asarray(targets)
    # <a - p, z - p> = <a - p, z> - <a - p, p>: no centred copy of the (large) target matrix
    if a.ndim == 1:
        return z @ a - a @ reference
    return np.einsum("gd,gd->g", a, z, dtype=float) - a @ reference


def hoeffding_threshold(releases: np.ndarray, reference: np.ndarray, *, false_positive_rate: float) -> np.ndarray:
    """``tau = ||a - p||_2 sqrt(ln(1/fpr) / 2)``: a non-member exceeds it with probability <= fpr.

    >>> round(float(hoeffding_threshold(np.array([0.6, 0.4]), np.array([0.5, 0.5]), false_positive_rate=math.exp(-2))), 6)
    0.141421
    """
    fpr = check_probability(false_positive_rate, "false_positive_rate", low_inclusive=False, high_inclusive=False)
    a = np.asarray(releases, dtype=float) - reference
    return np.linalg.norm(a, axis=-1) * math.sqrt(math.log(1.0 / fpr) / 2.0)


@dataclass(frozen=True, eq=False)
class TracingGames:
    """Scores of independent IN and OUT games (and the theory thresholds of each)."""

    in_scores: np.ndarray
    out_scores: np.ndarray
    in_theory_tau: np.ndarray
    out_theory_tau: np.ndarray


def simulate_tracing_games(
    *,
    n: int,
    d: int,
    mechanism: Any,
    n_in: int,
    n_out: int,
    population: np.ndarray | None = None,
    reference_size: int | None = None,
    fpr: float = 0.05,
    rng: RNGLike = None,
) -> TracingGames:
    """Play ``n_in`` IN games and ``n_out`` OUT games against ``mechanism``.

    ``mechanism`` follows the query-mechanism protocol (see
    :mod:`dpaudit.attacks.query_mechanisms`); it receives ``queries`` = the
    identity and ``x`` = the exact means of all releases.

    >>> from dpaudit.attacks.query_mechanisms import ExactAnswers
    >>> gm = simulate_tracing_games(n=50, d=500, mechanism=ExactAnswers(), n_in=20, n_out=20, rng=0)
    >>> bool(gm.in_scores.mean() > gm.out_scores.mean())
    True
    """
    g = as_generator(rng)
    p = g.uniform(0.0, 1.0, size=d) if population is None else np.asarray(population, dtype=float)
    p32 = p.astype(np.float32)

    def draw(rows: int) -> np.ndarray:  # Bernoulli(p) records; float32 uniforms halve the memory traffic
        return g.random((rows, d), dtype=np.float32) < p32

    others_sum = draw(n - 1).sum(axis=0, dtype=float)
    reference = p if reference_size is None else draw(reference_size).mean(axis=0)

    targets = draw(n_in + n_out)  # rows < n_in: IN targets; the rest: OUT targets (asked about)
    exact = np.empty((n_in + n_out, d))
    exact[:n_in] = targets[:n_in]
    exact[n_in:] = draw(n_out)  # who is really in the dataset in an OUT game
    exact += others_sum
    exact /= n
    releases = np.asarray(mechanism(sp.identity(n_in + n_out, format="dia"), exact, rng=g), dtype=float)
    del exact
    releases -= reference  # centred in place: a - p
    tau = np.sqrt(np.einsum("gd,gd->g", releases, releases)) * math.sqrt(math.log(1.0 / fpr) / 2.0)
    # <a - p, z - p> = <a - p, z> - <a - p, p>
    scores = np.einsum("gd,gd->g", releases, targets, dtype=float) - releases @ reference
    return TracingGames(
        in_scores=scores[:n_in],
        out_scores=scores[n_in:],
        in_theory_tau=tau[:n_in],
        out_theory_tau=tau[n_in:],
    )


@dataclass(frozen=True, repr=False)
class TracingResult(AttackResult):
    """Outcome of :func:`run_tracing`.

    Attributes
    ----------
    n, d, n_targets : int
        People, released means, evaluation games of each kind (IN and OUT).
    mechanism : str
    alpha : float or None
        Noise level given.
    threshold : str
        ``"calibrated"`` or ``"theory"``: which rule gave the counts of the bound.
    target_fpr : float
    tau : float or None
        The calibrated threshold (``None`` for ``"theory"``, which varies per release).
    tpr, fpr : float
        On the evaluation games, with the chosen threshold.
    theory_tpr, theory_fpr, calibrated_tpr, calibrated_fpr : float
        Both rules, for comparison.
    bound : EpsilonBound
    claimed : PointClaim or None
        Claimed budget of the ``d`` means.
    verdict : str
    seconds : float
        Wall time of the simulation.
    seed : int
    """

    attack = "tracing"

    n: int
    d: int
    n_targets: int
    mechanism: str
    alpha: float | None
    threshold: str
    target_fpr: float
    tau: float | None
    tpr: float
    fpr: float
    theory_tpr: float
    theory_fpr: float
    calibrated_tpr: float
    calibrated_fpr: float
    seconds: float


def run_tracing(
    *,
    n: int = 200,
    d: int = 2000,
    noise: Any = "gaussian",
    alpha: float | None = 0.01,
    n_targets: int = 1000,
    fpr: float = 0.05,
    threshold: str = "calibrated",
    reference_size: int | None = None,
    delta: float = 1e-5,
    confidence: float = 0.95,
    rng: RNGLike = None,
) -> TracingResult:
    """Trace membership from ``d`` noisy means of ``n`` people.

    Parameters
    ----------
    n : int, default 200
        People in the dataset.
    d : int, default 2000
        Binary attributes (released means).
    noise : str or callable, default "gaussian"
        ``"exact"``, ``"gaussian"`` (sigma ``alpha``), ``"laplace"`` (scale
        ``alpha``), ``"rounded_gaussian"``, ``"bounded"`` (uniform on
        ``[-alpha, alpha]``), or a third-party callable.  Claims use
        sensitivity ``1/n`` per mean.
    alpha : float, optional
        Noise level per released mean (ignored for ``"exact"``).
    n_targets : int, default 1000
        Evaluation games of each kind; as many OUT games calibrate ``tau``.
    fpr : float, default 0.05
        Target false positive rate (calibration quantile; Hoeffding's delta).
    threshold : {"calibrated", "theory"}
        The rule whose counts give the bound (both are reported).
    reference_size : int, optional
        Estimate ``p`` from this many fresh reference records instead of
        knowing it.
    delta : float, default 1e-5
        Gaussian claims only: the delta of the claim.
    confidence : float, default 0.95
    rng : Generator, SeedSequence, int or None

    Returns
    -------
    TracingResult

    Examples
    --------
    >>> r = run_tracing(n=100, d=2000, noise="exact", n_targets=300, rng=0)
    >>> r.tpr > 0.9, r.verdict
    (True, 'no claim')
    """
    n = check_int(n, "n", low=2)
    d = check_int(d, "d", low=1)
    n_targets = check_int(n_targets, "n_targets", low=1)
    fpr = check_probability(fpr, "fpr", low_inclusive=False, high_inclusive=False)
    check_choice(threshold, "threshold", THRESHOLDS)
    confidence = check_confidence(confidence)
    if reference_size is not None:
        reference_size = check_int(reference_size, "reference_size", low=1)
    if alpha is not None:
        alpha = check_real(alpha, "alpha", low=0.0)
    if noise == "subsample" or isinstance(noise, SubsampleAnswers):
        raise ParameterValueError("noise='subsample' is not supported by the tracing attack (it needs the rows)")
    if isinstance(noise, str) and noise != "exact" and not alpha:
        raise ParameterValueError(f"noise={noise!r} needs alpha > 0; got {alpha!r}")
    mech = as_query_mechanism(noise, noise_scale=alpha, sensitivity=1.0 / n, delta=delta, name="noise")
    claimed = claimed_budget(mech, d)
    seq = as_seed_sequence(rng)

    t0 = time.perf_counter()
    games = simulate_tracing_games(n=n, d=d, mechanism=mech, n_in=n_targets, n_out=2 * n_targets,
                                   reference_size=reference_size, fpr=fpr, rng=np.random.default_rng(seq))
    seconds = time.perf_counter() - t0
    calib, evaluation = games.out_scores[n_targets:], games.out_scores[:n_targets]
    # the smallest tau with at most fpr of the calibration non-members at or above it
    tau = float(np.quantile(calib, 1.0 - fpr, method="higher")) + 1e-12
    cal_in, cal_out = games.in_scores >= tau, evaluation >= tau
    th_in = games.in_scores >= games.in_theory_tau
    th_out = evaluation >= games.out_theory_tau[:n_targets]
    hits_in, hits_out = (cal_in, cal_out) if threshold == "calibrated" else (th_in, th_out)
    tp, fp = int(hits_in.sum()), int(hits_out.sum())
    bound, verdict = certify_counts(
        tp, n_targets - tp, fp, n_targets - fp, claimed,
        confidence=confidence,
        details={"attack": "tracing", "threshold": threshold, "tau": tau if threshold == "calibrated" else None},
    )
    return TracingResult(
        n=n, d=d, n_targets=n_targets, mechanism=mechanism_label(mech), alpha=alpha, threshold=threshold,
        target_fpr=fpr, tau=tau if threshold == "calibrated" else None,
        tpr=tp / n_targets, fpr=fp / n_targets,
        theory_tpr=float(th_in.mean()), theory_fpr=float(th_out.mean()),
        calibrated_tpr=float(cal_in.mean()), calibrated_fpr=float(cal_out.mean()),
        bound=bound, claimed=claimed, verdict=verdict,
        seconds=seconds, seed=seed_entropy(seq),
    )


def tracing_curve(*, parameter: str, values, **params) -> tuple[TracingResult, ...]:
    """:func:`run_tracing` for each value of ``parameter`` (e.g. ``"d"`` or ``"alpha"``).

    >>> rs = tracing_curve(parameter="d", values=[20, 2000], n=100, noise="exact", n_targets=200, rng=1)
    >>> rs[0].tpr < rs[1].tpr
    True
    """
    if parameter == "rng" or not values:
        raise ParameterValueError(f"parameter must name a run_tracing argument and values be non-empty; got {parameter!r}")
    return tuple(run_tracing(**{**params, parameter: v}) for v in values)
