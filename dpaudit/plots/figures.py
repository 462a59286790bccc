"""The figures, each drawn from saved results alone (:class:`dpaudit.results.Results`).

Every function takes the results and a column size and returns a
:class:`~matplotlib.figure.Figure`, or ``None`` when the results hold nothing
it can draw.  Uncertainty is always drawn: intervals across trials, pooled
confidence intervals, or pointwise Clopper-Pearson bands.
"""

from __future__ import annotations

import math

import numpy as np

from .style import MARKERS, colour, new_figure

__all__ = [
    "plot_epsilon_vs_claimed",
    "plot_roc",
    "plot_privacy_profile",
    "plot_reconstruction",
    "plot_tracing",
    "plot_rr_tradeoff",
]

EPS = "\u03b5"
DELTA = "\u03b4"


def _groups(results) -> list:
    return [g for g in (results.summary or {}).get("groups", []) if g.get("n_trials")]


def _point_params(results, group) -> dict:
    """The attack parameters at a group's sweep point (config values overridden by the sweep)."""
    params = dict(results.config.get("attack", {}).get("params", {}))
    for path, value in group["sweep"].items():
        if path.startswith("attack.params."):
            params[path[len("attack.params."):]] = value
    return params


def _first(d: dict, names) -> str | None:
    for n in names:
        if n in d:
            return n
    return None


def _title(ax, results) -> None:
    title = (results.config.get("plot") or {}).get("title")
    if title:
        ax.set_title(title)


def _series_label(group, sweep_keys_shown) -> str:
    parts = [group["mechanism"]] if group.get("mechanism") else []
    # a mechanism's own swept parameters show up through its claim; name the others
    parts += [f"{k.split('.')[-1]}={group['sweep'][k]}" for k in sweep_keys_shown if not k.startswith("mechanisms.")]
    return ", ".join(parts) or "attack"


def _one_point(results, groups):
    """Curves of one sweep point (``plot.point``, default the last), so a figure stays readable."""
    points = sorted({g["point"] for g in groups})
    if len(points) <= 1:
        return groups, None
    wanted = (results.config.get("plot") or {}).get("point")
    point = points[-1] if wanted is None else min(points, key=lambda p: abs(p - wanted))
    return [g for g in groups if g["point"] == point], point


