"""One trace: run D on a recording tape, replay the neighbour coupled to it, align what the release shows.

The steps of :func:`run_trace`:

1. D is run with a :class:`~dpaudit.greybox.tape.Recorder`: the release ``r1`` and the trace.
2. The neighbour is replayed with every draw keeping its noisy value
   (:class:`~dpaudit.greybox.coupling.Coupling`).  Where its release still differs, the location was
   added *outside* the primitive (``x + rng.laplace(0, b)``): the :class:`Probe` (each draw element of D
   moved a little, one at a time) says which draw element feeds which release coordinate, with what
   derivative, and the alignment shifts that element by the difference.  A second replay checks it.
3. What remains is read as findings: draws that stop matching (control flow), a parameter other than a
   location that moved (data-dependent noise), coordinates that still differ although every draw was
   aligned (a leak outside the noise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..exceptions import DPAuditError, TargetError
from .coupling import Coupling, Event, close
from .tape import LOCATION_FAMILIES, SHIFTABLE, Recorder, Replayer, TapedGenerator, taped_call

__all__ = ["TraceResult", "Probe", "run_trace", "call_taped", "one_to_one"]

#: Draw elements probed at most per trace structure (one target call each).
MAX_PROBED = 2000
_DISCRETE = ("discrete_laplace", "discrete_gaussian", "geometric", "integers", "poisson", "binomial", "clamped_geometric")


def call_taped(fn, data, tape, generator, name: str) -> np.ndarray:
    """``fn(data, rng=...)`` with ``tape`` active; the release as a flat float array."""
    from .hooks import library_hooks

    gen = TapedGenerator(generator.bit_generator)
    try:
        with library_hooks(), taped_call(tape, gen, name):
            out = fn(np.array(data, copy=True), rng=gen)
        flat = np.atleast_1d(np.asarray(out, dtype=float)).reshape(-1)
    except DPAuditError:
        raise
    except Exception as exc:  # the target's own error, named as a black-box audit names it (it was dpaudit's, exit 3)
        raise TargetError(f"target {name!r} raised {type(exc).__name__}: {exc} {_trace_where(data)}") from exc
    if not np.all(np.isfinite(flat)):
        raise TargetError(f"target {name!r} returned {'NaN' if np.any(np.isnan(flat)) else 'inf'} "
                          f"{_trace_where(data)}")
    return flat


def _trace_where(data) -> str:
    return f"in a grey-box trace on the dataset {np.asarray(data).tolist()}"


@dataclass
class Probe:
    """Which release coordinates each draw element of one trace structure moves, and by what derivative.

    ``feeds[(draw, element)] = {coordinate: derivative}`` (``nan`` for a categorical draw, whose move has
    no size); ``complete`` is False when the structure had too many elements to probe.
    """

    feeds: dict = field(default_factory=dict)
    complete: bool = True

    @classmethod
    def measure(cls, fn, data, draws, seed, name, thresholds: dict | None = None) -> "Probe":
        elements = [(d, k) for d in draws if d.family not in ("seed", "permutation") for k in range(d.value.size)]
        elements += [(d, 0) for d in draws if d.family == "permutation" and d.value.size >= 2]
        if len(elements) > MAX_PROBED:
            return cls(complete=False)
        base = call_taped(fn, data, Recorder(np.random.default_rng(seed)), np.random.default_rng(seed), name)
        feeds = {}
        for d, k in elements:
            # A small move first; when the release is rounded to a grid (a float-safe sampler), a move of a
            # twentieth of the scale, whose derivative is that of the unrounded sum up to the grid.
            for coarse in (False, True):
                moved, step = _moved(d, k, coarse=coarse, threshold=(thresholds or {}).get(d.index))
                rec = Recorder(np.random.default_rng(seed), overrides={d.index: moved})
                out = call_taped(fn, data, rec, rec.generator, name)
                if out.shape != base.shape:
                    feeds[(d.index, k)] = {j: math.nan for j in range(base.size)}
                    break
                changed = np.flatnonzero(~close(out, base))
                feeds[(d.index, k)] = {int(j): (math.nan if step is None else
                                                _snap_derivative(float((out[j] - base[j]) / step), coarse))
                                       for j in changed}
                if changed.size or step is None or d.family in _DISCRETE:
                    break
        return cls(feeds)

    def coordinate_feeders(self, j: int) -> list:
        return [(key, der[j]) for key, der in self.feeds.items() if j in der]

    def by_coordinate(self) -> dict:
        """``{coordinate: [(draw, element), ...]}``: the elements feeding each release coordinate."""
        out: dict = {}
        for key, der in self.feeds.items():
            for j in der:
                out.setdefault(j, []).append(key)
        return out


def _snap_derivative(der: float, coarse: bool) -> float:
    """A derivative read as the nearest whole number when it is within 1e-6 of it (a finite difference of an
    added draw is 1 up to rounding), or within 20% across a rounding grid (a float-safe sampler's release)."""
    if round(der) != 0 and abs(der - round(der)) < (0.2 if coarse else 1e-6) * abs(round(der)):
        return float(round(der))
    return der


def _moved(d, k, coarse: bool = False, threshold=None):
    """D's draw ``d`` with element ``k`` moved a little (continuous) or by one (discrete); and the step.

    A coin (a uniform compared with ``threshold``) is moved across it: its outcome is what can show."""
    v = d.value.astype(float).copy().reshape(-1)
    fam = d.family
    if fam == "uniform" and threshold is not None:
        t = float(threshold.reshape(-1)[k])
        low, high = float(np.reshape(d.params["low"], -1)[k]), float(np.reshape(d.params["high"], -1)[k])
        v[k] = (max(t, low) + high) / 2 if v[k] < t else (low + min(t, high)) / 2
        return v.reshape(d.shape).astype(d.value.dtype), None
    if fam == "permutation":  # two entries swapped: does the order reach the release at all?
        v[[0, 1]] = v[[1, 0]]
        return v.reshape(d.shape).astype(d.value.dtype), None
    if fam == "categorical":
        p = np.asarray(d.params["p"])
        options = [i for i in range(1, len(p)) if p[(int(v[k]) + i) % len(p)] > 0]
        if not options:
            return d.value, None
        v[k] = (int(v[k]) + options[0]) % len(p)
        return v.reshape(d.shape).astype(d.value.dtype), None
    if fam in _DISCRETE:
        hi = d.params.get("high", d.params.get("n"))
        step = -1.0 if hi is not None and v[k] + 1 > np.reshape(hi, -1)[k] else 1.0
        v[k] += step
        return v.reshape(d.shape).astype(d.value.dtype), step
    scale = d.params.get("scale")
    if scale is None and "high" in d.params:
        scale = np.asarray(d.params["high"]) - np.asarray(d.params["low"])
    size = float(np.reshape(scale, -1)[k]) if scale is not None else 1.0
    step = (0.05 if coarse else 1e-6) * max(abs(size), 1e-9)
    if fam == "uniform" and v[k] + step >= np.reshape(d.params["high"], -1)[k]:
        step = -step
    v[k] += step
    return v.reshape(d.shape), step


@dataclass
class TraceResult:
    """One trace's outcome: the events of the final coupling, findings (kind, detail, witness coordinates),
    whether the release was reproduced, and whether the release determines the aligned draws."""

    events: list
    findings: list
    aligned: bool
    exact: bool
    n_draws: int
    hooked: bool
    #: (draw, element) -> coordinates it feeds, for the sensitivity check's witness.
    witness_of: dict = field(default_factory=dict)
    why_not_exact: str = ""
    #: How far the noise locations moved, in the release's units: L1 over Laplace-like draws, L2 over Gaussian
    #: ones (draws a library hook declared excluded), and the elements that moved.
    moved_l1: float = 0.0
    moved_l2: float = 0.0
    moved_elements: tuple = ()
    #: Library hooks' own checks: (draw, how far the value entering it moved, its declared sensitivity).
    hooked_moves: list = field(default_factory=list)
    #: For an exact trace, ((trace structure, draw, element, coordinate, family, scale), the element's value on D,
    #: the coordinate's value on D) for each coordinate that one element alone feeds: across traces, the release must
    #: be one-to-one in that element (:func:`one_to_one`), which the probe's small moves cannot tell.
    points: tuple = ()


def run_trace(fn, d1, d2, seed: np.random.SeedSequence, *, probes: dict, name: str) -> TraceResult:
    """Run one trace of ``fn`` on the pair (see the module docstring); ``probes`` caches, per trace structure,
    the probe and the last alignment (the first guess of the next trace)."""
    s_d, s_fallback = seed.spawn(2)
    rec = Recorder(np.random.default_rng(s_d))
    r1 = call_taped(fn, d1, rec, rec.generator, name)
    al = _Aligner(fn, d1, d2, rec, r1, probes, s_d, s_fallback, name)
    al.align()
    findings = _findings(rec.draws, al.rep, r1, al.r2)
    events = [_as_discrete_laplace(e, al.dl_elements, rec.draws) for e in al.rep.coupling_events]
    hooked = any(d.meta.get("hooked") for d in rec.draws)
    exact, why = False, "the release was not reproduced"
    if not findings:
        exact, why = _determined(rec.draws, al.get_probe(), hooked)
    probe = al.probe
    witness_of = {key: sorted(der) for key, der in probe.feeds.items()} if probe is not None else {}
    l1, l2, moved = _moves(events, rec.draws, probe)
    points = _points(al.signature, rec.draws, probe, r1) if exact else ()
    return TraceResult(events, findings, not findings, exact, len(rec.draws), hooked, witness_of, why, l1, l2,
                       moved, _hooked_moves(rec.draws, al.rep.draws), points)


#: Families whose draws are ordered numbers (a release one-to-one in such a draw is monotone in it); a categorical
#: draw's release must only be one-to-one; a coin's uniform shows through its outcome alone.
_ORDERED = (*LOCATION_FAMILIES, "exponential", "geometric", "poisson", "binomial", "integers")


def _points(signature, trace, probe: Probe, r1) -> tuple:
    """(key, the element's value, the release coordinate's value) of each coordinate fed by one element alone."""
    out = []
    for j, keys in probe.by_coordinate().items():
        (draw, k), d = keys[0], trace[keys[0][0]]
        if len(keys) == 1 and (d.family in _ORDERED or d.family == "categorical"):
            out.append(((signature, draw, k, j, d.family, _element_scale(d, k)), float(np.reshape(d.value, -1)[k]),
                        float(r1[j])))
    return tuple(out)


def _element_scale(d, k: int) -> float:
    """The scale parameter of element ``k`` of draw ``d`` (1 when it has none)."""
    scale = d.params.get("scale")
    return abs(float(np.reshape(scale, -1)[k if np.size(scale) > 1 else 0])) if scale is not None else 1.0


def one_to_one(family: str, size: float, xs, ys) -> bool:
    """Whether the releases ``ys`` seen across traces are one function of a draw element's values ``xs``, and one
    to one: monotone in it for an ordered ``family`` (a tie only between draws closer than 1% of its scale ``size``:
    a rounding grid), distinct per category for a categorical draw.

    The probe moves each element a little; ``|x|``, ``x mod 1`` or a clamp are locally one-to-one and globally
    not, and then the release does not determine the draw and the coupling's cost is only an upper bound.
    """
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    same_x, tie = x[1:] == x[:-1], close(y[1:], y[:-1])
    if np.any(same_x & ~tie):
        return False
    if family == "categorical":
        firsts = y[np.r_[True, ~same_x]]
        return len(firsts) < 2 or not np.any(close(np.sort(firsts)[1:], np.sort(firsts)[:-1]))
    if np.any(~same_x & tie & (np.diff(x) > 0.01 * size)):
        return False
    signs = np.sign(np.diff(y)[~same_x & ~tie])
    return signs.size == 0 or bool(np.all(signs == signs[0]))


class _Aligner:
    """The neighbour's replays of one trace, each coupling closer to D's release (see :func:`run_trace`)."""

    def __init__(self, fn, d1, d2, rec, r1, probes, s_d, s_fallback, name):
        self.fn, self.d1, self.d2, self.rec, self.r1, self.probes = fn, d1, d2, rec, r1, probes
        self.s_d, self.s_fallback, self.name = s_d, s_fallback, name
        self.trace = rec.draws
        self.signature = tuple((d.method, d.shape) for d in self.trace)
        self.t1s = getattr(rec, "thresholds", {})
        self.probe = None
        # The last alignment of this structure is the first guess: a shift that does not depend on the draws
        # is then checked with one replay.
        extra, dl, flips = probes.get(("hint", self.signature), ({}, {}, {}))
        self.extra = {i: a.copy() for i, a in extra.items()}
        self.dl_elements, self.flips = dict(dl), {i: a.copy() for i, a in flips.items()}
        self.rep = self.r2 = None

    def get_probe(self) -> Probe:
        key = ("probe", self.signature)
        if key not in self.probes:
            self.probes[key] = Probe.measure(self.fn, self.d1, self.trace, self.s_d, self.name, thresholds=self.t1s)
        self.probe = self.probes[key]
        return self.probe

    def replay(self) -> None:
        t2s = getattr(self.rep, "thresholds", {}) if self.rep is not None else {}
        limit = self.rep.divergence[0] if self.rep is not None and self.rep.divergence is not None else len(self.trace)
        coins = _coins(self.trace, self.t1s, t2s, limit, self.flips)
        self.rep, self.r2 = _replay(self.fn, self.d2, self.trace, Coupling(self.extra, coins), self.s_fallback,
                                    self.name)

    def differs(self) -> bool:
        return self.r2.shape == self.r1.shape and not np.all(close(self.r1, self.r2))

    def align(self) -> None:
        self.replay()
        if self.t1s and getattr(self.rep, "thresholds", None):  # coins: the neighbour's thresholds now known
            self.replay()
            if self.differs() and _flip_coins(self.trace, self.get_probe(), self.t1s, self.r1, self.r2, self.flips):
                self.replay()
        # Locations added outside the primitive, seen as the draws' first additions: the noisy values coincide
        # when the noise moves by their change, whether or not this trace's release happens to without it.
        tracked = _tracked_shifts(self.trace, getattr(self.rec, "locations", {}),
                                  getattr(self.rep, "locations", {}), self.rep.divergence)
        if any(i not in self.extra or not np.array_equal(self.extra[i], v) for i, v in tracked.items()):
            self.extra.update(tracked)
            self.replay()
        for _ in range(4):  # Newton steps: a derivative measured by the probe is exact only to ~1e-10
            if not self.differs() or any(e.kind == "param" for e in self.rep.coupling_events):
                break
            more = _alignment(self.trace, self.get_probe(), self.r1, self.r2, self.rep.divergence,
                              self.dl_elements)
            if not more:
                break
            for i, arr in more.items():
                self.extra[i] = self.extra[i] + arr if i in self.extra else arr
            self.replay()
        if self.r2.shape == self.r1.shape and not self.differs() and self.rep.divergence is None:
            self.probes[("hint", self.signature)] = (self.extra, self.dl_elements, self.flips)


def _findings(trace, rep, r1, r2) -> list:
    """(kind, detail, witness coordinates) of what the final replay could not absorb."""
    findings = []
    if r2.shape != r1.shape:
        findings.append(("control-flow" if rep.divergence else "leak-outside-noise",
                         f"the release has shape {r1.shape} on D and {r2.shape} on the neighbour", None))
    differ = [] if r2.shape != r1.shape else [int(j) for j in np.flatnonzero(~close(r1, r2))]
    if rep.divergence is not None:
        findings.append(("control-flow", rep.divergence[1], differ or None))
    params = [e for e in rep.coupling_events if e.kind == "param"]
    for e in params:
        findings.append(("data-dependent-noise", f"{trace[e.draw].describe()}: the {e.param} depends on the data "
                                                 f"({e.detail})", None))
    if differ and rep.divergence is None and not params:
        coords = ", ".join(str(j) for j in differ[:5]) + (", ..." if len(differ) > 5 else "")
        findings.append(("leak-outside-noise",
                         f"release coordinate{'s' * (len(differ) > 1)} {coords} differ{'s' * (len(differ) == 1)} "
                         f"between D and the neighbour although every draw was aligned (D: "
                         f"{_vals(r1, differ)}, neighbour: {_vals(r2, differ)}); the data reaches the release "
                         "outside the noise, or the noise's location is added where it cannot be seen (add it to "
                         "the draw first, or pass it as loc= to the primitive)" + _uniform_hint(trace), differ))
    return findings


def _moves(events, trace, probe) -> tuple[float, float, tuple]:
    """How far the noise locations moved in the release's units: L1 over Laplace-like draws, L2 over Gaussian
    ones (library-hooked draws excluded: they check their own), and the elements that moved."""
    l1 = l2 = 0.0
    moved = []
    for e in events:
        if e.kind != "shift" or trace[e.draw].meta.get("hooked"):
            continue
        moved += [(e.draw, k) for k in e.elements]
        # A draw that reaches the release scaled (a grid step) moves it scaled.
        shift = np.abs(e.shift) * np.array([_gain(probe, e.draw, k) for k in e.elements])
        if e.family in ("laplace", "discrete_laplace"):
            l1 += float(np.sum(shift))
        elif e.family == "normal":
            l2 += float(np.sum(np.square(shift)))
    return l1, math.sqrt(l2), tuple(moved)


def _gain(probe, draw: int, k: int) -> float:
    """|d release / d draw| of an element feeding one coordinate (1 when the probe does not say)."""
    der = probe.feeds.get((draw, k), {}) if probe is not None else {}
    if len(der) == 1:
        a = abs(next(iter(der.values())))
        if math.isfinite(a) and a > 0:
            return a
    return 1.0


def _hooked_moves(trace, draws) -> list:
    out = []
    for a, b in zip(trace, draws):
        if a.meta.get("hooked") and b.meta.get("hooked") and a.method == b.method \
                and a.meta.get("sensitivity") is not None and not isinstance(a.meta["location"], str):
            la, lb = np.asarray(a.meta["location"], dtype=float), np.asarray(b.meta["location"], dtype=float)
            if la.shape == lb.shape and la.size:
                spectral = a.meta.get("norm") == "spectral" and la.ndim == 2
                moved = np.linalg.norm(la - lb, 2) if spectral else np.max(np.abs(la - lb))
                out.append((a, float(moved), float(a.meta["sensitivity"])))
    return out


def _uniform_hint(trace) -> str:
    """When the trace has raw uniform draws: a coin compared with a data-dependent probability looks like a leak."""
    uniform = [d for d in trace if d.family == "uniform"]
    if not uniform:
        return ""
    return (f", or a uniform draw ({uniform[0].describe()}) is compared with a probability that depends on the data, "
            "which the coupling cannot align (draw such coins with rng.binomial or rng.choice(p=...))")


def _vals(r, idx) -> str:
    shown = ", ".join(f"{r[j]:.6g}" for j in idx[:3])
    return shown + (", ..." if len(idx) > 3 else "")


def _replay(fn, d2, trace, coupling, seed, name):
    rep = Replayer(trace, coupling, np.random.default_rng(seed))
    r2 = call_taped(fn, d2, rep, rep.fallback, name)
    rep.finish()
    rep.coupling_events = coupling.events
    return rep, r2


def _alignment(trace, probe: Probe, r1, r2, divergence, dl_elements: dict) -> dict:
    """``extra[draw] = shift array``: each differing coordinate moved back through one element that feeds it
    alone with a nonzero derivative (a two-sided geometric's pair of draws: the one that moves upwards)."""
    if not probe.complete:
        return {}
    limit = divergence[0] if divergence is not None else len(trace)
    extra: dict = {}
    for j in np.flatnonzero(~close(r1, r2)):
        feeders = [(key, der) for key, der in probe.coordinate_feeders(int(j))
                   if key[0] < limit and math.isfinite(der) and der != 0
                   and trace[key[0]].family in (*LOCATION_FAMILIES, "exponential", "geometric")
                   and len(probe.feeds[key]) == 1]
        if not feeders:
            continue
        need = float(r1[j] - r2[j])
        geo = [f for f in feeders if trace[f[0][0]].family == "geometric"]
        if len(geo) == 2 and len(feeders) == 2 and {round(d) for _, d in geo} == {1, -1}:
            (k1, _), (k2, _) = sorted(geo, key=lambda f: -f[1])  # the +1 element, then the -1 element
            p1 = float(np.reshape(trace[k1[0]].params["prob"], -1)[k1[1]])
            p2 = float(np.reshape(trace[k2[0]].params["prob"], -1)[k2[1]])
            if math.isclose(p1, p2):
                key, der = (k1, 1.0) if need > 0 else (k2, -1.0)
                dl_elements[key] = -math.log1p(-p1)
                _add(extra, trace, key, need / der)
            continue
        if len(feeders) > 1:
            # Noise added in parts (x + L1 + L2, or a difference of exponentials): moving any one part aligns the
            # coordinate. The cheapest priced move: a location family's (whose shift has a privacy loss) by the
            # smallest shift in its scale's units; a one-sided draw only upwards. It reported a leak outside
            # the noise instead.
            feeders = sorted((f for f in feeders if _may_shift(trace, f, need)), key=lambda f: _shift_cost(trace, f, need))[:1]
        if len(feeders) == 1:
            key, der = feeders[0]
            _add(extra, trace, key, need / der)
    return extra


def _may_shift(trace, feeder, need: float) -> bool:
    """Whether the element may move by ``need / derivative``: any way for a location family, upwards only for a
    one-sided draw (exponential, geometric), which stays in its support so."""
    (draw, _), der = feeder
    return trace[draw].family in LOCATION_FAMILIES or need / der > 0


def _shift_cost(trace, feeder, need: float) -> tuple:
    """(not a location family, |shift| / the element's scale): the order in which parts of the noise are moved."""
    (draw, k), der = feeder
    d = trace[draw]
    return d.family not in LOCATION_FAMILIES, abs(need / der) / max(_element_scale(d, k), 1e-300)


def _coins(trace, t1s: dict, t2s: dict, limit: int, flips: dict) -> dict:
    """``values[draw] = (u2, events)`` for each uniform draw compared with a threshold on both sides (a coin).

    The neighbour's uniform is moved, proportionally, to the side of its threshold that keeps the outcome of
    D's coin (or flips it, where ``flips`` says): the coupling of two Bernoulli draws, whose cost is the
    log-ratio of their probabilities.
    """
    out = {}
    for i, t1 in t1s.items():
        d = trace[i]
        t2 = t2s.get(i)
        if d.family != "uniform" or i >= limit or t2 is None or t2.shape != t1.shape or d.shape != t1.shape:
            continue
        low, high = (np.asarray(d.params[k], dtype=float).reshape(-1) for k in ("low", "high"))
        t1f, t2f = np.clip(t1.reshape(-1), low, high), np.clip(t2.reshape(-1), low, high)
        u1 = d.value.astype(float).reshape(-1)
        below = u1 < t1f
        flip = flips.get(i, np.zeros(u1.size, dtype=bool))
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(below, (u1 - low) / (t1f - low), (u1 - t1f) / (high - t1f))
        frac = np.nan_to_num(frac, nan=0.5)
        to_below = below ^ flip
        u2 = np.where(to_below, low + frac * (t2f - low), t2f + frac * (high - t2f))
        u2 = np.where(to_below, np.minimum(u2, np.nextafter(t2f, low)), np.maximum(u2, t2f))
        p1, p2 = (t1f - low) / (high - low), (t2f - low) / (high - low)
        pairs: dict = {}
        for a, b, f in zip(p1, p2, flip):
            q2 = (1 - b, b) if f else (b, 1 - b)
            if not (math.isclose(a, q2[0], rel_tol=1e-12, abs_tol=0)):
                pairs[((a, 1 - a), q2)] = pairs.get(((a, 1 - a), q2), 0) + 1
        events = [Event(i, "pmf", "bernoulli", p1=k[0], p2=k[1], count=n) for k, n in pairs.items()]
        out[i] = (u2.astype(d.value.dtype), events)
    return out


def _flip_coins(trace, probe: Probe, t1s: dict, r1, r2, flips: dict) -> bool:
    """Flip the coin that alone feeds each still-differing coordinate (randomized response's "lie" made a
    "truth"); True when something was flipped."""
    changed = False
    for j in np.flatnonzero(~close(r1, r2)):
        feeders = [key for key, _ in probe.coordinate_feeders(int(j))
                   if key[0] in t1s and trace[key[0]].family == "uniform" and len(probe.feeds[key]) == 1]
        if len(feeders) == 1:
            i, k = feeders[0]
            mask = flips.setdefault(i, np.zeros(trace[i].value.size, dtype=bool))
            mask[k] = ~mask[k]
            changed = True
    return changed


def _tracked_shifts(trace, locs1: dict, locs2: dict, divergence) -> dict:
    """``extra[draw]``: the noise shift ``loc1 - loc2`` of each draw whose outside location both runs recorded."""
    limit = divergence[0] if divergence is not None else len(trace)
    out = {}
    for i, loc1 in locs1.items():
        loc2 = locs2.get(i)
        if i >= limit or loc2 is None or loc2.shape != loc1.shape or trace[i].shape != loc1.shape \
                or trace[i].family not in SHIFTABLE:
            continue
        shift = (loc1 - loc2).reshape(-1)
        if trace[i].family in _DISCRETE and not np.allclose(shift, np.round(shift)):
            continue
        out[i] = np.round(shift) if trace[i].family in _DISCRETE else shift
    return out


def _add(extra: dict, trace, key, amount: float) -> None:
    d = trace[key[0]]
    arr = extra.setdefault(d.index, np.zeros(d.value.size))
    arr[key[1]] += amount


def _as_discrete_laplace(e: Event, dl_elements: dict, trace) -> Event:
    """A shift of one geometric of a two-sided pair is the pair's discrete Laplace moving (Inusah and
    Kozubowski 2006: the difference of two i.i.d. geometrics is discrete Laplace)."""
    if e.kind != "shift" or e.family != "geometric":
        return e
    keys = [(e.draw, k) for k in e.elements]
    if not all(k in dl_elements for k in keys):
        return e
    return replace(e, family="discrete_laplace", scale=tuple(1.0 / dl_elements[k] for k in keys))


def _determined(trace, probe: Probe, hooked: bool) -> tuple[bool, str]:
    """Whether the release determines every aligned draw: then the pair's epsilon is the coupling's cost."""
    if not probe.complete:
        return False, f"more than {MAX_PROBED} draw elements: not probed"
    clamped = [d for d in trace if d.meta.get("post_processed")]
    if clamped:  # a truncated or folded library mechanism: the clamp hides the draw where it acts
        return False, f"{clamped[0].describe()} is truncated or folded by {clamped[0].meta['post_processed']}"
    seeds = [d for d in trace if d.family == "seed"]
    if seeds and not hooked:
        return False, f"{seeds[0].describe()} seeds randomness dpaudit does not see"
    by_coord: dict = {}
    for key, der in probe.feeds.items():
        if trace[key[0]].family == "permutation":
            if der:  # the same order on both sides: the release mixes what the shifted draws show
                return False, f"{trace[key[0]].describe()} reaches the release"
            continue
        if not der:
            return False, f"{trace[key[0]].describe()} does not show in the release"
        if len(der) > 1:
            return False, f"{trace[key[0]].describe()} feeds several release coordinates"
        by_coord.setdefault(next(iter(der)), []).append(key)
    for keys in by_coord.values():
        if len(keys) == 2 and all(trace[k[0]].family == "geometric" for k in keys):
            continue
        if len(keys) > 1:
            return False, "several draws add up in one release coordinate"
    return True, ""
