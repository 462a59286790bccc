"""Black-box distinguishers: learn, from releases on D and D', a score that separates them.

A distinguisher is fitted on one part of the calibration samples and turns
any batch of releases into one real score per release (larger means "looks
like D").  The auditor then chooses a threshold on the other calibration part
and counts on held-out samples (:mod:`dpaudit.stats.selection`), so fitting
can be as greedy as it likes without making the bound optimistic.

Every distinguisher is a plain object with ``fit(x0, x1) -> self`` and
``score(x) -> ndarray`` (the :class:`Distinguisher` protocol); the registry
``ATTACKS`` maps names to factories, so users can add their own.
"""


from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...exceptions import ParameterValueError
from .base import Distinguisher, OutcomeIndex, as_2d
from .cells import CellValuesScore
from ._features import max_abs_correlation, n_distinct_rows, special_values
from .classifier import WIDE_CELLS, BinnedLogisticScore, ClassifierScore
from .discrete import LikelihoodRatioScore
from .mixed import MixedScore, PatternCellsScore
from .scalar import ThresholdScore
from .vector import (CoordinateScore, DensityRatioSumScore, MeanDifferenceScore, NaiveBayesScore, QuadraticScore,
                     SignSumScore)


__all__ = [
    "Distinguisher",
    "ThresholdScore",
    "LikelihoodRatioScore",
    "MeanDifferenceScore",
    "NaiveBayesScore",
    "DensityRatioSumScore",
    "auto_choices",
    "float_choices",
    "ClassifierScore",
    "BinnedLogisticScore",
    "MixedScore",
    "PatternCellsScore",
    "CellValuesScore",
    "SignSumScore",
    "CoordinateScore",
    "ATTACKS",
    "register_attack",
    "make_distinguisher",
    "list_attacks",
    "output_kind",
    "OutcomeIndex",
    "FLOAT_ATTACKS",
]



@dataclass(frozen=True)
class _AttackSpec:
    factory: Callable[[], Distinguisher]
    outputs: str
    description: str


ATTACKS: dict[str, _AttackSpec] = {}


def register_attack(name: str, factory: Callable[[], Distinguisher], *, outputs: str, description: str) -> None:
    """Add a distinguisher to the registry (named, open choices are registries)."""
    ATTACKS[name] = _AttackSpec(factory, outputs, description)


register_attack("threshold", ThresholdScore, outputs="scalar",
                description="threshold on the release itself, upper and lower tails, far-tail candidates")
register_attack("likelihood-ratio", LikelihoodRatioScore, outputs="discrete",
                description="best set of outcomes by estimated likelihood ratio (discrete scalars or vectors)")
register_attack("mean-difference", MeanDifferenceScore, outputs="vector",
                description="projection on the standardised mean difference, then a threshold")
register_attack("naive-bayes", NaiveBayesScore, outputs="vector",
                description="sum of per-coordinate binned log likelihood ratios, then a threshold")
register_attack("density-ratio-sum", DensityRatioSumScore, outputs="vector",
                description="sum of per-coordinate smoothed log density ratios, interpolated between quantile bins "
                            "and extrapolated into the tails (many weakly informative coordinates: DP training)")
register_attack("mixed", MixedScore, outputs="vector",
                description="special values (abort, below, bottom) and numbers: log ratio of the pattern of "
                            "specials (part by part over independent groups of coordinates) plus per-coordinate "
                            "binned log ratios of the numbers")
register_attack("pattern-cells", PatternCellsScore, outputs="vector",
                description="special values and numbers as one pattern, each number coarsened to a quantile bin "
                            "of its coordinate: log ratio of whole patterns (where in the row a value sits)")
register_attack("cell-values", CellValuesScore, outputs="vector",
                description="per cell (pattern of special values: the position of an above answer) its count log "
                            "ratio plus a log density ratio of the numbers it holds, fitted per cell in bins that "
                            "grow as the cube root of its count, monotone where that fits")
register_attack("sign-sum", SignSumScore, outputs="vector",
                description="signed count of coordinates on D's side of their median: the far tail of a sum of "
                            "small per-coordinate leaks")
register_attack("innovation-sign-sum", lambda: SignSumScore("innovations"), outputs="vector",
                description="sign-sum on innovations (each coordinate minus its prediction from the earlier "
                            "ones): prefix sums and other correlated releases")
register_attack("coordinate", CoordinateScore, outputs="vector",
                description="the single coordinate whose threshold separates best (a leak in one coordinate)")
register_attack("binned-logistic", BinnedLogisticScore, outputs="vector",
                description="DP-Sniper-style logistic regression on one-hot cells (special value or quantile "
                            "bin per coordinate), fitted on a capped sample")
register_attack("quadratic", QuadraticScore, outputs="vector",
                description="Gaussian log likelihood ratio with each side's mean and covariance: a coordinate "
                            "copied, or coordinates correlated, on one side only")
