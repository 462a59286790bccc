"""The tape: every noise draw of one target call, recorded on D and replayed, coupled, on D'.

A target gets a :class:`TapedGenerator` as ``rng``: a real :class:`numpy.random.Generator`
(``isinstance`` holds, ``np.random.default_rng(rng)`` returns it) whose drawing methods go
through the active :class:`Tape`.  A :class:`Recorder` draws for real and keeps, in order,
each draw's primitive, parameters (broadcast to the draw's shape), value and the bit
generator's state before it.  A :class:`Replayer` answers the same calls on the neighbour
with values *coupled* to the recorded ones (:mod:`dpaudit.greybox.coupling`), and notes where
the calls stop matching.  Library hooks (:mod:`dpaudit.greybox.hooks`) and Python's
``random`` module (patched for the duration of the call) draw through the same tape.

Why a tape rather than a seed: replaying the same seed on D' couples the *uniforms*, so a
location that moves moves the release; the tape lets the coupling choose each draw's value
(the same noisy value, shifted noise), which is the randomness-alignment argument of
LightDP and ShadowDP (Zhang and Kifer 2017; Wang et al. 2019) and of Re:cord-play
(Cebere et al. 2026).
"""

from __future__ import annotations

import contextlib
import random as _pyrandom
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..exceptions import ParameterValueError

__all__ = ["Draw", "Tape", "Recorder", "Replayer", "TapedGenerator", "GreyBoxError", "LOCATION_FAMILIES",
           "SEED_RANGE", "SHIFTABLE", "active_tape", "taped_call", "watch_from_start"]


class GreyBoxError(ParameterValueError):
    """The target's randomness cannot be recorded (no ``rng``, global numpy state, an unhooked sampler)."""


#: Families whose first parameter is a location and second a scale: a moved location is a shift of the noise.
LOCATION_FAMILIES = ("laplace", "normal", "gumbel", "logistic", "discrete_laplace", "discrete_gaussian")
#: Families whose draws the alignment may shift (and whose outside location is tracked).
SHIFTABLE = (*LOCATION_FAMILIES, "exponential", "geometric")
#: ``integers`` over at least this many values is a seed for another generator: coupled as the same value.
SEED_RANGE = 2**31


@dataclass
class Draw:
    """One draw: ``method`` (``"laplace"``, ``"choice"``, ``"diffprivlib.Laplace"``...), its family, parameters
    broadcast to the value's shape, the value, and the bit generator's state before it (None for hooks)."""

    index: int
    method: str
    family: str
    params: dict
    value: np.ndarray
    state: Any = None
    #: What a library hook knows that the primitive does not: the declared sensitivity, epsilon, delta.
    meta: dict = field(default_factory=dict)
    #: A categorical draw's support labels (choice over an array, a hook's output labels).
    labels: Any = None

    @property
    def shape(self) -> tuple:
        return self.value.shape

    def describe(self) -> str:
        shown = {k: _short(v) for k, v in self.params.items() if k != "p"}
        if "p" in self.params:
            shown["p"] = _short(self.params["p"])
        args = ", ".join(f"{k}={v}" for k, v in shown.items())
        size = f", size={self.shape}" if self.shape else ""
        return f"#{self.index + 1} {self.method}({args}{size})"


def _short(v: Any) -> str:
    a = np.asarray(v)
    if a.size == 0:
        return "[]"
    if a.size == 1:
        return f"{float(a.reshape(-1)[0]):.6g}"
    flat = a.reshape(-1)
    if np.all(flat == flat[0]):
        return f"{float(flat[0]):.6g}"
    return "[" + ", ".join(f"{float(x):.4g}" for x in flat[:4]) + (", ...]" if flat.size > 4 else "]")


