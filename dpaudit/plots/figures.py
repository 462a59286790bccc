"""The figures, each drawn from saved results alone (:class:`dpaudit.results.Results`).

Every function takes the results and a column size and returns a
:class:`~matplotlib.figure.Figure`, or ``None`` when the results hold nothing
it can draw.  Uncertainty is always drawn: intervals across trials, pooled
confidence intervals, or Clopper-Pearson intervals on both rates.  A
mechanism keeps its colour, marker and line style in every figure of a run
(its position in the config's ``mechanisms:`` list), legends sit outside the
axes, and a figure that shows one sweep point says which.
"""


from __future__ import annotations

import math
import numbers

import numpy as np

from .common import (WIDTH_HEIGHT, add_title, asymmetric_error, conf_text, first_key, fmt, groups_of, notes_text,
                     point_params, sweep_paths)
from .elements import EPS
from .epsilon_chart import plot_epsilon_vs_claimed
from .held_out import plot_privacy_profile, plot_roc
from .style import columns_that_fit, new_figure, series_style
from .trajectory import plot_trajectory

__all__ = [
    "plot_epsilon_vs_claimed",
    "plot_roc",
    "plot_privacy_profile",
    "plot_reconstruction",
    "plot_tracing",
    "plot_rr_tradeoff",
    "plot_trajectory",
]


ACCURACY_NAMES = ("accuracy", "fraction_recovered", "bit_accuracy", "recovered_fraction", "fraction_correct")
QUERY_NAMES = ("k", "queries", "n_queries", "m")
NOISE_NAMES = ("noise_scale", "sigma", "noise", "scale")
# What a query mechanism's noise parameter is, by the mechanism's name.
NOISE_MEANING = {
    "laplace": ("Laplace noise of scale b on each answer", "b"),
    "gaussian": ("Gaussian noise of s.d. \u03c3 on each answer", "\u03c3"),
    "rounded_gaussian": ("rounded Gaussian noise (s.d. \u03c3) on each answer", "\u03c3"),
    "bounded": ("uniform noise on [-E, E] on each answer", "E"),
}


def _metric_points(results, metric_names):
    pts = []
    for g in groups_of(results):
        name = first_key(g.get("metrics", {}), metric_names)
        if name is None:
            continue
        pts.append((g, point_params(results, g), g["metrics"][name], name))
    return pts


def _errbar_series(ax, rows, i, label, color=None):
    rows = sorted(rows, key=lambda r: r[0])
    st = series_style(i)
    if color is not None:
        st["color"] = color
    x = np.array([r[0] for r in rows], dtype=float)
    m = np.array([r[1]["mean"] for r in rows], dtype=float)
    lo = np.array([r[1]["ci_low"] for r in rows], dtype=float)
    hi = np.array([r[1]["ci_high"] for r in rows], dtype=float)
    ax.errorbar(x, m, yerr=asymmetric_error(m - lo, hi - m), color=st["color"], marker=st["marker"],
                ls=st["linestyle"], capsize=2, ms=4.5 if st["marker"] == "*" else 3.2, lw=1.0, label=label)


def _shade(family: str, i: int, n: int) -> str:
    """The i-th of n shades of a matplotlib sequential colour map, light (but visible on white) to dark."""
    import matplotlib
    from matplotlib.colors import to_hex

    return to_hex(matplotlib.colormaps[family](0.45 + 0.5 * (i / max(n - 1, 1))))


def _legend_above(ax, *, ncol: int, title: str | None = None):
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    fits = columns_that_fit(labels, ax.get_position().width * ax.figure.get_figwidth())
    leg = ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0.0, 1.02, 1.0, 0.2), mode="expand",
                    ncol=max(1, min(ncol, fits, len(handles))), borderaxespad=0.0, title=title, title_fontsize=6,
                    handlelength=2.2, columnspacing=0.8)
    leg.get_title().set_color("0.3")
    return leg


