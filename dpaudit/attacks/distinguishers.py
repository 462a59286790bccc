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
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from ..exceptions import ParameterValueError

__all__ = [
    "Distinguisher",
    "ThresholdScore",
    "LikelihoodRatioScore",
    "MeanDifferenceScore",
    "NaiveBayesScore",
    "auto_choices",
    "ClassifierScore",
    "ATTACKS",
    "register_attack",
    "make_distinguisher",
    "list_attacks",
    "output_kind",
    "OutcomeIndex",
]


@runtime_checkable
class Distinguisher(Protocol):
    """Anything with ``fit(x0, x1)`` and ``score(x)``; x is (n,) or (n, k)."""

    name: str

    def fit(self, x0: np.ndarray, x1: np.ndarray) -> "Distinguisher": ...

    def score(self, x: np.ndarray) -> np.ndarray: ...


def _as_2d(x: np.ndarray) -> np.ndarray:
    return x.reshape(len(x), -1)


class ThresholdScore:
    """Scalar outputs: the release itself is the score (both tails are tried by the selection).

    >>> ThresholdScore().fit(np.zeros(3), np.ones(3)).score(np.array([2.0, 3.0]))
    array([2., 3.])
    """

    name = "threshold"

    def fit(self, x0, x1):
        return self

    def score(self, x):
        x = np.asarray(x)
        if x.ndim != 1:
            raise ParameterValueError(f"attack 'threshold' needs scalar releases; got shape {x.shape[1:]}")
        return x.astype(float, copy=False)


class OutcomeIndex:
    """Maps discrete releases (scalars or rows) to stable integer outcome ids."""

    def __init__(self, outcomes: np.ndarray):
        self.outcomes = outcomes  # sorted unique rows (2-D) or values (1-D)

    @classmethod
    def from_samples(cls, *xs: np.ndarray) -> "OutcomeIndex":
        stacked = np.concatenate([_as_2d(np.asarray(x)) for x in xs])
        return cls(np.unique(stacked, axis=0))

    def lookup(self, x: np.ndarray) -> np.ndarray:
        """Outcome id of each release; -1 for outcomes never seen when fitting."""
        rows = _as_2d(np.asarray(x))
        if self.outcomes.shape[1] == 1:
            keys, vals = self.outcomes[:, 0], rows[:, 0]
        else:
            # A structured view turns each row into one comparable item.
            dt = np.dtype([(f"f{i}", rows.dtype) for i in range(rows.shape[1])])
            keys = np.ascontiguousarray(self.outcomes.astype(rows.dtype)).view(dt).ravel()
            vals = np.ascontiguousarray(rows).view(dt).ravel()
        pos = np.searchsorted(keys, vals)
        pos = np.minimum(pos, len(keys) - 1)
        return np.where(keys[pos] == vals, pos, -1)


class LikelihoodRatioScore:
    """Discrete outputs: score an outcome by its estimated log likelihood ratio.

    Thresholding this score chooses the set of outcomes most likely under D
    relative to D' (the best set by estimated likelihood ratio).  Counts are
    smoothed by 1/2 so that outcomes seen on one side only get a large but
    finite score; outcomes never seen when fitting score 0.

    >>> s = LikelihoodRatioScore().fit(np.array([1, 1, 1, 0]), np.array([0, 0, 0, 1]))
    >>> bool(s.score(np.array([1]))[0] > 0 > s.score(np.array([0]))[0])
    True
    """

    name = "likelihood-ratio"

    def fit(self, x0, x1):
        self.index = OutcomeIndex.from_samples(x0, x1)
        m = len(self.index.outcomes)
        c0 = np.bincount(self.index.lookup(x0), minlength=m)
        c1 = np.bincount(self.index.lookup(x1), minlength=m)
        self.log_ratio = np.log((c0 + 0.5) / (len(x0) + 0.5 * m)) - np.log((c1 + 0.5) / (len(x1) + 0.5 * m))
        return self

    def score(self, x):
        ids = self.index.lookup(x)
        return np.where(ids >= 0, self.log_ratio[np.maximum(ids, 0)], 0.0)


class MeanDifferenceScore:
    """Vector outputs: project on the (standardised) difference of the means.

    The projection is the linear discriminant for independent coordinates of
    equal spread, which is what noisy histograms and counts release.

    >>> rng = np.random.default_rng(0)
    >>> x0, x1 = rng.normal(size=(500, 3)) + [1, 0, 0], rng.normal(size=(500, 3))
    >>> w = MeanDifferenceScore().fit(x0, x1).weights
    >>> int(np.argmax(np.abs(w)))
    0
    """

    name = "mean-difference"

    def fit(self, x0, x1):
        a, b = _as_2d(np.asarray(x0, float)), _as_2d(np.asarray(x1, float))
        var = 0.5 * (a.var(axis=0) + b.var(axis=0))
        var = np.where(var > 0, var, 1.0)
        self.weights = (a.mean(axis=0) - b.mean(axis=0)) / var
        return self

    def score(self, x):
        return _as_2d(np.asarray(x, float)) @ self.weights