class Tape:
    """Where draws go during one target call.

    :attr:`locations` maps a draw's index to its *outside* location, when the target added one to the draw
    as its first operation on it (:mod:`dpaudit.greybox.track`).
    """

    locations: dict

    def locate(self, index: int, loc: np.ndarray) -> None:
        if not hasattr(self, "locations"):
            self.locations = {}
        self.locations.setdefault(index, np.array(loc, dtype=float))

    def threshold(self, index: int, t: np.ndarray) -> None:
        """A uniform draw's first comparison: with ``t`` (see :mod:`dpaudit.greybox.track`)."""
        if not hasattr(self, "thresholds"):
            self.thresholds = {}
        self.thresholds.setdefault(index, np.array(t, dtype=float))

    def draw(self, method: str, family: str, params: dict, shape: tuple, sample: Callable[[np.random.Generator],
             Any], *, meta: dict | None = None, labels: Any = None) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class Recorder(Tape):
    """Draws for real from ``generator`` and keeps every draw in :attr:`draws`; ``overrides`` maps a draw's
    index to the value it must take instead (the probe of :mod:`dpaudit.greybox.align`)."""

    def __init__(self, generator: np.random.Generator, overrides: dict | None = None):
        self.generator = generator
        self.draws: list[Draw] = []
        self.overrides = overrides or {}

    def draw(self, method, family, params, shape, sample, *, meta=None, labels=None):
        state = self.generator.bit_generator.state
        value = sample(self.generator)
        i = len(self.draws)
        if i in self.overrides:
            value = np.asarray(self.overrides[i]).astype(np.asarray(value).dtype).reshape(np.shape(value))
            value = value if np.ndim(value) else value[()]
        # A copy: the target may add to the array it is given in place (``z += loc``).
        self.draws.append(Draw(i, method, family, _broadcast(params, np.shape(value)), np.array(value), state,
                               dict(meta or {}), labels))
        return value


class Replayer(Tape):
    """Answers the neighbour's draws from a recorded trace through ``couple`` (the coupling).

    ``couple(recorded, method, family, params, shape, sample, scratch)`` returns the value for the
    neighbour, or None when the two draws cannot be coupled (then the call has diverged: every later
    draw is fresh, from ``fallback``).  :attr:`draws` keeps the neighbour's own draws;
    :attr:`divergence` is None or ``(index, why)`` of the first draw that did not match.
    """

    def __init__(self, trace: list[Draw], couple: Callable, fallback: np.random.Generator):
        self.trace, self.couple, self.fallback = trace, couple, fallback
        self.scratch = np.random.Generator(type(fallback.bit_generator)())
        self.draws: list[Draw] = []
        self.divergence: tuple[int, str] | None = None

    def draw(self, method, family, params, shape, sample, *, meta=None, labels=None):
        i = len(self.draws)
        value = None
        if self.divergence is None:
            if i >= len(self.trace):
                self.divergence = (i, f"the neighbour draws {method}() as draw #{i + 1}, which D never drew "
                                      f"(D drew {len(self.trace)} times)")
            else:
                rec = self.trace[i]
                params_b = _broadcast(params, rec.shape) if _fits(params, rec.shape) else None
                if rec.method != method:
                    self.divergence = (i, f"draw #{i + 1} is {rec.describe()} on D but {method}() on the neighbour")
                elif params_b is None or (shape is not None and tuple(shape) != rec.shape):
                    self.divergence = (i, f"draw #{i + 1} {method}() has shape {rec.shape} on D but "
                                          f"{tuple(shape) if shape is not None else 'another'} on the neighbour")
                else:
                    value = self.couple(rec, params_b, sample, self.scratch, meta or {})
                    if value is None:
                        self.divergence = (i, f"draw #{i + 1} {rec.describe()} cannot be coupled")
                    params = params_b
        if value is None:
            value = sample(self.fallback)
        self.draws.append(Draw(i, method, family, _broadcast(params, np.shape(value)), np.array(value), None,
                               dict(meta or {}), labels))
        return value

    def finish(self) -> None:
        """Called after the neighbour's run: fewer draws than D is a divergence too."""
        if self.divergence is None and len(self.draws) < len(self.trace):
            rec = self.trace[len(self.draws)]
            self.divergence = (len(self.draws), f"D draws {len(self.trace)} times and the neighbour "
                                                f"{len(self.draws)}: {rec.describe()} on D has no counterpart")


def _fits(params: dict, shape: tuple) -> bool:
    try:
        _broadcast(params, shape)
        return True
    except ValueError:
        return False


