"""Wrap any library's DP function or mechanism class as a dpaudit target, from a description.

:func:`library_call` is what ``dpaudit survey`` builds every catalogue entry with, and what a user calls
to audit a function of their own library::

    from dpaudit.adapters import library_call
    mean = library_call("diffprivlib.tools.mean", params={"epsilon": 1.0, "bounds": [0, 1]})
    dpaudit.search(mean, epsilon=1.0, size=3, low=0, high=1)

Two shapes of call cover the libraries surveyed:

- a **function** of the data (``method`` not given): ``function(data, **params)`` per release, the data
  passed in the form ``data`` names (see :data:`DATA_FORMS`);
- a **mechanism class** (``method`` given): ``function(**params)`` builds it once per chunk of releases, and
  ``instance.method(statistic)`` releases once, the statistic computed from the dataset by ``statistic``
  (see :data:`STATISTICS`; ``"data"`` passes the dataset itself in the form ``data`` names, as python-dp's
  ``quick_result``; ``"none"`` calls ``method()`` without an argument, as diffprivlib's Exponential).
  ``fresh=True`` builds a new instance for every release (stateful classes that spend their budget once).

Randomness (``seed``): ``"random_state"`` passes a ``numpy.random.RandomState`` made from dpaudit's ``rng``
per chunk under the keyword ``seed_keyword`` (diffprivlib's ``random_state``); ``"global"`` seeds numpy's and
Python's global generators from ``rng`` before each chunk (pure-ldp and most research code); ``"numba"`` those
and numba's (code compiled with ``numba.njit``, as multi-freq-ldpy's clients); ``"none"`` leaves
the library's own randomness alone (OpenDP, python-dp: cryptographic generators that cannot be seeded): the
target then takes no ``rng``, and its audits are not bit-reproducible.

The release is the call's result as a float array (``pick`` first selects an item of a tuple result, as
``numpy.histogram``-like functions return ``(counts, edges)``): a scalar, or a 1-D vector of fixed length.
"""

from __future__ import annotations

import importlib
import random
from typing import Any, Callable

import numpy as np

from ..exceptions import ParameterValueError, TargetError
from ..mechanisms.base import check_size

__all__ = ["library_call", "import_dotted", "seeded_random_state", "AnswerableRandomState", "DATA_FORMS", "STATISTICS",
           "SEEDING"]

#: How the dataset reaches a function: a float vector, an integer vector, a Python list, one column (n x 1), or
#: the first record alone as a Python number (one user's value, for local-DP clients).
DATA_FORMS = ("array", "int", "list", "column", "value")
#: What a mechanism class's ``method`` receives: a statistic of the dataset, or nothing ("none").
STATISTICS = ("sum", "integer_sum", "count", "mean", "first", "data", "none")
#: How the library's randomness is reached.
SEEDING = ("random_state", "global", "numba", "none")


def import_dotted(name: str) -> Any:
    """The object a dotted name (``"diffprivlib.tools.mean"``) or ``"module:attribute"`` names.

    The longest importable module prefix is imported and the rest read as attributes.

    >>> import_dotted("numpy.random.default_rng").__name__
    'default_rng'
    """
    if ":" in name:
        module, _, attr = name.partition(":")
        parts, obj = attr.split("."), importlib.import_module(module)
    else:
        pieces = name.split(".")
        for cut in range(len(pieces), 0, -1):
            try:
                obj = importlib.import_module(".".join(pieces[:cut]))
            except ModuleNotFoundError as exc:
                if exc.name is not None and not ".".join(pieces[:cut]).startswith(exc.name):
                    raise  # a module the library itself imports is missing: say that, not "no attribute"
                continue
            parts = pieces[cut:]
            break
        else:
            raise ParameterValueError(f"{name!r}: no importable module in it")
    for part in parts:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ParameterValueError(f"{name!r}: {type(obj).__name__} {getattr(obj, '__name__', '')!r} has no "
                                      f"attribute {part!r}") from None
    return obj


class AnswerableRandomState(np.random.RandomState):
    """A ``numpy.random.RandomState`` whose next ``random()`` a grey-box hook can answer.

    Identical to a ``RandomState`` on the same bit generator until :meth:`answer_next_uniform` is called.  A tool
    that draws a uniform itself after a hooked mechanism (diffprivlib's quantiles: the exponential mechanism picks
    an interval, then ``random_state.random()`` a point inside it) is then answered with the point the hook's
    coupling chose, so that the release can be aligned on the neighbour (:mod:`dpaudit.greybox.hooks`).
    """

    def answer_next_uniform(self, u: float) -> None:
        self.__dict__["_next_uniform"] = float(u)

    def random(self, size=None):
        pending = self.__dict__.pop("_next_uniform", None)
        if pending is not None and size is None:
            return pending
        return super().random(size)


def seeded_random_state(rng: np.random.Generator) -> AnswerableRandomState:
    """A ``RandomState`` for a library's ``random_state`` keyword, seeded from ``rng`` (one draw of it).

    Hand it to diffprivlib from a target of your own so that a grey-box audit can align its quantiles exactly.
    """
    return AnswerableRandomState(np.random.MT19937(np.random.SeedSequence(int(rng.integers(2 ** 63)))))


def _statistic(kind: str, data: np.ndarray) -> Any:
    if kind == "sum":
        return float(np.sum(data))
    if kind == "integer_sum":  # integer mechanisms (diffprivlib's Geometric) refuse a float, even 2.0
        return int(np.rint(np.sum(data)))
    if kind == "count":
        return float(len(data))
    if kind == "mean":
        return float(np.mean(data)) if len(data) else 0.0
    if kind == "first":  # one user's value (LDP clients): an int when it is one, as item indexes must be
        v = float(data.ravel()[0]) if data.size else 0.0
        return int(v) if v.is_integer() else v
    return None


