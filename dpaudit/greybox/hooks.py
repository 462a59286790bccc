"""Library hooks: a library's noise primitives taped at the level of its mechanism objects.

diffprivlib's mechanisms draw inside their own samplers (``self._rng.random()`` four times for one
Laplace value, a rejection loop for a bounded one), from a ``random_state`` of their own.  Recording those
uniforms would tape the sampler, not the mechanism; the hook instead tapes each ``randomise`` call as one
draw of the distribution the mechanism *declares* (:class:`Declared`): its family and parameters from its
epsilon, delta, sensitivity and bounds, its location the value it is given, and the declared sensitivity,
so that the change of the value entering the mechanism between D and D' can be checked against it.  On the
neighbour the hook answers with the coupled value and never runs the library's sampler.

A hook is active only while a grey-box trace runs, and only for a library already imported.
"""

from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .tape import active_tape

__all__ = ["library_hooks", "HOOKED", "Declared"]


@dataclass
class Declared:
    """What one ``randomise`` call declares: the draw's family and parameters, its support labels (categorical),
    its shape, the location whose move is checked against the declared sensitivity (``norm`` "max" or
    "spectral"), how to draw it on D (``sample(generator)``; None: the library's own sampler), how the drawn value
    becomes the call's result (``post``), and the mechanism that post-processes the draw (never exact then)."""

    family: str
    params: dict
    labels: Any = None
    shape: tuple = ()
    location: Any = None
    norm: str = "max"
    sample: Callable | None = None
    post: Callable | None = None
    post_processed: str | None = None


def _laplace(mech, value):
    scale = mech.sensitivity / (mech.epsilon - math.log(1 - mech.delta))
    return Declared("laplace", {"loc": float(value), "scale": scale})


def _gaussian(mech, value):
    return Declared("normal", {"loc": float(value), "scale": float(mech._scale)})


def _geometric(mech, value):
    return Declared("discrete_laplace", {"loc": float(value), "scale": mech.sensitivity / mech.epsilon})


def _exponential(mech, value):
    cumulative = np.asarray(mech._probabilities, dtype=float)
    p = np.diff(np.concatenate([[0.0], cumulative]))
    if mech.measure is not None and callable(getattr(mech._rng, "answer_next_uniform", None)):
        return _over_intervals(mech, p / p.sum())
    return Declared("categorical", {"p": p / p.sum()}, list(mech.candidates) if mech.candidates else None,
                    location=list(np.asarray(mech.utility, dtype=float)))


def _over_intervals(mech, p):
    """The exponential mechanism over intervals of lengths ``measure``, followed by the uniform point inside the
    chosen one that the tool draws next from the same ``random_state`` (diffprivlib's quantiles: Smith 2011): one
    draw of the piecewise-uniform law of the point's offset from the first interval's start.  The hook returns
    the interval holding the point and answers the tool's next uniform with the point's place in it."""
    width = np.asarray(mech.measure, dtype=float)
    edges = np.concatenate([[0.0], np.cumsum(width)])
    density = np.divide(p, width, out=np.zeros_like(p), where=width > 0)

    def sample(_generator):  # the interval as diffprivlib draws it, then the point inside it
        idx = int(np.argmax(mech._rng.random() <= np.cumsum(p)))
        return edges[idx] + mech._rng.random() * width[idx]

    def post(drawn):
        r = float(np.asarray(drawn))
        idx = int(np.clip(np.searchsorted(edges, r, side="right") - 1, 0, width.size - 1))
        while width[idx] <= 0 and idx > 0:
            idx -= 1
        mech._rng.answer_next_uniform(min(max((r - edges[idx]) / width[idx], 0.0), 1.0) if width[idx] > 0 else 0.0)
        return mech.candidates[idx] if mech.candidates else idx

    return Declared("piecewise_uniform", {"edges": edges, "density": density},
                    location=list(np.asarray(mech.utility, dtype=float)), sample=sample, post=post)


def _binary(mech, value):
    keep = math.exp(mech.epsilon) / (1 + math.exp(mech.epsilon))
    p = [keep, 1 - keep] if value == mech.value0 else [1 - keep, keep]
    return Declared("categorical", {"p": np.array(p)}, [mech.value0, mech.value1])


