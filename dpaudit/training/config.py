"""The DP-SGD configuration: one frozen value that says what is trained and how it is noised.

The claim (epsilon at delta) is computed from this value by
:mod:`dpaudit.training.accounting`; the training loop in
:mod:`dpaudit.training.dpsgd` reads the same value, so the claim and the
arithmetic cannot drift apart unless a :class:`Variant` says they do.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass

from .._validation import check_choice, check_int, check_probability, check_real

__all__ = ["MODELS", "DPSGDConfig", "Variant"]

#: The models the lab trains (numpy, CPU).
MODELS = ("logistic", "mlp")


class Variant(str, enum.Enum):
    """The training loop: correct DP-SGD, or one of the bugs seen in real implementations.

    Each broken variant keeps the accountant's claim of the correct algorithm
    (the claim the broken code would report) while its arithmetic differs.

    ``CORRECT``
        Abadi et al. (2016): clip each example's gradient to norm ``C``, sum
        over a Poisson sample, add ``N(0, (sigma C)^2)`` per coordinate, divide
        by the (public) expected batch size.
    ``BATCH_CLIP``
        The summed batch gradient is clipped to ``C`` instead of each example:
        one record can move the clipped sum by up to ``2C``, twice the
        sensitivity the noise is calibrated for.
    ``NOISE_UNSCALED``
        Noise ``N(0, sigma^2)`` instead of ``N(0, (sigma C)^2)``: the noise
        multiplier is used as a standard deviation.  The same arithmetic as the
        correct loop when ``C = 1``, so it only shows for other clip norms.
    ``SHUFFLE``
        Fixed-size batches of a fresh permutation each epoch (every record in
        exactly one batch per epoch), accounted as Poisson sampling at the
        same rate; Chua et al. (2024) show the two can differ.
    ``REUSED_NOISE``
        One noise draw reused at every step (a generator re-seeded with a
        fixed seed before each draw): the noise cancels between steps.
    ``WRONG_RATE``
        Correct training, but the accountant is given a sampling rate
        ``accounted_rate_factor`` times the true one (the rate computed from
        the wrong dataset size or loader length; Opacus #813 computed it from
        a weighted sampler's number of batches).
    """

    CORRECT = "correct"
    BATCH_CLIP = "batch-clip"
    NOISE_UNSCALED = "noise-unscaled"
    SHUFFLE = "shuffle"
    REUSED_NOISE = "reused-noise"
    WRONG_RATE = "wrong-rate"


@dataclass(frozen=True)
class DPSGDConfig:
    """Everything DP-SGD needs: model, clipping, sampling, noise, steps, and which loop.

    Parameters
    ----------
    noise_multiplier : float
        sigma: the noise standard deviation in units of the clip norm.
    sampling_rate : float
        q: each record is in each step's batch with probability q (Poisson);
        for :attr:`Variant.SHUFFLE`, one epoch has ``round(1 / q)`` batches.
    steps : int
        T: the number of noisy updates.
    clip_norm : float
        C: per-example gradients are clipped to this L2 norm.
    learning_rate : float
        Step size.
    batch_size : float
        The expected batch size the noisy sum is divided by.  A public
        constant: dividing by a size computed from the private dataset leaks
        it (Opacus #571 and #819).
    model : {"logistic", "mlp"}
        Logistic regression, or a one-hidden-layer tanh network.
    hidden : int
        Hidden units of the MLP.
    variant : Variant or str
        The training loop; ``"correct"`` unless a known bug is being studied.
    accounted_rate_factor : float
        For :attr:`Variant.WRONG_RATE`: the accountant's rate is this times q.

    Examples
    --------
    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.1, steps=10)
    >>> cfg.variant, cfg.to_dict()["variant"]
    (<Variant.CORRECT: 'correct'>, 'correct')
    >>> cfg.replace(variant="shuffle").variant.value
    'shuffle'
    """

    noise_multiplier: float
    sampling_rate: float
    steps: int
    clip_norm: float = 1.0
    learning_rate: float = 0.5
    batch_size: float = 10.0
    model: str = "logistic"
    hidden: int = 8
    variant: Variant = Variant.CORRECT
    accounted_rate_factor: float = 0.1

    def __post_init__(self):
        put = object.__setattr__
        put(self, "noise_multiplier", check_real(self.noise_multiplier, "noise_multiplier", low=0.0,
                                                 low_inclusive=False))
        put(self, "sampling_rate", check_probability(self.sampling_rate, "sampling_rate", low_inclusive=False))
        put(self, "steps", check_int(self.steps, "steps", low=1))
        put(self, "clip_norm", check_real(self.clip_norm, "clip_norm", low=0.0, low_inclusive=False))
        put(self, "learning_rate", check_real(self.learning_rate, "learning_rate", low=0.0, low_inclusive=False))
        put(self, "batch_size", check_real(self.batch_size, "batch_size", low=0.0, low_inclusive=False))
        put(self, "model", check_choice(self.model, "model", MODELS))
        put(self, "hidden", check_int(self.hidden, "hidden", low=1))
        name = self.variant.value if isinstance(self.variant, Variant) else self.variant
        put(self, "variant", Variant(check_choice(name, "variant", [v.value for v in Variant])))
        put(self, "accounted_rate_factor", check_real(self.accounted_rate_factor, "accounted_rate_factor",
                                                      low=0.0, low_inclusive=False))

    @property
    def accounted_rate(self) -> float:
        """The sampling rate the accountant is given (q, or the wrong one for ``WRONG_RATE``)."""
        if self.variant is Variant.WRONG_RATE:
            return min(1.0, self.sampling_rate * self.accounted_rate_factor)
        return self.sampling_rate

    def replace(self, **changes) -> DPSGDConfig:
        """A copy with some fields changed (validated again)."""
        return DPSGDConfig(**{**asdict(self), **changes})

    def to_dict(self) -> dict:
        out = asdict(self)
        out["variant"] = self.variant.value
        return out