register_attack("logistic", lambda: ClassifierScore("logistic"), outputs="vector",
                description="logistic regression log-odds (scikit-learn), then a threshold")
register_attack("mlp", lambda: ClassifierScore("mlp"), outputs="vector",
                description="small neural network classifier in the spirit of DP-Sniper, then a threshold")
register_attack("boosting", lambda: ClassifierScore("boosting"), outputs="vector",
                description="gradient-boosted trees (scikit-learn), catches non-linear leaks, then a threshold")

# The floating-point family (outputs="float"): features of each release's bits, not its value.
from .floating import FLOAT_ATTACKS, float_choices  # noqa: E402

for _name, (_factory, _line) in FLOAT_ATTACKS.items():
    register_attack(_name, _factory, outputs="float", description=_line)

AUTO_CHOICES = {
    "scalar": ("threshold", "naive-bayes"),
    "discrete": ("likelihood-ratio", "threshold"),
    "discrete-vector": ("likelihood-ratio", "mean-difference", "naive-bayes", "sign-sum"),
    "vector": ("mean-difference", "naive-bayes", "density-ratio-sum", "coordinate", "sign-sum", "mixed",
               "binned-logistic"),
}

#: Coordinates this correlated (|r| on the fitting releases) also get the innovation sign-sum.
CORRELATED = 0.3
#: Up to this many coordinates, releases whose coordinates depend on each other differently on the two sides also
#: get the quadratic score (its fit and scores grow as the square of the width).
WIDE_QUADRATIC = 64
#: Most coordinates for which ``auto`` looks for correlations (a k x k matrix) and tries the innovation sign-sum
#: (a k x k Cholesky factor): 8 MB and about a second at 1,024, 800 MB and minutes at 10,000.
WIDE_INNOVATIONS = 1024


def auto_choices(kind: str, x: np.ndarray, other: np.ndarray | None = None) -> tuple[str, ...]:
    """The distinguishers ``auto`` tries, chosen among on the selection split.

    Scalars: the threshold, and the binned likelihood ratio (``naive-bayes`` on the one coordinate), whose
    interval events see noise whose ratio peaks inside the range (Cauchy's, at -0.618) where every
    tail falls short; when some values repeat often (atoms: a clamp's bounds, an unnoised answer
    released now and then) beside other numbers, the cells of specials too, as for vectors: a
    threshold or a binned ratio averages an atom with its bin and misses an infinite ratio.  Discrete releases: the likelihood ratio over
    outcomes (whole rows for vectors) and the threshold or vector scores.
    Vectors: the mean difference (a linear leak), the best single coordinate
    (a leak in one coordinate's tail), the sign-sum (many small leaks that
    add up), the mixed score (special values such as abort or "below" next to
    numbers) and a DP-Sniper-style logistic regression on binned cells (up to
    ``WIDE_CELLS`` coordinates: its fit grows as the square of the cells); when
    some coordinate has special values and the rows are not made of special
    values alone, the pattern of specials and binned numbers as one pattern
    too, and each cell (pattern of specials) with a density ratio of its
    numbers fitted per cell; when coordinates are correlated and hold numbers
    only (prefix sums), the sign-sum on innovations too (up to ``WIDE_INNOVATIONS`` coordinates); when ``other``
    (the other side's fitting releases) is given and the two sides' correlations differ beyond their noise
    (a coordinate copied on one side only), the quadratic score too (up to ``WIDE_QUADRATIC`` coordinates).
    Releases that repeat exactly (many draws share a value) get the
    likelihood-ratio outcome sets too, whatever their kind: a leak in *which*
    values occur (Mironov's floating-point attack) shows only there.
    Rows (``x`` of two dimensions) never get the threshold, which scores one number per release: the audit's
    calibration and the pair search's screening both read this one list.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> auto_choices("vector", np.cumsum(rng.laplace(size=(1000, 4)), axis=1))[-1]
    'innovation-sign-sum'
    """
    x = np.asarray(x)
    if kind == "discrete" and x.ndim > 1:
        return AUTO_CHOICES["discrete-vector"]
    names = list(AUTO_CHOICES[kind])
    specials, numbers = _specials_and_numbers(x[:20_000]) if kind in ("vector", "scalar") else (False, False)
    if specials and numbers:
        names += ["pattern-cells", "cell-values"]
    width = as_2d(x).shape[1]
    if kind == "vector" and width > WIDE_CELLS:  # the classifier's fit grows as cells^2
        names.remove("binned-logistic")
    if kind == "vector" and width <= WIDE_INNOVATIONS and not specials and max_abs_correlation(x[:20_000]) > CORRELATED:
        names.append("innovation-sign-sum")
    if (kind == "vector" and other is not None and 2 <= width <= WIDE_QUADRATIC and not specials
            and dependence_differs(x[:20_000], np.asarray(other)[:20_000])):
        names.append("quadratic")
    if kind != "discrete" and repeats(x):
        names.append("likelihood-ratio")
    if kind != "scalar" and x.ndim > 1:
        names = [n for n in names if n != "threshold"]
    return tuple(names)


