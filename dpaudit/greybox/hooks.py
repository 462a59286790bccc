"""Library hooks: a library's noise primitives taped at the level of its mechanism objects.

diffprivlib's mechanisms draw inside their own samplers (``self._rng.random()`` four times for one
Laplace value), from a ``random_state`` of their own.  Recording those uniforms would tape the
sampler, not the mechanism; the hook instead tapes each ``randomise`` call as one draw of the noise
the mechanism *declares*: its family and scale from its epsilon, delta and sensitivity, its location
the value it is given, and the declared sensitivity, so that the change of the value entering the
mechanism between D and D' can be checked against it.  On the neighbour the hook answers with the
coupled value and never runs the library's sampler.

A hook is active only while a grey-box trace runs, and only for a library already imported.
"""

from __future__ import annotations

import contextlib
import math
import sys

import numpy as np

from .tape import active_tape

__all__ = ["library_hooks", "HOOKED"]

#: The diffprivlib mechanisms taped, with how each declares its noise.
HOOKED = ("Laplace", "Gaussian", "GaussianAnalytic", "Geometric", "Exponential", "Binary")


def _laplace(mech, value):
    scale = mech.sensitivity / (mech.epsilon - math.log(1 - mech.delta))
    return "laplace", {"loc": float(value), "scale": scale}, None


def _gaussian(mech, value):
    return "normal", {"loc": float(value), "scale": float(mech._scale)}, None


def _geometric(mech, value):
    return "discrete_laplace", {"loc": float(value), "scale": mech.sensitivity / mech.epsilon}, None


def _exponential(mech, value):
    cumulative = np.asarray(mech._probabilities, dtype=float)
    p = np.diff(np.concatenate([[0.0], cumulative]))
    return "categorical", {"p": p / p.sum()}, list(mech.candidates) if mech.candidates else None


def _binary(mech, value):
    keep = math.exp(mech.epsilon) / (1 + math.exp(mech.epsilon))
    p = [keep, 1 - keep] if value == mech.value0 else [1 - keep, keep]
    return "categorical", {"p": np.array(p)}, [mech.value0, mech.value1]


_DECLARE = {"Laplace": _laplace, "Gaussian": _gaussian, "GaussianAnalytic": _gaussian, "Geometric": _geometric,
            "Exponential": _exponential, "Binary": _binary}


def _hooked(original, name: str):
    """``name.randomise`` taped as one draw of the noise ``name`` declares.

    Keyed by the class the hook is installed on, not by ``type(self)``: a subclass that post-processes
    its parent's noise (``LaplaceTruncated``, ``GeometricTruncated``: ``super().randomise`` then a
    clamp, as diffprivlib's tools use them) is taped at its parent's call; one that draws its own
    noise (``LaplaceBoundedDomain``) never reaches the hook and is refused as unrecorded.
    """
    def randomise(self, value=None):
        declare = _DECLARE.get(name)
        tape = active_tape()
        if tape is None or declare is None:
            return original(self) if value is None else original(self, value)
        family, params, labels = declare(self, value)
        location = list(np.asarray(self.utility, dtype=float)) if name == "Exponential" else value
        meta = {"hooked": True, "epsilon": self.epsilon, "delta": getattr(self, "delta", 0.0),
                "sensitivity": getattr(self, "sensitivity", None), "location": location,
                "post_processed": None if type(self).randomise is randomise else type(self).__name__}

        def sample(_generator):
            out = original(self) if name == "Exponential" else original(self, value)
            if labels is None:
                return np.asarray(out)
            return np.asarray(labels.index(out))

        drawn = tape.draw(f"diffprivlib.{name}", family, params, (), sample, meta=meta, labels=labels)
        if family == "categorical":
            idx = int(np.asarray(drawn))
            return labels[idx] if labels is not None else idx
        if family == "discrete_laplace":
            return int(np.asarray(drawn))
        return float(np.asarray(drawn))

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
