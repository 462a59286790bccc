"""One-run audits (Steinke, Nasr and Jagielski 2023): :func:`audit_one_run` and the harness :func:`one_run`.

Many canaries, each included in one training run with probability 1/2; the
auditor guesses on the scores farthest from the median, inclusion above it and
exclusion below (in the proportion the scores show), and certifies from how
many guesses are right (:mod:`dpaudit.stats.one_run`).
One run cannot be as tight as many: with m canaries no audit certifies more
than ``ln(q / (1 - q))``, ``q = (1 - confidence)^(1/m)``; its price is one
training run instead of thousands.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Set
from dataclasses import asdict, dataclass, field

import numpy as np

from .._rng import as_seed_sequence, seed_entropy
from .._version import __version__
from ..datasets import as_numpy, load_scores
from ..exceptions import DatasetError, ParameterTypeError, ParameterValueError, TargetError
from ..params import HARNESS_OPTIONS, ONE_RUN_OPTIONS
from ..stats.bayes import format_confidence
from ..stats.verdict import verdict_of
from ..stats.one_run import (
    counts_for_guesses,
    fdp_one_run_epsilon_bounds,
    fdp_one_run_mu_bound_max,
    fdp_one_run_rejects,
    fdp_one_run_rejects_points,
    guess_grid,
    one_run_ceiling,
    one_run_epsilon_bound,
    tie_order,
)

__all__ = ["OneRunReport", "audit_one_run", "canary_inputs", "one_run"]

#: The deltas a curve claim is tested at: one run's delta term grows as 2 m delta, so only small ones help.
CURVE_DELTAS = (0.0, 1e-6, 1e-5, 1e-4, 1e-3)
#: The spawn key of the seed stream that orders tied scores (:func:`~dpaudit.stats.one_run.tie_order`); the
#: harness's inclusion bits and training use keys 0 and 1.
TIES_KEY = 2
#: A curve claim's split of the failure probability: this part to the f-DP tests (the whole curve and the
#: points they name), the rest to the point tests at CURVE_DELTAS.  The f-DP tests carry the verdict: at 1,000
#: canaries the point tests crossed none of 1,200 audits of Gaussian curves (true mu 1-4 against gdp:mu=1), and
#: moving from half to 3/4 names a crossed point for a 2.5-GDP release in 40 of 200 seeds instead of 4 (0.9 and
#: 0.8 name the same; docs/decisions/one-run-fdp.md).  The point tests keep a quarter for their assumption-free
#: bound at each delta, which a tenth would cut by up to two thirds where the delta term is large.
FDP_SHARE = 0.75


@dataclass
class OneRunReport:
    """What a one-run audit certified; attributes are the JSON keys (:meth:`to_dict`)."""

    epsilon_lower_bound: float
    claimed_epsilon: float
    claimed_delta: float
    confidence: float
    canaries: int
    guesses: int
    correct: int
    verdict: str
    ceiling: float
    claim: str | None = None
    curve_violation: dict | None = None
    guesses_tried: list = field(default_factory=list)
    tests: list = field(default_factory=list)
    fdp_tests: list = field(default_factory=list)
    curve_rejected: bool | None = None
    gdp_mu_lower_bound: float | None = None
    included: int = 0
    seed: int | None = None
    notes: list = field(default_factory=list)
    version: str = __version__
    elapsed_seconds: float = 0.0

    @property
    def violation(self) -> bool:
        return self.verdict == "violation"

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        head = "VIOLATION" if self.violation else "NO VIOLATION FOUND"  # as the audit's and the score audit's say
        test = (self.curve_violation or {}).get("test")
        lines = [
            f"verdict     {head}: epsilon >= {self.epsilon_lower_bound:.4g} with "
            f"{format_confidence(self.confidence)} confidence"
            + (" (f-DP test, one point of the claim)" if test == "f-dp" else "")
            + f"; claimed epsilon = {self.claimed_epsilon:g}, delta = {self.claimed_delta:g}",
            f"guesses     {self.correct} of {self.guesses} right ({self.canaries} canaries, {self.included} included)",
            f"ceiling     {self.ceiling:.4g} (the bound had every one of the {self.guesses} guesses been right)",
        ]
        if self.claim:
            lines.append(f"claim       {self.claim}")
        if self.fdp_tests:
            hit = [t for t in self.fdp_tests if t["rejected"]]
            lines.append(f"f-DP test   the claimed curve as a whole {'REJECTED' if hit else 'not rejected'} by the "
                         "top-k guesses" + (f" ({hit[0]['correct']} of {hit[0]['guesses']} right)" if hit else ""))
            if hit and not self.violation:
                lines.append("            but at no single (epsilon, delta) point of it: the run is not f-DP for "
                             "this curve, and no delta says where it breaks")
            lines.append(f"GDP         not mu-GDP for any mu < {self.gdp_mu_lower_bound:.4g} (a statement about "
                         "Gaussian DP curves only)")
        tried = ", ".join(str(k) for k in self.guesses_tried)
        share = (f"the confidence's Bonferroni share, {FDP_SHARE:.0%} of it to the f-DP tests and the rest to the "
                 "point tests" if self.fdp_tests else "the confidence's Bonferroni share")
        lines.append(f"tested      guesses in [{tried}], each at {share}")
        return "\n".join(lines + [f"note        {n}" for n in self.notes])

    def __str__(self) -> str:
        return self.summary()


def canary_inputs(scores, included, *, names=("scores", "included")):
    """(scores, inclusion bits as bools) checked: one finite score and one 0/1 per canary; errors use ``names``."""
    s = load_scores(scores, name=names[0], min_count=2)
    inc = load_scores(included, name=names[1], min_count=2)
    if len(inc) != len(s):
        raise DatasetError(f"{names[1]}: {len(inc)} values for {len(s)} scores in {names[0]}; give one 0/1 per "
                           "canary")
    if not np.all((inc == 0) | (inc == 1)):
        bad = inc[(inc != 0) & (inc != 1)][0]
        raise DatasetError(f"{names[1]}: expected 0 or 1 per canary, got {float(bad):g}")
    return s, inc.astype(bool)


def _check_guesses(guesses, m: int) -> None:
    """A ParameterValueError when ``guesses`` (checked as an option already) exceeds the ``m`` canaries."""
    if guesses is not None and guesses > m:
        raise ParameterValueError(f"guesses must be at most the number of canaries ({m}); got {guesses}")


def _tests(claim, delta, grid):
    """(guesses, delta, claimed epsilon) of every test: each number of guesses at each tested delta.

    The deltas of one number of guesses need no share of the failure probability each: a mechanism
    that keeps the claimed curve is (epsilon(delta), delta)-DP at every delta at once, so each delta's
    p-value bounds the same tail P[W >= v] of the one count W of correct guesses, and so does their
    minimum; certifying at every delta with level ``beta`` errs only when that minimum is below
    ``beta`` at the observed W, which has probability at most ``beta``.  Only the numbers of guesses
    (different counts W) are Bonferroni-split.
    """
    claimed = {d: float(claim.epsilon(d)) for d in (CURVE_DELTAS if claim.is_curve else [delta])}
    claimed = {d: e for d, e in claimed.items() if math.isfinite(e)}
    if not claimed:
        # A curve finite only above CURVE_DELTAS (a profile of large deltas) is point-tested at its first
        # point, as a one-point claim is; the f-DP tests still read all of it.
        eps, d = claim.finite_point
        claimed = {d: eps}
    return [(k, d, e) for k in grid for d, e in claimed.items()]


@ONE_RUN_OPTIONS.validates
def audit_one_run(scores, included, *, epsilon=None, delta=0.0, claim=None, guesses=None, confidence=0.95,
                  seed=None) -> OneRunReport:
    """Certify epsilon from one run's canary scores and their inclusion bits (each included with probability 1/2).

    ``guesses`` fixes the number of guesses; by default every count in
    :func:`~dpaudit.stats.one_run.guess_grid` is tried, each at ``(1 -
    confidence) / len(grid)``, so the largest bound holds with ``confidence``
    (Bonferroni: choosing spends no validity).  A curve claim is tested at
    every delta of :data:`CURVE_DELTAS` at its number of guesses' level, with
    no further split (:func:`_tests` says why), and by the f-DP tests; the
    two families split each number of guesses' share (:data:`FDP_SHARE`).
    Tied scores are ordered at random from ``seed`` (drawn and reported when
    absent), never by their order in the input: the only draw, so scores
    without ties give the same report for every seed.

    >>> rng = np.random.default_rng(0)
    >>> inc = rng.integers(0, 2, 1000)
    >>> r = audit_one_run(inc + rng.laplace(0, 1, 1000), inc, epsilon=1.0)
    >>> r.verdict, r.epsilon_lower_bound <= 1.0
    ('no violation found', True)
    """
    from .pipeline import resolve_claim

    t_start = time.perf_counter()
    s, inc = canary_inputs(scores, included)
    m = len(s)
    _check_guesses(guesses, m)
    claim_obj, _, _ = resolve_claim(claim, epsilon, delta, "clopper-pearson")
    grid = [guesses] if guesses is not None else guess_grid(m)
    entropy = seed_entropy(as_seed_sequence(seed))
    ties = tie_order(m, np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(TIES_KEY,))))
    tests = _tests(claim_obj, claim_obj.finite_point[1], grid)
    curve = claim_obj.is_curve
    # A curve is also tested whole (f-DP); the two families of tests split the failure probability (FDP_SHARE).
    split = (1.0 - confidence) / len(grid)
    fdp_share = split * FDP_SHARE
    level = 1.0 - (split - fdp_share if curve else split)  # a curve's deltas share their k's level: see _tests
    rows = []
    counts = dict(zip(grid, counts_for_guesses(s, inc, grid, ties=ties)))
    for k, d, claimed in tests:
        r, v = counts[k]
        rows.append({"guesses": r, "correct": v, "delta": d, "claimed_epsilon": claimed,
                     "epsilon_lower_bound": one_run_epsilon_bound(m, r, v, delta=d, confidence=level)})
    top = counts_for_guesses(s, inc, grid, one_sided=True, ties=ties) if curve else []  # the f-DP tests' counts
    fdp_rows = _fdp_tests(claim_obj, len(s), top, fdp_share)
    best = _reported(rows + [t["pair"] for t in fdp_rows if t["pair"]])
    crossed = best["epsilon_lower_bound"] > best["claimed_epsilon"]
    where = None
    if crossed:  # a point claim too: --epsilon/--delta and eps:EPS,delta=DELTA are one claim (as audit, scores)
        where = {"test": best.get("test", "steinke-nasr-jagielski"),
                 **{k: best[k] for k in ("delta", "epsilon_lower_bound", "claimed_epsilon", "guesses", "correct")}}
    return OneRunReport(
        epsilon_lower_bound=best["epsilon_lower_bound"], claimed_epsilon=best["claimed_epsilon"],
        claimed_delta=best["delta"], confidence=confidence, canaries=m, guesses=best["guesses"],
        correct=best["correct"], verdict=verdict_of(crossed),
        ceiling=_ceiling(m, best, level, 1.0 - fdp_share),
        claim=None if claim is None else (claim if isinstance(claim, str) else claim_obj.spec),
        curve_violation=where, guesses_tried=list(grid), tests=rows, fdp_tests=fdp_rows,
        curve_rejected=any(t["rejected"] for t in fdp_rows) if curve else None,
        gdp_mu_lower_bound=fdp_one_run_mu_bound_max(m, top, confidence=1.0 - fdp_share) if curve else None,
        included=int(inc.sum()), seed=entropy, notes=_inclusion_notes(inc),
        elapsed_seconds=round(time.perf_counter() - t_start, 4))


#: Below this two-sided p-value, the inclusion count is reported as no fair coin's (a false note once in 10^6 runs).
INCLUSION_NOTE_P = 1e-6


def _inclusion_notes(included: np.ndarray) -> list[str]:
    """A note when the number of included canaries is implausible for independent fair coins.

    The theorem's bound holds only when each canary was included with probability 1/2 (Steinke, Nasr and
    Jagielski 2023); all 1,000 canaries excluded, say, is a file of other bits, and its bound means nothing.
    """
    from scipy.special import bdtr, bdtrc  # ufuncs: scipy.stats' import costs the command a second

    m, k = len(included), int(np.sum(included))
    # Two-sided, as binomtest's at 1/2 (symmetric): twice the smaller tail, at most 1.
    p = min(1.0, 2.0 * min(float(bdtr(k, m, 0.5)), float(bdtrc(k - 1, m, 0.5)) if k > 0 else 1.0))
    if p >= INCLUSION_NOTE_P:
        return []
    return [f"{k} of {m} canaries included: fair coins give a count this far from {m / 2:g} with probability "
            f"{p:.2g}; the bound assumes each canary was included independently with probability 1/2"]


def _reported(points):
    """The test row shown at the top level: the largest margin over the claim when one is crossed, else the
    largest share of the claim certified (as the sampling audit reports a curve); ties by the larger bound.
    By margin alone, a delta whose bound is 0 but whose claim is smallest would be shown."""
    def margin(t):
        return (t["epsilon_lower_bound"] - t["claimed_epsilon"], t["epsilon_lower_bound"])

    def share(t):
        return (t["epsilon_lower_bound"] / t["claimed_epsilon"] if t["claimed_epsilon"] > 0 else 0.0,
                t["epsilon_lower_bound"])

    top = max(points, key=margin)
    return top if margin(top)[0] > 0 else max(points, key=share)


def _ceiling(m, best, level, fdp_level):
    """The reported test's bound had all its guesses been right, at that test's level (point or f-DP)."""
    if best.get("test") == "f-dp":  # searched up from the bound itself, so the two tolerances cannot cross
        return float(fdp_one_run_epsilon_bounds(m, best["guesses"], best["guesses"], [best["delta"]],
                                                confidence=fdp_level, above=[best["epsilon_lower_bound"]])[0])
    return one_run_ceiling(m, best["guesses"], delta=best["delta"], confidence=level)


def _fdp_tests(claim, m, counts, share):
    """The f-DP test of the whole claimed curve (Mahloujifar, Melis and Chaudhuri 2025) at each number of guesses.

    It is proved for one-sided guesses, so each count is of k "included" guesses on the k highest
    scores; each k is tested at ``share`` (Bonferroni over k, as the point tests).  Where the whole
    curve is rejected, :func:`_fdp_pair` looks for a point of it that the same count rejects.  The
    mu bound (:func:`fdp_one_run_mu_bound_max`) reads the same counts at the same level: the same
    tests, of Gaussian curves, so no further share.
    """
    rows = []
    for r, v in counts:
        rejected = fdp_one_run_rejects(m, r, v, claim.power_inverse, share)
        rows.append({"guesses": r, "correct": v, "rejected": rejected,
                     "pair": _fdp_pair(claim, m, r, v, share) if rejected else None})
    return rows


def _fdp_pair(claim, m, k, c, share):
    """The claim's grid point (delta, epsilon) that ``c`` of ``k`` crosses by the most, with its certified epsilon.

    A rejected whole curve says the run breaks the claim at some delta, not at which (a curve is
    stronger than each of its points).  The grid's points are tested one by one with the same count
    at the same level, and the largest epsilon rejected at each crossed one is certified.  A point's
    curve is weaker than the whole curve, so the count rejects it only when it rejects the whole
    (checked in the tests), and these need no further share.  None when no single point is crossed.
    """
    deltas, epsilons = claim.grid()
    crossed = fdp_one_run_rejects_points(m, k, c, epsilons, deltas, share)
    if not crossed.any():
        return None
    bounds = fdp_one_run_epsilon_bounds(m, k, c, deltas[crossed], confidence=1.0 - share, above=epsilons[crossed],
                                        best_margin=True)
    j = int(np.nanargmax(bounds - epsilons[crossed]))
    return {"test": "f-dp", "guesses": k, "correct": c, "delta": float(deltas[crossed][j]),
            "claimed_epsilon": float(epsilons[crossed][j]), "epsilon_lower_bound": float(bounds[j])}


@HARNESS_OPTIONS.validates
def one_run(train, dataset, canaries, score, *, epsilon=None, delta=0.0, claim=None, seed=None, guesses=None,
            confidence=0.95, save=None) -> OneRunReport:
    """Audit ``train`` in one run: include each canary with probability 1/2, train once, score every canary.

    ``train(data, rng=...)`` is called once, with a numpy Generator and ``data``: ``dataset`` followed by
    the included canaries in canary order.  Its form follows the records, so any training code can be
    audited as it is (:func:`_harness_inputs`):

    * numeric records (numpy reads ``dataset`` and ``canaries`` as arrays of numbers, records of one
      shape): a numpy array, the canaries appended along axis 0 (the dtype numpy gives the two);
    * a pandas DataFrame (or Series) of each: one DataFrame (Series), rows renumbered from 0;
    * any other sequence (text, tuples, dicts, objects, ragged rows): a list, the records as given.

    ``score(model, canary)`` gets each canary as given (a row of an array, a DataFrame's row as a
    Series, else the object itself) and returns a number, higher for "more likely included".  The
    inclusion bits and the training seed come from ``seed`` (drawn and reported when absent).

    ``save``: a directory (made if absent) that keeps the run's evidence, since the training run is the
    costly part and the report alone cannot be re-checked: ``scores.csv`` and ``included.csv`` (one value
    per canary, in canary order), written as soon as the canaries are scored, so an audit that fails
    after training loses nothing, then ``report.json``.  ``dpaudit one-run DIR/scores.csv
    DIR/included.csv --seed SEED`` (the report's seed) gives the same report again, or tests another claim.

    >>> def train(data, rng):                      # a noisy sum: every canary is a Dirac coordinate
    ...     return data.sum(axis=0) + rng.normal(0, 1.0, data.shape[1])
    >>> canaries = np.eye(500)
    >>> r = one_run(train, np.zeros((10, 500)), canaries, lambda model, c: float(model @ c), epsilon=1.0, seed=0)
    >>> r.verdict
    'violation'
    >>> texts = [f"canary {i}" for i in range(500)]   # text: train gets a list, score each string
    >>> r = one_run(lambda data, rng: set(data), ["hello"], texts, lambda seen, t: float(t in seen), epsilon=1.0,
    ...             seed=0)
    >>> r.verdict, round(r.epsilon_lower_bound, 2)   # a set of the texts seen: every guess right, the ceiling
    ('violation', 4.64)
    """
    from .pipeline import resolve_claim

    _check_callables(train, score)
    cans, join = _harness_inputs(dataset, canaries)
    # Every argument is checked before training, the costly part: a typo in a claim must not cost a run.
    resolve_claim(claim, epsilon, delta, "clopper-pearson")
    _check_guesses(guesses, len(cans))
    if save is not None:
        _save_evidence(save, {})  # the directory made now: one that cannot be is named before the run, not after
    entropy = seed_entropy(as_seed_sequence(seed))
    bits_rng, train_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(entropy).spawn(2))
    included = bits_rng.random(len(cans)) < 0.5
    model = train(join(included), rng=train_rng)
    scores = _canary_scores(score, model, cans)
    if save is not None:
        _save_evidence(save, {"scores.csv": scores, "included.csv": included.astype(int)})
    report = audit_one_run(scores, included.astype(int), epsilon=epsilon, delta=delta, claim=claim, guesses=guesses,
                           confidence=confidence, seed=entropy)
    if save is not None:
        _save_evidence(save, {"report.json": report.to_dict()})
    return report


def _check_callables(train, score) -> None:
    """A ParameterTypeError naming the contract when ``train(data, rng=...)`` or ``score(model, canary)`` cannot
    be called so: a scorer of the wrong signature once failed only after the training run it made useless, and a
    train without ``rng`` as Python's "unexpected keyword argument".  A callable whose signature cannot be read
    (some builtins) is let through."""
    import inspect

    for name, fn, args, kwargs, form in (("train", train, (None,), {"rng": None}, "(data, rng=...)"),
                                         ("score", score, (None, None), {}, "(model, canary)")):
        if not callable(fn):
            raise ParameterTypeError(f"{name} must be callable, {name}{form}; got {type(fn).__name__}")
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            continue
        try:
            sig.bind(*args, **kwargs)
        except TypeError:
            raise ParameterTypeError(f"{name} must take {form}; {getattr(fn, '__qualname__', name)} takes {sig}"
                                     ) from None


def _save_evidence(directory, files: dict) -> None:
    """Write ``files`` (name -> a 1-D array, one value a line, or a dict as JSON) into ``directory``, each whole.

    CSV, since every entry point reads it and floats written by ``repr`` read back exactly; each file is
    replaced atomically, so a crash leaves the old one or the new one.
    """
    import json
    from pathlib import Path

    from ..results import atomic_write_text, json_safe

    folder = Path(directory).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, value in files.items():
            text = (json.dumps(json_safe(value), allow_nan=False, indent=1) if isinstance(value, dict)
                    else "".join(f"{v!r}\n" for v in value.tolist()))
            atomic_write_text(folder / name, text)
    except OSError as exc:
        raise DatasetError(f"save: cannot write the run's evidence to {str(folder)!r}: {exc.strerror or exc}") from None


#: The numpy dtype kinds joined as arrays: booleans, integers, floats and complex numbers.
NUMERIC_KINDS = "biufc"


def _harness_inputs(dataset, canaries):
    """(the canaries as ``score`` gets them, ``join``: the inclusion bits -> ``train``'s data), or a DatasetError.

    Numeric records keep the array join of the float-only harness (so its seeds give the same reports);
    everything else is joined as a list so text, labelled tuples and objects reach the user's code unchanged.
    """
    if _is_pandas(dataset) or _is_pandas(canaries):
        return _pandas_inputs(dataset, canaries)
    data, cans = _numeric(dataset, "dataset"), _numeric(canaries, "canaries")
    if data is not None and cans is not None:
        _check_count(len(cans))
        if data.size == 0 and data.ndim == 1:  # [] or np.array([]): no records, of the canaries' form
            data = np.empty((0,) + cans.shape[1:], dtype=cans.dtype)
        if cans.shape[1:] != data.shape[1:]:
            raise DatasetError(f"canaries: each has shape {cans.shape[1:]}, the dataset's records {data.shape[1:]}")
        return cans, lambda included: np.concatenate([data, cans[included]], axis=0)
    records, given = list(dataset), list(canaries)
    _check_count(len(given))
    return given, lambda included: records + [given[i] for i in np.flatnonzero(included)]


def _check_count(m: int) -> None:
    if m < 2:
        raise ParameterValueError(f"canaries: at least 2 are needed; got {m}")


def _numeric(values, name: str) -> np.ndarray | None:
    """``values`` as one array of numeric records, or None when numpy does not read them so (text, objects,
    ragged rows); a DatasetError naming the argument when they are not a sequence of records at all."""
    if isinstance(values, (str, bytes)):
        raise DatasetError(f"{name}: expected a sequence of records, got one {type(values).__name__}; pass a list "
                           "of records, e.g. [text]")
    readable = hasattr(values, "__array__") or (hasattr(values, "__len__") and hasattr(values, "__getitem__"))
    if isinstance(values, (Mapping, Set)) or not readable:
        hint = f"pass a list, e.g. list({name})" if hasattr(values, "__iter__") else "pass a list of records"
        raise DatasetError(f"{name}: expected a sequence of records (a list, tuple or array), got a "
                           f"{type(values).__name__}; {hint}")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):  # ragged rows: numpy refuses them unless asked for an object array
        return None
    if arr.ndim == 0:
        raise DatasetError(f"{name}: expected a sequence of records, got one {arr.dtype} value")
    return arr if arr.dtype.kind in NUMERIC_KINDS else None


def _is_pandas(values) -> bool:
    return type(values).__module__.partition(".")[0] == "pandas"


def _pandas_inputs(dataset, canaries):
    """:func:`_harness_inputs` for pandas records: both DataFrames with the same columns, or both Series.

    Imported only here, as pandas is not a dependency.  A pandas object turned into a list would be its
    column names, so one pandas argument with the other not is refused rather than guessed at.
    """
    import pandas as pd

    frame = isinstance(dataset, pd.DataFrame)
    for name, values in (("dataset", dataset), ("canaries", canaries)):
        if not isinstance(values, pd.DataFrame if frame else pd.Series):
            kind = "DataFrame" if frame else "Series"
            raise DatasetError(f"{name}: expected a pandas {kind} like the other argument, got a "
                               f"{type(values).__name__}; give the dataset and the canaries as the same kind")
    if frame and list(dataset.columns) != list(canaries.columns):
        raise DatasetError(f"canaries: columns {list(canaries.columns)} differ from the dataset's "
                           f"{list(dataset.columns)}")
    _check_count(len(canaries))

    def join(included):
        parts = [p for p in (dataset, canaries.iloc[np.flatnonzero(included)]) if len(p)]
        return pd.concat(parts or [dataset], ignore_index=True)  # pandas warns on concatenating empty ones

    return [canaries.iloc[i] for i in range(len(canaries))], join


def _canary_scores(score, model, canaries) -> np.ndarray:
    """``score(model, c)`` for every canary, each one finite number: a bad one is named with its canary, since
    an array, None or NaN from a user's scorer once surfaced as numpy's own message or a NaN in "scores"."""
    out = np.empty(len(canaries))
    for i, canary in enumerate(canaries):
        value = score(model, canary)
        try:
            arr = as_numpy(value)
        except Exception as exc:
            raise TargetError(f"score returned a {type(value).__name__} that numpy cannot read for canary {i} "
                              f"({type(exc).__name__}: {exc}); expected one number") from None
        if arr.dtype.kind not in "biuf" or arr.size != 1:
            what = f"an array of shape {arr.shape}" if arr.ndim else f"{value!r:.60}"
            raise TargetError(f"score returned {what} for canary {i}; expected one number")
        out[i] = float(arr.reshape(()))
        if not math.isfinite(out[i]):
            raise TargetError(f"score returned {out[i]} for canary {i}; expected a finite number")
    return out
