"""Noise distributions a library mechanism declares, beyond a location family: their privacy loss on a pair.

A library hook (:mod:`dpaudit.greybox.hooks`) tapes a mechanism's ``randomise`` call as one draw of the
distribution the mechanism declares, with its parameters on D and on the neighbour.  The coupling keeps the
*released value* (the same noisy value on both sides), so the pair's privacy loss is the divergence of the
two declared distributions, which each family below computes:

* ``bounded_laplace``: Laplace noise restricted to a domain [lower, upper] and renormalised, the output of
  diffprivlib's rejection sampler ``LaplaceBoundedDomain`` (Holohan et al. 2020); its normaliser depends on
  the location, which is why the pair's loss exceeds the shift over the scale;
* ``clamped_laplace``: Laplace noise added to the value, then clamped to [lower, upper] (``LaplaceTruncated``):
  a density inside and an atom at each bound, whose mass moves with the location;
* ``clamped_geometric``: the same with two-sided geometric noise on the integers (``GeometricTruncated``), its
  sums over the integers in closed form (the bounds may be a machine's largest integer);
* ``bounded_noise_laplace``: Laplace noise truncated to [-bound, bound] (``LaplaceBoundedNoise``, Geng et
  al. 2018): the supports move with the location, so the loss is infinite at delta 0;
* ``uniform_noise``: uniform noise on [-scale, scale] (``Uniform``): epsilon 0 at delta >= the shift's
  share of the width, infinite below;
* ``staircase``: the staircase distribution (Geng, Kairouz, Oh and Viswanath 2015), piecewise constant;
* ``piecewise_uniform``: a piecewise-constant density on given edges (the exponential mechanism over
  intervals followed by a uniform draw inside the chosen one, as diffprivlib's quantiles);
* ``bingham``: the Bingham distribution on the unit sphere, density proportional to
  ``exp(coef * x' A x)`` (Kapralov and Talwar 2013): its normaliser has no closed form, so the loss is
  bounded by ``coef`` times the spread of the eigenvalues of ``A1 - A2``, not computed (``tight`` False).

Each family answers ``sup(p1, p2)``, the largest log-ratio ``ln f1/f2`` over the support (infinite when
``f2`` vanishes where ``f1`` does not), and ``epsilon(p1, p2, delta)``, the smallest epsilon with
``delta(epsilon) = integral of max(0, f1 - e^epsilon f2) <= delta`` in both directions (None when it is not
computed: the pure value is then a conservative answer).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["FAMILIES", "DeclaredFamily", "declared_unit", "declared_pure", "declared_epsilon"]


class DeclaredFamily:
    """A declared distribution: ``names`` its parameters in order, ``moving`` those that may change between D and
    the neighbour without a data-dependent-noise finding (the location), ``tight`` whether :meth:`sup` and
    :meth:`epsilon` are the pair's exact values rather than bounds."""

    names: tuple = ()
    moving: tuple = ("loc",)
    tight = True

    def sup(self, p1: dict, p2: dict) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def epsilon(self, p1: dict, p2: dict, delta: float) -> float | None:
        return None


def _bisect_epsilon(delta_of, delta: float, hi: float) -> float:
    """The smallest epsilon in [0, hi] with ``delta_of(epsilon) <= delta`` (``delta_of`` decreasing)."""
    if delta_of(0.0) <= delta:
        return 0.0
    if not math.isfinite(hi) or delta_of(hi) > delta * (1 + 1e-12) + 1e-15:
        return math.inf
    lo = 0.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_of(mid) > delta else (lo, mid)
    return hi


