"""Targets: the mechanisms under audit, loaded from a name and checked on every batch.

A target is named by ``"package.module:attribute"``, ``"path/to/file.py:attribute"``,
a built-in mechanism name (``"laplace"``), or passed as a Python callable.
:func:`load_target` wraps it in a :class:`Target`, which

* detects whether the callable accepts ``size`` and ``rng`` (by keyword or ``**kwargs``);
* draws releases with :meth:`Target.sample`: ``size=`` in bounded chunks when
  available, else one call per release, in parallel with joblib when asked;
  every chunk gets its own child :class:`~numpy.random.SeedSequence` by chunk
  *index*, so the samples are identical for every ``n_jobs``;
* checks every batch and raises :class:`~dpaudit.exceptions.TargetError`
  naming the target when it raises, returns NaN/inf, something non-numeric,
  changes shape, or mutates the dataset;
* optionally enforces a timeout per call (:class:`~dpaudit.exceptions.TargetTimeoutError`).

:func:`parse_dataset` reads the ``--dataset``/``--neighbor`` arguments.
"""

from __future__ import annotations

import decimal
import hashlib
import inspect
import numbers
import threading
import time
from typing import Any, Callable

import numpy as np

from ._rng import RNGLike
from ._target_import import callable_attribute, extend_sys_path, import_target_module, no_colon_message
from .datasets import as_numpy
from .datasets import parse_dataset  # noqa: F401  (re-exported: public name)
from .exceptions import ParameterTypeError, ParameterValueError, TargetError, TargetTimeoutError, TimeBudgetSpent

__all__ = ["Target", "load_target", "parse_dataset", "DEFAULT_CHUNK_SIZE", "DEFAULT_CALL_CHUNK_SIZE"]

from .sampling import DEFAULT_CALL_CHUNK as DEFAULT_CALL_CHUNK_SIZE  # noqa: E402  (public names kept)
from .sampling import DEFAULT_CHUNK_SIZE  # noqa: E402


