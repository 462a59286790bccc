"""Noise that notes its location: ``x + rng.laplace(0, b)`` tells the tape that ``x`` is the draw's location.

(And a uniform draw notes the threshold it is first compared with: ``rng.random() < p`` is a coin of
probability ``p``, which the coupling can then align as a Bernoulli draw.)

Code usually adds the location outside the primitive.  When the release shows the noisy value, the probe
of :mod:`dpaudit.greybox.align` finds the shift from the release; when it does not (an argmax, a
comparison with a threshold), nothing in the release moves with a small change of the draw.  A draw of a
location family is therefore handed to the target as a :class:`TrackedArray` (an ``ndarray`` subclass) or
a :class:`TrackedFloat` (a ``numpy.float64`` subclass): the *first* operation on it, when it is an
addition or a subtraction of a value that is not itself noise, records that value as the draw's outside
location (:meth:`dpaudit.greybox.tape.Tape.locate`) and returns plain numbers; any other first operation
returns plain numbers and records nothing, and the probe decides as it would untracked.  What happens downstream of
the sum does not matter: the coupling makes the two sums equal.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TrackedArray", "TrackedFloat", "track"]


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, TrackedArray) else np.float64(x) if isinstance(x, TrackedFloat) else x


def _note(origin, noise, other, sign: float) -> None:
    """Record ``sign * other`` (broadcast to the draw's shape) as the location of the draw ``origin``."""
    if origin is None:
        return
    tape, index, shape = origin
    if isinstance(other, (TrackedArray, TrackedFloat)) or np.shape(noise) != shape:
        return  # noise plus noise, or a slice of a draw: the probe decides
    try:
        loc = np.broadcast_to(np.asarray(other, dtype=float), shape)
    except (ValueError, TypeError):
        return
    tape.locate(index, sign * loc)


_COMPARISONS = (np.less, np.less_equal, np.greater, np.greater_equal)


def _note_threshold(origin, noise, other) -> None:
    """Record ``other`` as the threshold a uniform draw ``origin`` is first compared with (a coin)."""
    if origin is None:
        return
    tape, index, shape = origin
    if isinstance(other, (TrackedArray, TrackedFloat)) or np.shape(noise) != shape:
        return
    try:
        t = np.broadcast_to(np.asarray(other, dtype=float), shape)
    except (ValueError, TypeError):
        return
    tape.threshold(index, t)


class TrackedArray(np.ndarray):
    """An array of noise that records its location at its first addition (see the module docstring)."""

    _origin = None

    def __array_finalize__(self, obj):
        self._origin = None  # views and results are plain: only the draw itself records

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        tracked = [i for i, x in enumerate(inputs) if isinstance(x, TrackedArray) and x._origin is not None]
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*(_plain(x) for x in inputs), **kwargs)
        if len(tracked) == 1 and method == "__call__" and len(inputs) == 2 and ufunc in (np.add, np.subtract):
            i = tracked[0]
            noise, other = inputs[i], inputs[1 - i]
            _note(noise._origin, noise, other, 1.0 if ufunc is np.add else -1.0)
        elif len(tracked) == 1 and method == "__call__" and len(inputs) == 2 and ufunc in _COMPARISONS:
            i = tracked[0]
            _note_threshold(inputs[i]._origin, inputs[i], inputs[1 - i])
        for i in tracked:
            inputs[i]._origin = None  # the first operation only
        if out is not None:
            return out[0] if len(out) == 1 else out
        return result


class TrackedFloat(np.float64):
    """A scalar draw that records its location at its first addition (see the module docstring)."""

    _origin = None

    def _first(self, other, sign: float, op):
        origin, self._origin = self._origin, None
        if origin is not None and not isinstance(other, (TrackedArray, TrackedFloat)) and np.ndim(other) == 0:
            _note(origin, self, other, sign)
        return op(np.float64(self), _plain(other))

    def __add__(self, other):
        return self._first(other, 1.0, lambda a, b: a + b)

    def __radd__(self, other):
        return self._first(other, 1.0, lambda a, b: b + a)

    def __sub__(self, other):
        return self._first(other, -1.0, lambda a, b: a - b)

    def __rsub__(self, other):
        return self._first(other, -1.0, lambda a, b: b - a)

    def _compare(self, other, op):
        origin, self._origin = self._origin, None
        if origin is not None and not isinstance(other, (TrackedArray, TrackedFloat)) and np.ndim(other) == 0:
            _note_threshold(origin, self, other)
        return op(np.float64(self), _plain(other))

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    __hash__ = np.float64.__hash__


def track(value, tape, index: int):
    """``value`` (a draw's result) as tracked noise of draw ``index`` on ``tape``."""
    if isinstance(value, np.ndarray):
        out = value.view(TrackedArray)
        out._origin = (tape, index, value.shape)
        return out
    if isinstance(value, float):
        out = TrackedFloat(value)
        out._origin = (tape, index, ())
        return out
    return value