#: Parameters kept as they are, not broadcast to the draw's shape: a categorical's ``p``, and the vectors and
#: per-draw constants of a declared distribution (:mod:`dpaudit.greybox.declared`).
WHOLE_PARAMS = ("p", "labels", "edges", "density", "matrix", "coef")


def _broadcast(params: dict, shape: tuple) -> dict:
    """Each numeric parameter broadcast to the draw's shape (those in :data:`WHOLE_PARAMS` are kept whole)."""
    out = {}
    for k, v in params.items():
        if k in WHOLE_PARAMS or v is None:
            out[k] = v
        else:
            out[k] = np.broadcast_to(np.asarray(v, dtype=float), shape)
    return out


# --------------------------------------------------------------------------- the generator
_ACTIVE: list[Tape] = []


def active_tape() -> Tape | None:
    """The tape of the target call under way (the innermost), or None outside a taped call."""
    return _ACTIVE[-1] if _ACTIVE else None


def _tape() -> Tape:
    if not _ACTIVE:
        raise GreyBoxError("a TapedGenerator was used outside the call dpaudit handed it to; keep the rng inside "
                           "the target call")
    return _ACTIVE[-1]


def _size_shape(size) -> tuple | None:
    if size is None:
        return None
    return tuple(np.atleast_1d(np.asarray(size, dtype=int)).tolist())


def _shape_of(size, *params) -> tuple:
    if size is not None:
        return _size_shape(size)
    return np.broadcast_shapes(*(np.shape(p) for p in params if p is not None))


class TapedGenerator(np.random.Generator):
    """A :class:`numpy.random.Generator` whose draws go through the active tape (see the module docstring).

    Only the primitives below are taped; any other drawing method raises :class:`GreyBoxError`, so that no
    randomness escapes the record unseen.
    """

    def _go(self, method, family, params, shape, sample, labels=None):
        tape = _tape()
        value = tape.draw(method, family, params, shape, sample, labels=labels)
        if family in SHIFTABLE or family == "uniform":
            from .track import track

            return track(value, tape, len(tape.draws) - 1)
        return value

    def primitive(self, method: str, family: str, params: dict, size, sample):
        """Tape a composite sampler as one draw: ``sample(generator)`` draws it (with a plain Generator).

        For library code whose sampler is a loop of simpler draws (dpaudit's exact discrete Laplace is a
        rejection sampler): taped as its family, its loop would read as control flow.
        """
        return self._go(method, family, params, _shape_of(size), sample)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        _no_out(out, "standard_normal")
        return self._go("standard_normal", "normal", {"loc": 0.0, "scale": 1.0}, _shape_of(size),
                        lambda g: np.random.Generator.standard_normal(g, size, dtype))

    # Scale families and discrete primitives.
    def exponential(self, scale=1.0, size=None):
        return self._go("exponential", "exponential", {"scale": scale}, _shape_of(size, scale),
                        lambda g: np.random.Generator.exponential(g, scale, size))

    def standard_exponential(self, size=None, dtype=np.float64, method="zig", out=None):
        _no_out(out, "standard_exponential")
        return self._go("standard_exponential", "exponential", {"scale": 1.0}, _shape_of(size),
                        lambda g: np.random.Generator.standard_exponential(g, size, dtype, method))

    def geometric(self, p, size=None):
        return self._go("geometric", "geometric", {"prob": p}, _shape_of(size, p),
                        lambda g: np.random.Generator.geometric(g, p, size))

    def poisson(self, lam=1.0, size=None):
        return self._go("poisson", "poisson", {"lam": lam}, _shape_of(size, lam),
                        lambda g: np.random.Generator.poisson(g, lam, size))

    def binomial(self, n, p, size=None):
        return self._go("binomial", "binomial", {"n": n, "prob": p}, _shape_of(size, n, p),
                        lambda g: np.random.Generator.binomial(g, n, p, size))

    def uniform(self, low=0.0, high=1.0, size=None):
        return self._go("uniform", "uniform", {"low": low, "high": high}, _shape_of(size, low, high),
                        lambda g: np.random.Generator.uniform(g, low, high, size))

    def random(self, size=None, dtype=np.float64, out=None):
        _no_out(out, "random")
        return self._go("random", "uniform", {"low": 0.0, "high": 1.0}, _shape_of(size),
                        lambda g: np.random.Generator.random(g, size, dtype))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        lo, hi = (0, low) if high is None else (low, high)
        hi_incl = np.asarray(hi) if endpoint else np.asarray(hi) - 1
        span = np.min(np.asarray(hi_incl, dtype=float) - np.asarray(lo, dtype=float)) + 1
        family = "seed" if span >= SEED_RANGE else "integers"
        return self._go("integers", family, {"low": lo, "high": hi_incl}, _shape_of(size, lo, hi),
                        lambda g: np.random.Generator.integers(g, low, high, size, dtype, endpoint))

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        n = int(a) if np.ndim(a) == 0 else len(a)
        if not replace:
            return self._go("choice", "permutation", {"n": n}, _shape_of(size),
                            lambda g: np.random.Generator.choice(g, a, size, replace, p, axis, shuffle))
        probs = np.full(n, 1.0 / max(n, 1)) if p is None else np.asarray(p, dtype=float)
        labels = None if np.ndim(a) == 0 else np.asarray(a)

        def sample(g):
            return np.random.Generator.choice(g, n, size, True, probs)

        idx = self._go("choice", "categorical", {"p": probs}, _shape_of(size), sample, labels=labels)
        return idx if labels is None else labels[idx]

    def permutation(self, x, axis=0):
        n = int(x) if np.ndim(x) == 0 else np.shape(x)[axis]
        perm = self._go("permutation", "permutation", {"n": n}, (n,),
                        lambda g: np.random.Generator.permutation(g, n))
        return perm if np.ndim(x) == 0 else np.take(np.asarray(x), perm, axis=axis)

    def shuffle(self, x, axis=0):
        perm = self.permutation(np.shape(x)[axis])
        if isinstance(x, np.ndarray):
            x[...] = np.take(x.copy(), perm, axis=axis)
        else:
            x[:] = [x[int(i)] for i in perm]

    def spawn(self, n_children):
        raise GreyBoxError("the target calls rng.spawn(): child generators draw outside the record, so a "
                           "grey-box audit cannot see them")

    def __reduce__(self):
        raise GreyBoxError("the target pickles its rng (a worker process?): draws there would escape the record")


