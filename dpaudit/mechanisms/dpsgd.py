"""The white-box view of DP-SGD on a gradient canary: T Poisson-subsampled Gaussian steps.

At each of ``steps`` steps every record joins the batch independently with
probability ``rate`` and adds its clipped gradient (here: its value, clipped to
[0, 1], along the canary's direction) to the sum, which is released with
N(0, noise^2) noise.  With the canary (a record of value 1) in the data each
coordinate is N(B_t, noise^2), B_t ~ Bernoulli(rate); without it, N(0,
noise^2).  This is the mechanism DP-SGD's accountant accounts for (Abadi et al.
2016), and its claim is that accountant's curve, ``dpsgd:noise=...,rate=...,steps=...``
(:mod:`dpaudit.claims`), as dp-accounting's PLD accountant computes it for
add/remove neighbours.  The optimal test sums the per-step log-likelihood
ratios, which is what a per-coordinate density-ratio distinguisher learns.

The noise is drawn in floating point and rounded to a 2^-20 grid, and so are
the record values: the sum is then exact, so the release is a post-processing
(rounding) of the mathematical mechanism and its bits reveal nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import check_int, check_real
from ..claims import PointClaim
from .base import BuiltinMechanism, record_values

__all__ = ["SubsampledGaussianSteps"]

_GRID = 2.0 ** -20


@dataclass(frozen=True)
class SubsampledGaussianSteps(BuiltinMechanism):
    """DP-SGD's white-box view: ``steps`` Poisson-subsampled Gaussian sums of values clipped to [0, 1].

    Examples
    --------
    >>> m = SubsampledGaussianSteps(noise=1.0, rate=0.1, steps=10)
    >>> d, d2 = m.neighbouring_pair()
    >>> m(d, size=3, rng=0).shape
    (3, 10)
    >>> m.curve_claim
    'dpsgd:noise=1,rate=0.1,steps=10'
    >>> round(m.claim.point_epsilon, 3), m.claim.point_delta
    (2.855, 1e-05)
    """

    noise: float = 1.0
    rate: float = 0.1
    steps: int = 10

    name = "subsampled_gaussian_steps"
    output_kind = "vector"
    float_safe = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise", check_real(self.noise, "noise", low=0.0, low_inclusive=False, finite=True))
        object.__setattr__(self, "rate", check_real(self.rate, "rate", low=0.0, high=1.0, low_inclusive=False))
        object.__setattr__(self, "steps", check_int(self.steps, "steps", low=1))

    @property
    def curve_claim(self) -> str:
        """The claimed curve as a spec for ``claim=`` / ``--claim``."""
        return f"dpsgd:noise={self.noise:g},rate={self.rate:g},steps={self.steps}"

    @property
    def claim(self) -> PointClaim:
        """The curve's point at delta 1e-5 (the whole curve: :attr:`curve_claim`)."""
        from ..claims import parse_claim

        return PointClaim(float(parse_claim(self.curve_claim).epsilon(1e-5)), 1e-5, neighbouring="add/remove")

    def true_epsilon(self, delta: float = 0.0) -> float:
        """The accountant's epsilon at ``delta`` (pessimistic, so never below the true one)."""
        from ..claims import parse_claim

        return float(parse_claim(self.curve_claim).epsilon(delta))

    def describe(self) -> str:
        return (f"DP-SGD's white-box view: {self.steps} Poisson-subsampled (rate {self.rate:g}) Gaussian sums "
                f"(noise {self.noise:g}) of values clipped to [0, 1]; claims epsilon=eps(delta) of its accountant's curve "
                f"{self.curve_claim} (add/remove)")

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([0.0, 1.0]), np.array([0.0])  # with and without the canary

    def _prepare(self, dataset: Any) -> np.ndarray:
        values = np.clip(record_values(dataset), 0.0, 1.0)
        values = np.round(values / _GRID) * _GRID
        return values[values > 0]  # a record of value 0 adds nothing whether sampled or not

    def _width(self, prepared: np.ndarray) -> int:
        return self.steps * (1 + len(prepared))

    def _draw(self, prepared: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        out = np.round(rng.normal(0.0, self.noise, size=(n, self.steps)) / _GRID) * _GRID
        for v in prepared:
            out += v * (rng.random((n, self.steps)) < self.rate)
        return out
