"""Drawing pieces shared by the results figures and :func:`dpaudit.plots.plot_report`.

An audit's evidence is a pair of rates on held-out samples, so every rate is
drawn with its Clopper-Pearson interval in both coordinates, and a privacy
claim is drawn as what it says: the (epsilon, delta)-DP region of the ROC
plane, a point (or a curve) in the privacy-profile plane.
"""

from __future__ import annotations

import math

import numpy as np

from ..stats.clopper_pearson import clopper_pearson_interval

__all__ = [
    "EPS",
    "DELTA",
    "cp_interval",
    "roc_points",
    "set_roc_axes",
    "draw_roc",
    "dp_frontier",
    "draw_frontier",
    "draw_event",
    "draw_profile_claim",
]

EPS = "\u03b5"
DELTA = "\u03b4"


#: The two-sided Clopper-Pearson interval of :mod:`dpaudit.stats` (one implementation for audits and figures).
cp_interval = clopper_pearson_interval


def roc_points(fpr, tpr, n, *, confidence: float = 0.95) -> dict:
    """ROC points with a Clopper-Pearson interval on each rate, sorted by FPR.

    ``fpr``/``tpr`` are rates on ``n`` held-out samples per side (D positive,
    D' negative, as an audit records them).  Returns arrays ``x, x_lo, x_hi``
    (FPR) and ``y, y_lo, y_hi`` (TPR).

    Examples
    --------
    >>> p = roc_points([0.5, 0.001], [0.9, 0.003], 10_000)
    >>> [float(v) for v in p["x"]], bool(p["x_lo"][0] < 0.001 < p["x_hi"][0])
    ([0.001, 0.5], True)
    """
    f = np.asarray(fpr, dtype=float)
    t = np.asarray(tpr, dtype=float)
    n = max(1, int(n))
    f_lo, f_hi = clopper_pearson_interval(np.round(f * n), n, confidence)
    t_lo, t_hi = clopper_pearson_interval(np.round(t * n), n, confidence)
    order = np.argsort(f, kind="stable")
    return {k: np.asarray(v)[order] for k, v in
            {"x": f, "x_lo": f_lo, "x_hi": f_hi, "y": t, "y_lo": t_lo, "y_hi": t_hi}.items()}


def set_roc_axes(ax, low: float) -> None:
    """ROC axes: both rates on log scales from ``low`` to just above 1, labelled."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low, 1.4)
    ax.set_ylim(low, 1.4)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")


def _box_union(pts: dict, grid: np.ndarray):
    """Upper and lower edge, on ``grid``, of the union of the points' interval boxes."""
    upper = np.full(grid.shape, -np.inf)
    lower = np.full(grid.shape, np.inf)
    for xl, xh, yl, yh in zip(pts["x_lo"], pts["x_hi"], pts["y_lo"], pts["y_hi"]):
        inside = (grid >= xl) & (grid <= xh)
        upper[inside] = np.maximum(upper[inside], yh)
        lower[inside] = np.minimum(lower[inside], yl)
    covered = np.isfinite(upper)
    return upper, lower, covered


def draw_roc(ax, pts: dict, *, style: dict, label: str | None, floor: float = 1e-12, zorder: float = 2.0) -> None:
    """One ROC curve on log-log axes with the union of its points' 2-D interval boxes shaded.

    Curves with few points (a discrete output) are drawn as markers at every
    point; longer ones carry markers spaced along the curve so that two
    coinciding curves stay distinguishable.
    """
    keep = (pts["x"] > 0) & (pts["y"] > 0)
    if not keep.any():
        return
    sub = {k: v[keep] for k, v in pts.items()}
    lo_x = max(floor, float(np.min(np.where(sub["x_lo"] > 0, sub["x_lo"], sub["x"]))))
    grid = np.geomspace(lo_x, 1.0, 600)
    upper, lower, covered = _box_union(sub, grid)
    lower = np.maximum(lower, floor)
    ax.fill_between(grid, np.where(covered, lower, np.nan), np.where(covered, upper, np.nan), color=style["color"],
                    alpha=0.18, lw=0, zorder=zorder - 0.5)
    # Distinct points: a discrete output's saved ROC repeats its few corners (54 entries, 2 points, for
    # randomized response in the quickstart).
    distinct = np.r_[True, (np.diff(sub["x"]) != 0) | (np.diff(sub["y"]) != 0)]
    sub = {k: v[distinct] for k, v in sub.items()}
    many = len(sub["x"]) > 12
    # A discrete output's few points (randomized response: one, near the top right where log axes crowd every
    # curve together) are drawn larger and above the long curves, which would otherwise hide them.
    ax.plot(sub["x"], sub["y"], color=style["color"], ls=style["linestyle"], marker=style["marker"],
            ms=3.2 if many else 5.5, markevery=0.12 if many else None, mfc="white" if many else style["color"],
            mec=style["color"] if many else "black", mew=0.9 if many else 0.6, lw=1.1, label=label,
            zorder=zorder if many else zorder + 1.5)


def dp_frontier(x, epsilon: float, delta: float = 0.0):
    """Largest TPR an (epsilon, delta)-DP mechanism allows at FPR ``x`` (both inequalities).

    ``TPR <= e^eps FPR + delta`` and ``1 - FPR <= e^eps (1 - TPR) + delta``.

    >>> float(dp_frontier(0.01, 1.0)), float(dp_frontier(1.0, 1.0))
    (0.027182818284590453, 1.0)
    """
    x = np.asarray(x, dtype=float)
    e = math.exp(min(float(epsilon), 700.0))
    return np.clip(np.minimum(e * x + delta, 1.0 - (1.0 - delta - x) / e), 0.0, 1.0)