def _location_method(name: str):
    """numpy's ``name(loc, scale, size)``, taped: the location is a parameter the coupling can shift."""
    def method(self, loc=0.0, scale=1.0, size=None):
        return self._go(name, name, {"loc": loc, "scale": scale}, _shape_of(size, loc, scale),
                        lambda g: getattr(np.random.Generator, name)(g, loc, scale, size))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"numpy's ``Generator.{name}``, taped."
    return method


for _name in ("laplace", "normal", "gumbel", "logistic"):
    setattr(TapedGenerator, _name, _location_method(_name))


def _no_out(out, name: str) -> None:
    if out is not None:
        raise GreyBoxError(f"rng.{name}(out=...) is not supported by the grey-box recorder")


def _unsupported(name: str):
    def method(self, *args, **kwargs):
        raise GreyBoxError(f"the target draws with rng.{name}(), which the grey-box recorder does not support "
                           "(taped: laplace, normal, gumbel, logistic, exponential, geometric, poisson, binomial, "
                           "uniform, random, integers, choice, permutation, shuffle, standard_normal, "
                           "standard_exponential)")
    method.__name__ = name
    return method


for _name in ("beta", "bytes", "chisquare", "dirichlet", "f", "gamma", "hypergeometric", "lognormal", "logseries",
              "multinomial", "multivariate_hypergeometric", "multivariate_normal", "negative_binomial",
              "noncentral_chisquare", "noncentral_f", "pareto", "permuted", "power", "rayleigh", "standard_cauchy",
              "standard_gamma", "standard_t", "triangular", "vonmises", "wald", "weibull", "zipf"):
    setattr(TapedGenerator, _name, _unsupported(_name))