def _laplace_gap(k1: float, v1: float, k2: float, v2: float, b: float, cuts) -> float:
    """The integral of ``max(0, k1 e^{-|y - v1|/b} - k2 e^{-|y - v2|/b})`` over [cuts[0], cuts[-1]], in closed form.

    ``cuts`` (sorted, the two locations among them where they fall inside) split the range into pieces on which
    each term is one exponential, so the difference changes sign at most once in a piece.
    """
    def part(k, v, x0, x1):  # the integral of k e^{-|y - v|/b} over [x0, x1], on one side of v
        if x1 <= v:
            return k * b * (math.exp((x1 - v) / b) - math.exp((x0 - v) / b))
        return k * b * (math.exp(-(x0 - v) / b) - (0.0 if math.isinf(x1) else math.exp(-(x1 - v) / b)))

    def gap_at(y):
        return k1 * math.exp(-abs(y - v1) / b) - k2 * math.exp(-abs(y - v2) / b)

    total = 0.0
    for x0, x1 in zip(cuts, cuts[1:]):
        if not x1 > x0:
            continue
        s1, s2 = (1 if x1 <= v1 else -1), (1 if x1 <= v2 else -1)
        pieces = [(x0, x1)]
        if s1 != s2 and k1 > 0 and k2 > 0:  # one term rises, the other falls: one crossing at most
            cross = (math.log(k2 / k1) + (s1 * v1 - s2 * v2) / b) * b / (s1 - s2)
            if x0 < cross < x1:
                pieces = [(x0, cross), (cross, x1)]
        for a, c in pieces:
            mid = (a + c) / 2 if math.isfinite(a) and math.isfinite(c) else (a + b if math.isfinite(a) else c - b)
            if gap_at(mid) > 0:
                total += part(k1, v1, a, c) - part(k2, v2, a, c)
    return max(total, 0.0)


def _both(family, p1, p2, delta) -> float:
    """The epsilon at ``delta`` of both directions of a family with a one-direction ``hockey(p1, p2, eps)``."""
    out = 0.0
    for a, b in ((p1, p2), (p2, p1)):
        out = max(out, _bisect_epsilon(lambda e, a=a, b=b: family.hockey(a, b, e), delta, family.sup(a, b)))
    return out


class BoundedLaplace(DeclaredFamily):
    names = ("loc", "scale", "lower", "upper")

    @staticmethod
    def _log_norm(p) -> float:
        v, b, lo, hi = (p[k] for k in BoundedLaplace.names)
        return math.log(2 * b) + math.log1p(-(math.exp(-(v - lo) / b) + math.exp(-(hi - v) / b)) / 2)

    def _log_ratio(self, p1, p2, y) -> float:
        b = p1["scale"]
        return (abs(y - p2["loc"]) - abs(y - p1["loc"])) / b + self._log_norm(p2) - self._log_norm(p1)

    def sup(self, p1, p2):
        # The log-ratio is piecewise linear in y with kinks at the two locations, constant beyond both.
        ys = [p1["lower"], p1["loc"], p2["loc"]] + ([p1["upper"]] if math.isfinite(p1["upper"]) else [])
        return max(self._log_ratio(p1, p2, y) for y in ys)

    def hockey(self, p1, p2, eps):
        cuts = sorted({p1["lower"], p1["loc"], p2["loc"], p1["upper"]})
        return _laplace_gap(math.exp(-self._log_norm(p1)), p1["loc"], math.exp(eps - self._log_norm(p2)), p2["loc"],
                            p1["scale"], cuts)

    def epsilon(self, p1, p2, delta):
        return _both(self, p1, p2, delta)


class ClampedLaplace(DeclaredFamily):
    names = ("loc", "scale", "lower", "upper")

    @staticmethod
    def _atoms(p) -> tuple[float, float]:
        """The masses clamped onto the lower and the upper bound."""
        def tail(t):  # P(L >= t) of a Laplace of scale 1
            return 0.5 * math.exp(-t) if t >= 0 else 1 - 0.5 * math.exp(t)
        return tail((p["loc"] - p["lower"]) / p["scale"]), tail((p["upper"] - p["loc"]) / p["scale"])

    def sup(self, p1, p2):
        b, lo, hi = p1["scale"], p1["lower"], p1["upper"]
        out = -math.inf
        for a1, a2 in zip(self._atoms(p1), self._atoms(p2)):
            if a1 > 0:
                out = max(out, math.log(a1) - math.log(a2) if a2 > 0 else math.inf)
        if hi > lo:  # inside: piecewise linear in y, kinks at the two locations
            ys = [lo, hi] + [min(max(p["loc"], lo), hi) for p in (p1, p2)]
            out = max(out, max((abs(y - p2["loc"]) - abs(y - p1["loc"])) / b for y in ys))
        return out

    def hockey(self, p1, p2, eps):
        b, lo, hi = p1["scale"], p1["lower"], p1["upper"]
        out = sum(max(0.0, a1 - math.exp(eps) * a2) for a1, a2 in zip(self._atoms(p1), self._atoms(p2)))
        cuts = sorted({lo, hi, *(min(max(p["loc"], lo), hi) for p in (p1, p2))})
        return out + _laplace_gap(1 / (2 * b), p1["loc"], math.exp(eps) / (2 * b), p2["loc"], b, cuts)

    def epsilon(self, p1, p2, delta):
        return _both(self, p1, p2, delta)


