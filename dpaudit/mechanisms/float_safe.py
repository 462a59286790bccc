"""Samplers whose floating-point releases are covered by the privacy claim.

Floating point is part of a mechanism.  ``loc + scale * log(u)`` (numpy's
``Generator.laplace``, ``Generator.normal`` plus a shift, every textbook float
sampler) is differentially private on paper only: rounding ``loc + noise`` to
a double leaves, in its low-order bits, a trace of ``loc`` (Mironov 2012).  At
``loc = 1`` about 13% of numpy's Laplace(1) releases are odd multiples of
``2**-53``, a lattice that no release at ``loc = 2`` ever lands on, so one
release can tell the two datasets apart with certainty.

The samplers here never let a double carry information the mathematics does
not account for:

* :func:`discrete_laplace` and :func:`discrete_gaussian` draw integers
  *exactly* (Canonne, Kamath and Steinke 2020, Algorithms 1-3), with integer
  arithmetic only: no float enters the draw, so the law is exactly the
  discrete Laplace / discrete Gaussian (up to a truncation of probability
  below ``exp(-2**16)`` that keeps the arithmetic inside int64).
* :func:`lattice_laplace` and :func:`lattice_gaussian` release
  ``g * (round(loc / g) + Z)`` on a fine power-of-two grid ``g``
  (:func:`granularity`: about ``scale / 2**10``), with ``Z`` one of the exact
  integer samplers.  The double is an exact multiple of ``g``, a fixed
  function of the integer, so the release is post-processing of an exactly
  private integer mechanism.  This is the "granularity" approach of Google's
  differential-privacy library; unlike Mironov's snapping mechanism it needs
  neither a clamp nor a correctly rounded logarithm (numpy's is not), and it
  costs no epsilon when ``loc`` and the sensitivity are multiples of ``g``.

Privacy of the lattice samplers for locs that differ by at most ``Delta``:
rounding to the grid moves them apart by at most ``ceil(Delta / g)`` grid
steps (exactly ``Delta / g`` when both locs are multiples of ``g`` and
``Delta`` is too), so the release is as private as the integer sampler with
that integer sensitivity: :func:`discrete_laplace_delta` and
:func:`discrete_gaussian_delta` compute the exact delta(epsilon) of such a
pair.  The built-in mechanisms compute their statistic in grid units
(integers) so that no rounding is lost.

Examples
--------
>>> z = discrete_laplace(Fraction(3, 2), size=5, rng=0)
>>> z.dtype
dtype('int64')
>>> x = lattice_laplace(1.0, 1.0, size=4, rng=0)
>>> g = granularity(1.0)
>>> bool(np.all(x / g == np.round(x / g)))
True
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .._rng import RNGLike, as_generator
from .._validation import check_int, check_real
from ..exceptions import ParameterTypeError, ParameterValueError

__all__ = [
    "GRID_BITS",
    "bernoulli_exp",
    "discrete_laplace",
    "discrete_gaussian",
    "granularity",
    "exact_scale",
    "lattice_laplace",
    "lattice_gaussian",
    "discrete_laplace_delta",
    "discrete_gaussian_delta",
    "epsilon_from_delta",
]

#: The lattice samplers use a grid ``2**GRID_BITS`` times finer than the noise scale.
GRID_BITS = 10

# Integers in the exact samplers stay below this, so that ``den * K`` fits in int64.
_MAX_DENOMINATOR = 1 << 50
# Rationals derived from floats are rounded (in the safe direction) to this denominator.
_ROUNDING_DENOMINATOR = 1 << 20


def _size_tuple(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        return (check_int(size, "size", low=0),)
    try:
        return tuple(check_int(s, "size", low=0) for s in size)
    except TypeError:
        raise ParameterTypeError(f"size must be None, an integer >= 0 or a tuple of them; got {size!r}") from None


def bernoulli_exp(numerator: Any, denominator: Any, *, rng: RNGLike = None) -> np.ndarray:
    """Exact Bernoulli(exp(-numerator / denominator)) draws, element-wise, with integer arithmetic only.

    Canonne, Kamath and Steinke (2020), Algorithm 1: for ``gamma`` in [0, 1]
    count the successes ``K`` of Bernoulli(gamma / k), k = 1, 2, ... until the
    first failure; ``K`` even means success.  ``gamma > 1`` multiplies
    ``floor(gamma)`` Bernoulli(exp(-1)) draws with one for the fraction.

    Parameters
    ----------
    numerator, denominator : array_like of int
        ``numerator >= 0``, ``1 <= denominator < 2**50``, broadcast together.
    rng : Generator, seed or None

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> b = bernoulli_exp(np.full(200_000, 1), 2, rng=0)
    >>> bool(abs(b.mean() - math.exp(-0.5)) < 0.005)
    True
    """
    gen = as_generator(rng)
    num, den = np.broadcast_arrays(np.asarray(numerator, dtype=np.int64), np.asarray(denominator, dtype=np.int64))
    num, den = num.ravel().copy(), den.ravel().copy()
    if num.size and (num.min() < 0 or den.min() < 1 or den.max() >= _MAX_DENOMINATOR):
        raise ParameterValueError("bernoulli_exp needs numerator >= 0 and 1 <= denominator < 2**50")
    whole, frac = np.divmod(num, den)
    alive = np.ones(num.shape, dtype=bool)
    # floor(gamma) independent Bernoulli(exp(-1)) draws must all succeed.
    idx = np.flatnonzero(whole > 0)
    while idx.size:
        ok = _bernoulli_exp_unit(np.ones(idx.size, np.int64), 1, gen)
        alive[idx[~ok]] = False
        whole[idx] -= 1
        idx = idx[ok & (whole[idx] > 0)]
    idx = np.flatnonzero(alive)
    alive[idx] = _bernoulli_exp_unit(frac[idx], den[idx], gen)
    return alive.reshape(np.broadcast_shapes(np.shape(numerator), np.shape(denominator)))


def _bernoulli_exp_unit(num: np.ndarray, den: Any, gen: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for 0 <= num <= den (CKS Algorithm 1, the gamma <= 1 case).

    Every element still running at step ``k`` has drawn k - 1 successes, so
    ``k`` is one number for all of them; ``den`` may be a scalar (fastest) or an array.
    """
    out = np.ones(num.shape, dtype=bool)
    scalar_den = np.ndim(den) == 0
    idx = np.flatnonzero(num > 0)
    k = 1
    while idx.size:
        # Bernoulli(gamma / k) = [uniform integer in [0, den * k) < num], exactly.
        high = den * k if scalar_den else den[idx] * k
        hit = gen.integers(0, high, idx.size) < num[idx]
        idx = idx[hit]
        k += 1
        out[idx] = k % 2 == 1
    return out


