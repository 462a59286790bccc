"""The privacy loss of each declared law (dpaudit.greybox.declared) against a brute-force computation on a fine grid.

For random parameters: the pure epsilon (the largest log-ratio, both directions) and the epsilon at a delta (the
smallest epsilon whose hockey-stick divergence is at most delta) must agree with the densities evaluated on a
grid.  The grid's own error is at most about 1e-3 here, the tolerance used; a fast seeded version runs by
default, 200 draws per law under the soundness mark.
"""

import math

import numpy as np
import pytest

from dpaudit.greybox.declared import FAMILIES

TOL = 2e-3


def _grid_laws(family, p1, p2):
    """(y, f1, f2, dy) on a grid covering both supports (densities normalised on it)."""
    if family == "bounded_laplace":
        y = np.linspace(p1["lower"], p1["upper"], 400_001)
        f = [np.exp(-np.abs(y - p["loc"]) / p["scale"]) for p in (p1, p2)]
    elif family == "clamped_laplace":  # the atoms as the outermost grid cells: each holds its bound's mass
        lo, hi = p1["lower"], p1["upper"]
        y = np.linspace(lo - 20 * p1["scale"], hi + 20 * p1["scale"], 2_000_001)
        f = []
        for p in (p1, p2):
            g = np.exp(-np.abs(y - p["loc"]) / p["scale"])
            inside = (y > lo) & (y < hi)
            cells = np.concatenate([[g[y <= lo].sum()], g[inside], [g[y >= hi].sum()]])
            f.append(cells)
        dy = y[1] - y[0]
        return y, [g / (g.sum() * dy) for g in f], dy
    elif family == "bounded_noise_laplace":
        lo = min(p1["loc"], p2["loc"]) - p1["bound"]
        y = np.linspace(lo, max(p1["loc"], p2["loc"]) + p1["bound"], 400_001)
        f = [np.where(np.abs(y - p["loc"]) <= p["bound"], np.exp(-np.abs(y - p["loc"]) / p["scale"]), 0.0)
             for p in (p1, p2)]
    elif family == "staircase":
        s = p1["scale"]
        y = np.arange(min(p1["loc"], p2["loc"]) - 60 * s, max(p1["loc"], p2["loc"]) + 60 * s, s * 2e-4)
        f = [np.exp(FAMILIES[family]._log_density(y - p["loc"], p)) for p in (p1, p2)]
    else:  # piecewise_uniform
        y = np.linspace(0, 1, 400_001)
        f = [np.asarray(p["density"])[np.clip(np.searchsorted(p["edges"], y, side="right") - 1, 0,
                                               len(p["density"]) - 1)] for p in (p1, p2)]
    dy = y[1] - y[0]
    return y, [g / (g.sum() * dy) for g in f], dy


def _random_params(family, rng):
    if family == "bounded_laplace":
        lo, hi = 0.0, float(rng.uniform(0.5, 3))
        b = float(rng.uniform(0.2, 2))
        return [{"loc": float(rng.uniform(lo, hi)), "scale": b, "lower": lo, "upper": hi} for _ in range(2)]
    if family == "clamped_laplace":
        lo, hi, b = 0.0, float(rng.uniform(0.5, 3)), float(rng.uniform(0.2, 2))
        return [{"loc": float(rng.uniform(lo - 1, hi + 1)), "scale": b, "lower": lo, "upper": hi} for _ in range(2)]
    if family == "clamped_geometric":
        lo, hi, b = float(rng.integers(-3, 1)), float(rng.integers(1, 6)), float(rng.uniform(0.3, 3))
        return [{"loc": float(rng.integers(-6, 9)), "scale": b, "lower": lo, "upper": hi} for _ in range(2)]
    if family == "bounded_noise_laplace":
        b, bound = float(rng.uniform(0.3, 2)), float(rng.uniform(1, 4))
        v = float(rng.uniform(0, 0.8 * bound))
        return [{"loc": 0.0, "scale": b, "bound": bound}, {"loc": v, "scale": b, "bound": bound}]
    if family == "staircase":
        eps, s = float(rng.uniform(0.5, 2)), float(rng.uniform(0.5, 2))
        gamma = float(rng.uniform(0.05, 0.95))
        return [{"loc": float(rng.uniform(-s, s)), "scale": s, "epsilon": eps, "gamma": gamma} for _ in range(2)]
    out = []
    for _ in range(2):
        edges = np.sort(np.concatenate([[0.0, 1.0], rng.uniform(0, 1, 4)]))
        density = rng.uniform(0.2, 3, 5)
        out.append({"edges": tuple(edges), "density": tuple(density / np.sum(density * np.diff(edges)))})
    return out


def _geometric_pmfs(p1, p2):
    """The clamped two-sided geometric's probabilities on [lower, upper], summed from a wide support."""
    k = np.arange(-400, 401)
    out = []
    for p in (p1, p2):
        f = np.exp(-np.abs(k) / p["scale"])
        y = np.clip(p["loc"] + k, p["lower"], p["upper"])
        out.append(np.bincount((y - p["lower"]).astype(int), weights=f / f.sum(),
                               minlength=int(p["upper"] - p["lower"]) + 1))
    return None, out, 1.0


def _check(family, rng):
    p1, p2 = _random_params(family, rng)
    fam = FAMILIES[family]
    y, (f1, f2), dy = _geometric_pmfs(p1, p2) if family == "clamped_geometric" else _grid_laws(family, p1, p2)
    both = (f1 > 0) | (f2 > 0)
    with np.errstate(divide="ignore"):
        ratio = np.log(f1[both]) - np.log(f2[both])
    pure = float(np.max(np.abs(ratio)))
    computed = max(fam.sup(p1, p2), fam.sup(p2, p1))
    if math.isinf(pure) or math.isinf(computed):
        assert math.isinf(pure) and math.isinf(computed), (family, p1, p2)
    else:
        assert computed >= pure - TOL * max(1, pure) and computed <= pure + TOL * max(1, pure) + 0.02, (family, p1, p2)
    delta = float(rng.choice([1e-3, 1e-2, 0.1]))
    eps = fam.epsilon(p1, p2, delta)

    def hockey(e):
        return max(np.sum(np.maximum(0, f1 - math.exp(e) * f2)) * dy, np.sum(np.maximum(0, f2 - math.exp(e) * f1)) * dy)

    if math.isinf(eps):
        assert hockey(50.0) > delta - TOL, (family, p1, p2, delta)
        return
    assert hockey(eps) <= delta + TOL, (family, p1, p2, delta, eps)  # sound: delta holds at the epsilon given
    if eps > 0.05:
        assert hockey(eps - 0.05) > delta - TOL, (family, p1, p2, delta, eps)  # and not loose


LAWS = ["bounded_laplace", "clamped_laplace", "clamped_geometric", "bounded_noise_laplace", "staircase",
        "piecewise_uniform"]


def _check_many(family, seed: int, draws: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(draws):
        _check(family, rng)


@pytest.mark.parametrize("family", LAWS)
def test_each_law_matches_the_grid(family):
    _check_many(family, 46, 3)


@pytest.mark.soundness
@pytest.mark.parametrize("family", LAWS)
def test_each_law_matches_the_grid_over_many_draws(family):
    _check_many(family, 4646, 200)