def dependence_differs(x0: np.ndarray, x1: np.ndarray, *, z: float = 5.0, floor: float = 0.02) -> bool:
    """Whether some pair of coordinates correlates differently on the two sides: a difference of sample
    correlations above ``z`` times its largest standard error sqrt(2 / n) (and ``floor``)."""
    a, b = as_2d(np.asarray(x0, float)), as_2d(np.asarray(x1, float))
    n = min(len(a), len(b))
    if a.shape[1] < 2 or n < 10 or a.shape[1] != b.shape[1]:
        return False
    # Releases of any finite magnitude are valid: a square may overflow, and a coordinate it spoils drops out (numpy's
    # warnings would stop an assert_dp run under warnings-as-errors without changing the answer).
    with np.errstate(all="ignore"):
        keep = (a.std(axis=0) > 0) & (b.std(axis=0) > 0)
        if keep.sum() < 2:
            return False
        gap = np.abs(np.corrcoef(a[:, keep], rowvar=False) - np.corrcoef(b[:, keep], rowvar=False))
    gap = gap[np.isfinite(gap)]
    return bool(gap.size and gap.max() > max(z * np.sqrt(2.0 / n), floor))


def _specials_and_numbers(x: np.ndarray) -> tuple[bool, bool]:
    """(some coordinate repeats values, some coordinate holds two or more values that are not its specials).

    Specials (markers, levels) make correlations come from patterns, not sums.  ``pattern-cells``
    differs from ``mixed`` in how it reads the other numbers: on releases made of specials alone
    (bits, levels) both give the same scores, and ``mixed``, tried first, wins every tie, so
    ``pattern-cells`` is left out there (its fit would cost time for the same scores;
    ``tests/auditor/test_distinguishers_structure.py``).  A coordinate whose other values are one
    value only counts as specials alone: both scores code that value as one cell (the rare ones of
    optimized unary encoding at a large epsilon, below a special's share in some coordinates: identical
    scores, and a fit saved; docs/decisions/distinguisher-costs.md).
    """
    rows = as_2d(np.asarray(x, float))
    specials = special_values(rows)
    if not any(len(v) for v in specials):
        return False, True
    return True, any(len(np.unique(rows[:, j][~np.isin(rows[:, j], v)])) > 1 for j, v in enumerate(specials))


def repeats(x: np.ndarray, *, probe: int = 200_000) -> bool:
    """Whether releases repeat exactly: fewer distinct values (rows) than 3/4 of the releases."""
    rows = as_2d(np.asarray(x)[:probe])
    return _n_distinct(rows) < 0.75 * len(rows)


def _n_distinct(rows: np.ndarray) -> int:
    """Distinct rows: a sort of one column, or of one random projection per row (cheaper than ``np.unique(axis=0)``)."""
    return n_distinct_rows(rows)


def make_distinguisher(name: str) -> Distinguisher:
    if name not in ATTACKS:
        raise ParameterValueError(f"attack must be 'auto' or one of {sorted(ATTACKS)}; got {name!r}")
    return ATTACKS[name].factory()


def list_attacks() -> list[tuple[str, str]]:
    """(name, one line) for ``dpaudit list``."""
    return [("auto", "by output, best on the selection split: scalar -> threshold, naive-bayes (+ pattern-cells "
                     "and cell-values with repeated values beside other numbers); "
                     "discrete -> likelihood-ratio "
                     "or threshold (rows: + mean-difference, naive-bayes, sign-sum); vector -> mean-difference, naive-bayes, "
                     "density-ratio-sum, coordinate, sign-sum, mixed, binned-logistic (+ pattern-cells and cell-values with "
                     "special values and other numbers, "
                     "innovation-sign-sum when coordinates correlate, quadratic when they correlate differently on "
                     "the two sides); + likelihood-ratio when values repeat")] + [
        (name, f"[{spec.outputs}] {spec.description}") for name, spec in ATTACKS.items()]


def output_kind(x: np.ndarray, *, max_outcomes: int = 1000, probe: int = 20_000) -> str:
    """"discrete" when releases take few distinct values, else "scalar" or "vector".

    Decided on the first ``probe`` releases: discrete when they hold at most
    ``max_outcomes`` distinct values (or rows) and each appears about 20 times
    or more on average, so that likelihood ratios can be estimated.

    >>> output_kind(np.array([0, 1, 1, 0] * 10)), output_kind(np.linspace(0, 1, 50))
    ('discrete', 'scalar')
    """
    x = np.asarray(x)
    rows = as_2d(x[:probe])
    n_distinct = _n_distinct(rows)
    if n_distinct <= max_outcomes and n_distinct * 20 <= len(rows):
        return "discrete"
    return "scalar" if x.ndim == 1 else "vector"