def _as_fraction(value: Any, name: str, *, round_up: bool) -> Fraction:
    """An exact positive rational; one whose terms reach 2**50 (most floats) is rounded to denominator 2**20.

    ``round_up`` chooses the safe direction (a noise scale rounds up: more noise).
    """
    if isinstance(value, bool):
        raise ParameterTypeError(f"{name} must be a positive number; got {value!r}")
    if isinstance(value, (int, np.integer)):
        frac = Fraction(int(value))
    elif isinstance(value, Fraction):
        frac = value
    else:
        frac = Fraction(check_real(value, name, low=0.0, low_inclusive=False))
    if frac.denominator >= _MAX_DENOMINATOR or frac.numerator >= _MAX_DENOMINATOR:
        d = _ROUNDING_DENOMINATOR
        frac = Fraction(math.ceil(frac * d) if round_up else math.floor(frac * d), d)
    if frac <= 0:
        raise ParameterValueError(f"{name} must be > 0; got {value!r}")
    if frac.numerator >= _MAX_DENOMINATOR or frac.denominator >= _MAX_DENOMINATOR:
        raise ParameterValueError(f"{name} must be a rational with numerator and denominator below 2**50; "
                                  f"got {value!r}")
    return frac


def exact_scale(scale: Any) -> Fraction:
    """The rational noise scale the exact samplers use for ``scale``: exact when its numerator and
    denominator are below 2**50, else rounded *up* to a multiple of ``2**-20`` (more noise, never less privacy).

    >>> exact_scale(1.5), exact_scale(Fraction(1, 3))
    (Fraction(3, 2), Fraction(1, 3))
    """
    return _as_fraction(scale, "scale", round_up=True)