# 1 ----------------------------------------------------------------------------------------------
def plot_epsilon_vs_claimed(results, *, size="one-column"):
    """Epsilon lower bound (median, range over trials) against the claimed epsilon.

    The diagonal is where a tight audit of a correct mechanism lands; above it
    is a violation.  The dotted line is the ceiling: the largest bound the
    run's sample size could certify.
    """
    groups = [g for g in _groups(results) if "epsilon_lower_bound_median" in g]
    if not groups:
        return None
    fig, (ax,) = new_figure(size)
    labels = list(dict.fromkeys(g["mechanism"] for g in groups))
    xs_all, ys_all = [], []
    for i, label in enumerate(labels):
        gs = sorted((g for g in groups if g["mechanism"] == label), key=lambda g: g["claimed_epsilon"])
        x = np.array([g["claimed_epsilon"] for g in gs], dtype=float)
        y = np.array([g["epsilon_lower_bound_median"] for g in gs], dtype=float)
        lo = np.array([g["epsilon_lower_bound_min"] for g in gs], dtype=float)
        hi = np.array([g["epsilon_lower_bound_max"] for g in gs], dtype=float)
        broken = any(g.get("broken") for g in gs)
        ax.errorbar(x, y, yerr=[y - lo, hi - y], color=colour(i), marker=MARKERS[i % len(MARKERS)],
                    capsize=2, lw=1.0, ms=3.5, label=str(label or "bound") + (" (broken)" if broken else ""))
        true = [(g["claimed_epsilon"], g["true_epsilon"]) for g in gs
                if g.get("true_epsilon") is not None and math.isfinite(g["true_epsilon"])
                and abs(g["true_epsilon"] - g["claimed_epsilon"]) > 1e-9]
        if true:
            tx, ty = zip(*true)
            ax.plot(tx, ty, ls="none", marker=MARKERS[i % len(MARKERS)], mfc="none", color=colour(i), ms=5, alpha=0.7)
        xs_all += list(x)
        ys_all += list(hi)
    lo_x, hi_x = min(xs_all), max(xs_all)
    pad_hi = max(hi_x, max(ys_all)) * 1.15
    diag = np.array([0.0, pad_hi])
    ax.plot(diag, diag, color="0.45", ls="--", lw=0.8, label=f"lower bound = claimed {EPS}")
    ceilings = sorted({round(g["ceiling"], 12) for g in groups if g.get("ceiling") is not None})
    data_top = max(max(ys_all), pad_hi)
    if ceilings and min(ceilings) > 2 * data_top:
        # Far above the data: say so rather than squash the points.
        ax.text(0.99, 0.97, f"ceiling {min(ceilings):.3g} (off scale)", transform=ax.transAxes, ha="right", va="top",
                fontsize=6, color="0.2")
        ceilings = []
    if ceilings:
        samples = groups[0].get("samples")
        txt = f"ceiling (n={samples:,})" if isinstance(samples, int) else "ceiling"
        if len(ceilings) == 1:
            ax.axhline(ceilings[0], color="0.2", ls=":", lw=0.9, label=txt)
        else:
            cx = sorted({(g["claimed_epsilon"], g["ceiling"]) for g in groups if g.get("ceiling") is not None})
            ax.plot(*zip(*cx), color="0.2", ls=":", lw=0.9, label=txt)
    ax.set_xlim(0, pad_hi)
    top = max(max(ys_all), *(ceilings or [0.0])) * 1.1
    ax.set_ylim(0, max(top, pad_hi))
    ax.set_xlabel(f"claimed {EPS}")
    conf = groups[0].get("confidence")
    ax.set_ylabel(f"{EPS} lower bound ({conf:.0%} conf.)" if conf else f"{EPS} lower bound")
    ax.legend(loc="upper left", ncol=1)
    ntr = max(g["n_trials"] for g in groups)
    ax.text(0.99, 0.01, f"bars: range over {ntr} trial{'s' * (ntr > 1)}; open: true {EPS}", transform=ax.transAxes,
            ha="right", va="bottom", fontsize=6, color="0.35")
    _title(ax, results)
    return fig


# 2 ----------------------------------------------------------------------------------------------
def _cp_band(p, n, confidence=0.95):
    from scipy.stats import beta

    k = np.round(np.asarray(p) * n)
    a = (1 - confidence) / 2
    lo = np.where(k > 0, beta.ppf(a, k, n - k + 1), 0.0)
    hi = np.where(k < n, beta.ppf(1 - a, k + 1, n - k), 1.0)
    return lo, hi


