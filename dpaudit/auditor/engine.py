"""One black-box audit: draw releases on D and D', learn a test, count, bound.

The path (STYLE.md): target -> samples on D and D' -> distinguisher scores ->
estimator -> report.  Three disjoint parts of each side's samples are used:

1. *fit* (first half of the calibration share): the distinguisher is fitted;
2. *select* (second half): the attack (under ``auto``), the threshold and its
   orientation are chosen, and so are the events of the privacy profile, the
   GDP bound and the ROC;
3. *test* (the rest): releases are drawn chunk by chunk and only counted, so
   memory stays bounded at any sample size, and the bound is computed on these
   counts alone.

Every chunk draws from its own ``SeedSequence(seed, spawn_key=(side, phase,
chunk))``, so the result depends on the seed and the chunk size only, never
on ``n_jobs``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from .._rng import as_seed_sequence, seed_entropy
from .._validation import check_choice, check_confidence, check_delta, check_epsilon, check_int, check_real
from .._version import __version__
from .distinguishers import ATTACKS, auto_choices, make_distinguisher, output_kind
from ..exceptions import ParameterValueError, TargetError
from ..stats import (
    DEFAULT_DELTAS,
    epsilon_bounds_array,
    epsilon_lower_bound,
    gaussian_epsilon,
    posterior_interval,
)
from ..stats.bayes import _pct
from ..stats.selection import calibration_counts, calibration_rates
from ..stats.clopper_pearson import cp_upper
from ..stats.profile import _mu_from_rates
from ..stats.selection import ThresholdEvent
from .report import AuditReport

__all__ = [
    "audit",
    "DEFAULT_SAMPLES_VECTORISED",
    "DEFAULT_SAMPLES_PER_CALL",
    "DEFAULT_CHUNK_SIZE",
    "ESTIMATORS",
]

#: Releases per side when the target takes ``size`` (one numpy call per chunk).
DEFAULT_SAMPLES_VECTORISED = 1_000_000
#: Releases per side when the target must be called once per release.
DEFAULT_SAMPLES_PER_CALL = 20_000
#: Releases drawn per call; fixed, so that results do not depend on ``n_jobs``.
DEFAULT_CHUNK_SIZE = 1 << 18
ESTIMATORS = ("clopper-pearson", "gdp")

_SIDE = {0: "dataset", 1: "neighbor"}
_CAL, _TEST = 0, 1


def _chunk_rng(entropy: int, side: int, phase: int, index: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(side, phase, index)))


def _chunks(n: int, size: int) -> list[tuple[int, int]]:
    return [(i, min(size, n - start)) for i, start in enumerate(range(0, n, size))]


def _draw(target, data, n, entropy, side, phase, index, timeout, inner_jobs):
    rng = _chunk_rng(entropy, side, phase, index)
    return target.sample(data, n, rng=rng, n_jobs=inner_jobs, timeout=timeout)


def _count_chunk(target, data, n, entropy, side, index, timeout, inner_jobs, scorer, thresholds, shape):
    x = _draw(target, data, n, entropy, side, _TEST, index, timeout, inner_jobs)
    if tuple(x.shape[1:]) != tuple(shape):
        raise TargetError(f"target {target.name!r} changed its output shape from {tuple(shape)} to "
                          f"{tuple(x.shape[1:])} on the {_SIDE[side]}")
    s = scorer.score(x)
    # One pass: position of each score among the sorted thresholds, then a
    # reverse cumulative sum gives "number of scores >= threshold j" for all j.
    pos = np.searchsorted(thresholds, s, side="right")
    hist = np.bincount(pos, minlength=len(thresholds) + 1)
    return np.cumsum(hist[::-1])[::-1][1:]


class _Runner:
    """Runs chunk tasks serially or in loky processes; the order of results is fixed.

    numpy's samplers hold the GIL, so threads gave no speed-up (measured 1.0x);
    processes do, and they also keep a misbehaving target out of our process.
    """

    def __init__(self, n_jobs: int, progress: bool, desc: str):
        self.n_jobs = n_jobs
        self.backend = "loky"
        self.progress = progress
        self.desc = desc

    def map(self, fn, tasks):
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=len(tasks), desc=self.desc, unit="chunk", file=sys.stderr, leave=False)
        try:
            if self.n_jobs == 1 or len(tasks) == 1:
                out = []
                for t in tasks:
                    out.append(fn(*t))
                    if bar is not None:
                        bar.update(1)
                return out
            from joblib import Parallel, delayed

            par = Parallel(n_jobs=self.n_jobs, backend=self.backend, return_as="generator")
            out = []
            for r in par(delayed(fn)(*t) for t in tasks):
                out.append(r)
                if bar is not None:
                    bar.update(1)
            return out
        finally:
            if bar is not None:
                bar.close()


def _is_builtin(tgt) -> bool:
    """Built-in mechanisms: fast vectorised numpy whose arrays are cheaper to draw than to ship."""
    from ..mechanisms.base import BuiltinMechanism

    return isinstance(getattr(tgt, "fn", None), BuiltinMechanism)


def _load_target(target):
    from ..targets import load_target

    return load_target(target)


def _load_dataset(value, name):
    from ..targets import parse_dataset

    if isinstance(value, (str, bytes)) or hasattr(value, "__fspath__"):
        return parse_dataset(value, name=name)
    try:
        arr = np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - any conversion failure is bad input
        raise ParameterValueError(f"{name} could not be read as an array: {exc}") from None
    if arr.dtype == object or arr.ndim not in (1, 2):
        raise ParameterValueError(f"{name} must be a 1-D or 2-D numeric array; got shape {arr.shape}, "
                                  f"dtype {arr.dtype}")
    return arr


def audit(
    target,
    dataset,
    neighbor,
    *,
    epsilon,
    delta=0.0,
    samples=None,
    confidence=0.95,
    seed=None,
    attack="auto",
    n_jobs=1,
    estimator="clopper-pearson",
    calibration_fraction=0.5,
    chunk_size=DEFAULT_CHUNK_SIZE,
    timeout=None,
    progress=None,
) -> AuditReport:
    """Audit a mechanism on one pair of neighbouring datasets.

    Parameters
    ----------
    target : str or callable
        ``"package.module:attr"``, ``"path/file.py:attr"``, a built-in
        mechanism name or object, or any callable ``f(dataset)`` (INTERFACE.md
        section 2).
    dataset, neighbor : array_like or str
        The neighbouring pair: arrays, JSON array literals or paths to
        ``.json``, ``.npy`` or ``.csv`` files.
    epsilon, delta : float
        The claimed budget.
    samples : int, optional
        Releases per side; default 1,000,000 for targets that take ``size``
        and 20,000 for one-release-per-call targets.
    confidence : float
        Probability that the reported bound is below the true epsilon.
    seed : int, optional
        Seed of all randomness; drawn and reported when not given.
    attack : str
        ``"auto"`` or a name from :func:`dpaudit.attacks.list_attacks`.
    n_jobs : int
        Parallel workers (threads for built-in mechanisms, processes for
        other targets); the result does not depend on it.
    estimator : {"clopper-pearson", "gdp"}
        ``"clopper-pearson"`` (default) certifies epsilon for any mechanism.
        ``"gdp"`` certifies a Gaussian-DP mu (valid for any mechanism) and
        reports the epsilon(delta) of a Gaussian mechanism with that mu: a
        valid bound only for mechanisms whose trade-off curve is Gaussian
        (Nasr et al. 2023); it needs ``delta > 0``.
    calibration_fraction : float
        Share of the samples used to fit the distinguisher and choose the event.
    chunk_size : int
        Releases per target call; part of the reproducibility key with the seed.
    timeout : float, optional
        Seconds allowed per target call.
    progress : bool, optional
        Show a progress bar on stderr; default: when stderr is a terminal and
        the audit has many chunks.

    Returns
    -------
    AuditReport

    Examples
    --------
    >>> import numpy as np
    >>> def laplace_count(dataset, size=None, rng=None):
    ...     return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)
    >>> r = audit(laplace_count, [0, 1], [0, 0], epsilon=1.0, samples=200_000, seed=1)
    >>> r.verdict, 0.9 < r.epsilon_lower_bound <= 1.0
    ('no violation found', True)
    """
    t_start = time.perf_counter()
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    confidence = check_confidence(confidence)
    n_jobs = check_int(n_jobs, "n_jobs", low=-1)
    if n_jobs == 0:
        raise ParameterValueError("n_jobs must be >= 1 or -1 (all cores); got 0")
    if n_jobs == -1:
        import os

        n_jobs = os.cpu_count() or 1
    check_choice(estimator, "estimator", ESTIMATORS)
    if estimator == "gdp" and delta <= 0:
        raise ParameterValueError("estimator 'gdp' needs delta > 0 (a Gaussian mechanism has no finite "
                                  "epsilon at delta = 0); got delta = 0")
    calibration_fraction = check_real(calibration_fraction, "calibration_fraction", low=0.0, high=1.0,
                                      low_inclusive=False, high_inclusive=False)
    chunk_size = check_int(chunk_size, "chunk_size", low=1)
    if timeout is not None:
        timeout = check_real(timeout, "timeout", low=0.0, low_inclusive=False)
    if attack != "auto" and attack not in ATTACKS:
        raise ParameterValueError(f"attack must be 'auto' or one of {sorted(ATTACKS)}; got {attack!r}")

    tgt = _load_target(target)
    data = (_load_dataset(dataset, "dataset"), _load_dataset(neighbor, "neighbor"))
    vectorised = bool(getattr(tgt, "vectorised", False))
    if samples is None:
        samples = DEFAULT_SAMPLES_VECTORISED if vectorised else DEFAULT_SAMPLES_PER_CALL
    samples = check_int(samples, "samples", low=20)
    seq = as_seed_sequence(seed)
    entropy = seed_entropy(seq)

    n_cal = min(max(int(round(samples * calibration_fraction)), 10), samples - 10)
    n_test = samples - n_cal
    builtin = _is_builtin(tgt)
    # Chunks are the unit of parallel work for vectorised targets; a target
    # called once per release is parallelised inside each chunk instead.
    outer_jobs, inner_jobs = (n_jobs, 1) if vectorised else (1, n_jobs)
    if progress is None:
        progress = sys.stderr.isatty() and (samples > 4 * chunk_size or not vectorised)
    # Built-ins draw calibration in-process: shipping their arrays back from
    # workers costs more than drawing them.  Held-out chunks return counts only.
    runner = _Runner(1 if builtin else outer_jobs, bool(progress), "calibration")

    # 1. Calibration draws, both sides.
    tasks = [(tgt, data[side], n, entropy, side, _CAL, i, timeout, inner_jobs)
             for side in (0, 1) for i, n in _chunks(n_cal, chunk_size)]
    parts = runner.map(_draw, tasks)
    k = len(_chunks(n_cal, chunk_size))
    cal = []
    for side in (0, 1):
        chunk_list = parts[side * k:(side + 1) * k]
        shapes = {tuple(c.shape[1:]) for c in chunk_list}
        if len(shapes) != 1:
            raise TargetError(f"target {tgt.name!r} changed its output shape between calls on the "
                              f"{_SIDE[side]}: {sorted(shapes)}")
        cal.append(np.concatenate(chunk_list) if len(chunk_list) > 1 else chunk_list[0])
    if cal[0].shape[1:] != cal[1].shape[1:]:
        raise TargetError(f"target {tgt.name!r} returns shape {cal[0].shape[1:]} on the dataset but "
                          f"{cal[1].shape[1:]} on the neighbor; releases must have one fixed shape")
    shape = cal[0].shape[1:]
    if len(shape) > 1:
        raise TargetError(f"target {tgt.name!r} must return a scalar or a 1-D array; got shape {shape}")
    kind = output_kind(np.concatenate([cal[0][:10_000], cal[1][:10_000]]))

    # 2. Fit on the first half of calibration, select on the second.
    n_fit = n_cal // 2
    fit0, sel0 = cal[0][:n_fit], cal[0][n_fit:]
    fit1, sel1 = cal[1][:n_fit], cal[1][n_fit:]
    names = auto_choices(kind, fit0) if attack == "auto" else (attack,)
    if kind != "scalar" and "threshold" in names and np.asarray(fit0).ndim > 1:
        names = tuple(n for n in names if n != "threshold")
    best = None
    for name in names:
        scorer = make_distinguisher(name).fit(fit0, fit1)
        s0, s1 = scorer.score(sel0), scorer.score(sel1)
        # Interval bounds per candidate threshold are computed once and serve
        # every event chosen below (main, one per delta, GDP).
        rates = calibration_rates(calibration_counts(s0, s1), n_test0=n_test, n_test1=n_test,
                                  confidence=confidence)
        event = rates.choose(delta=delta)
        value = rates.value(event, delta=delta)
        if best is None or value > best[0]:
            best = (value, name, scorer, s1, event, rates)
    _, attack_used, scorer, s1, event, rates = best

    # Events for the GDP bound, the privacy profile and the ROC, chosen here too.
    alpha_half = (1.0 - confidence) / 2.0
    gdp_event = rates.choose(gdp=True)
    profile_events = [rates.choose(delta=d) for d in DEFAULT_DELTAS]
    roc_orient = event.reverse
    s_neg = np.sort(-s1 if roc_orient else s1)
    ks = np.unique(np.geomspace(1, len(s_neg), 60).round().astype(np.int64))
    roc_thr = s_neg[len(s_neg) - ks]
    roc_thr = -roc_thr if roc_orient else roc_thr
    all_events = [event, gdp_event, *profile_events]
    thresholds = np.unique(np.concatenate([[e.threshold for e in all_events], roc_thr]))

    # 3. Held-out draws, counted chunk by chunk.
    runner = _Runner(outer_jobs, bool(progress), "audit")
    tasks = [(tgt, data[side], n, entropy, side, i, timeout, inner_jobs, scorer, thresholds, shape)
             for side in (0, 1) for i, n in _chunks(n_test, chunk_size)]
    counts = runner.map(_count_chunk, tasks)
    k = len(_chunks(n_test, chunk_size))
    ge0 = np.sum(counts[:k], axis=0)
    ge1 = np.sum(counts[k:], axis=0)

    def count(ev: ThresholdEvent, side_ge):
        c = int(side_ge[np.searchsorted(thresholds, ev.threshold)])
        return n_test - c if ev.reverse else c

    tp, fp = count(event, ge0), count(event, ge1)
    main = epsilon_lower_bound(tp, n_test - tp, fp, n_test - fp, delta=delta, confidence=confidence)
    g_tp, g_fp = count(gdp_event, ge0), count(gdp_event, ge1)
    mu_lb = float(_mu_from_rates(cp_upper(g_fp, n_test, alpha_half), cp_upper(n_test - g_tp, n_test, alpha_half)))
    profile_eps = []
    for d, ev in zip(DEFAULT_DELTAS, profile_events):
        a, b = count(ev, ge0), count(ev, ge1)
        profile_eps.append(epsilon_lower_bound(a, n_test - a, b, n_test - b, delta=d, confidence=confidence,
                                               n_comparisons=len(DEFAULT_DELTAS)).epsilon_lower_bound)
    # The grid holds simultaneously and the true eps(delta) is non-increasing, so a
    # bound at a larger delta bounds every smaller one (as in stats.privacy_profile).
    profile_eps = [max(e for d2, e in zip(DEFAULT_DELTAS, profile_eps) if d2 >= d) for d in DEFAULT_DELTAS]
    roc_events = [ThresholdEvent(float(t), roc_orient) for t in roc_thr]
    roc_fpr = [count(e, ge1) / n_test for e in roc_events]
    roc_tpr = [count(e, ge0) / n_test for e in roc_events]
    order = np.argsort(roc_fpr, kind="stable")

    notes = []
    bound = main.epsilon_lower_bound
    if estimator == "gdp":
        bound = gaussian_epsilon(mu_lb, delta) if mu_lb > 0 else 0.0
        notes.append("estimator 'gdp': epsilon(delta) of a Gaussian mechanism with the certified mu; valid only "
                     "if the target's trade-off curve is Gaussian (Nasr et al. 2023)")
    if not getattr(tgt, "seeded", True):
        notes.append("the target takes no rng: its randomness is its own, so this audit is not reproducible")
    bound = float(max(0.0, bound))
    verdict = "violation" if bound > epsilon else "no violation found"
    post = posterior_interval(min(bound, 700.0), delta=delta)
    claim_post = posterior_interval(epsilon, delta=delta)
    explanation = (
        f"on this pair an attacker who starts at 50% can be moved to {_pct(post.high)} or more "
        f"(epsilon >= {bound:.3g} with {confidence:.0%} confidence); the claim epsilon = {epsilon:g} allows at most "
        f"{_pct(claim_post.high)}")
    if main.epsilon_lower_bound >= main.ceiling - 1e-9 and estimator == "clopper-pearson":
        notes.append("the bound reached the sample-size ceiling: more samples could certify more")
    return AuditReport(
        epsilon_lower_bound=bound,
        claimed_epsilon=epsilon,
        claimed_delta=delta,
        confidence=confidence,
        samples=samples,
        attack=attack_used if attack == "auto" else attack,
        seed=entropy,
        verdict=verdict,
        ceiling=main.ceiling,
        estimator=estimator,
        target=str(tgt.name),
        seeded=bool(getattr(tgt, "seeded", True)),
        output_kind=kind,
        output_shape=list(shape),
        event=event.describe(),
        threshold=event.threshold,
        direction=f"{main.direction}, {main.event}",
        tp=main.tp, fn=main.fn, fp=main.fp, tn=main.tn,
        tpr=main.tpr, fpr=main.fpr,
        tpr_interval=list(main.tpr_interval()), fpr_interval=list(main.fpr_interval()),
        n_calibration=n_cal,
        n_test=n_test,
        gdp_mu_lower_bound=mu_lb,
        privacy_profile={"delta": list(DEFAULT_DELTAS), "epsilon": profile_eps,
                         "simultaneous": True, "confidence": confidence},
        roc={"fpr": [roc_fpr[i] for i in order], "tpr": [roc_tpr[i] for i in order]},
        posterior={"prior": 0.5, "low": post.low, "high": post.high, "claimed_high": claim_post.high},
        explanation=explanation,
        notes=notes,
        version=__version__,
        elapsed_seconds=round(time.perf_counter() - t_start, 4),
    )