def _discrete_laplace_ts(t: int, s: int, n: int, gen: np.random.Generator) -> np.ndarray:
    """n draws with P(z) proportional to exp(-|z| s / t) (CKS Algorithm 2), integers only."""
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        m = todo.size
        u = gen.integers(0, t, m)
        keep = _bernoulli_exp_unit(u, t, gen)
        u = u[keep]
        pos = todo[keep]
        # V ~ geometric: the number of Bernoulli(exp(-1)) successes before the first failure.
        v = np.zeros(u.size, dtype=np.int64)
        idx = np.arange(u.size)
        while idx.size:
            ok = _bernoulli_exp_unit(np.ones(idx.size, np.int64), 1, gen)
            idx = idx[ok]
            v[idx] += 1
        y = (u + t * v) // s
        negative = gen.integers(0, 2, u.size).astype(bool)
        ok = ~(negative & (y == 0))
        out[pos[ok]] = np.where(negative[ok], -y[ok], y[ok])
        done = np.zeros(m, dtype=bool)
        done[np.flatnonzero(keep)[ok]] = True
        todo = todo[~done]
    return out


def discrete_laplace(scale: Any, *, size: Any = None, rng: RNGLike = None) -> Any:
    """Exact discrete Laplace integers: ``P(Z = z)`` proportional to ``exp(-|z| / scale)``.

    Parameters
    ----------
    scale : int, Fraction or float
        > 0; exact, or rounded up to a multiple of ``2**-20`` (:func:`exact_scale`).
    size : int, tuple or None
        ``None`` for one integer.
    rng : Generator, seed or None

    Returns
    -------
    int or ndarray of int64

    Examples
    --------
    >>> z = discrete_laplace(2, size=100_000, rng=0)
    >>> a = math.exp(-1 / 2)
    >>> bool(abs((z == 0).mean() - (1 - a) / (1 + a)) < 0.005)
    True
    """
    frac = exact_scale(scale)
    shape = _size_tuple(size)
    gen = as_generator(rng)
    out = _discrete_laplace_ts(frac.numerator, frac.denominator, int(np.prod(shape, dtype=np.int64)), gen)
    return int(out[0]) if size is None else out.reshape(shape)


def discrete_gaussian(sigma_squared: int, *, size: Any = None, rng: RNGLike = None) -> Any:
    """Exact discrete Gaussian integers: ``P(Z = z)`` proportional to ``exp(-z**2 / (2 sigma_squared))``.

    Canonne, Kamath and Steinke (2020), Algorithm 3: a discrete Laplace
    proposal of scale ``t = floor(sigma) + 1`` accepted with probability
    ``exp(-(|y| - sigma**2 / t)**2 / (2 sigma**2))``, all in integers.
    Proposals with ``|y| t - sigma**2 >= 2**31`` (acceptance probability below
    ``exp(-2**16)``) are rejected outright to keep products inside int64.

    Parameters
    ----------
    sigma_squared : int
        The variance parameter, an integer in ``[1, 2**24]``; for a real
        sigma use :func:`lattice_gaussian`, which scales a fine grid.
    size, rng
        As in :func:`discrete_laplace`.

    Examples
    --------
    >>> z = discrete_gaussian(100, size=100_000, rng=0)
    >>> bool(abs(z.var() / 100 - 1) < 0.02)
    True
    """
    n2 = check_int(sigma_squared, "sigma_squared", low=1, high=1 << 24)
    shape = _size_tuple(size)
    gen = as_generator(rng)
    n = int(np.prod(shape, dtype=np.int64))
    t = math.isqrt(n2) + 1
    den = 2 * n2 * t * t
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        y = _discrete_laplace_ts(t, 1, todo.size, gen)
        gap = np.abs(y) * t - n2
        small = np.abs(gap) < (1 << 31)
        accept = np.zeros(todo.size, dtype=bool)
        idx = np.flatnonzero(small)
        accept[idx] = bernoulli_exp(gap[idx] * gap[idx], den, rng=gen)
        out[todo[accept]] = y[accept]
        todo = todo[~accept]
    return int(out[0]) if size is None else out.reshape(shape)