# --------------------------------------------------------------------------- Python's random, numpy's global state
def _gen() -> "TapedGenerator":
    if not _GENERATORS:
        raise GreyBoxError("Python's random module was used outside the target call dpaudit taped")
    return _GENERATORS[-1]


_GENERATORS: list = []


def _choices(population, weights=None, *, cum_weights=None, k=1):
    n = len(population)
    if cum_weights is not None:
        weights = np.diff(np.concatenate([[0.0], np.asarray(cum_weights, dtype=float)]))
    p = None if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
    return [population[int(i)] for i in _gen().choice(n, size=k, p=p)]


def _randrange(start, stop=None, step=1):
    if stop is None:
        return int(_gen().integers(0, start))
    return start + step * int(_gen().integers(0, (stop - start + step - 1) // step))


def _unsupported_random(name):
    def f(*args, **kwargs):
        raise GreyBoxError(f"the target calls random.{name}(), which the grey-box recorder does not support")
    return f


#: The ``random`` module's functions while a call is taped: the same primitives, through the taped generator.
PYTHON_RANDOM = {
    "random": lambda: float(_gen().random()),
    "uniform": lambda a, b: float(_gen().uniform(a, b)),
    "gauss": lambda mu=0.0, sigma=1.0: float(_gen().normal(mu, sigma)),
    "normalvariate": lambda mu=0.0, sigma=1.0: float(_gen().normal(mu, sigma)),
    "expovariate": lambda lambd=1.0: float(_gen().exponential(1.0 / lambd)),
    "randint": lambda a, b: int(_gen().integers(a, b + 1)),
    "randrange": _randrange,
    "choice": lambda seq: seq[int(_gen().integers(0, len(seq)))],
    "choices": _choices,
    "shuffle": lambda x: x.__setitem__(slice(None), [x[int(i)] for i in _gen().permutation(len(x))]),
    "sample": lambda population, k: [population[int(i)] for i in _gen().choice(len(population), k, replace=False)],
    **{name: _unsupported_random(name) for name in
       ("getrandbits", "betavariate", "gammavariate", "lognormvariate", "paretovariate", "triangular",
        "vonmisesvariate", "weibullvariate", "binomialvariate", "randbytes") if hasattr(_pyrandom, name)},
}
#: numpy's global state is compared before and after the first calls, then every ``_GLOBAL_EVERY``-th.
_GLOBAL_EVERY = 64
_CALLS = [0]


def watch_from_start() -> None:
    """Check numpy's global state again on the next calls, as at the first: each analysis watches its own first
    calls, whatever ran before it in the process (a count shared across analyses made a refusal depend on it)."""
    _CALLS[0] = 0


def _global_state() -> tuple:
    """A cheap fingerprint of numpy's global RandomState (its key position and the first key words)."""
    st = np.random.get_state(legacy=False)
    return (st["state"]["pos"], int(st["state"]["key"][0]), int(st["state"]["key"][-1]), st["has_gauss"],
            st["gauss"])


@contextlib.contextmanager
def taped_call(tape: Tape, gen: TapedGenerator, target_name: str):
    """While the block runs: ``tape`` is active, Python's ``random`` draws through ``gen``, and numpy's global
    state is watched (a target that draws from ``np.random.*`` raises :class:`GreyBoxError` afterwards; checked
    on the first calls and every 64th, since reading the global state costs more than a small target's call)."""
    saved = {name: getattr(_pyrandom, name) for name in PYTHON_RANDOM}
    _CALLS[0] += 1
    watch = _CALLS[0] <= 8 or _CALLS[0] % _GLOBAL_EVERY == 0
    before = _global_state() if watch else None
    _ACTIVE.append(tape)
    _GENERATORS.append(gen)
    for name, fn in PYTHON_RANDOM.items():
        setattr(_pyrandom, name, fn)
    try:
        yield
    finally:
        _ACTIVE.pop()
        _GENERATORS.pop()
        for name, fn in saved.items():
            setattr(_pyrandom, name, fn)
    if watch and _global_state() != before:
        raise GreyBoxError(f"target {target_name!r} draws from numpy's global state (np.random.*), outside the rng "
                           "it is handed: that randomness cannot be recorded, so no grey-box audit")