def plot_roc(results, *, size="one-column"):
    """The attack's ROC on the held-out split, log-log, with the claimed-DP frontier.

    (eps, delta)-DP forces TPR <= e^eps FPR + delta: a curve above its dashed
    frontier is a violation.  The band is a pointwise 95% Clopper-Pearson
    interval on the TPR (first trial of each group).
    """
    curves = []
    chosen, _ = _one_point(results, _groups(results))
    for g in chosen:
        ts = results.trials_at(g["point"], g["mechanism"])
        if ts and isinstance(ts[0]["result"].get("roc"), dict):
            curves.append((g, ts[0]["result"]))
    if not curves:
        return None
    sweep_keys = [k for k in (results.summary or {}).get("sweep", {}).get("parameters", [])
                  if len({str(g["sweep"].get(k)) for g, _ in curves}) > 1]
    curves = curves[:8]
    fig, (ax,) = new_figure(size)
    floor = 1.0
    for i, (g, r) in enumerate(curves):
        fpr = np.asarray(r["roc"]["fpr"], dtype=float)
        tpr = np.asarray(r["roc"]["tpr"], dtype=float)
        keep = (fpr > 0) & (tpr > 0)
        if not keep.any():
            continue
        order = np.argsort(fpr[keep])
        f, t = fpr[keep][order], tpr[keep][order]
        n = r["roc"].get("n_negative") or r["roc"].get("n") or max(1, int(r.get("samples") or 2) // 2)
        lo, hi = _cp_band(t, int(n))
        ax.fill_between(f, np.maximum(lo, 1e-12), hi, color=colour(i), alpha=0.2, lw=0)
        ax.plot(f, t, color=colour(i), label=_series_label(g, sweep_keys))
        floor = min(floor, f.min())
        eps, delta = r.get("claimed_epsilon"), r.get("claimed_delta") or 0.0
        if eps is not None:
            grid = np.logspace(math.log10(max(f.min(), 1e-9)), 0, 100)
            ax.plot(grid, np.minimum(1.0, math.exp(eps) * grid + delta), color=colour(i), ls="--", lw=0.8)
    ax.plot([floor, 1], [floor, 1], color="0.5", lw=0.7, ls=":", label="chance")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.legend(loc="lower right")
    ax.text(0.02, 0.98, f"dashed: claimed {EPS} frontier", transform=ax.transAxes, va="top", fontsize=6, color="0.35")
    _title(ax, results)
    return fig


# 3 ----------------------------------------------------------------------------------------------
def plot_privacy_profile(results, *, size="one-column"):
    """Empirical lower bounds on epsilon(delta) against the claimed curve.

    Line: median over trials; band: range over trials.  The claimed curve is
    the claimed epsilon for delta >= claimed delta (dashed); the mechanism's
    true profile is dotted when known (e.g. the Gaussian's analytic curve).
    """
    groups = []
    chosen, _ = _one_point(results, _groups(results))
    for g in chosen:
        ts = results.trials_at(g["point"], g["mechanism"])
        prof = [t["result"].get("privacy_profile") for t in ts]
        if prof and all(isinstance(p, dict) and p.get("delta") for p in prof):
            groups.append((g, ts))
    if not groups:
        return None
    sweep_keys = [k for k in (results.summary or {}).get("sweep", {}).get("parameters", [])
                  if len({str(g["sweep"].get(k)) for g, _ in groups}) > 1]
    fig, (ax,) = new_figure(size)
    for i, (g, ts) in enumerate(groups[:8]):
        delta = np.asarray(ts[0]["result"]["privacy_profile"]["delta"], dtype=float)
        eps = np.array([t["result"]["privacy_profile"]["epsilon"] for t in ts], dtype=float)
        keep = delta > 0
        ax.fill_between(delta[keep], eps.min(0)[keep], eps.max(0)[keep], color=colour(i), alpha=0.25, lw=0)
        ax.plot(delta[keep], np.median(eps, 0)[keep], color=colour(i), marker=MARKERS[i % len(MARKERS)], ms=2.5,
                label=_series_label(g, sweep_keys))
        r = ts[0]["result"]
        if r.get("claimed_epsilon") is not None:
            d0 = max(r.get("claimed_delta") or 0.0, delta[keep].min())
            ax.plot([d0, delta[keep].max()], [r["claimed_epsilon"]] * 2, color=colour(i), ls="--", lw=0.9)
        true = r.get("true_profile")
        if isinstance(true, dict) and true.get("delta"):
            td = np.asarray(true["delta"], dtype=float)
            te = np.array([np.nan if e is None else e for e in true["epsilon"]], dtype=float)
            ok = (td > 0) & np.isfinite(te)
            if ok.any():
                ax.plot(td[ok], te[ok], color=colour(i), ls=":", lw=0.9)
    ax.set_xscale("log")
    ax.set_xlabel(f"{DELTA}")
    ax.set_ylabel(f"{EPS}({DELTA})")
    # Headroom above the curves for a two-column legend, so it never covers data.
    ax.set_ylim(0, ax.get_ylim()[1] * 1.4)
    ax.legend(loc="upper center", ncol=2, frameon=False)
    ax.text(0.02, 0.02, "solid: lower bound (band: range over trials)\ndashed: claimed; dotted: true",
            transform=ax.transAxes, fontsize=6, color="0.35")
    _title(ax, results)
    return fig


# 4 ----------------------------------------------------------------------------------------------
ACCURACY_NAMES = ("accuracy", "fraction_recovered", "bit_accuracy", "recovered_fraction", "fraction_correct")
QUERY_NAMES = ("k", "queries", "n_queries", "m")
NOISE_NAMES = ("noise_scale", "sigma", "noise", "scale")


def _metric_points(results, metric_names):
    pts = []
    for g in _groups(results):
        name = _first(g.get("metrics", {}), metric_names)
        if name is None:
            continue
        m = g["metrics"][name]
        pts.append((g, _point_params(results, g), m, name))
    return pts


def _errbar_series(ax, rows, i, label):
    rows = sorted(rows, key=lambda r: r[0])
    x = np.array([r[0] for r in rows], dtype=float)
    m = np.array([r[1]["mean"] for r in rows], dtype=float)
    lo = np.array([r[1]["ci_low"] for r in rows], dtype=float)
    hi = np.array([r[1]["ci_high"] for r in rows], dtype=float)
    ax.errorbar(x, m, yerr=[m - lo, hi - m], color=colour(i), marker=MARKERS[i % len(MARKERS)], capsize=2, ms=3,
                label=label)


def plot_reconstruction(results, *, size="one-column"):
    """Reconstruction accuracy against noise / sqrt(n) and against the number of queries.

    Points: mean over trials; bars: t-interval for the mean at the estimator's confidence.
    """
    pts = _metric_points(results, ACCURACY_NAMES)
    if not pts:
        return None
    params0 = pts[0][1]
    qn, nn = _first(params0, QUERY_NAMES), _first(params0, NOISE_NAMES)
    if nn is None or "n" not in params0:
        return None
    fig, axes = new_figure(size, panels=2)
    ax_noise, ax_q = axes
    by_q: dict = {}
    by_noise: dict = {}
    for g, p, m, _ in pts:
        scale = float(p[nn]) / math.sqrt(p["n"])
        by_q.setdefault(p.get(qn) if qn else None, []).append((scale, m))
        by_noise.setdefault(round(scale, 6), []).append((float(p[qn]) if qn else float(p["n"]), m))
    for i, (q, rows) in enumerate(sorted(by_q.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))):
        _errbar_series(ax_noise, rows, i, f"{qn}={q}" if qn else None)
    for i, (s, rows) in enumerate(sorted(by_noise.items())):
        _errbar_series(ax_q, rows, i, f"noise/√n={s:.3g}")
    metric = pts[0][3].replace("_", " ")
    ax_noise.set_xlabel("noise scale / √n")
    ax_q.set_xlabel(f"number of queries ({qn})" if qn else "n")
    for ax in axes:
        ax.set_ylabel(metric)
        ax.axhline(0.5, color="0.5", ls=":", lw=0.8)
        ax.set_ylim(0.4, 1.02)
        ax.legend(loc="best")
    ax_noise.text(0.99, 0.02, "dotted: guessing", transform=ax_noise.transAxes, ha="right", fontsize=6, color="0.35")
    _title(ax_noise, results)
    return fig