def granularity(scale: float, *, bits: int = GRID_BITS) -> float:
    """The lattice step for noise of this scale: the power of two ``2**(floor(log2(scale)) - bits)``.

    >>> granularity(1.0), granularity(3.0)
    (0.0009765625, 0.001953125)
    """
    scale = check_real(scale, "scale", low=0.0, low_inclusive=False)
    return math.ldexp(1.0, math.frexp(scale)[1] - 1 - bits)


def _lattice_loc(loc: Any, g: float) -> np.ndarray:
    loc = np.asarray(loc, dtype=float)
    if not np.all(np.isfinite(loc)):
        raise ParameterValueError("loc must be finite")
    k = np.rint(loc / g)
    if np.any(np.abs(k) >= 2.0 ** 52):
        raise ParameterValueError(f"loc is too large for the grid step {g!r} (|loc / step| must be below 2**52)")
    return k.astype(np.int64)


def lattice_laplace(loc: Any, scale: Any, *, size: Any = None, rng: RNGLike = None,
                    granularity_step: float | None = None) -> Any:
    """Laplace-like noise on a power-of-two grid: ``g * (round(loc / g) + Z)``, ``Z`` exact discrete Laplace.

    ``Z`` has scale ``scale / g`` (rounded up, :func:`exact_scale`), so the
    release has the law of Laplace(loc, scale) rounded to the grid ``g``
    (:func:`granularity` by default: ``scale / 2**10`` at most).  Every
    release is an exact multiple of ``g``: its bits carry nothing but the integer.

    For two locs ``Delta`` apart (both multiples of ``g``, ``Delta`` too) the
    pair is ``Delta / scale``-DP (with the rounded-up scale); otherwise
    rounding may add one grid step, ``(Delta + g) / scale`` at most.

    Parameters
    ----------
    loc : float or array_like
        The exact statistic; broadcast against ``size``.
    scale : float
        The Laplace scale, > 0.
    size, rng
        As in numpy: ``None`` for one release (when ``loc`` is a scalar).
    granularity_step : float, optional
        The grid ``g``; a power of two.  Default :func:`granularity` of ``scale``.

    Examples
    --------
    >>> x = lattice_laplace(0.0, 1.0, size=200_000, rng=1)
    >>> bool(abs(np.mean(np.abs(x)) - 1.0) < 0.01)
    True
    """
    g = _check_step(granularity_step, scale)
    scale = check_real(scale, "scale", low=0.0, low_inclusive=False)
    z = discrete_laplace(Fraction(scale) / Fraction(g), size=_broadcast_size(loc, size), rng=rng)
    return _on_grid(_lattice_loc(loc, g), z, g, size)


def lattice_gaussian(loc: Any, sigma: float, *, size: Any = None, rng: RNGLike = None,
                     granularity_step: float | None = None) -> Any:
    """Gaussian-like noise on a power-of-two grid: ``g * (round(loc / g) + Z)``, ``Z`` exact discrete Gaussian.

    ``Z`` has variance parameter ``ceil((sigma / g)**2)`` (a little more noise
    than asked, never less).  The privacy of a pair ``k`` grid steps apart is
    :func:`discrete_gaussian_delta` with that variance and sensitivity ``k``;
    it is within a hair of the continuous Gaussian's at this grid.

    Examples
    --------
    >>> x = lattice_gaussian(0.0, 2.0, size=100_000, rng=1)
    >>> bool(abs(x.std() - 2.0) < 0.03)
    True
    """
    sigma = check_real(sigma, "sigma", low=0.0, low_inclusive=False)
    g = _check_step(granularity_step, sigma)
    n2 = math.ceil((Fraction(sigma) / Fraction(g)) ** 2)
    z = discrete_gaussian(n2, size=_broadcast_size(loc, size), rng=rng)
    return _on_grid(_lattice_loc(loc, g), z, g, size)


