"""Randomized response (Warner 1965) with a general truth probability.

Each respondent answers truthfully with probability ``p``, otherwise reports a
fair coin.  A truthful 1 is reported as 1 with probability ``(1 + p) / 2`` and a
0 with probability ``(1 - p) / 2``, so the privacy loss is
``ln((1 + p) / (1 - p)) = ln(1 + 2p / (1 - p))``; at ``p = 1/2`` this is ``ln 3``
with output probabilities 3/4 and 1/4 (Dwork and Roth 2014, section 3.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_choice, check_probability
from ..exceptions import ParameterValueError
from ..claims import PointClaim
from .base import BuiltinMechanism, as_1d_array

__all__ = ["RandomizedResponse", "rr_epsilon", "rr_debias"]


def rr_epsilon(p: float) -> float:
    """epsilon = ln(1 + 2p/(1-p)) of randomized response with truth probability ``p``.

    >>> rr_epsilon(0.5) == math.log(3)
    True
    """
    p = check_probability(p, "p", high_inclusive=False)
    # log1p keeps precision for small p; the ratio form is exact at p = 1/2 (ln 3).
    return math.log1p(2.0 * p / (1.0 - p)) if p < 0.25 else math.log((1.0 + p) / (1.0 - p))


def rr_debias(answers: Any, p: float) -> float:
    """Unbiased estimate of the population fraction of 1s from randomized answers.

    ``E[answer] = p * f + (1 - p) / 2``, hence ``f_hat = (mean - (1 - p) / 2) / p``.
    The estimate may fall outside ``[0, 1]``; clip it yourself if you need a proportion.

    Parameters
    ----------
    answers : array_like of {0, 1}
        The randomized answers (e.g. ``RandomizedResponse(p, release="answers")(data)``).
    p : float in (0, 1]
        The truth probability used to randomize.

    Examples
    --------
    >>> rr_debias([1, 1, 1, 0], 0.5)
    1.0
    >>> rr = RandomizedResponse(p=0.5, release="answers")
    >>> truth = np.r_[np.ones(3000), np.zeros(7000)]
    >>> round(rr_debias(rr(truth, rng=1), 0.5), 1)
    0.3
    """
    p = check_probability(p, "p", low_inclusive=False)
    arr = np.asarray(answers, dtype=float)
    if arr.size == 0:
        raise ParameterValueError("answers must not be empty")
    return float((arr.mean() - (1.0 - p) / 2.0) / p)


@dataclass(frozen=True)
class RandomizedResponse(BuiltinMechanism):
    """Randomized response: truthful with probability p, else a fair coin; epsilon = ln(1 + 2p/(1-p)).

    The dataset is 1-D, one bit per respondent (any non-zero value is a 1).
    ``release="count"`` (default) releases the number of 1 answers, a discrete
    scalar drawn exactly as two binomials; ``release="answers"`` releases every
    respondent's answer (a vector).  The claim is for replace-one neighbours
    (one respondent changes their bit): the count reveals how many responded.

    Examples
    --------
    >>> rr = RandomizedResponse(p=0.5)
    >>> rr.claim.point_epsilon == math.log(3)
    True
    >>> rr.output_probabilities(1)
    (0.25, 0.75)
    """

    p: float = 0.5
    release: str = "count"

    name = "randomized_response"
    float_safe = True  # integer releases; the coin is a float comparison off by at most 2**-53

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability(self.p, "p", high_inclusive=False))
        check_choice(self.release, "release", ("count", "answers"))

    @property
    def output_kind(self) -> str:  # type: ignore[override]
        return "discrete" if self.release == "count" else "vector"

    @property
    def epsilon(self) -> float:
        """ln(1 + 2p/(1-p))."""
        return rr_epsilon(self.p)

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, 0.0, neighbouring="replace-one")

    def output_probabilities(self, bit: int) -> tuple[float, float]:
        """``(P(answer 0), P(answer 1))`` for one respondent whose true bit is ``bit``."""
        q1 = (1.0 + self.p) / 2.0 if bit else (1.0 - self.p) / 2.0
        return (1.0 - q1, q1)

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([1]), np.array([0])

    def _prepare(self, dataset: Any) -> np.ndarray:
        return as_1d_array(dataset, "randomized_response", "bits") != 0

    def _width(self, prepared: np.ndarray) -> int:
        return 1 if self.release == "count" else max(1, prepared.shape[0])

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        q1 = (1.0 + self.p) / 2.0
        if self.release == "answers":
            keep = rng.random((n, prepared.shape[0])) < q1
            return np.where(keep, prepared, ~prepared).astype(np.int64)
        ones = int(prepared.sum())
        zeros = int(prepared.shape[0] - ones)
        if ones + zeros == 1:  # the audit's usual one-respondent pair: one Bernoulli draw
            u = rng.random(n)
            # Compare in place: each float64 is overwritten by its own 0/1 as int64 (same
            # element, same itemsize), which saves a pass and an array of the releases' size.
            out = u.view(np.int64)
            np.less(u, q1 if ones else 1.0 - q1, out=out, casting="unsafe")
            return out
        out = np.zeros(n, dtype=np.int64)
        if ones:
            out += rng.binomial(ones, q1, n)
        if zeros:
            out += rng.binomial(zeros, 1.0 - q1, n)
        return out
