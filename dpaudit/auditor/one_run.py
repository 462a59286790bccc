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
from ..stats.one_run import counts_for_guesses, guess_grid, tie_order
# CURVE_DELTAS and FDP_SHARE are re-exported: the one-run certificate owns them.
from ..stats.one_run_certificate import CURVE_DELTAS, FDP_SHARE, GuessCounts, OneRun  # noqa: F401

__all__ = ["OneRunReport", "audit_one_run", "canary_inputs", "one_run"]

#: The spawn key of the seed stream that orders tied scores (:func:`~dpaudit.stats.one_run.tie_order`); the
#: harness's inclusion bits and training use keys 0 and 1.
TIES_KEY = 2


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
    >>> r.violation, r.epsilon_lower_bound <= 1.0
    (False, True)
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
    # A curve is also tested whole, by one-sided guesses on the highest scores (the f-DP tests).
    top = counts_for_guesses(s, inc, grid, one_sided=True, ties=ties) if claim_obj.is_curve else []
    evidence = GuessCounts(m, counts_for_guesses(s, inc, grid, ties=ties), top)
    result = OneRun().certify(evidence, claim_obj, confidence=confidence)
    best, details = result.details["reported"], result.details
    where = None
    if result.violation:  # a point claim too: --epsilon/--delta and eps:EPS,delta=DELTA are one claim
        where = {"test": result.method,
                 **{k: best[k] for k in ("delta", "epsilon_lower_bound", "claimed_epsilon", "guesses", "correct")}}
    return OneRunReport(
        epsilon_lower_bound=result.epsilon_lower_bound, claimed_epsilon=result.claimed_epsilon,
        claimed_delta=result.delta, confidence=confidence, canaries=m, guesses=details["guesses"],
        correct=details["correct"], verdict=verdict_of(result.violation), ceiling=result.ceiling,
        claim=None if claim is None else (claim if isinstance(claim, str) else claim_obj.spec),
        curve_violation=where, guesses_tried=list(grid), tests=details["tests"], fdp_tests=details["fdp_tests"],
        curve_rejected=details["curve_rejected"], gdp_mu_lower_bound=details["gdp_mu_lower_bound"],
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