def _bounded_domain(mech, value):
    """The renormalised Laplace on [lower, upper] that the rejection loop samples (Holohan et al. 2020)."""
    if mech._scale is None:
        mech._scale = mech._find_scale()
    if np.isnan(value) or mech._scale == 0:
        return None
    loc = max(min(float(value), mech.upper), mech.lower)
    return Declared("bounded_laplace", {"loc": loc, "scale": float(mech._scale), "lower": float(mech.lower),
                                        "upper": float(mech.upper)})


def _clamped_laplace(mech, value):
    """Laplace noise on the value, then the clamp to [lower, upper]: atoms at the bounds, a density between."""
    scale = mech.sensitivity / (mech.epsilon - math.log(1 - mech.delta))
    if scale == 0 or not (math.isfinite(mech.lower) and math.isfinite(mech.upper)):
        return None
    return Declared("clamped_laplace", {"loc": float(value), "scale": scale, "lower": float(mech.lower),
                                        "upper": float(mech.upper)})


def _clamped_geometric(mech, value):
    if mech.sensitivity == 0 or not math.isfinite(mech.epsilon):
        return None
    return Declared("clamped_geometric", {"loc": float(value), "scale": mech.sensitivity / mech.epsilon,
                                          "lower": float(mech.lower), "upper": float(mech.upper)},
                    post=lambda drawn: int(np.asarray(drawn)))


def _bounded_noise(mech, value):
    scale = mech.sensitivity / mech.epsilon
    if np.isnan(value) or scale == 0:
        return None
    bound = scale * math.log(1 + (math.exp(mech.epsilon) - 1) / 2 / mech.delta)
    return Declared("bounded_noise_laplace", {"loc": float(value), "scale": scale, "bound": bound})


def _uniform(mech, value):
    if mech.sensitivity == 0:
        return None
    return Declared("uniform_noise", {"loc": float(value), "scale": mech.sensitivity / mech.delta / 2})


def _staircase(mech, value):
    if mech.sensitivity == 0 or not math.isfinite(mech.epsilon):
        return None
    return Declared("staircase", {"loc": float(value), "scale": float(mech.sensitivity),
                                  "epsilon": float(mech.epsilon), "gamma": float(mech.gamma)})


def _gaussian_discrete(mech, value):
    if mech._scale == 0:
        return None
    return Declared("discrete_gaussian", {"loc": float(value), "scale": float(mech._scale)},
                    post=lambda drawn: int(np.asarray(drawn)))


def _snapping(mech, value):
    """Laplace noise on the clamped value, then rounded to a power-of-two grid and clamped (Mironov 2012):
    post-processing of the Laplace draw, which is taped unrounded (drawn on D from the mechanism's generator)."""
    if mech.sensitivity == 0:
        return None
    scale = 1.0 / mech.effective_epsilon()
    lambda_ = mech._get_nearest_power_of_2(scale)
    loc = max(min(float(value), mech.upper), mech.lower)

    def post(drawn):
        scaled = mech._scale_and_offset_value(float(np.asarray(drawn)))
        return float(mech._reverse_scale_and_offset_value(mech._truncate(mech._round_to_nearest_power_of_2(
            scaled, lambda_))))

    return Declared("laplace", {"loc": loc, "scale": mech.sensitivity * scale},
                    sample=lambda _g: loc + mech.sensitivity * scale * mech._rng.laplace(),
                    post=post, post_processed="Snapping")


def _exponential_categorical(mech, value):
    labels = list(mech._normalising_constant.keys())
    p = np.array([mech._get_prob(value, t) for t in labels], dtype=float)
    return Declared("categorical", {"p": p / p.sum()}, labels)


def _permute_and_flip(mech, value):
    """Permute-and-flip (McKenna and Sheldon 2020): candidate r, at a uniform position of a random order, is
    released with probability p_r times the chance that every earlier candidate was rejected."""
    p = np.exp(np.asarray(mech._probabilities, dtype=float))
    n = p.size
    out = np.empty(n)
    for r in range(n):
        poly = np.ones(1)
        for s in range(n):
            if s != r:
                poly = np.convolve(poly, [1.0, 1.0 - p[s]])  # elementary symmetric sums of the rejections
        out[r] = p[r] * np.mean(poly / np.array([math.comb(n - 1, k) for k in range(n)]))
    return Declared("categorical", {"p": out / out.sum()}, list(mech.candidates) if mech.candidates else None,
                    location=list(np.asarray(mech.utility, dtype=float)))