# 5 ----------------------------------------------------------------------------------------------
TPR_NAMES = ("tpr", "tpr_at_fpr", "true_positive_rate", "power")
TRACING_NOISE_NAMES = ("noise_scale", "alpha", "sigma", "noise")


def plot_tracing(results, *, size="one-column"):
    """Tracing TPR at a fixed FPR against the dimension d, one curve per noise level.

    Band: t-interval for the mean over trials.
    """
    pts = _metric_points(results, TPR_NAMES)
    if not pts or "d" not in pts[0][1]:
        return None
    swept = [k.split(".")[-1] for k in (results.summary or {}).get("sweep", {}).get("parameters", [])]
    noise_key = next((k for k in swept if k in TRACING_NOISE_NAMES), None) or _first(pts[0][1], TRACING_NOISE_NAMES)
    fig, (ax,) = new_figure(size)
    series: dict = {}
    for g, p, m, _ in pts:
        series.setdefault(p.get(noise_key), []).append((float(p["d"]), m))
    for i, (lvl, rows) in enumerate(sorted(series.items(), key=lambda kv: str(kv[0]))):
        rows = sorted(rows, key=lambda r: r[0])
        x = np.array([r[0] for r in rows])
        m = np.array([r[1]["mean"] for r in rows])
        ax.fill_between(x, [r[1]["ci_low"] for r in rows], [r[1]["ci_high"] for r in rows], color=colour(i), alpha=0.2, lw=0)
        ax.plot(x, m, color=colour(i), marker=MARKERS[i % len(MARKERS)], ms=3, label=f"{noise_key}={lvl}")
    fpr = pts[0][1].get("fpr")
    if fpr is not None:
        ax.axhline(fpr, color="0.5", ls=":", lw=0.8, label=f"FPR = {fpr:g}")
    ax.set_xscale("log")
    ax.set_xlabel("dimension d")
    ax.set_ylabel(f"TPR at FPR {fpr:g}" if fpr is not None else "TPR")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="best")
    _title(ax, results)
    return fig