class ClampedGeometric(DeclaredFamily):
    """``clamp(loc + N, lower, upper)`` with ``P(N = k)`` proportional to ``a^|k|``, ``a = exp(-1 / scale)``."""

    names = ("loc", "scale", "lower", "upper")

    @staticmethod
    def _tail(m: float, a: float) -> float:
        """P(N >= m) for an integer m."""
        return a ** m / (1 + a) if m >= 1 else 1 - a ** (1 - m) / (1 + a)

    def _atoms(self, p) -> tuple[float, float]:
        a, v = math.exp(-1 / p["scale"]), p["loc"]
        return (self._tail(v - p["lower"], a) if math.isfinite(p["lower"]) else 0.0,
                self._tail(p["upper"] - v, a) if math.isfinite(p["upper"]) else 0.0)

    def sup(self, p1, p2):
        lo, hi = p1["lower"], p1["upper"]
        if hi <= lo:
            return 0.0
        out = -math.inf
        for a1, a2 in zip(self._atoms(p1), self._atoms(p2)):
            if a1 > 0:
                out = max(out, math.log(a1) - math.log(a2) if a2 > 0 else math.inf)
        if hi - lo >= 2:  # inside: piecewise linear in k, constant beyond both locations
            ks = [min(max(p["loc"], lo + 1), hi - 1) for p in (p1, p2)]
            out = max(out, max((abs(k - p2["loc"]) - abs(k - p1["loc"])) / p1["scale"] for k in ks))
        return out

    def hockey(self, p1, p2, eps):
        lo, hi = p1["lower"], p1["upper"]
        if hi <= lo:
            return 0.0
        a, v1, v2, w = math.exp(-1 / p1["scale"]), p1["loc"], p2["loc"], math.exp(eps)
        c = (1 - a) / (1 + a)
        out = sum(max(0.0, x1 - w * x2) for x1, x2 in zip(self._atoms(p1), self._atoms(p2)))
        first, last, m, big = lo + 1, hi - 1, min(v1, v2), max(v1, v2)

        def run(n):  # 1 - a^n: the share of a geometric series of n terms (n may be infinite)
            return 1.0 if not math.isfinite(n) else -math.expm1(n * math.log(a))

        end = min(last, m - 1)  # below both locations: c a^-k (a^v1 - w a^v2), summed in closed form
        if end >= first:
            out += c * max(0.0, a ** (v1 - end) - w * a ** (v2 - end)) * run(end - first + 1) / (1 - a)
        start = max(first, big + 1)  # above both: c a^k (a^-v1 - w a^-v2)
        if last >= start:
            out += c * max(0.0, a ** (start - v1) - w * a ** (start - v2)) * run(last - start + 1) / (1 - a)
        ks = np.arange(max(first, m), min(last, big) + 1, dtype=float)  # between the two locations
        out += float(np.sum(c * np.maximum(0.0, a ** np.abs(ks - v1) - w * a ** np.abs(ks - v2))))
        return out

    def epsilon(self, p1, p2, delta):
        return _both(self, p1, p2, delta)


