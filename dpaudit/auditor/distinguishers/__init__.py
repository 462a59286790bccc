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
from .classifier import ClassifierScore
from .discrete import LikelihoodRatioScore
from .scalar import ThresholdScore
from .vector import MeanDifferenceScore, NaiveBayesScore


__all__ = [
    "Distinguisher",
    "ThresholdScore",
    "LikelihoodRatioScore",
    "MeanDifferenceScore",
    "NaiveBayesScore",
    "auto_choices",
    "float_choices",
    "ClassifierScore",
    "ATTACKS",
    "register_attack",
    "make_distinguisher",
    "list_attacks",
    "output_kind",
    "OutcomeIndex",
    "float_choices",
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
    "scalar": ("threshold",),
    "discrete": ("likelihood-ratio", "threshold"),
    "vector": ("mean-difference", "naive-bayes"),
}


def auto_choices(kind: str, x: np.ndarray) -> tuple[str, ...]:
    """The distinguishers ``auto`` tries, chosen among on the selection split.

    Releases that repeat exactly (many draws share a value) get the
    likelihood-ratio outcome sets too, whatever their kind: a leak in *which*
    values occur (Mironov's floating-point attack) shows only there.  Vector
    outputs try the outcome sets only as such; the threshold needs scalars.
    """
    names = list(AUTO_CHOICES[kind])
    if kind == "discrete" and np.asarray(x).ndim > 1:
        names = ["likelihood-ratio", "mean-difference", "naive-bayes"]
    elif kind != "discrete" and repeats(x):
        names.append("likelihood-ratio")
    return tuple(names)


def float_choices(x: np.ndarray) -> tuple[str, ...]:
    """The floating-point attacks worth trying on releases ``x`` (none is registered yet)."""
    return tuple(name for name, spec in ATTACKS.items() if spec.outputs == "float")


def repeats(x: np.ndarray, *, probe: int = 200_000) -> bool:
    """Whether releases repeat exactly: fewer distinct values (rows) than 3/4 of the releases."""
    rows = as_2d(np.asarray(x)[:probe])
    return _n_distinct(rows) < 0.75 * len(rows)


def _n_distinct(rows: np.ndarray) -> int:
    """Distinct rows; a plain sort for one column (``np.unique(axis=0)`` is ~10x slower)."""
    if rows.shape[1] == 1:
        s = np.sort(rows[:, 0])
        return int(len(s) > 0) + int(np.count_nonzero(s[1:] != s[:-1]))
    return len(np.unique(rows, axis=0))


def make_distinguisher(name: str) -> Distinguisher:
    if name not in ATTACKS:
        raise ParameterValueError(f"attack must be 'auto' or one of {sorted(ATTACKS)}; got {name!r}")
    return ATTACKS[name].factory()


def list_attacks() -> list[tuple[str, str]]:
    """(name, one line) for ``dpaudit list``."""
    return [("auto", "by output, best on the selection split: scalar -> threshold; discrete -> likelihood-ratio "
                     "or threshold; vector -> mean-difference or naive-bayes; + likelihood-ratio when values "
                     "repeat")] + [
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
