"""Selection mechanisms over ``n_candidates`` candidates scored by counting queries.

The scores are :func:`~dpaudit.mechanisms.base.counting_queries` of the dataset
(1-D labels or 2-D per-record contributions in ``[0, 1]``): sensitivity 1 and
monotone under add/remove, the setting of Dwork and Roth (2014), Claim 3.9.
"""

from __future__ import annotations

import math  # noqa: F401  (the Examples use it)
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._validation import check_int
from ..exceptions import ParameterValueError
from ._noise import exponential_noise, laplace_noise
from .base import (BuiltinMechanism, answers_vector, PureAddRemove, PureClaim, set_answers, set_epsilon,
                   set_sensitivity, counting_queries, input_domain)

__all__ = [
    "ExponentialMechanism",
    "ReportNoisyMaxLaplace",
    "ReportNoisyMaxExponential",
    "ReportNoisyMaxWithValue",
]


@dataclass(frozen=True)
class ExponentialMechanism(PureAddRemove, BuiltinMechanism):
    """Exponential mechanism: candidate r with probability proportional to exp(epsilon u(D, r) / (2 sensitivity)).

    The exponent convention of McSherry and Talwar (2007) and Dwork and Roth (2014, Definition 3.4).  The default
    utility is the counting query of each candidate; pass ``utility`` (a
    callable ``dataset -> array of n_candidates scores``) for anything else.
    The release is the index of the chosen candidate.

    With the default (monotone) counting utilities the true epsilon is
    ``epsilon / 2``: the classic factor 2 is only needed for non-monotone
    utilities, so ``true_epsilon()`` returns ``epsilon / 2`` then and ``epsilon``
    for a user utility.

    Examples
    --------
    The seed's example: 0 Fr, 4 So, 6 Ju, 6 Se, epsilon = ln 2.

    >>> em = ExponentialMechanism(epsilon=math.log(2), n_candidates=4)
    >>> classes = [1] * 4 + [2] * 6 + [3] * 6
    >>> (em.probabilities(classes) * 21).round(10)
    array([1., 4., 8., 8.])
    """

    epsilon: float = 1.0
    n_candidates: int = 4
    sensitivity: float = 1.0
    utility: Callable[[Any], Any] | None = field(default=None, compare=False)

    name = "exponential"
    output_kind = "discrete"
    float_safe = True  # releases an index; float rounding moves its probabilities by ~1e-16 only

    def __post_init__(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "n_candidates", check_int(self.n_candidates, "n_candidates", low=1))
        set_sensitivity(self)
        if self.utility is not None and not callable(self.utility):
            raise ParameterValueError(f"utility must be callable or None; got {self.utility!r}")

    def scores(self, dataset: Any) -> np.ndarray:
        """The utility of every candidate on ``dataset``."""
        if self.utility is None:
            return counting_queries(dataset, self.n_candidates)
        u = np.asarray(self.utility(dataset), dtype=float)
        if u.shape != (self.n_candidates,) or not np.all(np.isfinite(u)):
            raise ParameterValueError(
                f"utility must return {self.n_candidates} finite scores; got {u!r}"
            )
        return u

    def probabilities(self, dataset: Any) -> np.ndarray:
        """The exact output distribution on ``dataset``."""
        logits = self.epsilon * self.scores(dataset) / (2.0 * self.sensitivity)
        w = np.exp(logits - logits.max())
        return w / w.sum()

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        # Adding a record to the least likely candidate 0 (others popular).
        d = np.repeat(np.arange(1, self.n_candidates), 3).astype(float)
        if d.size == 0:
            d = np.array([0.0])
        return d, np.append(d, 0.0)

    def _prepare(self, dataset: Any) -> np.ndarray:
        return np.cumsum(self.probabilities(dataset))

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        # Inverse-CDF sampling; the last bin catches rounding at the top.
        idx = np.searchsorted(prepared, rng.random(n) * prepared[-1], side="right")
        return np.minimum(idx, self.n_candidates - 1).astype(np.int64)

    def true_epsilon(self, delta: float = 0.0) -> float:
        return self.epsilon / 2.0 if self.utility is None else self.epsilon