# 6 ----------------------------------------------------------------------------------------------
def plot_rr_tradeoff(results, *, size="one-column"):
    """Randomized response: RMSE of the debiased estimate against epsilon, one curve per n.

    Points: RMSE over every simulated survey with its 95% interval; dashed:
    the exact standard deviation of the debiased estimator (it is unbiased),
    which scales as 1 / (p sqrt(n)).
    """
    groups = [g for g in _groups(results) if "rmse" in g]
    if not groups:
        return None
    fig, (ax,) = new_figure(size)
    by_n: dict = {}
    for g in groups:
        by_n.setdefault(int(g["metrics"]["n"]["mean"]), []).append(g)
    from ..mechanisms.rr_survey import debiased_std, p_of_epsilon

    for i, (n, gs) in enumerate(sorted(by_n.items())):
        gs = sorted(gs, key=lambda g: g["metrics"]["epsilon"]["mean"])
        eps = np.array([g["metrics"]["epsilon"]["mean"] for g in gs])
        r = np.array([g["rmse"] for g in gs])
        lo = np.array([g["rmse_low"] for g in gs])
        hi = np.array([g["rmse_high"] for g in gs])
        ax.errorbar(eps, r, yerr=[r - lo, hi - r], ls="none", color=colour(i), marker=MARKERS[i % len(MARKERS)],
                    capsize=2, ms=3, label=f"n={n:,}")
        # The exact curve is a closed form of saved parameters (no simulation is re-run).
        p = _point_params(results, gs[0])
        grid = np.geomspace(eps.min(), eps.max(), 60)
        coin = p.get("second_coin", "fair")
        frac = gs[0]["metrics"]["true_fraction"]["mean"]
        ax.plot(grid, [debiased_std(n, p_of_epsilon(e, coin), frac, coin) for e in grid], color=colour(i), ls="--", lw=0.9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"{EPS} of one answer")
    ax.set_ylabel("RMSE of debiased estimate")
    ax.legend(loc="lower left")
    ax.text(0.99, 0.98, "dashed: exact sd  ~ 1/(p√n)", transform=ax.transAxes, ha="right", va="top", fontsize=6,
            color="0.35")
    _title(ax, results)
    return fig
