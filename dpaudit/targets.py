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

import csv
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ._rng import RNGLike, as_seed_sequence
from ._validation import check_int, check_real
from .exceptions import DatasetError, ParameterTypeError, ParameterValueError, TargetError, TargetTimeoutError

__all__ = ["Target", "load_target", "parse_dataset", "DEFAULT_CHUNK_SIZE", "DEFAULT_CALL_CHUNK_SIZE"]

#: Releases per ``size=`` call (bounds memory; 2^20 releases of a scalar are 8 MB).
DEFAULT_CHUNK_SIZE = 1 << 20
#: Releases per unit of work for one-release-per-call targets (the grain of parallelism).
DEFAULT_CALL_CHUNK_SIZE = 256


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


def _fingerprint(arr: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(arr).tobytes() + str((arr.dtype, arr.shape)).encode(), digest_size=16).hexdigest()


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
        if isinstance(fn, Target):
            fn = fn.fn
        if not callable(fn):
            raise ParameterTypeError(f"target must be callable; got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "name", None) or getattr(fn, "__qualname__", None) or type(fn).__name__
        self.accepts_size = _accepts(fn, "size")
        self.accepts_rng = _accepts(fn, "rng")

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
        """The wrapped mechanism's :class:`~dpaudit.privacy.PrivacyClaim`, or ``None``."""
        return getattr(self.fn, "claim", None)

    @property
    def output_kind(self) -> str | None:
        """The wrapped mechanism's output hint ("scalar", "discrete", "vector"), or ``None``."""
        kind = getattr(self.fn, "output_kind", None)
        return kind if isinstance(kind, str) else None

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
        n = check_int(n, "n", low=0)
        n_jobs = check_int(n_jobs, "n_jobs")
        if n_jobs == 0 or n_jobs < -1:
            raise ParameterValueError(f"n_jobs must be >= 1 or -1; got {n_jobs}")
        if timeout is not None:
            timeout = check_real(timeout, "timeout", low=0, low_inclusive=False)
        default_chunk = DEFAULT_CHUNK_SIZE if self.accepts_size else DEFAULT_CALL_CHUNK_SIZE
        chunk = default_chunk if chunk_size is None else check_int(chunk_size, "chunk_size", low=1)
        data = np.array(dataset)  # our own copy: the caller's array can never be mutated by the target
        starts = list(range(0, n, chunk))
        seeds = as_seed_sequence(rng).spawn(len(starts)) if self.accepts_rng else [None] * len(starts)
        jobs = [(start, min(n, start + chunk), seed) for start, seed in zip(starts, seeds)]
        if not jobs:
            return np.empty((0,))
        if n_jobs == 1 or len(jobs) == 1:
            parts = [self._run_chunk(data, a, b, s, timeout) for a, b, s in jobs]
        else:
            from joblib import Parallel, delayed

            parts = Parallel(n_jobs=n_jobs, backend="loky")(
                delayed(self._run_chunk)(data, a, b, s, timeout) for a, b, s in jobs
            )
        shape = parts[0].shape[1:]
        for (a, _, _), part in zip(jobs, parts):
            if part.shape[1:] != shape:
                raise TargetError(
                    f"target {self.name!r} changed its output shape from {shape or 'scalar'} to "
                    f"{part.shape[1:] or 'scalar'} in release {a}"
                )
        return np.concatenate(parts, axis=0)

    def _run_chunk(self, data: np.ndarray, start: int, stop: int, seed: Any, timeout: float | None) -> np.ndarray:
        gen = np.random.default_rng(seed) if seed is not None else None
        before = _fingerprint(data)
        if self.accepts_size:
            kwargs: dict[str, Any] = {"size": stop - start}
            if gen is not None:
                kwargs["rng"] = gen
            where = f"releases {start}..{stop - 1}"
            out = self._call(data, kwargs, timeout, f"({where})")
            self._check_mutation(data, before, where)
            return self._check_batch(out, start, stop - start)
        results = []
        shape: tuple | None = None
        kwargs = {"rng": gen} if gen is not None else {}
        for i in range(start, stop):
            out = self._call(data, kwargs, timeout, f"in release {i}", timeout_where=f"(release {i})")
            self._check_mutation(data, before, f"release {i}")
            arr = self._as_numeric(out, f"release {i}")
            if arr.ndim > 1:
                raise TargetError(
                    f"target {self.name!r} returned an array of shape {arr.shape} in release {i}; "
                    "a release must be a scalar or a 1-D array"
                )
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

    def _check_mutation(self, data: np.ndarray, before: str, where: str) -> None:
        if _fingerprint(data) != before:
            raise TargetError(f"target {self.name!r} mutated the dataset it was given ({where})")

    def _as_numeric(self, out: Any, where: str) -> np.ndarray:
        try:
            arr = np.asarray(out)
        except Exception as exc:  # e.g. ragged sequences
            raise TargetError(
                f"target {self.name!r} returned a non-numeric value of type {type(out).__name__} in {where} ({exc})"
            ) from None
        if arr.dtype.kind not in "biuf":
            raise TargetError(
                f"target {self.name!r} returned a non-numeric value of type {type(out).__name__} "
                f"({out!r:.60}) in {where}"
            )
        return arr

    def _check_finite(self, arr: np.ndarray, first: int) -> None:
        if arr.dtype.kind != "f":
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
        self._check_finite(arr, start)
        return arr


# ----------------------------------------------------------------------------- loading
def _load_file_module(path: Path, spec_text: str) -> Any:
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    mod_name = f"_dpaudit_target_{path.stem}_{digest}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise ParameterValueError(f"target {spec_text!r}: cannot load {str(path)!r} as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[mod_name]
        raise ParameterValueError(
            f"target {spec_text!r}: executing {str(path)!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    try:  # worker processes cannot import this module by name: pickle its functions by value
        import cloudpickle  # what joblib's loky backend pickles with (joblib >= 1.5 no longer vendors it)
    except ImportError:  # pragma: no cover - older joblib vendors it
        try:
            from joblib.externals import cloudpickle  # type: ignore[no-redef]
        except ImportError:
            cloudpickle = None  # type: ignore[assignment]
    if cloudpickle is not None:
        cloudpickle.register_pickle_by_value(module)
    return module


def load_target(spec: Any, **params: Any) -> Target:
    """Resolve ``spec`` to a :class:`Target`.

    ``spec`` is a :class:`Target`, a callable, a built-in mechanism name
    (``params`` are its parameters), ``"package.module:attribute"`` or
    ``"path/to/file.py:attribute"`` (the attribute may be dotted,
    ``"mod:Class.method"``).  A module is imported only when named.

    Examples
    --------
    >>> load_target("laplace", epsilon=2.0).claim.epsilon
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
        raise ParameterValueError(_no_colon_message(spec, text, REGISTRY))
    left, attr = text.rsplit(":", 1)
    if not left or not attr:
        raise ParameterValueError(f"target {spec!r}: expected 'module:attribute' with both parts non-empty")
    is_path = left.endswith(".py") or "/" in left or os.sep in left
    if is_path:
        path = _expand(left)
        if not path.is_file():
            raise ParameterValueError(f"target {spec!r}: file not found: {left!r}")
        module = _load_file_module(path, spec)
        where = f"file {left!r}"
    else:
        try:
            module = importlib.import_module(left)
        except ImportError as exc:
            raise ParameterValueError(f"target {spec!r}: cannot import module {left!r}: {exc}") from exc
        except Exception as exc:
            raise ParameterValueError(
                f"target {spec!r}: importing module {left!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        where = f"module {left!r}"
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            from ._validation import did_you_mean

            hint = did_you_mean(part, [n for n in dir(obj) if not n.startswith("_")])
            raise ParameterValueError(f"target {spec!r}: {where} has no attribute {attr!r}{hint}") from None
    if not callable(obj):
        raise ParameterValueError(f"target {spec!r}: {attr!r} is not callable (it is a {type(obj).__name__})")
    return Target(obj, name=text)


def _no_colon_message(spec: Any, text: str, registry) -> str:
    """Why a target without ``:`` is not understood, with the likeliest fix."""
    from ._validation import did_you_mean

    if text.endswith(".py") or "/" in text or os.sep in text:
        path = _expand(text)
        names = []
        if path.is_file():
            import ast

            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
                names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                         and not n.name.startswith("_")]
            except (OSError, SyntaxError, UnicodeDecodeError):
                names = []
        example = f"{text}:{names[0]}" if names else f"{text}:function_name"
        found = f" (it defines: {', '.join(names[:8])})" if names else ""
        return (f"target {spec!r} names a file but not the callable in it: write {example!r}{found}")
    hint = did_you_mean(text, registry)
    if hint:
        return f"target {spec!r} is not a built-in mechanism{hint}; `dpaudit list` shows them all"
    return (f"target {spec!r} is neither a built-in mechanism (see `dpaudit list`) nor of the form "
            "'package.module:attribute' or 'path/to/file.py:attribute'")


# ----------------------------------------------------------------------------- datasets
def _validate_dataset(obj: Any, name: str, source: str) -> np.ndarray:
    where = f"{name}: {source}"
    if isinstance(obj, dict) or obj is None or isinstance(obj, (str, bytes)):
        raise DatasetError(f"{where}: expected an array of numbers, got {type(obj).__name__}")
    try:
        arr = np.asarray(obj)
    except ValueError as exc:
        raise DatasetError(f"{where}: ragged array (rows of different lengths)") from None
    if arr.dtype == object:
        for value in arr.ravel():
            if isinstance(value, (list, tuple)):
                raise DatasetError(f"{where}: ragged array (rows of different lengths)")
        bad = next((v for v in arr.ravel() if isinstance(v, bool) or not isinstance(v, (int, float))), None)
        raise DatasetError(f"{where}: non-numeric value {bad!r}")
    if arr.dtype.kind not in "biuf":
        bad = None
        for value in arr.ravel().tolist():
            try:
                float(value)
            except (TypeError, ValueError):
                bad = value
                break
        raise DatasetError(f"{where}: non-numeric value {bad!r} (dtype {arr.dtype})")
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.ndim == 0:
        raise DatasetError(f"{where}: expected a 1-D or 2-D array, got a single number")
    if arr.ndim > 2:
        raise DatasetError(f"{where}: expected a 1-D or 2-D array, got {arr.ndim}-D with shape {arr.shape}")
    if arr.size == 0:
        raise DatasetError(f"{where}: the dataset is empty")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise DatasetError(f"{where}: contains NaN or infinite values")
    return arr


def _read_csv(path: Path, name: str) -> Any:
    with path.open(newline="") as fh:
        rows = [row for row in csv.reader(fh) if row and any(cell.strip() for cell in row)]
    if not rows:
        raise DatasetError(f"{name}: {str(path)!r}: the dataset is empty")

    def is_number(cell: str) -> bool:
        try:
            float(cell)
            return True
        except ValueError:
            return False

    if not all(is_number(c) for c in rows[0]) and not any(is_number(c) for c in rows[0]):
        rows = rows[1:]  # a header row
    width = len(rows[0]) if rows else 0
    out = []
    for lineno, row in enumerate(rows, start=1):
        if len(row) != width:
            raise DatasetError(f"{name}: {str(path)!r}: ragged CSV: row {lineno} has {len(row)} fields, expected {width}")
        try:
            out.append([float(c) for c in row])
        except ValueError:
            bad = next(c for c in row if not is_number(c))
            raise DatasetError(f"{name}: {str(path)!r}: non-numeric value {bad!r} in row {lineno}") from None
    arr = np.array(out)
    if arr.size and np.all(arr == np.rint(arr)):
        arr = arr.astype(np.int64)
    return arr[:, 0] if arr.ndim == 2 and arr.shape[1] == 1 else arr


def _expand(text: str) -> Path:
    """``~`` expansion that never raises: ``~user`` for an unknown user stays as written."""
    try:
        return Path(text).expanduser()
    except RuntimeError:  # "Could not determine home directory" for '~name'
        return Path(text)


def parse_dataset(text_or_path: Any, name: str = "--dataset") -> np.ndarray:
    """Read a dataset from a JSON array literal or a ``.json``, ``.npy`` or ``.csv`` file.

    Errors are :class:`~dpaudit.exceptions.DatasetError` naming ``name`` and the file.
    A CSV has one row per individual (an optional header row is skipped); a
    single column gives a 1-D dataset.

    Examples
    --------
    >>> parse_dataset("[0, 1, 1]")
    array([0, 1, 1])
    >>> parse_dataset("[[1, 2], [3]]", name="--neighbor")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.DatasetError: --neighbor: JSON literal: ragged array (rows of different lengths)
    """
    if isinstance(text_or_path, np.ndarray) or isinstance(text_or_path, (list, tuple)):
        return _validate_dataset(text_or_path, name, "array")
    if isinstance(text_or_path, os.PathLike):
        text_or_path = os.fspath(text_or_path)
    if not isinstance(text_or_path, str):
        raise DatasetError(f"{name}: expected a JSON array or a file path, got {type(text_or_path).__name__}")
    text = text_or_path.strip()
    if not text:
        raise DatasetError(f"{name}: empty argument (expected a JSON array or a .json/.npy/.csv file)")
    if text[0] in "[{":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{name}: invalid JSON array literal: {exc}") from None
        return _validate_dataset(obj, name, "JSON literal")
    path = _expand(text)
    if not path.exists():
        raise DatasetError(f"{name}: file not found: {text!r} (expected a JSON array or a .json/.npy/.csv file)")
    if not path.is_file():
        raise DatasetError(f"{name}: not a file: {text!r}")
    suffix = path.suffix.lower()
    source = repr(text)
    try:
        if suffix == ".json":
            with path.open() as fh:
                obj = json.load(fh)
        elif suffix == ".npy":
            obj = np.load(path, allow_pickle=False)
        elif suffix == ".csv":
            obj = _read_csv(path, name)
        else:
            raise DatasetError(f"{name}: {source}: unsupported file type {suffix or '(none)'!r}; use .json, .npy or .csv")
    except DatasetError:
        raise
    except (ValueError, OSError) as exc:
        raise DatasetError(f"{name}: {source}: cannot read: {exc}") from None
    return _validate_dataset(obj, name, source)