def _check_step(step: float | None, scale: Any) -> float:
    if step is None:
        return granularity(scale)
    step = check_real(step, "granularity_step", low=0.0, low_inclusive=False)
    if math.frexp(step)[0] != 0.5:
        raise ParameterValueError(f"granularity_step must be a power of two; got {step!r}")
    return step


def _broadcast_size(loc: Any, size: Any) -> Any:
    if size is None:
        shape = np.shape(loc)
        return None if shape == () else shape
    return size


def _on_grid(k: np.ndarray, z: Any, g: float, size: Any) -> Any:
    total = k + np.asarray(z, dtype=np.int64)
    if np.any(np.abs(total) >= 1 << 53):  # pragma: no cover - needs a noise draw of 2**53 grid steps
        raise ParameterValueError("release outside the exactly representable range of the grid")
    out = total.astype(float) * g  # exact: an integer below 2**53 times a power of two
    return float(out) if size is None and np.ndim(out) == 0 else out


def _shift_delta(logpmf, support: np.ndarray, shift: int, epsilon: float) -> float:
    """delta(epsilon) = sum_y max(0, p(y) - e^epsilon p(y - shift)) for one integer shift."""
    lp = logpmf(support)
    lq = logpmf(support - shift)
    terms = np.exp(lp) * -np.expm1(np.minimum(0.0, epsilon + lq - lp))
    return float(max(0.0, np.sum(terms[lq - lp < -epsilon])))


def discrete_laplace_delta(epsilon: float, scale: Any, sensitivity: int) -> float:
    """Exact delta(epsilon) of discrete Laplace noise (scale as in :func:`discrete_laplace`) on an integer
    query of the given sensitivity (the worst pair: locs ``sensitivity`` apart).

    >>> discrete_laplace_delta(1.0, 1, 1)
    0.0

    With scale 1 and sensitivity 1 the loss is +-1: delta(1/2) = P(Z <= 0) (1 - e^(-1/2)).

    >>> a = math.exp(-1)
    >>> math.isclose(discrete_laplace_delta(0.5, 1, 1), (1 - math.exp(-0.5)) / (1 + a))
    True
    """
    sens = check_int(sensitivity, "sensitivity", low=1)
    rate = 1.0 / float(exact_scale(scale))
    if epsilon >= sens * rate:
        return 0.0
    a = math.exp(-rate)
    log_c = math.log((1 - a) / (1 + a))
    half = int(math.ceil(45.0 / rate)) + sens
    support = np.arange(-half, half + sens + 1)
    return _shift_delta(lambda y: log_c - rate * np.abs(y), support, sens, epsilon)


def discrete_gaussian_delta(epsilon: float, sigma_squared: int, sensitivity: int) -> float:
    """Exact delta(epsilon) of discrete Gaussian noise on an integer query of the given sensitivity.

    Canonne, Kamath and Steinke (2020), Theorem 7, summed term by term.

    >>> d = discrete_gaussian_delta(1.0, 3731 ** 2, 1000)
    >>> abs(d / 1e-5 - 1) < 0.01
    True
    """
    n2 = check_int(sigma_squared, "sigma_squared", low=1)
    sens = check_int(sensitivity, "sensitivity", low=1)
    sigma = math.sqrt(n2)
    half = int(math.ceil(40.0 * sigma)) + 2 * sens
    support = np.arange(-half, half + 1)
    logw = -(support.astype(float) ** 2) / (2.0 * n2)
    log_norm = float(np.log(np.sum(np.exp(logw))))
    return _shift_delta(lambda y: -(y.astype(float) ** 2) / (2.0 * n2) - log_norm, support, sens, epsilon)


def epsilon_from_delta(delta_of_epsilon, delta: float, *, high: float = 64.0) -> float:
    """The smallest epsilon with ``delta_of_epsilon(epsilon) <= delta`` (a non-increasing curve), by bisection.

    The returned epsilon is the upper end of the last bracket: never below the true one.

    >>> round(epsilon_from_delta(lambda e: max(0.0, 1 - e), 0.25), 6)
    0.75
    """
    if delta_of_epsilon(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, high
    if delta_of_epsilon(hi) > delta:
        return math.inf
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if delta_of_epsilon(mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return hi