class NaiveBayesScore:
    """Vector outputs: sum over coordinates of each coordinate's estimated log likelihood ratio.

    Each coordinate is binned (its distinct values when it takes few, else
    ``n_bins`` quantile bins of the pooled fitting releases) and scored like
    :class:`LikelihoodRatioScore`.  The sum is the optimal test when
    coordinates are independent, catches non-linear per-coordinate leaks
    (a changed spread, a pattern of above/below answers) and costs one
    ``searchsorted`` per coordinate.

    >>> rng = np.random.default_rng(0)
    >>> x0, x1 = rng.normal(size=(2000, 2)) * [3, 1], rng.normal(size=(2000, 2))
    >>> s = NaiveBayesScore().fit(x0, x1)
    >>> bool(s.score(np.array([[6.0, 0.0]]))[0] > s.score(np.array([[0.0, 0.0]]))[0])
    True
    """

    name = "naive-bayes"

    def __init__(self, n_bins: int = 32, max_levels: int = 64):
        self.n_bins = n_bins
        self.max_levels = max_levels

    def fit(self, x0, x1):
        a, b = _as_2d(np.asarray(x0, float)), _as_2d(np.asarray(x1, float))
        pooled = np.concatenate([a, b])
        self.edges, self.log_ratio = [], []
        for j in range(pooled.shape[1]):
            levels = np.unique(pooled[:, j])
            if len(levels) <= self.max_levels:
                # Bin i holds values in [edge_i, edge_{i+1}): midpoints separate the levels.
                edges = (levels[1:] + levels[:-1]) / 2
            else:
                edges = np.unique(np.quantile(pooled[:, j], np.linspace(0, 1, self.n_bins + 1)[1:-1]))
            m = len(edges) + 1
            c0 = np.bincount(np.searchsorted(edges, a[:, j], side="right"), minlength=m)
            c1 = np.bincount(np.searchsorted(edges, b[:, j], side="right"), minlength=m)
            self.edges.append(edges)
            self.log_ratio.append(np.log((c0 + 0.5) / (len(a) + 0.5 * m)) - np.log((c1 + 0.5) / (len(b) + 0.5 * m)))
        return self

    def score(self, x):
        x = _as_2d(np.asarray(x, float))
        out = np.zeros(len(x))
        for j, (edges, lr) in enumerate(zip(self.edges, self.log_ratio)):
            out += lr[np.searchsorted(edges, x[:, j], side="right")]
        return out


class ClassifierScore:
    """Vector outputs: a scikit-learn classifier's log-odds, in the spirit of DP-Sniper.

    Bichsel et al. 2021 train a classifier on releases labelled D / D' and
    threshold its output; any ``predict_proba`` estimator works.  Fitting uses
    at most ``max_fit`` releases per side so that the audit stays fast.
    """

    def __init__(self, kind: str = "logistic", *, max_fit: int = 20_000, random_state: int = 0):
        self.kind = kind
        self.name = kind
        self.max_fit = max_fit
        self.random_state = random_state

    def _model(self):
        if self.kind == "logistic":
            from sklearn.linear_model import LogisticRegression
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        if self.kind == "mlp":
            from sklearn.neural_network import MLPClassifier
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(32, 32), max_iter=200,
                                                                  early_stopping=True,
                                                                  random_state=self.random_state))
        if self.kind == "boosting":
            from sklearn.ensemble import HistGradientBoostingClassifier

            return HistGradientBoostingClassifier(max_iter=100, random_state=self.random_state)
        raise ParameterValueError(f"attack must name a known classifier; got {self.kind!r}")

    def fit(self, x0, x1):
        a = _as_2d(np.asarray(x0, float))[: self.max_fit]
        b = _as_2d(np.asarray(x1, float))[: self.max_fit]
        X = np.concatenate([a, b])
        y = np.r_[np.ones(len(a)), np.zeros(len(b))]
        import warnings

        with warnings.catch_warnings():
            # A classifier that stops early on easy data is still a valid score;
            # its convergence warnings would otherwise abort the audit.
            warnings.simplefilter("ignore")
            self.model = self._model().fit(X, y)
        return self

    def score(self, x):
        p = self.model.predict_proba(_as_2d(np.asarray(x, float)))[:, 1]
        p = np.clip(p, 1e-12, 1 - 1e-12)
        return np.log(p) - np.log1p(-p)


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


def repeats(x: np.ndarray, *, probe: int = 200_000) -> bool:
    """Whether releases repeat exactly: fewer distinct values (rows) than 3/4 of the releases."""
    rows = _as_2d(np.asarray(x)[:probe])
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
    rows = _as_2d(x[:probe])
    n_distinct = _n_distinct(rows)
    if n_distinct <= max_outcomes and n_distinct * 20 <= len(rows):
        return "discrete"
    return "scalar" if x.ndim == 1 else "vector"