def plot_reconstruction(results, *, size="one-column"):
    """Reconstruction accuracy against noise / sqrt(n) and against the number of queries.

    Points: mean over trials; bars: t-interval for the mean at the estimator's
    confidence.  The noise parameter's meaning (Laplace scale, Gaussian s.d.)
    and n are stated on the figure.
    """
    pts = _metric_points(results, ACCURACY_NAMES)
    if not pts:
        return None
    params0 = pts[0][1]
    qn, nn = first_key(params0, QUERY_NAMES), first_key(params0, NOISE_NAMES)
    if nn is None or "n" not in params0:
        return None
    noise_kind = str(params0.get("noise", ""))
    meaning, sym = NOISE_MEANING.get(noise_kind, (f"noise parameter {nn} ({noise_kind or 'unnamed'})", nn))
    ns = sorted({int(p["n"]) for _, p, _, _ in pts})
    n_text = "n = " + "/".join(f"{v:,}" for v in ns)
    fig, axes = new_figure(size, panels=2, height=5.0 if size == "one-column" else 3.2)
    ax_noise, ax_q = axes
    by_q: dict = {}
    by_noise: dict = {}
    for g, p, m, _ in pts:
        scale = float(p[nn]) / math.sqrt(p["n"])
        by_q.setdefault(p.get(qn) if qn else None, []).append((scale, m))
        by_noise.setdefault((round(scale, 6), float(p[nn])), []).append((float(p[qn]) if qn else float(p["n"]), m))
    # Each panel's series are an ordered quantity, in a colour family of its own (queries blue, noise orange),
    # so that no colour means one thing in one panel and another in the other.
    for i, (q, rows) in enumerate(sorted(by_q.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))):
        _errbar_series(ax_noise, rows, i, f"{qn} = {q:,}" if qn else None, color=_shade("Blues", i, len(by_q)))
    for i, ((s, raw), rows) in enumerate(sorted(by_noise.items())):
        _errbar_series(ax_q, rows, len(by_q) + i, f"{sym} = {raw:g}", color=_shade("Oranges", i, len(by_noise)))
    metric = pts[0][3].replace("_", " ")
    scales = [s for s, _ in by_noise if s > 0]
    if scales and max(scales) / min(scales) >= 10:  # a decade or more: evenly spaced on a log axis
        ax_noise.set_xscale("log")
        ax_noise.set_xticks(sorted(scales), [f"{v:.2g}" for v in sorted(scales)])
        ax_noise.minorticks_off()
    ax_noise.set_xlabel(f"noise {sym} / \u221an" + (" (log scale)" if ax_noise.get_xscale() == "log" else ""))
    ax_q.set_xlabel(f"number of queries {qn}" if qn else "n")
    ntr = max(g["n_trials"] for g, _, _, _ in pts)
    conf = (results.summary or {}).get("confidence")
    for ax in axes:
        ax.set_ylabel(metric)
        ax.axhline(0.5, color="0.5", ls=(0, (1, 1.5)), lw=0.8)
        ax.set_ylim(0.4, 1.02)
    games = params0.get("trials")
    per_trial = f" of {games} databases each" if isinstance(games, numbers.Integral) and games > 1 else ""
    fig.suptitle(notes_text([f"{n_text} secret bits", meaning,
                         f"mean over {ntr} trials{per_trial}; bars: {conf_text(conf)} t-interval; dotted: guessing"],
                        size),
                 fontsize=6.5, color="0.2")
    _legend_above(ax_noise, ncol=5, title=f"queries {qn}" if qn else None)
    _legend_above(ax_q, ncol=5, title=f"noise {sym} ({sym} / \u221an = "
                                      + ", ".join(f"{s:.2g}" for s, _ in sorted(by_noise)) + ")")
    add_title(fig, results)
    return fig



TPR_NAMES = ("tpr", "tpr_at_fpr", "true_positive_rate", "power")
TRACING_NOISE_NAMES = ("noise_scale", "alpha", "sigma", "noise")
TRACING_NOISE_MEANING = {
    "gaussian": "s.d. of the Gaussian noise added to each released mean",
    "laplace": "scale of the Laplace noise added to each released mean",
    "bounded": "bound of the uniform noise added to each released mean",
}
GREEK = {"alpha": "\u03b1", "sigma": "\u03c3"}