class BoundedNoiseLaplace(DeclaredFamily):
    names = ("loc", "scale", "bound")

    def sup(self, p1, p2):
        return 0.0 if p1["loc"] == p2["loc"] else math.inf

    def hockey(self, p1, p2, eps):
        b, bound = p1["scale"], p1["bound"]
        k = 1 / (2 * b * -math.expm1(-bound / b))
        lo, hi = p1["loc"] - bound, p1["loc"] + bound  # D's support; outside the neighbour's, its term is 0
        o_lo, o_hi = max(lo, p2["loc"] - bound), min(hi, p2["loc"] + bound)
        out = 0.0
        for a, c, k2 in ((lo, o_lo, 0.0), (o_lo, o_hi, k * math.exp(eps)), (o_hi, hi, 0.0)):
            if c > a:
                cuts = sorted({a, c, *(x for x in (p1["loc"], p2["loc"]) if a < x < c)})
                out += _laplace_gap(k, p1["loc"], k2, p2["loc"], b, cuts)
        return out

    def epsilon(self, p1, p2, delta):
        out = 0.0
        shift = abs(p1["loc"] - p2["loc"])
        for a, c in ((p1, p2), (p2, p1)):  # inside the overlap the log-ratio is at most the shift over the scale
            out = max(out, _bisect_epsilon(lambda e, a=a, c=c: self.hockey(a, c, e), delta, shift / p1["scale"]))
        return out


class UniformNoise(DeclaredFamily):
    names = ("loc", "scale")

    def sup(self, p1, p2):
        return 0.0 if p1["loc"] == p2["loc"] else math.inf

    def epsilon(self, p1, p2, delta):
        outside = min(1.0, abs(p1["loc"] - p2["loc"]) / (2 * p1["scale"]))
        return 0.0 if delta >= outside else math.inf


def _merged(*edges) -> np.ndarray:
    return np.unique(np.concatenate([np.asarray(e, dtype=float) for e in edges]))


class Staircase(DeclaredFamily):
    """Noise of density ``a e^{-k eps0}`` on ``|x| in [k, k + gamma) * scale`` and ``a e^{-(k+1) eps0}`` on
    ``[k + gamma, k + 1) * scale``; beyond both locations the pair's densities repeat with period ``scale``,
    each period ``e^{-eps0}`` times the last, so a window of one period on each side decides."""

    names = ("loc", "scale", "epsilon", "gamma")

    @staticmethod
    def _log_density(x, p) -> np.ndarray:
        t = np.abs(x) / p["scale"]
        k = np.floor(t)
        steps = k + (t - k >= p["gamma"])
        e = p["epsilon"]
        log_a = math.log(-math.expm1(-e)) - math.log(2 * p["scale"] * (p["gamma"] + (1 - p["gamma"]) * math.exp(-e)))
        return log_a - e * steps

    def _pieces(self, p1, p2):
        """Midpoints and widths of the pieces on which both densities are constant, over the window
        [min loc - scale, max loc + scale], and which of them repeat (below, between, above the locations)."""
        s = p1["scale"]
        lo, hi = min(p1["loc"], p2["loc"]) - s, max(p1["loc"], p2["loc"]) + s
        n = int(math.ceil((hi - lo) / s)) + 2
        ks = np.arange(-n, n + 1)
        cuts = [p["loc"] + sgn * (ks + off) * s for p in (p1, p2) for sgn in (1, -1) for off in (0.0, p["gamma"])]
        edges = _merged([lo, hi], *cuts)
        edges = edges[(edges >= lo) & (edges <= hi)]
        mid, width = (edges[1:] + edges[:-1]) / 2, np.diff(edges)
        return mid, width, lo + s, hi - s

    def sup(self, p1, p2):
        mid, _, _, _ = self._pieces(p1, p2)
        return float(np.max(self._log_density(mid - p1["loc"], p1) - self._log_density(mid - p2["loc"], p2)))

    def hockey(self, p1, p2, eps):
        mid, width, a, b = self._pieces(p1, p2)
        gap = np.maximum(0.0, np.exp(self._log_density(mid - p1["loc"], p1))
                         - math.exp(eps) * np.exp(self._log_density(mid - p2["loc"], p2))) * width
        repeat = 1.0 / -math.expm1(-p1["epsilon"])  # the geometric series of the periods beyond the window
        return float(np.sum(gap[mid < a]) * repeat + np.sum(gap[(mid >= a) & (mid <= b)])
                     + np.sum(gap[mid > b]) * repeat)

    def epsilon(self, p1, p2, delta):
        return _both(self, p1, p2, delta)