def _bingham(mech, value):
    a = np.asarray(value, dtype=float)
    if a.shape[0] == 1 or mech.sensitivity / mech.epsilon == 0:
        return None
    return Declared("bingham", {"matrix": a.reshape(-1), "coef": mech.epsilon / 4 / mech.sensitivity},
                    shape=(a.shape[0],), location=a, norm="spectral", post=lambda drawn: np.array(drawn, float))


#: The diffprivlib mechanisms taped, with how each declares its noise.
_DECLARE = {"Laplace": _laplace, "Gaussian": _gaussian, "GaussianAnalytic": _gaussian, "Geometric": _geometric,
            "Exponential": _exponential, "Binary": _binary, "LaplaceTruncated": _clamped_laplace,
            "GeometricTruncated": _clamped_geometric,
            "LaplaceBoundedDomain": _bounded_domain,
            "LaplaceBoundedNoise": _bounded_noise, "Uniform": _uniform, "Staircase": _staircase,
            "GaussianDiscrete": _gaussian_discrete, "Snapping": _snapping,
            "ExponentialCategorical": _exponential_categorical, "PermuteAndFlip": _permute_and_flip,
            "Bingham": _bingham}
HOOKED = tuple(_DECLARE)
#: The hooked mechanisms whose library sampler is running (on D): calls they make to other hooked classes
#: (``LaplaceTruncated`` through ``Laplace.randomise``) run unhooked.
_SAMPLING: list = []


def _result(dec: Declared, drawn):
    if dec.post is not None:
        return dec.post(drawn)
    if dec.family == "categorical":
        idx = int(np.asarray(drawn))
        return dec.labels[idx] if dec.labels is not None else idx
    if dec.family in ("discrete_laplace", "discrete_gaussian"):
        return int(np.asarray(drawn))
    return float(np.asarray(drawn))


def _hooked(original, name: str):
    """``name.randomise`` taped as one draw of the noise ``name`` declares.

    Keyed by the class the hook is installed on, not by ``type(self)``: a subclass that post-processes
    its parent's noise (``LaplaceTruncated``, ``GeometricTruncated``: ``super().randomise`` then a
    clamp, as diffprivlib's tools use them) is taped at its parent's call, and marked post-processed.
    """
    def randomise(self, value=None):
        tape = active_tape() if not _SAMPLING else None  # a hooked sampler's own inner calls are not draws
        dec = _DECLARE[name](self, value) if tape is not None else None
        if dec is None:  # outside a trace, or a degenerate mechanism (no noise, a NaN value): the library's own
            return original(self) if value is None else original(self, value)
        location = value if dec.location is None else dec.location
        post = dec.post_processed or (None if type(self).randomise is randomise else type(self).__name__)
        meta = {"hooked": True, "epsilon": self.epsilon, "delta": getattr(self, "delta", 0.0),
                "sensitivity": getattr(self, "sensitivity", None), "location": location, "norm": dec.norm,
                "post_processed": post}

        def sample(generator):
            if dec.sample is not None:
                return np.asarray(dec.sample(generator))
            _SAMPLING.append(name)
            try:
                out = original(self) if value is None else original(self, value)
            finally:
                _SAMPLING.pop()
            return np.asarray(out if dec.labels is None else dec.labels.index(out))

        drawn = tape.draw(f"diffprivlib.{name}", dec.family, dec.params, dec.shape, sample, meta=meta,
                          labels=dec.labels)
        return _result(dec, drawn)

    randomise.__wrapped__ = original
    return randomise


@contextlib.contextmanager
def library_hooks():
    """While the block runs, diffprivlib's mechanisms (if imported) tape their ``randomise`` calls."""
    module = sys.modules.get("diffprivlib.mechanisms")
    patched = []
    if module is not None:
        for name in HOOKED:
            cls = getattr(module, name, None)
            if cls is not None and "randomise" in vars(cls):
                patched.append((cls, vars(cls)["randomise"]))
                cls.randomise = _hooked(vars(cls)["randomise"], name)
    try:
        yield
    finally:
        for cls, original in patched:
            cls.randomise = original
