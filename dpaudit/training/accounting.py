"""The claim: what dp-accounting's PLD accountant says a DP-SGD configuration spends.

DP-SGD with Poisson sampling is the self-composition of the Poisson-subsampled
Gaussian mechanism (Abadi et al. 2016); under add/remove neighbours the
privacy loss distribution accountant gives a tight epsilon(delta) for it.
Every epsilon here is read off the curve a ``dpsgd:`` claim audits against
(:class:`~dpaudit.claims.DPSGDClaim`, one accountant and one discretisation), so
what the lab records is what its audits compare with.
The broken :class:`~dpaudit.training.config.Variant` s keep this claim (with the
wrong rate for ``WRONG_RATE``), so an audit compares the broken arithmetic
with what its author was told.

:func:`shuffle_max_epsilon` computes, for shuffled batches, a lower bound on
the true epsilon from one statistic whose distribution is known exactly (the
largest of an epoch's updates along a gradient canary),
to compare with the Poisson claim without sampling error.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, stats

from .._validation import check_delta, check_epsilon, check_int, check_real
from .config import DPSGDConfig

__all__ = ["accountant_claim", "accountant_epsilon", "accountant_profile", "dpsgd_event", "noise_for_epsilon",
           "shuffle_max_epsilon"]


def dpsgd_event(config: DPSGDConfig):
    """The ``DpEvent`` the accountant composes: T steps of the Poisson-subsampled Gaussian.

    Uses the accounted rate (:attr:`DPSGDConfig.accounted_rate`), i.e. the
    claim the configuration's code reports, right or wrong.

    Examples
    --------
    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.1, steps=10)
    >>> type(dpsgd_event(cfg)).__name__
    'SelfComposedDpEvent'
    """
    from ..claims import dpsgd_event as event_of

    return event_of(config.noise_multiplier, config.accounted_rate, config.steps)


def accountant_claim(config: DPSGDConfig):
    """The claim ``config``'s code reports: the ``dpsgd:`` curve at its accounted rate (spec with exact floats).

    >>> accountant_claim(DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.1, steps=10)).spec
    'dpsgd:noise=1.0,rate=0.1,steps=10'
    """
    from ..claims import DPSGDClaim

    return DPSGDClaim(config.noise_multiplier, config.accounted_rate, config.steps,
                      spec=f"dpsgd:noise={config.noise_multiplier!r},rate={config.accounted_rate!r},"
                           f"steps={config.steps}")


def accountant_epsilon(config: DPSGDConfig, delta: float) -> float:
    """Epsilon at ``delta`` claimed for ``config``: :func:`accountant_claim`'s curve there.

    Examples
    --------
    Known values (steps 10, rate 0.1, noise 1.0; dp-accounting 0.6.0):

    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.1, steps=10)
    >>> [round(accountant_epsilon(cfg, d), 3) for d in (1e-5, 1e-3, 1e-2)]
    [2.855, 1.572, 0.887]
    """
    delta = check_delta(delta)
    if delta <= 0:
        return math.inf
    return float(accountant_claim(config).epsilon(delta))


def accountant_profile(config: DPSGDConfig, deltas) -> np.ndarray:
    """:func:`accountant_epsilon` on a grid of deltas (``inf`` at delta 0)."""
    return np.array([accountant_epsilon(config, float(d)) for d in deltas])


@functools.lru_cache(maxsize=4096)
def _epsilon(noise: float, rate: float, steps: int, delta: float) -> float:
    """The same curve's epsilon at ``delta``, kept in memory only: calibration tries many noises, and the
    disk cache keeps only the curves that are audited."""
    from ..claims import AccountantClaim, dpsgd_event as event_of

    return float(AccountantClaim(event_of(noise, rate, steps)).epsilon(delta))


def noise_for_epsilon(epsilon: float, delta: float, *, sampling_rate: float, steps: int) -> float:
    """The noise multiplier whose accountant epsilon at ``delta`` is ``epsilon`` (to 1e-4 in sigma).

    Examples
    --------
    >>> sigma = noise_for_epsilon(2.855, 1e-5, sampling_rate=0.1, steps=10)
    >>> round(sigma, 2)
    1.0
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    rate = check_real(sampling_rate, "sampling_rate", low=0.0, high=1.0, low_inclusive=False)
    steps = check_int(steps, "steps", low=1)
    if epsilon <= 0 or delta <= 0:
        from ..exceptions import ParameterValueError

        raise ParameterValueError(f"epsilon and delta must be > 0 to calibrate noise; got {epsilon}, {delta}")
    # Bracket from large noise down: the accountant is cheap where epsilon is small and slow at tiny
    # noise, so halving from 200 spends little before the root-finder's few steps.
    hi = 200.0
    while _epsilon(hi / 2, rate, steps, delta) < epsilon:
        hi /= 2
        if hi < 0.1:
            break
    lo = max(hi / 2, 0.05)
    return float(optimize.brentq(lambda s: _epsilon(s, rate, steps, delta) - epsilon, lo, hi, xtol=1e-4))


def shuffle_max_epsilon(noise_multiplier: float, batches: int, delta: float, *, epochs: int = 1,
                        grid: int = 4001) -> float:
    """A lower bound on the true epsilon at ``delta`` of DP-SGD with shuffled batches.

    The test statistic is the largest update along a gradient canary in each
    epoch (``batches`` steps, the canary in exactly one of them, unit shift
    against noise of standard deviation ``noise_multiplier``), summed over
    ``epochs``.  For one epoch its distribution is exact:
    ``P(max <= t) = Phi(t/s)^b`` without the canary and
    ``Phi(t/s)^(b-1) Phi((t-1)/s)`` with it, so the bound
    ``log((P1(max > t) - delta) / P0(max > t))`` maximised over t has no
    sampling error.  Several epochs are not covered here (``epochs`` must
    be 1).  Chua et al. (2024) show shuffling can lose far more than the
    Poisson claim with their own constructions; with a gradient canary
    among records that do not touch its parameter, this bound stays below
    the Poisson claim for one epoch (docs/training.md has the numbers).

    Examples
    --------
    >>> round(shuffle_max_epsilon(1.0, 1, 1e-3), 2)  # one batch: the Gaussian mechanism, close to its 3.139
    3.14
    """
    s = check_real(noise_multiplier, "noise_multiplier", low=0.0, low_inclusive=False)
    b = check_int(batches, "batches", low=1)
    delta = check_delta(delta)
    if check_int(epochs, "epochs", low=1) != 1:
        from ..exceptions import ParameterValueError

        raise ParameterValueError(f"epochs must be 1 (the exact one-epoch bound); got {epochs}")
    t = np.linspace(-2.0 * s, 1.0 + 12.0 * s, grid)
    # log survival functions, computed from the log CDFs so the far tail keeps its digits
    log_cdf0 = b * stats.norm.logcdf(t / s)
    log_cdf1 = (b - 1) * stats.norm.logcdf(t / s) + stats.norm.logcdf((t - 1.0) / s)
    sf0 = -np.expm1(log_cdf0)
    sf1 = -np.expm1(log_cdf1)
    ok = (sf1 - delta > 0) & (sf0 > 0)
    if not ok.any():
        return 0.0
    eps = np.log(sf1[ok] - delta) - np.log(sf0[ok])
    return float(max(0.0, eps.max()))