def draw_frontier(ax, epsilon, delta, *, x_min: float, label: str | None, linestyle="-", color="0.35") -> None:
    """The claimed (epsilon, delta) frontier: a curve above it is a violation."""
    grid = np.geomspace(max(x_min, 1e-12), 1.0, 200)
    ax.plot(grid, np.maximum(dp_frontier(grid, epsilon, delta or 0.0), 1e-300), color=color, ls=linestyle, lw=0.9,
            label=label, zorder=1.5)


def draw_event(ax, result: dict, *, style: dict, confidence: float = 0.95, label: str | None = None) -> bool:
    """The audit's chosen event as a point with its interval box (a cross inside a rectangle).

    ``result`` holds ``tp``, ``fp`` (the event's counts on D and D') and
    ``n_test`` (held-out samples per side).  When the bound rests on the
    event's complement the point sits at the top right, where the mirror
    inequality of the frontier binds.  Returns False when a count is missing.
    """
    try:
        n = int(result["n_test"])
        tp, fp = int(result["tp"]), int(result["fp"])
        # The counts' own sizes: a Poisson-certified event is counted on slightly fewer than n_test.
        n0, n1 = int(result.get("fn", n - tp)) + tp, int(result.get("tn", n - fp)) + fp
    except (KeyError, TypeError, ValueError):
        return False
    p = roc_points([fp / max(n1, 1)], [tp / max(n0, 1)], n, confidence=confidence)
    x, y = float(p["x"][0]), float(p["y"][0])
    if x <= 0 or y <= 0:
        return False
    from matplotlib.patches import Rectangle

    x_lo = max(float(p["x_lo"][0]), x / 1e3)
    ax.add_patch(Rectangle((x_lo, float(p["y_lo"][0])), float(p["x_hi"][0]) - x_lo,
                           float(p["y_hi"][0] - p["y_lo"][0]), fill=False, ec=style["color"], lw=0.9, zorder=3))
    ax.errorbar([x], [y], xerr=[[x - x_lo], [float(p["x_hi"][0]) - x]],
                yerr=[[y - float(p["y_lo"][0])], [float(p["y_hi"][0]) - y]], color=style["color"], marker="+", ms=7,
                mew=1.2, lw=0.9, capsize=0, ls="none", zorder=3, label=label)
    return True


def draw_profile_claim(ax, epsilon, delta, *, color, delta_range: tuple[float, float], label: str | None = None) -> None:
    """The claim in the (delta, epsilon) plane, drawn as what it says.

    An (epsilon, delta) claim with delta > 0 is one point (a star): it says
    nothing about smaller deltas and, at larger ones, only what the point
    already implies.  A pure claim (delta = 0) bounds epsilon(delta) at every
    delta: a dashed horizontal line.
    """
    if epsilon is None:
        return
    if delta and delta > 0:
        ax.plot([delta], [epsilon], ls="none", marker="*", ms=8, mfc=color, mec="black", mew=0.5, label=label,
                zorder=4)
    else:
        ax.plot(list(delta_range), [epsilon] * 2, color=color, ls=(0, (5, 2)), lw=0.9, label=label, zorder=1.5)


def claim_curve_of(result: dict) -> dict | None:
    """The claimed curve a result carries (``claim_curve`` with at least two points), else None."""
    c = result.get("claim_curve") if isinstance(result, dict) else None
    if not isinstance(c, dict) or len(c.get("delta") or []) < 2:
        return None
    d = np.asarray(c["delta"], dtype=float)
    e = np.array([np.nan if v is None else v for v in c["claimed_epsilon"]], dtype=float)
    lb = np.array([np.nan if v is None else v for v in c.get("epsilon_lower_bound") or [np.nan] * len(d)], dtype=float)
    return {"delta": d, "claimed_epsilon": e, "epsilon_lower_bound": lb}


def curve_frontier(x, deltas, epsilons):
    """Largest TPR a mechanism meeting every (epsilon_j, delta_j) of a claimed curve allows at FPR ``x``.

    The claim is all of its points at once (Dong, Roth and Su 2022), so its
    frontier is the lowest of the points' frontiers.

    >>> float(curve_frontier(0.01, [0.0, 0.1], [1.0, 0.1])) <= float(dp_frontier(0.01, 1.0))
    True
    """
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(np.asarray(epsilons, dtype=float))
    fr = [dp_frontier(x, e, d) for d, e in zip(np.asarray(deltas)[ok], np.asarray(epsilons)[ok])]
    return np.min(fr, axis=0) if fr else np.ones_like(x)


def draw_curve_frontier(ax, curve: dict, *, x_min: float, label: str | None, color="0.35") -> None:
    """A claimed curve in the ROC plane: a point above it is a violation."""
    grid = np.geomspace(max(x_min, 1e-12), 1.0, 300)
    ax.plot(grid, np.maximum(curve_frontier(grid, curve["delta"], curve["claimed_epsilon"]), 1e-300), color=color,
            ls=(0, (5, 2)), lw=1.0, label=label, zorder=1.5)


def draw_curve_profile(ax, curve: dict, *, color, label: str | None, certified_label: str | None = None) -> None:
    """A claimed curve in the (delta, epsilon) plane (dashed) and, when given, the certified lower curve."""
    d, e = curve["delta"], curve["claimed_epsilon"]
    keep = (d > 0) & np.isfinite(e)
    ax.plot(d[keep], e[keep], color="0.35", ls=(0, (5, 2)), lw=1.0, label=label, zorder=1.5)
    lb = curve["epsilon_lower_bound"]
    ok = keep & np.isfinite(lb)
    if certified_label is not None and ok.any():
        ax.plot(d[ok], lb[ok], color=color, ls="-", lw=0.9, alpha=0.7, label=certified_label, zorder=2.5)