def plot_tracing(results, *, size="one-column"):
    """Tracing TPR at a fixed FPR against the dimension d, one curve per noise level.

    Band: t-interval for the mean over trials.  The number of people n and the
    meaning of the noise level are stated on the figure.
    """
    pts = _metric_points(results, TPR_NAMES)
    if not pts or "d" not in pts[0][1]:
        return None
    swept = [k.split(".")[-1] for k in sweep_paths(results)]
    noise_key = next((k for k in swept if k in TRACING_NOISE_NAMES), None) or first_key(pts[0][1], TRACING_NOISE_NAMES)
    params0 = pts[0][1]
    sym = GREEK.get(noise_key, noise_key)
    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.6)
    series: dict = {}
    for g, p, m, _ in pts:
        series.setdefault(p.get(noise_key), []).append((float(p["d"]), m))
    for i, (lvl, rows) in enumerate(sorted(series.items(), key=lambda kv: (str(type(kv[0])), kv[0]))):
        st = series_style(i)
        rows = sorted(rows, key=lambda r: r[0])
        x = np.array([r[0] for r in rows])
        m = np.array([r[1]["mean"] for r in rows])
        ax.fill_between(x, [r[1]["ci_low"] for r in rows], [r[1]["ci_high"] for r in rows], color=st["color"],
                        alpha=0.2, lw=0)
        ax.plot(x, m, color=st["color"], marker=st["marker"], ls=st["linestyle"], ms=3.2, lw=1.1,
                label=f"{sym} = {fmt(lvl)}")
    fpr = params0.get("fpr")
    if fpr is not None:
        ax.axhline(fpr, color="0.5", ls=(0, (1, 1.5)), lw=0.8, label="guessing")
    ax.set_xscale("log")
    ax.set_xlabel("number of released attribute means d")
    ax.set_ylabel(f"TPR at FPR {fpr:g}" if fpr is not None else "TPR")
    ax.set_ylim(-0.02, 1.02)
    noise = str(params0.get("noise", ""))
    meaning = TRACING_NOISE_MEANING.get(noise, f"noise level ({noise})")
    ns = sorted({int(p["n"]) for _, p, _, _ in pts if "n" in p})
    ntr = max(g["n_trials"] for g, _, _, _ in pts)
    conf = (results.summary or {}).get("confidence")
    fig.suptitle(notes_text([(f"n = {'/'.join(f'{v:,}' for v in ns)} people in the dataset" if ns else ""),
                         f"{sym}: {meaning}",
                         f"mean over {ntr} trials" + (f" of {int(params0['n_targets']):,} member and "
                                                      f"{int(params0['n_targets']):,} non-member games each"
                                                      if isinstance(params0.get("n_targets"), numbers.Integral) else "")
                         + f"; band: {conf_text(conf)} t-interval"], size),
                 fontsize=6.5, color="0.2")
    _legend_above(ax, ncol=5)
    add_title(fig, results)
    return fig


# 6 ----------------------------------------------------------------------------------------------
def plot_rr_tradeoff(results, *, size="one-column"):
    """Randomized response: RMSE of the debiased estimate against epsilon, one curve per n.

    Points: RMSE over every simulated survey with its 95% interval; dashed:
    the exact standard deviation of the debiased estimator (it is unbiased),
    which scales as 1 / (p sqrt(n)).
    """
    groups = [g for g in groups_of(results) if "rmse" in g]
    if not groups:
        return None
    from ..mechanisms.rr_survey import debiased_std, p_of_epsilon

    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.35)
    by_n: dict = {}
    for g in groups:
        by_n.setdefault(int(g["metrics"]["n"]["mean"]), []).append(g)
    for i, (n, gs) in enumerate(sorted(by_n.items())):
        st = series_style(i)
        gs = sorted(gs, key=lambda g: g["metrics"]["epsilon"]["mean"])
        eps = np.array([g["metrics"]["epsilon"]["mean"] for g in gs])
        r = np.array([g["rmse"] for g in gs])
        lo = np.array([g["rmse_low"] for g in gs])
        hi = np.array([g["rmse_high"] for g in gs])
        ax.errorbar(eps, r, yerr=asymmetric_error(r - lo, hi - r), ls="none", color=st["color"], marker=st["marker"],
                    capsize=2, ms=3.2, label=f"n = {n:,}")
        # The exact curve is a closed form of saved parameters (no simulation is re-run).
        p = point_params(results, gs[0])
        grid = np.geomspace(eps.min(), eps.max(), 60)
        coin = p.get("second_coin", "fair")
        frac = gs[0]["metrics"]["true_fraction"]["mean"]
        ax.plot(grid, [debiased_std(n, p_of_epsilon(e, coin), frac, coin) for e in grid], color=st["color"],
                ls=(0, (4, 1.5)), lw=0.9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"{EPS} of one answer")
    ax.set_ylabel("RMSE of debiased estimate")
    surveys = groups[0].get("surveys")
    frac = groups[0]["metrics"]["true_fraction"]["mean"]
    title = f"true fraction {frac:g}" + (f"; {surveys:,} surveys per point" if isinstance(surveys, int) else "")
    _legend_above(ax, ncol=4, title=notes_text([title, "bars: 95% interval; dashed: exact s.d. ~ 1/(p\u221an)"], size))
    add_title(fig, results)
    return fig