class PiecewiseUniform(DeclaredFamily):
    """Density ``density[i]`` on ``[edges[i], edges[i+1])`` (both given on each side; nothing else moves)."""

    names = ("edges", "density")
    moving = names

    def _pieces(self, p1, p2):
        e1, e2 = np.asarray(p1["edges"], float), np.asarray(p2["edges"], float)
        edges = _merged(e1, e2)
        mid = (edges[1:] + edges[:-1]) / 2

        def at(p, e):
            i = np.searchsorted(e, mid, side="right") - 1
            inside = (i >= 0) & (i < len(e) - 1)
            return np.where(inside, np.asarray(p["density"], float)[np.clip(i, 0, len(e) - 2)], 0.0)

        return at(p1, e1), at(p2, e2), np.diff(edges)

    def sup(self, p1, p2):
        f1, f2, width = self._pieces(p1, p2)
        keep = (f1 > 0) & (width > 0)
        if np.any(keep & (f2 <= 0)):
            return math.inf
        return float(np.max(np.log(f1[keep]) - np.log(f2[keep]))) if keep.any() else 0.0

    def hockey(self, p1, p2, eps):
        f1, f2, width = self._pieces(p1, p2)
        return float(np.sum(np.maximum(0.0, f1 - math.exp(eps) * f2) * width))

    def epsilon(self, p1, p2, delta):
        return _both(self, p1, p2, delta)


class Bingham(DeclaredFamily):
    names = ("matrix", "coef")
    moving = ("matrix",)
    tight = False

    def sup(self, p1, p2):
        a1, a2 = (np.asarray(p["matrix"], float) for p in (p1, p2))
        d = int(round(math.sqrt(a1.size)))
        ev = np.linalg.eigvalsh((a1 - a2).reshape(d, d))
        # ln f1/f2 = coef x'(A1 - A2)x + ln Z2/Z1, and ln Z2/Z1 lies within coef times the same eigenvalues.
        return float(p1["coef"] * (ev.max() - ev.min()))


FAMILIES = {"bounded_laplace": BoundedLaplace(), "clamped_laplace": ClampedLaplace(),
            "clamped_geometric": ClampedGeometric(),
            "bounded_noise_laplace": BoundedNoiseLaplace(),
            "uniform_noise": UniformNoise(), "staircase": Staircase(), "piecewise_uniform": PiecewiseUniform(),
            "bingham": Bingham()}


def declared_unit(family: str, params: dict) -> tuple:
    """A draw's parameters as a hashable tuple in the family's order (arrays as tuples of floats)."""
    out = []
    for name in FAMILIES[family].names:
        a = np.asarray(params[name], dtype=float)
        out.append(float(a) if a.ndim == 0 else tuple(float(x) for x in a.reshape(-1)))
    return tuple(out)


def _as_dict(family: str, unit: tuple) -> dict:
    return dict(zip(FAMILIES[family].names, unit))


def declared_pure(family: str, u1: tuple, u2: tuple) -> tuple[float, float]:
    """(sup ln f1/f2, sup ln f2/f1) of one declared unit."""
    fam, p1, p2 = FAMILIES[family], _as_dict(family, u1), _as_dict(family, u2)
    return fam.sup(p1, p2), fam.sup(p2, p1)


def declared_epsilon(family: str, u1: tuple, u2: tuple, delta: float) -> tuple[float, bool]:
    """(epsilon at ``delta``, whether it is the pair's exact value) of one declared unit alone."""
    fam, p1, p2 = FAMILIES[family], _as_dict(family, u1), _as_dict(family, u2)
    if delta > 0:
        eps = fam.epsilon(p1, p2, delta)
        if eps is not None:
            return eps, fam.tight
    return max(fam.sup(p1, p2), fam.sup(p2, p1)), fam.tight and delta == 0
