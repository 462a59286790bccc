"""The one place where the mechanisms added for DP-Sniper's table draw continuous noise.

Two kinds of draw, one helper each:

* noise that is only *compared* (sparse-vector thresholds and queries, report
  noisy max): :func:`laplace_noise` and :func:`exponential_noise`, numpy's
  samplers.  Only the outcome of a comparison is released, and floating point
  moves its probability by rounding amounts only.
* noise whose result is *released*: :func:`laplace_release`, which snaps the
  float sum down to a power-of-two grid (Mironov's snapping, without the clamp
  the bounded answers here do not need).  The release is an exact multiple of
  the grid, so its bits carry nothing but the bin, and the bin's probability
  differs from the continuous Laplace's by rounding amounts only.

The broken mechanisms keep the plain float sum (``loc + laplace_noise``):
their leak is the point, and their ``float_safe`` flag says so.
"""

from __future__ import annotations

import numpy as np

from .float_safe import granularity

__all__ = ["laplace_noise", "exponential_noise", "laplace_release", "gaussian_release", "release_step"]


def laplace_noise(rng: np.random.Generator, scale: float, size) -> np.ndarray:
    """Centred Laplace noise of scale ``scale`` (density ``exp(-|x| / scale) / (2 scale)``), for comparisons.

    >>> laplace_noise(np.random.default_rng(0), 2.0, (2, 3)).shape
    (2, 3)
    """
    return rng.laplace(0.0, scale, size)


def exponential_noise(rng: np.random.Generator, scale: float, size) -> np.ndarray:
    """Exponential noise of mean ``scale`` (density ``exp(-x / scale) / scale`` on ``x >= 0``), for comparisons.

    >>> bool((exponential_noise(np.random.default_rng(0), 2.0, 5) >= 0).all())
    True
    """
    return rng.exponential(scale, size)


def release_step(scale: float) -> float:
    """The grid of :func:`laplace_release`: a power of two about ``scale / 2**10``, at most 1.

    At most 1, so that answers one apart (the sensitivity) are a whole number of steps apart.

    >>> release_step(1.0), release_step(1e6)
    (0.0009765625, 1.0)
    """
    return min(granularity(scale), 1.0)


def laplace_release(rng: np.random.Generator, loc, scale: float, size) -> np.ndarray:
    """``loc + Laplace(scale)`` rounded down to the grid :func:`release_step`: a float-safe release.

    Rounding down is post-processing of the continuous release, so for two
    ``loc`` arrays at most ``Delta`` apart the ratio of any bin's probability is
    at most ``exp(Delta / scale)``, as for the continuous mechanism, whether or
    not ``loc`` lies on the grid (up to the sampler's rounding, about ``2**-40``
    relative).

    >>> x = laplace_release(np.random.default_rng(0), 1.0, 10.0, 1000)
    >>> g = release_step(10.0)
    >>> bool(np.all(x / g == np.floor(x / g)))
    True
    """
    return _snap(rng.laplace(0.0, scale, size), loc, release_step(scale))


def _snap(noise: np.ndarray, loc, g: float) -> np.ndarray:
    """``loc + noise`` rounded down to multiples of the power of two ``g`` (in place on ``noise``)."""
    noise += loc
    noise /= g  # a power of two: exact
    np.floor(noise, out=noise)
    noise *= g
    return noise


def gaussian_release(rng: np.random.Generator, loc, sigma: float, size) -> np.ndarray:
    """``loc + N(0, sigma^2)`` rounded down to the grid :func:`release_step` of ``sigma``: a float-safe release.

    As :func:`laplace_release`: rounding down is post-processing of the continuous Gaussian release, so the
    continuous mechanism's (epsilon, delta) curve holds for any ``loc`` (up to the sampler's rounding).

    >>> x = gaussian_release(np.random.default_rng(0), 1.0, 4.0, 1000)
    >>> g = release_step(4.0)
    >>> bool(np.all(x / g == np.floor(x / g)))
    True
    """
    return _snap(rng.normal(0.0, sigma, size), loc, release_step(sigma))
