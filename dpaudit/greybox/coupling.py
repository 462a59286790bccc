"""How a neighbour's draw is coupled to the recorded one, and what the coupling costs in privacy.

The coupling (:class:`Coupling`) gives each draw on D' the value that makes the run line up with D's:

* a location family (Laplace, Gaussian, Gumbel, logistic; a library's discrete Laplace) keeps the
  *noisy value*: the noise moves by the location's change plus any shift the alignment asks for
  (``extra``, found from the release when the location is added outside the primitive);
* a categorical draw (``choice`` with ``p``) and a binomial keep their *value*: the cost is the
  exact log-ratio of the two probability mass functions;
* a draw whose scale (or another parameter than the location) changed keeps its *standardised*
  value (the same quantile), and is reported as data-dependent noise;
* anything else keeps its value (the same uniform, the same seed).

:func:`pair_epsilon` composes the costs with dp-accounting's privacy loss distributions
(Laplace, Gaussian, discrete Laplace, two probability mass functions) at a delta; at delta 0 it
sums the per-draw worst log-ratios, which is exact for independent draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .declared import FAMILIES, declared_epsilon, declared_pure, declared_unit
from .tape import LOCATION_FAMILIES, Draw

__all__ = ["Coupling", "Event", "pair_epsilon", "gaussian_epsilon", "CostUnknown", "close", "cost_key", "worst_units",
           "is_tight"]

_REL = 1e-9


def close(a, b) -> np.ndarray:
    """Elementwise equality up to floating-point rounding of a sum (both sides' magnitudes)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        return (a == b) | (np.abs(a - b) <= 1e-12 + _REL * np.maximum(np.abs(a), np.abs(b)))


@dataclass(frozen=True)
class Event:
    """What one coupled draw costs or shows.

    ``kind``: ``"shift"`` (a location-family noise moved by ``shift``, in value units, at ``scale``),
    ``"pmf"`` (two probability mass functions ``p1``/``p2`` for ``count`` independent draws),
    ``"param"`` (a parameter other than the location changed: data-dependent noise), ``"declared"`` (a
    library mechanism's declared distribution, :mod:`dpaudit.greybox.declared`, with parameters ``p1`` on D
    and ``p2`` on the neighbour).
    """

    draw: int
    kind: str
    family: str
    scale: tuple = ()
    shift: tuple = ()
    p1: tuple = ()
    p2: tuple = ()
    count: int = 1
    param: str = ""
    detail: str = ""
    #: Flat element indices of the draw the event concerns (shift events: those that moved).
    elements: tuple = ()


class CostUnknown(Exception):
    """No privacy loss distribution for this event (a shifted Gumbel, exponential or one-sided geometric...)."""


@dataclass
class Coupling:
    """The coupling of one replay: ``extra[draw][flat element]`` is a shift the alignment adds to a draw."""

    extra: dict = field(default_factory=dict)
    #: ``values[draw] = (value, events)``: a draw's whole coupled value, chosen by the alignment (a coin's
    #: uniform moved to the side of the neighbour's threshold that keeps, or flips, its outcome).
    values: dict = field(default_factory=dict)
    events: list = field(default_factory=list)

    def __call__(self, rec: Draw, params: dict, sample, scratch, meta) -> np.ndarray | None:
        fam = rec.family
        if rec.index in self.values:
            value, events = self.values[rec.index]
            self.events += events
            return value.reshape(rec.shape) if rec.shape else value.reshape(-1)[0]
        v1 = rec.value
        extra = self.extra.get(rec.index)
        if fam == "seed":
            return _same(rec)
        if fam == "permutation":
            return _same(rec) if _equal(rec.params, params) else None
        if fam in FAMILIES:
            return self._declared(rec, params)
        if fam in LOCATION_FAMILIES:
            return self._location(rec, params, extra)
        if fam == "categorical":
            p1, p2 = np.asarray(rec.params["p"], dtype=float), np.asarray(params["p"], dtype=float)
            if p1.shape != p2.shape:
                return None
            if not np.allclose(p1, p2, rtol=1e-12, atol=0):
                self.events.append(Event(rec.index, "pmf", fam, p1=tuple(p1), p2=tuple(p2), count=max(v1.size, 1)))
            return _same(rec)
        if fam == "binomial":
            if not _equal({"n": rec.params["n"]}, {"n": params["n"]}):
                return self._param(rec, params, "n", sample, scratch)
            p1, p2 = rec.params["prob"], params["prob"]
            n = np.asarray(rec.params["n"]).reshape(-1)
            for k, (a, b, m) in enumerate(zip(np.reshape(p1, -1), np.reshape(p2, -1), n)):
                if not math.isclose(a, b, rel_tol=1e-12):
                    self.events.append(Event(rec.index, "pmf", fam, p1=_binom(int(m), a), p2=_binom(int(m), b),
                                             elements=(k,)))
            return _same(rec)
        # Scale families and discrete primitives: a changed parameter is data-dependent noise.
        changed = [k for k in rec.params if not _equal({k: rec.params[k]}, {k: params[k]})]
        if changed:
            return self._param(rec, params, changed[0], sample, scratch)
        if extra is not None and np.any(extra != 0):
            value = v1 + extra.reshape(v1.shape)
            if fam in ("geometric", "integers", "poisson", "binomial"):
                if not np.allclose(extra, np.round(extra)):
                    return None
                value = np.round(value).astype(v1.dtype)
            scale = rec.params.get("scale", rec.params.get("prob", np.ones(v1.shape)))
            moved = np.flatnonzero(extra.reshape(-1) != 0)
            self.events.append(Event(rec.index, "shift", fam, scale=tuple(np.reshape(scale, -1)[moved]),
                                     shift=tuple(extra.reshape(-1)[moved]), elements=tuple(moved)))
            return value if value.ndim else value[()]
        return _same(rec)

    def _location(self, rec: Draw, params: dict, extra) -> np.ndarray:
        loc1, s1 = rec.params["loc"], rec.params["scale"]
        loc2, s2 = params["loc"], params["scale"]
        v1 = rec.value
        if not np.allclose(s1, s2, rtol=1e-12, atol=0):
            self.events.append(Event(rec.index, "param", rec.family, param="scale",
                                     detail=f"scale {_fmt(s1)} on D but {_fmt(s2)} on the neighbour"))
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(s1 > 0, (v1 - loc1) / np.where(s1 > 0, s1, 1), 0.0)
            value = loc2 + z * s2
        else:
            value = v1 + (0 if extra is None else extra.reshape(v1.shape))
            shift = (np.asarray(value, dtype=float) - loc2) - (v1 - loc1)  # the noise's move, in value units
            flat = shift.reshape(-1)
            moved = np.flatnonzero(~close(flat, 0.0))
            if moved.size:
                self.events.append(Event(rec.index, "shift", rec.family, scale=tuple(np.reshape(s1, -1)[moved]),
                                         shift=tuple(flat[moved]), elements=tuple(moved)))
        if rec.family in ("discrete_laplace", "discrete_gaussian"):
            value = np.round(value).astype(v1.dtype)
        value = np.asarray(value).astype(v1.dtype, copy=False)
        return value if value.ndim else value[()]

    def _declared(self, rec: Draw, params: dict):
        """A declared distribution keeps the released value; a parameter other than a moving one is data-dependent."""
        fixed = [k for k in FAMILIES[rec.family].names if k not in FAMILIES[rec.family].moving]
        changed = [k for k in fixed if not _equal({k: rec.params[k]}, {k: params[k]})]
        if changed:
            self.events.append(Event(rec.index, "param", rec.family, param=changed[0],
                                     detail=f"{changed[0]} {_fmt(rec.params[changed[0]])} on D but "
                                            f"{_fmt(params[changed[0]])} on the neighbour"))
        else:
            u1, u2 = declared_unit(rec.family, rec.params), declared_unit(rec.family, params)
            if u1 != u2:
                self.events.append(Event(rec.index, "declared", rec.family, p1=u1, p2=u2))
        return _same(rec)

    def _param(self, rec: Draw, params: dict, name: str, sample, scratch) -> np.ndarray:
        self.events.append(Event(rec.index, "param", rec.family, param=name,
                                 detail=f"{name} {_fmt(rec.params[name])} on D but {_fmt(params[name])} on the "
                                        "neighbour"))
        if rec.state is None:
            return _same(rec)
        scratch.bit_generator.state = rec.state  # the same uniforms: an inverse-CDF-like coupling
        return sample(scratch)


def _same(rec: Draw):
    return rec.value.copy() if rec.value.ndim else rec.value[()]


def _equal(a: dict, b: dict) -> bool:
    for k in a:
        x, y = a[k], b.get(k)
        if x is None or y is None:
            if x is not y:
                return False
            continue
        if np.shape(x) != np.shape(y) or not np.allclose(np.asarray(x, dtype=float), np.asarray(y, dtype=float),
                                                         rtol=1e-12, atol=0):
            return False
    return True


def _fmt(v) -> str:
    a = np.asarray(v, dtype=float).reshape(-1)
    if a.size == 0:
        return "[]"
    return f"{a[0]:.6g}" if a.size == 1 or np.all(a == a[0]) else "[" + ", ".join(f"{x:.4g}" for x in a[:4]) + \
        (", ...]" if a.size > 4 else "]")


def _binom(n: int, p: float) -> tuple:
    from scipy.stats import binom

    return tuple(binom.pmf(np.arange(n + 1), n, p))


# --------------------------------------------------------------------------- the cost
def _units(events: list[Event]) -> list[tuple]:
    """The events as independent units: ("laplace", t), ("gauss", t), ("dlap", a, k), ("pmf", p1, p2)."""
    units = []
    for e in events:
        if e.kind == "pmf":
            units += [("pmf", e.p1, e.p2)] * e.count
        elif e.kind == "declared":
            units.append(("declared", e.family, e.p1, e.p2))
        elif e.kind == "shift":
            for scale, shift in zip(e.scale, e.shift):
                if e.family == "laplace":
                    units.append(("laplace", abs(shift) / scale))
                elif e.family == "normal":
                    units.append(("gauss", abs(shift) / scale))
                elif e.family == "discrete_laplace":
                    units.append(("dlap", 1.0 / scale, int(round(abs(shift)))))
                elif e.family == "discrete_gaussian":
                    units.append(("dgauss", scale, int(round(abs(shift)))))
                else:
                    raise CostUnknown(f"a shifted {e.family} draw (no privacy loss distribution for it)")
        else:
            raise CostUnknown(f"the {e.param} of a {e.family} draw depends on the data")
    return units


def _rounded(u: tuple, digits: int = 8) -> tuple:
    return tuple(round(x, digits) if isinstance(x, float) else _rounded(x, 12) if isinstance(x, tuple) else x
                 for x in u)


def cost_key(events: list[Event]) -> tuple[tuple, tuple]:
    """``(key, units)``: the units rounded (so that float noise in a shift does not split equal traces) and
    sorted, and the units themselves in the same order (whose elementwise largest the bound is computed from)."""
    pairs = sorted(((_rounded(u), u) for u in _units(events)), key=lambda p: p[0])
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def worst_units(a: tuple, b: tuple) -> tuple:
    """Two unit lists of the same key, each float taken at the larger of the two (a bound over both)."""
    return tuple(tuple(max(x, y) if isinstance(x, float) else x for x, y in zip(u, v)) for u, v in zip(a, b))


def uses_pld(key: tuple, delta: float) -> bool:
    """Whether :func:`pair_epsilon` composes a PLD (pessimistic by its discretisation) rather than a closed form."""
    rest = [u for u in key if u[0] != "declared"]
    return delta > 0 and bool(rest) and not all(u[0] == "gauss" for u in rest)


def is_tight(key: tuple, delta: float) -> bool:
    """Whether :func:`pair_epsilon` of ``key`` is the units' exact privacy loss rather than a conservative bound:
    a declared distribution is exact alone, or at delta 0, and only when its family computes its loss exactly
    (a declared unit beside others at delta > 0 is composed as pure DP)."""
    declared = [u for u in key if u[0] == "declared"]
    if not declared:
        return True
    if len(key) == 1:
        return declared_epsilon(*declared[0][1:], delta)[1]
    return delta == 0 and all(declared_epsilon(*u[1:], 0.0)[1] for u in declared)


def pair_epsilon(key: tuple, delta: float) -> float:
    """The privacy loss at ``delta`` of the independent units in ``key`` (from :func:`cost_key`), both directions."""
    key = tuple(sorted(key, key=_rounded))
    if not key:
        return 0.0
    if delta == 0.0:
        return _pure(key)
    declared = tuple(u for u in key if u[0] == "declared")
    if declared:  # alone: its exact curve; beside others: pure DP composed with the rest (a bound)
        if len(key) == 1:
            return declared_epsilon(*declared[0][1:], delta)[0]
        return _pure(declared) + pair_epsilon(tuple(u for u in key if u[0] != "declared"), delta)
    gauss = math.sqrt(sum(u[1] ** 2 for u in key if u[0] == "gauss"))
    if all(u[0] == "gauss" for u in key):
        return gaussian_epsilon(gauss, delta)
    from dp_accounting.pld import privacy_loss_distribution as pld

    parts = []
    if gauss > 0:
        parts.append(pld.from_gaussian_mechanism(1.0, sensitivity=gauss))
    groups: dict = {}
    for u in key:
        if u[0] != "gauss":
            groups[u] = groups.get(u, 0) + 1
    for u, n in groups.items():
        if u[0] == "laplace":
            if u[1] == 0:
                continue
            d = pld.from_laplace_mechanism(1.0, sensitivity=u[1])
        elif u[0] == "dlap":
            if u[2] == 0:
                continue
            d = pld.from_discrete_laplace_mechanism(u[1], sensitivity=u[2])
        elif u[0] == "dgauss":
            if u[2] == 0:
                continue
            d = pld.from_discrete_gaussian_mechanism(u[1], sensitivity=u[2])
        else:
            d = _pmf_pld(u[1], u[2])
        parts.append(d.self_compose(n) if n > 1 else d)
    if not parts:
        return 0.0
    total = parts[0]
    for d in parts[1:]:
        total = total.compose(d)
    return float(total.get_epsilon_for_delta(delta))


def _pmf_pld(p1: tuple, p2: tuple):
    from dp_accounting.pld import privacy_loss_distribution as pld

    lp1 = {i: math.log(a) for i, a in enumerate(p1) if a > 0}
    lp2 = {i: math.log(b) for i, b in enumerate(p2) if b > 0}
    return pld.from_two_probability_mass_functions(lp1, lp2, symmetric=False)


def _pure(key: tuple) -> float:
    """Pure DP: the worst log-ratio of independent units adds up (each is attained on an event of positive mass)."""
    fwd = bwd = 0.0
    for u in key:
        if u[0] in ("gauss", "dgauss"):
            if u[-1] > 0:
                return math.inf
        elif u[0] == "declared":
            f, b = declared_pure(*u[1:])
            fwd, bwd = fwd + f, bwd + b
        elif u[0] == "laplace":
            fwd += u[1]
            bwd += u[1]
        elif u[0] == "dlap":
            fwd += u[1] * u[2]
            bwd += u[1] * u[2]
        else:
            p1, p2 = np.asarray(u[1]), np.asarray(u[2])
            if np.any((p1 > 0) != (p2 > 0)):
                return math.inf
            m = p1 > 0
            ratio = np.log(p1[m]) - np.log(p2[m])
            fwd += float(ratio.max())
            bwd += float((-ratio).max())
    return max(fwd, bwd)


def gaussian_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon at ``delta`` of two Gaussians ``mu`` standard deviations apart (Balle and Wang 2018:
    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)); the same as dp-accounting's PLD, without its
    discretisation (and its second of set-up)."""
    from scipy.stats import norm

    if mu == 0:
        return 0.0

    def excess(eps):
        return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu) - delta

    if excess(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while excess(hi) > 0:
        lo, hi = hi, hi * 2
        if hi > 1e6:
            return math.inf
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    return hi