# ----------------------------------------------------------------------------- targets
def _accepts(fn: Callable, keyword: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    p = params.get(keyword)
    if p is not None and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
        return True
    return any(q.kind is q.VAR_KEYWORD for q in params.values())


def _fingerprint(arr: np.ndarray) -> tuple:
    """What changes when a target mutates the dataset it was given: a hash of its bytes, its dtype and shape."""
    return hashlib.blake2b(np.ascontiguousarray(arr).tobytes(), digest_size=16).digest(), arr.dtype, arr.shape


def _call_with_timeout(fn: Callable[[], Any], timeout: float | None, describe: Callable[[], str]) -> Any:
    """Run ``fn()``; with a timeout, in a daemon thread joined for ``timeout`` seconds.

    Limitation: Python cannot kill a thread, so a call that times out keeps
    running in the background (it holds its CPU until it returns or the
    process exits); the audit stops waiting for it and raises.
    """
    if timeout is None:
        return fn()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True, name="dpaudit-target-call")
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TargetTimeoutError(f"{describe()} did not return within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


class Target:
    """A mechanism under audit, with the checks that keep a misbehaving one from producing a wrong bound.

    Parameters
    ----------
    fn : callable
        ``fn(dataset)`` returning one release; may accept ``size`` and ``rng``.
    name : str, optional
        How messages name the target (default: the callable's qualified name).

    Examples
    --------
    >>> def noisy_count(data, *, rng):
    ...     return len(data) + rng.laplace(0.0, 1.0)
    >>> t = Target(noisy_count, name="demo")
    >>> t.seeded, t.vectorised
    (True, False)
    >>> t.sample(np.array([1, 2, 3]), 4, rng=0).shape
    (4,)
    """

    def __init__(self, fn: Callable, *, name: str | None = None):
        search_path: tuple = ()
        if isinstance(fn, Target):
            fn, search_path = fn.fn, fn.search_path
        if not callable(fn):
            raise ParameterTypeError(f"target must be callable; got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "name", None) or getattr(fn, "__qualname__", None) or type(fn).__name__
        self.accepts_size = _accepts(fn, "size")
        self.accepts_rng = _accepts(fn, "rng")
        #: Folders the target imports from (its file's folder; the current one for a module found there):
        #: added to ``sys.path`` in a worker process before the target is unpickled there.
        self.search_path = search_path

    def __reduce__(self):
        # The folders come first, so a worker can import the target's modules when it unpickles ``fn``.
        return _restore_target, (_SearchPath(self.search_path), self.fn, self.name)

    def __repr__(self) -> str:
        return f"Target(name={self.name!r}, vectorised={self.vectorised}, seeded={self.seeded})"

    @property
    def seeded(self) -> bool:
        """Whether dpaudit can pass an ``rng`` (so that a seeded audit is reproducible)."""
        return self.accepts_rng

    @property
    def vectorised(self) -> bool:
        """Whether the target accepts ``size`` (many releases per call)."""
        return self.accepts_size

    @property
    def claim(self) -> Any:
        """The wrapped mechanism's :class:`~dpaudit.claims.PointClaim`, or ``None``."""
        return getattr(self.fn, "claim", None)

    def __call__(self, dataset: Any, *, size: int | None = None, rng: RNGLike = None) -> Any:
        """Call the target directly (no checks), passing only the keywords it accepts."""
        kwargs: dict[str, Any] = {}
        if size is not None:
            if not self.accepts_size:
                raise ParameterValueError(f"target {self.name!r} does not accept size")
            kwargs["size"] = size
        if self.accepts_rng:
            kwargs["rng"] = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
        return self.fn(dataset, **kwargs)

    # ------------------------------------------------------------------ sampling
    def sample(
        self,
        dataset: Any,
        n: int,
        *,
        rng: RNGLike = None,
        chunk_size: int | None = None,
        n_jobs: int = 1,
        timeout: float | None = None,
    ) -> np.ndarray:
        """Draw ``n`` checked releases on ``dataset``: shape ``(n,)`` or ``(n, k)``.

        Parameters
        ----------
        dataset : array_like
            Passed to the target as a numpy array (a private copy; the caller's array is never touched).
        n : int
            Number of releases.
        rng : Generator, SeedSequence, int or None
            Parent of one child seed per chunk (by chunk index), so the result does not depend on ``n_jobs``.
        chunk_size : int, optional
            Releases per chunk: per ``size=`` call for vectorised targets
            (default :data:`DEFAULT_CHUNK_SIZE`), per unit of parallel work otherwise
            (default :data:`DEFAULT_CALL_CHUNK_SIZE`).
        n_jobs : int, default 1
            Worker processes (joblib, loky) for chunks; -1 for all cores.
        timeout : float, optional
            Seconds allowed for each call (a ``size=`` call counts as one).

        Raises
        ------
        TargetError
            The target raised, returned NaN/inf/non-numeric output, changed shape or mutated the dataset.
        TargetTimeoutError
            A call took longer than ``timeout``.
        """
        from .sampling import draw_releases

        return draw_releases(self, dataset, n, rng=rng, chunk_size=chunk_size, n_jobs=n_jobs, timeout=timeout)

    def run_chunk(self, data: np.ndarray, start: int, stop: int, seed: Any, timeout: float | None,
                  deadline: float | None = None) -> np.ndarray:
        """Releases ``start..stop-1`` on ``data`` from one child seed, every output checked.

        ``deadline`` (a ``time.time()``, comparable across processes): no call starts after it
        (:class:`~dpaudit.exceptions.TimeBudgetSpent`), so a time budget is overrun by one call at most.
        """
        gen = np.random.default_rng(seed) if seed is not None else None
        before = _fingerprint(data)
        if self.accepts_size:
            kwargs: dict[str, Any] = {"size": stop - start}
            if gen is not None:
                kwargs["rng"] = gen
            where = f"releases {start}..{stop - 1}"
            _check_deadline(deadline)
            out = self._call(data, kwargs, timeout, f"({where})")
            self._check_mutation(data, before, where)
            return self._check_batch(out, start, stop - start)
        results = []
        shape: tuple | None = None
        kwargs = {"rng": gen} if gen is not None else {}
        for i in range(start, stop):
            _check_deadline(deadline)
            out = self._call(data, kwargs, timeout, f"in release {i}", timeout_where=f"(release {i})")
            self._check_mutation(data, before, f"release {i}")
            arr = self._as_numeric(out, f"release {i}")
            if arr.ndim > 1:
                raise TargetError(
                    f"target {self.name!r} returned an array of shape {arr.shape} in release {i}; "
                    "a release must be a scalar or a 1-D array"
                )
            if arr.ndim == 1 and arr.shape[0] == 0:
                raise TargetError(f"target {self.name!r} returned an empty array in release {i}; "
                                  "a release must be a scalar or a non-empty 1-D array")
            if shape is None:
                shape = arr.shape
            elif arr.shape != shape:
                raise TargetError(
                    f"target {self.name!r} changed its output shape from {shape or 'scalar'} to "
                    f"{arr.shape or 'scalar'} in release {i}"
                )
            self._check_finite(arr.reshape(1, -1), i)
            results.append(arr)
        return np.stack(results)

    def _call(self, data: np.ndarray, kwargs: dict, timeout: float | None, where: str,
              timeout_where: str | None = None) -> Any:
        """One call of the target: any exception it raises becomes a TargetError naming it and ``where``."""
        try:
            return _call_with_timeout(lambda: self.fn(data, **kwargs), timeout,
                                      lambda: f"target {self.name!r} {timeout_where or where}")
        except TargetError:
            raise
        except Exception as exc:
            raise TargetError(f"target {self.name!r} raised {type(exc).__name__}: {exc} {where}") from exc

    def _check_mutation(self, data: np.ndarray, before: tuple, where: str) -> None:
        if _fingerprint(data) != before:
            raise TargetError(f"target {self.name!r} mutated the dataset it was given ({where})")

    def _as_numeric(self, out: Any, where: str) -> np.ndarray:
        try:
            arr = as_numpy(out)
        except Exception as exc:  # e.g. ragged sequences
            raise TargetError(
                f"target {self.name!r} returned a non-numeric value of type {type(out).__name__} in {where} "
                f"({_parts_hint(out) or exc})"
            ) from None
        if arr.dtype.kind == "O" and _has_wide_int(out):
            raise TargetError(
                f"target {self.name!r} returned an int that does not fit in 64 bits ({out!r:.60}) in {where}; "
                "return a float (or an int between -2**63 and 2**64 - 1)"
            )
        if arr.dtype.kind == "O" and _all_real(out):
            # An exact sampler may release Fractions (Canonne, Kamath and Steinke 2020) or Decimals: real
            # numbers, whose rounding to float is a fixed function of the value, so it cannot add a leak.
            arr = np.asarray(out, dtype=float)
        if arr.dtype.kind not in "biuf":
            # An array's repr cut at 60 characters ends mid-number; its dtype and first value say what came back.
            # The first value as a Python object: numpy 2 spells a scalar np.complex128(1+1j), numpy 1 (1+1j).
            first = arr.flat[0] if arr.size > 1 else out
            first = first.item() if isinstance(first, np.generic) else first
            what = (f"dtype {arr.dtype}, shape {arr.shape}, first value {first!r:.40}" if arr.size > 1
                    else f"{first!r:.60}")
            raise TargetError(
                f"target {self.name!r} returned a non-numeric value of type {type(out).__name__} ({what}) in {where}"
                + (_NO_ANSWER if _holds_none(out) else "")
            )
        return arr

    def _check_finite(self, arr: np.ndarray, first: int) -> None:
        if arr.dtype.kind != "f":
            return
        with np.errstate(over="ignore", invalid="ignore"):
            total = np.sum(arr)
        if np.isfinite(total):
            # A NaN or an infinity makes the sum non-finite, so a finite sum
            # clears the batch in one pass without a temporary (an overflowing
            # sum of finite values falls through to the exact check).
            return
        bad = ~np.isfinite(arr)
        if bad.any():
            row = int(np.flatnonzero(bad.reshape(arr.shape[0], -1).any(axis=1))[0])
            value = arr.reshape(arr.shape[0], -1)[row][bad.reshape(arr.shape[0], -1)[row]][0]
            what = "NaN" if np.isnan(value) else ("inf" if value > 0 else "-inf")
            raise TargetError(f"target {self.name!r} returned {what} in release {first + row}")

    def _check_batch(self, out: Any, start: int, n: int) -> np.ndarray:
        where = f"releases {start}..{start + n - 1}"
        arr = self._as_numeric(out, where)
        if arr.ndim == 0 or arr.shape[0] != n or arr.ndim > 2:
            raise TargetError(
                f"target {self.name!r} returned shape {arr.shape} for size={n} ({where}); "
                f"expected ({n},) or ({n}, k)"
            )
        if arr.ndim == 2 and arr.shape[1] == 0:
            raise TargetError(f"target {self.name!r} returned an empty array for each release ({where}, shape "
                              f"{arr.shape}); a release must be a scalar or a non-empty 1-D array")
        self._check_finite(arr, start)
        return arr


#: A mechanism that may answer nothing (propose-test-release's abort, the sparse vector's "below") is told how.
_NO_ANSWER = " (code 'no answer' as a number the mechanism never releases otherwise, say -1)"


_EMPTY = object()  # what _leaves yields for an empty list, tuple or object array


def _leaves(out: Any):
    """The values inside ``out``, through nested lists, tuples and object arrays (``_EMPTY`` for an empty one)."""
    if isinstance(out, (list, tuple)) or (isinstance(out, np.ndarray) and out.dtype.kind == "O"):
        items = out.ravel().tolist() if isinstance(out, np.ndarray) else out
        if not len(items):
            yield _EMPTY
        for x in items:
            yield from _leaves(x)
    else:
        yield out


def _holds_none(out: Any) -> bool:
    """Whether ``out`` is None or a sequence or object array holding None (an abort returned as None)."""
    return any(x is None for x in _leaves(out))


def _parts_hint(out: Any) -> str:
    """For a list or tuple of arrays of different shapes, their shapes and the fix (said in numpy's stead); else "".

    Why: a training loop's ``return iterates, weights`` (shapes (T,) and (d,)) was refused with numpy's words
    alone ("inhomogeneous shape after 1 dimensions"), which name neither the parts nor what a release may be.
    """
    if not isinstance(out, (list, tuple)) or len(out) < 2:
        return ""
    try:
        shapes = [tuple(np.shape(part)) for part in out[:4]]
    except Exception:
        return ""
    if len(set(shapes)) < 2:
        return ""
    listed = ", ".join(str(shape) for shape in shapes) + (", ..." if len(out) > 4 else "")
    return (f"its {len(out)} parts have shapes {listed}; a release is one scalar or one 1-D array: return the "
            "part the audit is about, or join the parts into one 1-D array")


def _has_wide_int(out: Any) -> bool:
    """Whether ``out`` (a release numpy could only store as objects) holds a Python int beyond 64 bits."""
    if isinstance(out, int) and not isinstance(out, bool):
        return not -(2**63) <= out < 2**64
    if isinstance(out, (list, tuple)):
        return any(_has_wide_int(x) for x in out)
    if isinstance(out, np.ndarray) and out.dtype.kind == "O":
        return any(_has_wide_int(x) for x in out.ravel().tolist())
    return False


def _all_real(out: Any) -> bool:
    """Whether ``out`` (a release numpy could only store as objects) is real numbers alone: Fractions, Decimals."""
    return all(isinstance(x, (numbers.Real, decimal.Decimal)) for x in _leaves(out))


def _check_deadline(deadline: float | None) -> None:
    if deadline is not None and time.time() >= deadline:
        raise TimeBudgetSpent("the time budget ran out")


class _SearchPath:
    """Folders to put on ``sys.path``; unpickling one does so (and yields the folders)."""

    def __init__(self, folders: tuple):
        self.folders = tuple(folders)

    def __reduce__(self):
        return extend_sys_path, (self.folders,)


def _restore_target(folders: tuple, fn: Callable, name: str) -> "Target":
    target = Target(fn, name=name)
    target.search_path = tuple(folders)
    return target


def load_target(spec: Any, **params: Any) -> Target:
    """Resolve ``spec`` to a :class:`Target`.

    ``spec`` is a :class:`Target`, a callable, a built-in mechanism name
    (``params`` are its parameters), ``"package.module:attribute"`` or
    ``"path/to/file.py:attribute"`` (the attribute may be dotted,
    ``"mod:Class.method"``).  A module is imported only when named.

    Examples
    --------
    >>> load_target("laplace", epsilon=2.0).claim.point_epsilon
    2.0
    >>> load_target("numpy:nonexistent")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: target 'numpy:nonexistent': module 'numpy' has no attribute 'nonexistent'
    >>> load_target("no-colon-here")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: target 'no-colon-here' is neither a built-in mechanism (see `dpaudit list`) nor of the form 'package.module:attribute' or 'path/to/file.py:attribute'
    """
    if isinstance(spec, Target):
        if params:
            raise ParameterValueError("parameters can only be given with a built-in mechanism name")
        return spec
    if callable(spec) and not isinstance(spec, str):
        if params:
            raise ParameterValueError("parameters can only be given with a built-in mechanism name")
        return Target(spec)
    if not isinstance(spec, str):
        raise ParameterTypeError(f"target must be a string or a callable; got {spec!r}")
    text = spec.strip()
    from .mechanisms import REGISTRY, get_mechanism

    if text in REGISTRY:
        return Target(get_mechanism(text, **params), name=text)
    if params:
        raise ParameterValueError(f"target {spec!r}: parameters can only be given with a built-in mechanism name")
    if ":" not in text:
        raise ParameterValueError(no_colon_message(spec, text, REGISTRY))
    left, attr = text.rsplit(":", 1)
    if not left or not attr:
        raise ParameterValueError(f"target {spec!r}: expected 'module:attribute' with both parts non-empty")
    module, folders, where = import_target_module(spec, left)
    obj = callable_attribute(module, attr, spec=spec, where=where)
    target = Target(obj, name=text)
    target.search_path = folders
    return target