def _data(form: str, dataset: Any) -> Any:
    arr = np.asarray(dataset)
    if form == "int":
        return np.rint(arr).astype(np.int64)
    if form == "list":
        return arr.tolist()
    if form == "column":
        return arr.astype(float).reshape(-1, 1)
    if form == "value":
        v = float(arr.ravel()[0])
        return int(v) if v.is_integer() else v
    return arr.astype(float)


def _as_release(value: Any, pick: Any, name: str) -> np.ndarray:
    if pick is not None:
        value = value[pick]
    try:
        out = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TargetError(f"{name}: its result {type(value).__name__} is not numeric ({exc})") from None
    if out.ndim > 1:
        out = out.ravel()
    return out


def _check(choice: str, allowed: tuple, what: str) -> str:
    if choice not in allowed:
        raise ParameterValueError(f"{what} must be one of {list(allowed)}; got {choice!r}")
    return choice


class _Call:
    """The release loop shared by the seeded and the unseeded target (see :func:`library_call`)."""

    def __init__(self, function: str | Callable, params: dict, data: str, method: str | None, statistic: str,
                 seed: str, seed_keyword: str, pick: Any, fresh: bool = False):
        self.name = function if isinstance(function, str) else getattr(function, "__qualname__", repr(function))
        self._fn = import_dotted(function) if isinstance(function, str) else function
        # YAML and JSON have no tuples, and libraries check for them (diffprivlib's bounds): lists become tuples.
        self.params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
        self.data, self.method = _check(data, DATA_FORMS, "data"), method
        self.statistic = _check(statistic, STATISTICS, "statistic")
        self.seed, self.seed_keyword, self.pick = _check(seed, SEEDING, "seed"), seed_keyword, pick
        self.fresh = bool(fresh)

    def _releases(self, dataset: Any, n: int, rng: np.random.Generator | None) -> np.ndarray:
        kw = dict(self.params)
        if rng is not None and self.seed == "random_state":
            kw[self.seed_keyword] = seeded_random_state(rng)
        elif rng is not None and self.seed in ("global", "numba"):
            s = int(rng.integers(2 ** 32 - 1))
            np.random.seed(s)
            random.seed(s)
            if self.seed == "numba":  # numba-compiled code draws from numba's own generator
                from .ldp_libraries import seed_numba

                seed_numba(s)
        if self.method is not None:
            if self.statistic == "data":
                stat = _data(self.data, dataset)
            else:
                stat = _statistic(self.statistic, np.asarray(dataset, dtype=float))
            shared = None if self.fresh else getattr(self._fn(**kw), self.method)

            def one() -> Any:
                release = shared if shared is not None else getattr(self._fn(**kw), self.method)
                return release() if self.statistic == "none" else release(stat)

            calls = (one() for _ in range(n))
        else:
            arg = _data(self.data, dataset)
            calls = (self._fn(arg, **kw) for _ in range(n))
        return np.array([_as_release(v, self.pick, self.name) for v in calls])

    def __repr__(self) -> str:
        return f"library_call({self.name!r}, params={self.params!r})"


class _SeededCall(_Call):
    def __call__(self, dataset: Any, *, size: int | None = None, rng: Any = None) -> Any:
        size = check_size(size)
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        out = self._releases(dataset, 1 if size is None else size, gen)
        return out[0] if size is None else out


class _UnseededCall(_Call):
    def __call__(self, dataset: Any, *, size: int | None = None) -> Any:
        size = check_size(size)
        out = self._releases(dataset, 1 if size is None else size, None)
        return out[0] if size is None else out


def library_call(function: str | Callable, *, params: dict | None = None, data: str = "array",
                 method: str | None = None, statistic: str = "sum", seed: str = "random_state",
                 seed_keyword: str = "random_state", pick: Any = None, fresh: bool = False) -> Callable:
    """A dpaudit target that releases by calling a library's ``function`` (a dotted name or a callable).

    Parameters
    ----------
    function : str or callable
        ``"diffprivlib.tools.mean"``, ``"module:Class"``, or the object itself.
    params : dict
        Keyword arguments of every call (of the class's constructor when ``method`` is given); a list is
        passed as a tuple.
    data : {"array", "int", "list", "column", "value"}
        The form the dataset is passed in (functions only).
    method : str, optional
        Given: ``function`` is a class, built with ``params``, and ``instance.method(statistic)`` releases.
    statistic : {"sum", "integer_sum", "count", "mean", "first", "data", "none"}
        What ``method`` receives.
    seed : {"random_state", "global", "numba", "none"}
        How the library's randomness is seeded from dpaudit's ``rng`` (module docstring).
    seed_keyword : str
        The keyword that takes a ``RandomState`` under ``seed="random_state"``.
    pick : int or str, optional
        An index or key of the call's result to release (a tuple or dict result).
    fresh : bool
        Build the class anew for every release (a class whose instance answers once).

    Returns a callable ``f(dataset, *, size=None[, rng=None])`` (``rng`` only when seeded).

    >>> t = library_call("numpy.random.laplace", params={"scale": 1.0}, seed="none")  # numpy.random.laplace(data, scale=1)
    >>> t(np.array([0.0, 1.0]), size=3).shape
    (3, 2)
    """
    cls = _UnseededCall if seed == "none" else _SeededCall
    return cls(function, dict(params or {}), data, method, statistic, seed, seed_keyword, pick, fresh)