@dataclass(frozen=True)
class NoisyMaxBase(PureClaim, BuiltinMechanism):
    """Noisy max over ``n_candidates`` scores.

    ``answers=False``: the scores are counting queries of the records
    (monotone, add/remove), noise scale ``sensitivity / epsilon``.
    ``answers=True``: the dataset is the vector of scores, whose neighbours may
    move every score by up to ``sensitivity`` in either direction (``linf``),
    so the scale doubles to ``2 sensitivity / epsilon`` (Dwork and Roth 2014,
    Section 3.3; Ding et al. 2018, Algorithms 5-8, as DP-Sniper configures them).
    """

    epsilon: float = 1.0
    n_candidates: int = 4
    sensitivity: float = 1.0
    answers: bool = False

    def __post_init__(self) -> None:
        set_epsilon(self)
        object.__setattr__(self, "n_candidates", check_int(self.n_candidates, "n_candidates", low=1))
        set_sensitivity(self)
        set_answers(self)

    @property
    def scale(self) -> float:
        """Noise scale: sensitivity / epsilon for monotone counting queries, twice that for answers."""
        return (2.0 if self.answers else 1.0) * self.sensitivity / self.epsilon

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        if self.answers:
            # DP-Sniper's witness for ReportNoisyMax1/2: [1, 1, 1, 1, 1] vs [0, 2, 2, 2, 2].
            k = self.n_candidates
            return np.ones(k), np.r_[0.0, np.full(k - 1, 2.0)]
        # 2-D data, one column per candidate: the added record raises candidate 0 only.
        d = np.zeros((1, self.n_candidates))
        extra = np.zeros((1, self.n_candidates))
        extra[0, 0] = 1.0
        return d, np.vstack([d, extra])

    def input_domain(self) -> dict:
        """DP-Sniper's domain with ``answers=True`` (n_candidates floats in [-10, 10], ``linf``); else labels."""
        if self.answers:
            return input_domain(size=self.n_candidates, low=-10, high=10, integer=False, relation="linf")
        return input_domain(size=self.n_candidates, low=0, high=max(1, self.n_candidates - 1), integer=True,
                            relation="add-remove")

    def _prepare(self, dataset: Any) -> np.ndarray:
        if self.answers:
            return answers_vector(dataset, self.n_candidates, self.name)
        return counting_queries(dataset, self.n_candidates)

    def _width(self, prepared: np.ndarray) -> int:
        return self.n_candidates

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        noisy = self._noise(rng, (n, self.n_candidates))
        noisy += prepared
        return noisy.argmax(axis=1).astype(np.int64)

    def _noise_dist(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def probabilities(self, dataset: Any) -> np.ndarray:
        """Exact output distribution by numerical integration: P(i) = int f(x - q_i) prod_j F(x - q_j) dx."""
        q = self._prepare(dataset)
        dist = self._noise_dist()
        probs = np.empty(self.n_candidates)
        lo, hi = q.min() + dist.ppf(1e-15), q.max() + dist.isf(1e-15)
        for i in range(self.n_candidates):
            others = np.delete(q, i)

            def integrand(x: float, i: int = i, others: np.ndarray = others) -> float:
                return float(dist.pdf(x - q[i]) * np.prod(dist.cdf(x - others)))

            pts = sorted(set(np.r_[q, 0.0].tolist()))
            from scipy import integrate  # lazy: keeps `dpaudit` start-up fast for the CLI

            probs[i] = integrate.quad(integrand, lo, hi, points=[p for p in pts if lo < p < hi], limit=200)[0]
        return probs / probs.sum()


@dataclass(frozen=True)
class ReportNoisyMaxLaplace(NoisyMaxBase):
    """Report noisy max: the index of the largest count plus Laplace(sensitivity/epsilon) noise.

    epsilon-DP for monotone counting queries (Dwork and Roth 2014, Claim 3.9).

    Examples
    --------
    >>> m = ReportNoisyMaxLaplace()
    >>> int(m([[0, 0, 5, 0]] * 1, rng=0)) in range(4)
    True
    """

    name = "report_noisy_max_laplace"
    output_kind = "discrete"
    float_safe = True  # releases an index; float noise moves its probabilities by rounding amounts only

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        return laplace_noise(rng, self.scale, shape)

    def _noise_dist(self):
        from scipy import stats  # lazy: keeps `dpaudit` start-up fast for the CLI

        return stats.laplace(scale=self.scale)


@dataclass(frozen=True)
class ReportNoisyMaxExponential(NoisyMaxBase):
    """Report noisy max with exponential noise of scale sensitivity/epsilon (permute-and-flip).

    Exponential noise has the survival ratio ``S(x + 1) >= e^-epsilon S(x)`` the
    proof of Dwork and Roth's Claim 3.9 needs, so it is epsilon-DP for monotone
    counting queries; it is distributed as the permute-and-flip mechanism
    (McKenna and Sheldon 2020; Ding et al. 2021).

    Examples
    --------
    >>> ReportNoisyMaxExponential().claim.point_epsilon
    1.0
    """

    name = "report_noisy_max_exponential"
    output_kind = "discrete"
    float_safe = True  # releases an index; float noise moves its probabilities by rounding amounts only

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
        return exponential_noise(rng, self.scale, shape)

    def _noise_dist(self):
        from scipy import stats  # lazy: keeps `dpaudit` start-up fast for the CLI

        return stats.expon(scale=self.scale)


@dataclass(frozen=True)
class ReportNoisyMaxWithValue(NoisyMaxBase):
    """BROKEN: report noisy max (Laplace) that also releases the noisy maximum value.

    Releases ``[index, noisy value]``.  It claims epsilon, but when one record
    raises all ``k`` counts by 1, the density ratio at a very low noisy maximum
    is ``e^(k epsilon)``: the true epsilon is ``k * epsilon`` (an upper bound by
    composition of the ``k`` noisy counts, and attained in the limit).

    Examples
    --------
    >>> ReportNoisyMaxWithValue(n_candidates=4).true_epsilon()
    4.0
    """

    name = "report_noisy_max_with_value"
    output_kind = "vector"
    broken = True
    float_safe = False  # releases numpy's float noisy maximum

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        if self.answers:
            k = self.n_candidates
            return np.zeros(k), np.ones(k)
        # The added record raises every count: only the released value shows it.
        d = np.zeros((1, self.n_candidates))
        return d, np.vstack([d, np.ones((1, self.n_candidates))])

    def _width(self, prepared: np.ndarray) -> int:
        return self.n_candidates + 2

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        noisy = laplace_noise(rng, self.scale, (n, self.n_candidates))
        noisy += prepared
        idx = noisy.argmax(axis=1)
        return np.column_stack([idx.astype(float), noisy[np.arange(n), idx]])

    def _noise_dist(self):
        from scipy import stats  # lazy: keeps `dpaudit` start-up fast for the CLI

        return stats.laplace(scale=self.scale)

    def true_epsilon(self, delta: float = 0.0) -> float:
        # k noisy scores each moving by the sensitivity: k epsilon (records), k epsilon / 2 (answers).
        return self.n_candidates * self.sensitivity / self.scale
