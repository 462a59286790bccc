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

from .elements import (DELTA, EPS, claim_curve_of, draw_curve_frontier, draw_curve_profile, draw_event, draw_frontier,
                       draw_profile_claim, draw_roc, roc_points)
from .points import one_point
from .style import columns_that_fit, legend_below, new_figure, series_style, short_spec

__all__ = [
    "plot_epsilon_vs_claimed",
    "plot_roc",
    "plot_privacy_profile",
    "plot_reconstruction",
    "plot_tracing",
    "plot_rr_tradeoff",
    "plot_trajectory",
]

# Height of the axes area (inches) before legends and notes are added under or over it.
WIDTH_HEIGHT = {"one-column": 2.6, "two-column": 3.2}


# Shared helpers -----------------------------------------------------------------------------------
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


def _title(fig, results) -> None:
    title = (results.config.get("plot") or {}).get("title")
    if title:
        existing = fig.get_suptitle()
        fig.suptitle(f"{title}\n{existing}" if existing else title, fontsize=8)


def _style_index(results) -> dict:
    """Mechanism label -> its style index: its place in the config, the same in every figure."""
    labels = [m.get("label") for m in results.config.get("mechanisms") or [] if isinstance(m, dict)]
    return {label: i for i, label in enumerate(labels)}


def _style_of(results, label, fallback: int) -> dict:
    return series_style(_style_index(results).get(label, fallback))


def _fmt(v) -> str:
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return f"{v:.4g}"
    return str(v)


def _sweep_paths(results) -> list:
    return list((results.summary or {}).get("sweep", {}).get("parameters", []))


def _one_point(results, groups, point=None):
    """Groups of one sweep point and a title saying which (see :func:`dpaudit.plots.points.one_point`)."""
    return one_point(results, groups, point)


def _point_title(ax, point_note) -> None:
    """Say above the axes which sweep point a one-point figure shows."""
    if point_note:
        import textwrap

        width = int(75 * ax.get_position().width * ax.figure.get_figwidth() / 3.3)
        ax.set_title(textwrap.fill(point_note, width), fontsize=6.5, loc="left")


def _series_label(group, shown_paths, fallback: str = "attack") -> str:
    parts = [group["mechanism"]] if group.get("mechanism") else []
    # a mechanism's own swept parameters show up through its claim; name the others
    parts += [f"{k.split('.')[-1]}={_fmt(group['sweep'][k])}" for k in shown_paths
              if not k.startswith("mechanisms.") and k in group["sweep"]]
    return ", ".join(parts) or fallback


def _differing_paths(results, groups) -> list:
    return [k for k in _sweep_paths(results) if len({str(g["sweep"].get(k)) for g in groups}) > 1]


def _finite(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _notes(notes, size) -> str:
    """Notes for a legend title, one per line, wrapped to the figure's width."""
    import textwrap

    width = 62 if size == "one-column" else 130
    return "\n".join(textwrap.fill(n, width) for n in notes if n)


def _finish(fig, results, notes, size, *, ncol):
    """The figures' common ending: the notes as the title of a legend below the axes (in grey), the title."""
    legend = legend_below(fig, ncol=ncol, title=_notes(notes, size), title_fontsize=6)
    legend.get_title().set_color("0.3")
    _title(fig, results)
    return fig


def _samples_text(rows, key="samples", what="samples") -> str:
    """``"200,000 samples per side"`` (or a range), or "" when the rows do not say."""
    ns = sorted({int(r[key]) for r in rows if isinstance(r.get(key), numbers.Integral) and r[key] > 0})
    if not ns:
        return ""
    text = f"{ns[0]:,}" if len(ns) == 1 else f"{ns[0]:,} to {ns[-1]:,}"
    return f"{text} {what} per side"


def _conf_text(conf) -> str:
    return f"{conf:.0%}" if _finite(conf) else "stated"


# 1 ----------------------------------------------------------------------------------------------
_TRUE_KEYS = ("true_eps", "true_epsilon")


def _reference_values(results) -> dict:
    """label -> (numeric published values by key, true epsilon stated in the reference or None).

    A reference's numeric values (other than the true epsilon) are published
    bounds to set beside ours, e.g. ``reference: {dp_sniper: 0.094}``; a true
    epsilon may be given as a number, ``inf`` or ``"<= 0.5"`` (an upper bound).
    """
    out = {}
    for m in results.config.get("mechanisms") or []:
        ref = m.get("reference") if isinstance(m, dict) else None
        if not isinstance(ref, dict):
            continue
        published, true = {}, None
        for key, value in ref.items():
            if str(key).lower() in _TRUE_KEYS:
                true = _parse_true(value)
            elif isinstance(value, numbers.Real) and not isinstance(value, bool) and not math.isnan(value):
                published[str(key)] = float(value)
        out[m.get("label")] = (published, true)
    return out


def _parse_true(value):
    """``(epsilon, is_upper_bound)`` from ``0.1``, ``inf`` or ``"<= 0.5"``; None when unreadable."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value), False
    text = str(value).strip().replace("\u2264", "<=").replace(" ", "")
    upper = text.startswith("<=") or text.startswith("<")
    try:
        return float(text.lstrip("<=")), upper
    except ValueError:
        return None


def _published_label(key: str) -> str:
    if "sniper" in key.lower():
        return "DP-Sniper (published)"
    return "published bound" if key.lower() == "published" else f"{key.replace('_', ' ')} (reference)"


_PUBLISHED_STYLES = [("#009E73", "X"), ("#CC79A7", "P"), ("#E69F00", "*")]


def plot_epsilon_vs_claimed(results, *, size="one-column"):
    """The certified epsilon lower bounds against the claims.

    With one claimed value (a table of mechanisms, as in DP-Sniper), one row
    per mechanism: the bound (range over trials when there are several), the
    true epsilon where known, published bounds from the config's
    ``reference``, the claim and the ceiling.  With several claimed values, the
    bound against the claimed epsilon, one series per mechanism, beside the
    diagonal (a tight audit of a correct mechanism) and the ceiling.
    """
    groups = [g for g in _groups(results) if "epsilon_lower_bound_median" in g]
    if not groups:
        return None
    if len({round(float(g["claimed_epsilon"]), 12) for g in groups if _finite(g.get("claimed_epsilon"))}) == 1:
        return _per_mechanism_chart(results, groups, size)
    return _bound_vs_claim_chart(results, groups, size)


def _per_mechanism_chart(results, groups, size):
    multi_point = len({g["point"] for g in groups}) > 1
    paths = _differing_paths(results, groups)
    rows = groups  # config order: the summary lists groups point by point, mechanisms in config order
    refs = _reference_values(results)
    n = len(rows)
    n_published = len({k for published, _ in refs.values() for k in published})
    legend_lines = 6 + n_published if size == "one-column" else 3 + math.ceil(n_published / 2)
    fig, (ax,) = new_figure(size, height=0.75 + 0.17 * n + 0.115 * (legend_lines + 2))
    claim = float(rows[0]["claimed_epsilon"])
    ys = np.arange(n)[::-1]

    # Which values are on the axis decides the scale.
    values = [claim]
    for g in rows:
        values += [g["epsilon_lower_bound_min"], g["epsilon_lower_bound_max"]]
        if _finite(g.get("true_epsilon")):
            values.append(g["true_epsilon"])
        published, true = refs.get(g["mechanism"], ({}, None))
        values += list(published.values())
        if true and math.isfinite(true[0]):
            values.append(true[0])
    positive = [v for v in values if _finite(v) and v > 0]
    log = bool(positive) and max(positive) / min(positive) > 30
    ceilings = sorted({round(g["ceiling"], 9) for g in rows if _finite(g.get("ceiling"))})
    data_hi = max(positive) if positive else claim
    ceiling_on_axis = bool(ceilings) and (max(ceilings) <= (30 if log else 3) * data_hi)
    if ceiling_on_axis:
        positive += ceilings
    if log:
        lo_lim, hi_lim = min(positive) / 1.8, max(positive) * 1.8
        ax.set_xscale("log")
    else:
        lo_lim, hi_lim = 0.0, max(positive + [claim]) * 1.12
    ax.set_xlim(lo_lim, hi_lim)
    edge_lo, edge_hi = (lo_lim * 1.15, hi_lim / 1.15) if log else (lo_lim, hi_lim * 0.985)

    legend_items: dict = {}

    def point(x, y, label, **kw):
        # Points carry no label; one proxy per kind is added below, in a fixed order.
        legend_items.setdefault(label, kw)
        ax.plot([x], [y], ls="none", clip_on=False, **kw)

    n_trials = max(g["n_trials"] for g in rows)
    conf = rows[0].get("confidence")
    at_zero = False
    for y, g in zip(ys, rows):
        med, lo, hi = g["epsilon_lower_bound_median"], g["epsilon_lower_bound_min"], g["epsilon_lower_bound_max"]
        violation = g.get("verdict") == "violation"
        colour, marker = ("#D55E00", "D") if violation else ("#0072B2", "o")
        name = f"{EPS} lower bound: violation" if violation else f"{EPS} lower bound: no violation found"
        if n_trials > 1 and hi > lo:
            ax.plot([max(lo, edge_lo) if log else lo, hi], [y, y], color=colour, lw=1.4, solid_capstyle="butt", zorder=3)
        x = med
        if log and med <= lo_lim:
            x, at_zero = edge_lo, True
            ax.annotate(f"{med:.2g}", (x, y), xytext=(0, 3.5), textcoords="offset points", ha="center", va="bottom",
                        fontsize=6, color=colour)
        point(x, y, color=colour, marker=marker, ms=4.5, zorder=4, label=name)
        true = g.get("true_epsilon")
        published, ref_true = refs.get(g["mechanism"], ({}, None))
        if true is None and ref_true is not None:
            true, upper = ref_true
        else:
            upper = False
        if isinstance(true, numbers.Real) and not isinstance(true, bool) and not math.isnan(true):
            if math.isinf(true):
                point(edge_hi, y, color="black", marker=">", ms=4.5, mfc="none", mew=0.9, zorder=4,
                      label=f"true {EPS} = \u221e (at the edge)")
            elif upper:
                point(true, y, color="black", marker="<", ms=4.5, mfc="none", mew=0.9, zorder=4,
                      label=f"true {EPS}: at most")
            else:
                point(true, y, color="black", marker="s", ms=4.5, mfc="none", mew=0.9, zorder=3.5,
                      label=f"true {EPS}")
        for j, (key, value) in enumerate(sorted(published.items())):
            c, m = _PUBLISHED_STYLES[j % len(_PUBLISHED_STYLES)]
            # Just under the row's line, so that neither marker hides the other.
            point(min(max(value, edge_lo), edge_hi) if log else value, y - 0.3, color=c, marker=m, ms=4, mew=0.8,
                  zorder=5, label=_published_label(key))

    def rank(label):
        return next((i for i, key in enumerate(("no violation", "violation", "true", "")) if key in label), 9)

    for label, kw in sorted(legend_items.items(), key=lambda item: rank(item[0])):
        ax.plot([], [], ls="none", label=label, **kw)
    # Reference lines after the points, so that the legend lists the bounds first.
    ax.axvline(claim, color="0.35", ls=(0, (5, 2)), lw=0.9, label=_claim_label(results, rows, size),
               zorder=1)
    if ceiling_on_axis:
        txt = "ceiling: the most this sample size can certify"
        if len(ceilings) == 1:
            ax.axvline(ceilings[0], color="0.1", ls=(0, (1, 1.5)), lw=1.0, label=txt, zorder=1)
        else:
            ax.plot([g.get("ceiling") for g in rows], ys, ls="none", marker="|", ms=9, color="0.1", label=txt)
    names = []
    for g in rows:
        label = str(g["mechanism"] or "attack")
        if multi_point:
            label += " (" + ", ".join(f"{k.split('.')[-1]}={_fmt(g['sweep'][k])}" for k in paths) + ")"
        names.append(label + (" \u2020" if g.get("broken") else ""))
    ax.set_yticks(ys, names)
    ax.set_ylim(-0.7, n - 0.3)
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(EPS + (" (log scale)" if log else ""))
    notes = [f"lower bounds at {_conf_text(conf)} confidence; {n_trials} trial{'s' * (n_trials > 1)} per mechanism"
             + ("; bar: range over trials" if n_trials > 1 else "")]
    sample_text = _samples_text(rows)
    if sample_text:
        # every row's own size: one figure may hold several (a sweep over samples)
        notes.append(sample_text)
    if any(g.get("broken") for g in rows):
        notes.append("\u2020 known not to satisfy its claim")
    if ceilings and not ceiling_on_axis:
        notes.append(f"ceiling {min(ceilings):.3g} (off scale)")
    if at_zero:
        notes.append("bounds below the axis drawn at its left edge, value above")
    return _finish(fig, results, notes, size, ncol=1 if size == "one-column" else 2)


def _claim_label(results, rows, size) -> str:
    """The claim line's legend: a curve claim is compared at a delta of its own choosing, so it names both.

    A curve claim's line once read "claimed epsilon = 0.00635801", a number with no delta and no claim: a
    reader could not tell that the figure compared with gdp:mu=0.05 at delta 0.017.
    """
    claim, delta = float(rows[0]["claimed_epsilon"]), rows[0].get("claimed_delta") or 0.0
    specs = {str(g["sweep"].get("audit.claim", (results.config.get("audit") or {}).get("claim"))) for g in rows}
    spec = specs.pop() if len(specs) == 1 else None
    if spec in (None, "None"):
        return f"claimed {EPS} = {claim:g}"
    label = f"claimed {EPS} = {claim:.4g} at {DELTA} = {delta:.2g}"
    # One column holds about 60 characters beside the legend's handle: a dpsgd: spec goes on a line of its own.
    return f"{label}{chr(10) if size == 'one-column' and len(label + spec) > 50 else ' '}({short_spec(spec)})"


def _bound_vs_claim_chart(results, groups, size):
    labels = list(dict.fromkeys(g["mechanism"] for g in groups))
    claims = [float(g["claimed_epsilon"]) for g in groups if _finite(g.get("claimed_epsilon"))]
    bounds = [g["epsilon_lower_bound_max"] for g in groups] + [g["epsilon_lower_bound_min"] for g in groups]
    # A claimed epsilon of 0 (a curve claim reported where it promises nothing above 0) has no place on a log axis.
    log = min(claims) > 0 and max(claims) / min(claims) > 30
    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.85 + 0.13 * math.ceil((len(labels) + 2) / 2))
    # Series at the same claim are nudged apart (a fraction of the axis) so that none hides another.
    span = (math.log(max(claims)) - math.log(min(claims))) if log else (max(claims) - min(claims) or 1.0)
    nudge = 0.012 * span
    deltas = sorted({float(g.get("claimed_delta") or 0.0) for g in groups})
    for i, label in enumerate(labels):
        st = _style_of(results, label, i)
        gs = sorted((g for g in groups if g["mechanism"] == label), key=lambda g: g["claimed_epsilon"])
        x = np.array([g["claimed_epsilon"] for g in gs], dtype=float)
        off = (i - (len(labels) - 1) / 2) * nudge
        x = x * math.exp(off) if log else x + off
        y = np.array([g["epsilon_lower_bound_median"] for g in gs], dtype=float)
        lo = np.array([g["epsilon_lower_bound_min"] for g in gs], dtype=float)
        hi = np.array([g["epsilon_lower_bound_max"] for g in gs], dtype=float)
        broken = any(g.get("broken") for g in gs)
        # An (epsilon, delta) claim says its delta where the claims differ in delta (the quickstart's Gaussian).
        own = sorted({float(g.get("claimed_delta") or 0.0) for g in gs})
        at = f" ({DELTA} = {own[0]:g})" if len(deltas) > 1 and len(own) == 1 and own[0] > 0 else ""
        ax.errorbar(x, y, yerr=_asymmetric_error(y - lo, hi - y), color=st["color"], marker=st["marker"],
                    ls=st["linestyle"], capsize=2, lw=1.0, ms=3.8,
                    label=str(label or "bound") + at + (" \u2020" if broken else ""), zorder=3)
        true = [(xx, g["true_epsilon"]) for xx, g in zip(x, gs) if _finite(g.get("true_epsilon"))
                and abs(g["true_epsilon"] - g["claimed_epsilon"]) > 1e-9]
        if true:
            tx, ty = zip(*true)
            ax.plot(tx, ty, ls="none", marker=st["marker"], mfc="none", color=st["color"], ms=6, mew=0.8, zorder=2)
    top = max(max(bounds), max(claims)) * 1.15
    if log:
        pos = [v for v in bounds + claims if v > 0]
        lo_lim = min(pos) / 1.5
        ax.set_xscale("log")
        ax.set_yscale("log")
        diag = np.array([lo_lim, top])
        ax.set_xlim(min(claims) / 1.3, max(claims) * 1.3)
        ax.set_ylim(lo_lim, top)
    else:
        diag = np.array([0.0, top])
        ax.set_xlim(0, max(claims) * 1.15)
        ax.set_ylim(0, top)
    ax.plot(diag, diag, color="0.45", ls=(0, (5, 2)), lw=0.8, label=f"bound = claimed {EPS}", zorder=1)
    ceilings = sorted({round(g["ceiling"], 9) for g in groups if _finite(g.get("ceiling"))})
    samples = groups[0].get("samples")
    notes = []
    if ceilings and min(ceilings) <= top:
        txt = f"ceiling ({samples:,} samples per side)" if isinstance(samples, int) else "ceiling"
        cx = sorted({(g["claimed_epsilon"], g["ceiling"]) for g in groups if _finite(g.get("ceiling"))})
        ax.plot(*zip(*cx), color="0.1", ls=(0, (1, 1.5)), lw=0.9, label=txt)
    elif ceilings:
        notes.append(f"ceiling {min(ceilings):.3g} (off scale)")
    # Every bound is at its claim's delta: the axis says which (one delta), or that the legend does.
    ax.set_xlabel(f"claimed {EPS} (at {DELTA} = {deltas[0]:g})" if len(deltas) == 1
                  else f"claimed {EPS} (at {DELTA} = 0 unless the legend gives one)" if deltas[0] == 0
                  else f"claimed {EPS} (at each claim's {DELTA}, in the legend)")
    conf = groups[0].get("confidence")
    ax.set_ylabel(f"{EPS} lower bound at the claimed {DELTA}\n({_conf_text(conf)} confidence)")
    ntr = max(g["n_trials"] for g in groups)
    notes[:0] = [f"bars: range over {ntr} trials" if ntr > 1 else "1 trial per point", _samples_text(groups)]
    if any(_finite(g.get("true_epsilon")) and abs(g["true_epsilon"] - g["claimed_epsilon"]) > 1e-9 for g in groups):
        notes.append(f"open: true {EPS}")
    if any(g.get("broken") for g in groups):
        notes.append("\u2020 known not to satisfy its claim")
    return _finish(fig, results, notes, size, ncol=2)



# 2 ----------------------------------------------------------------------------------------------
def _roc_n(result) -> int:
    roc = result.get("roc") or {}
    for n in (result.get("n_test"), roc.get("n_negative"), roc.get("n")):
        if isinstance(n, numbers.Integral) and n > 0:
            return int(n)
    return max(1, int(result.get("samples") or 2) // 2)


def plot_roc(results, *, size="one-column", point=None):
    """Each audit's ROC on the held-out split, log-log, with the claimed-DP frontier.

    (eps, delta)-DP forces ``TPR <= e^eps FPR + delta`` (and the mirror
    inequality): a curve above its frontier is a violation.  Each point carries
    a 95% Clopper-Pearson interval on both rates; the shaded region is the
    union of these boxes, and the cross marks the event the bound rests on.
    One sweep point and the first trial of each mechanism are drawn.
    """
    chosen, point_note = _one_point(results, _groups(results), point)
    curves = []
    for g in chosen:
        ts = results.trials_at(g["point"], g["mechanism"])
        if ts and isinstance(ts[0]["result"].get("roc"), dict) and ts[0]["result"]["roc"].get("fpr"):
            curves.append((g, ts[0]["result"], len(ts)))
    if not curves:
        return None
    paths = _differing_paths(results, [g for g, _, _ in curves])
    curves = curves[:12]
    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.55 + 0.13 * math.ceil((len(curves) + 3) / 2))
    floor = 1.0
    frontiers: dict = {}
    curve_frontiers: dict = {}
    for i, (g, r, _) in enumerate(curves):
        st = _style_of(results, g["mechanism"], i)
        pts = roc_points(r["roc"]["fpr"], r["roc"]["tpr"], _roc_n(r))
        draw_roc(ax, pts, style=st, label=_series_label(g, paths))
        draw_event(ax, r, style=st, label=None)
        pos = pts["x"][(pts["x"] > 0) & (pts["y"] > 0)]
        if pos.size:
            floor = min(floor, float(pos.min()), float(np.min(pts["x_lo"][pts["x_lo"] > 0], initial=1.0)))
        eps, delta = r.get("claimed_epsilon"), r.get("claimed_delta") or 0.0
        if claim_curve_of(r) is not None:  # a claimed curve: its whole frontier, once per claim
            curve_frontiers.setdefault(str(r.get("claim")), claim_curve_of(r))
        elif _finite(eps):
            frontiers.setdefault((round(float(eps), 6), float(delta)), []).append(g["mechanism"])
    floor = max(floor, 1e-12)
    for j, ((eps, delta), _) in enumerate(sorted(frontiers.items())):
        claim = f"{EPS} = {eps:g}" + (f", {DELTA} = {delta:g}" if delta else "")
        draw_frontier(ax, eps, delta, x_min=floor / 2, linestyle=["-", (0, (6, 2)), (0, (2, 1))][j % 3],
                      label=f"claimed frontier ({claim})")
    for spec, curve in curve_frontiers.items():
        draw_curve_frontier(ax, curve, x_min=floor / 2, label=f"claimed frontier ({spec})")
    ax.plot([floor / 2, 1], [floor / 2, 1], color="0.6", lw=0.7, ls=(0, (1, 2)), label="chance", zorder=1)
    ax.plot([], [], ls="none", marker="+", color="0.2", ms=7, label="event the bound uses (95% box)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(floor / 2, 1.4)
    ax.set_ylim(floor / 2, 1.4)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    held_out = [{"n": _roc_n(r)} for _, r, _ in curves]
    notes = ["shaded: 95% Clopper-Pearson box on both rates, per point",
             _samples_text(held_out, key="n", what="held-out samples")]
    ntr = max(n for _, _, n in curves)
    if ntr > 1:
        notes.append(f"trial 1 of {ntr}")
    _point_title(ax, point_note)
    return _finish(fig, results, notes, size, ncol=2)


# 3 ----------------------------------------------------------------------------------------------
def plot_privacy_profile(results, *, size="one-column", point=None):
    """Certified lower bounds on epsilon(delta) beside each claim.

    Line: median over trials; band: range over trials.  An (epsilon, delta)
    claim is a point (star); a pure claim (delta = 0) bounds every delta and is
    a dashed line.  The mechanism's exact epsilon(delta) is dotted when known
    (for a correct mechanism it is the claimed mechanism's own curve).
    """
    groups = _groups(results)
    wanted = point if point is not None else (results.config.get("plot") or {}).get("point")
    if wanted is None and _one_claim(results, groups):  # the points differ only in what is audited: draw them all
        chosen, point_note = groups, None
    else:
        chosen, point_note = _one_point(results, groups, point)
    series = []
    for g in chosen:
        ts = results.trials_at(g["point"], g["mechanism"])
        prof = [t["result"].get("privacy_profile") for t in ts]
        if prof and all(isinstance(p, dict) and p.get("delta") for p in prof):
            series.append((g, ts))
    if not series:
        return None
    paths = _differing_paths(results, [g for g, _ in series])
    series = series[:12]
    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.75 + 0.13 * math.ceil((len(series) + 3) / 2))
    results_of = [ts[0]["result"] for _, ts in series]
    all_delta = np.concatenate([np.asarray(r["privacy_profile"]["delta"], dtype=float) for r in results_of]
                               + [[r.get("claimed_delta") or 0.0 for r in results_of]])
    d_range = (all_delta[all_delta > 0].min() / 2, all_delta.max() * 2)
    # Claims equal to 6 decimals are one claim (randomized response's p is given to 8 digits).
    pure = {round(float(r["claimed_epsilon"]), 6) for r in results_of
            if _finite(r.get("claimed_epsilon")) and not r.get("claimed_delta")}
    top = max(pure, default=0.0)
    shared = None
    if len(pure) == 1:  # one pure claim shared by every mechanism: one grey line
        shared = pure.pop()
        draw_profile_claim(ax, shared, 0.0, color="0.35", delta_range=d_range)
    kinds, curves_drawn = set(), set()
    for i, (g, ts) in enumerate(series):
        st = _style_of(results, g["mechanism"], i)
        delta = np.asarray(ts[0]["result"]["privacy_profile"]["delta"], dtype=float)
        eps = np.array([t["result"]["privacy_profile"]["epsilon"] for t in ts], dtype=float)
        keep = delta > 0
        if len(ts) > 1:
            ax.fill_between(delta[keep], eps.min(0)[keep], eps.max(0)[keep], color=st["color"], alpha=0.2, lw=0)
        # Solid: in this figure dashes mean a claim and dots an exact curve.
        ax.plot(delta[keep], np.median(eps, 0)[keep], color=st["color"], marker=st["marker"], ls="-",
                ms=3, lw=1.1, label=_series_label(g, paths, "certified lower bound") + (" \u2020" * bool(g.get("broken"))),
                zorder=3)
        top = max(top, float(eps.max()))
        r = ts[0]["result"]
        claim_eps, claim_delta = r.get("claimed_epsilon"), r.get("claimed_delta") or 0.0
        curve = claim_curve_of(r)
        if curve is not None:  # a claimed curve, drawn whole (dashed), once
            if str(r.get("claim")) not in curves_drawn:
                curves_drawn.add(str(r.get("claim")))
                draw_curve_profile(ax, curve, color=st["color"], label=f"claimed curve ({short_spec(r.get('claim'))})")
            top = max(top, float(np.max(curve["claimed_epsilon"][(curve["delta"] >= d_range[0])
                                                                 & np.isfinite(curve["claimed_epsilon"])], initial=0.0)))
        elif _finite(claim_eps):
            kinds.add("point" if claim_delta else "line")
            top = max(top, float(claim_eps))
            if claim_delta or round(float(claim_eps), 6) in pure:
                draw_profile_claim(ax, claim_eps, claim_delta, color=st["color"], delta_range=d_range)
        true = r.get("true_profile")
        if isinstance(true, dict) and true.get("delta"):
            td = np.asarray(true["delta"], dtype=float)
            te = np.array([np.nan if e is None else e for e in true["epsilon"]], dtype=float)
            ok = (td > 0) & np.isfinite(te)
            if ok.any():
                kinds.add("exact")
                ax.plot(td[ok], te[ok], color=st["color"], ls=(0, (1, 1.2)), lw=1.2, zorder=2)
                top = max(top, float(np.nanmax(te[ok])))
    # One legend entry per kind of line, in grey: the colours are the mechanisms'.
    if "line" in kinds:
        value = f" = {shared:g}" if shared is not None else ""
        ax.plot([], [], color="0.35", ls=(0, (5, 2)), lw=0.9, label=f"claim {EPS}{value} (pure: every {DELTA})")
    if "point" in kinds:
        ax.plot([], [], ls="none", marker="*", ms=8, mfc="0.6", mec="black", mew=0.5, label=f"claim ({EPS}, {DELTA})")
    if "exact" in kinds:
        ax.plot([], [], color="0.35", ls=(0, (1, 1.2)), lw=1.2, label=f"exact {EPS}({DELTA}) of the mechanism")
    ax.set_xscale("log")
    ax.set_xlim(*d_range)
    ax.set_ylim(0, top * 1.08 if top > 0 else 1.0)
    ax.set_xlabel(DELTA)
    ax.set_ylabel(f"{EPS}({DELTA})")
    ntr = max(len(ts) for _, ts in series)
    conf = results_of[0]["privacy_profile"].get("confidence") or results_of[0].get("confidence")
    notes = [f"markers: lower bounds, simultaneous over {DELTA} at {_conf_text(conf)} confidence"
             + (f"; line: median, band: range over {ntr} trials" if ntr > 1 else ""), _samples_text(results_of)]
    if any(g.get("broken") for g, _ in series):
        notes.append("\u2020 known not to satisfy its claim")
    _point_title(ax, point_note)
    return _finish(fig, results, notes, size, ncol=2)


def _one_claim(results, groups) -> bool:
    """Whether every sweep point of ``groups`` audits one and the same claim (a curve, or epsilon and delta).

    Then the points differ only in what is audited (configs/training.yaml: the correct loop and a broken
    one against one accountant curve), and the profile draws them together.
    """
    if len({g["point"] for g in groups}) < 2:
        return False
    claims = set()
    for g in groups:
        for t in results.trials_at(g["point"], g["mechanism"]):
            r = t["result"]
            spec = r.get("claim")
            claims.add(str(spec) if spec is not None else
                       (round(float(r.get("claimed_epsilon") or 0.0), 6), float(r.get("claimed_delta") or 0.0)))
    return len(claims) == 1


# 4 ----------------------------------------------------------------------------------------------
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
    for g in _groups(results):
        name = _first(g.get("metrics", {}), metric_names)
        if name is None:
            continue
        pts.append((g, _point_params(results, g), g["metrics"][name], name))
    return pts


def _asymmetric_error(below, above) -> np.ndarray:
    """``errorbar``'s ``yerr`` for errors ``below`` and ``above`` each point, as one 2 x n float array.

    matplotlib takes an array as it is; a list of two arrays it first checks row by row with
    ``math.isfinite``, which on a one-point series numpy (from 1.25) warns about: a length-1 array
    converted to a scalar.
    """
    return np.vstack([np.asarray(below, dtype=float), np.asarray(above, dtype=float)])


def _errbar_series(ax, rows, i, label, color=None):
    rows = sorted(rows, key=lambda r: r[0])
    st = series_style(i)
    if color is not None:
        st["color"] = color
    x = np.array([r[0] for r in rows], dtype=float)
    m = np.array([r[1]["mean"] for r in rows], dtype=float)
    lo = np.array([r[1]["ci_low"] for r in rows], dtype=float)
    hi = np.array([r[1]["ci_high"] for r in rows], dtype=float)
    ax.errorbar(x, m, yerr=_asymmetric_error(m - lo, hi - m), color=st["color"], marker=st["marker"],
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
    qn, nn = _first(params0, QUERY_NAMES), _first(params0, NOISE_NAMES)
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
    # Each panel's series are an ordered quantity, in a colour family of its own (queries blue, noise orange):
    # continuing one palette across panels gave the most noise and the fewest queries the same colour.
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
    fig.suptitle(_notes([f"{n_text} secret bits", meaning,
                         f"mean over {ntr} trials{per_trial}; bars: {_conf_text(conf)} t-interval; dotted: guessing"],
                        size),
                 fontsize=6.5, color="0.2")
    _legend_above(ax_noise, ncol=5, title=f"queries {qn}" if qn else None)
    _legend_above(ax_q, ncol=5, title=f"noise {sym} ({sym} / \u221an = "
                                      + ", ".join(f"{s:.2g}" for s, _ in sorted(by_noise)) + ")")
    _title(fig, results)
    return fig


# 5 ----------------------------------------------------------------------------------------------
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
    swept = [k.split(".")[-1] for k in _sweep_paths(results)]
    noise_key = next((k for k in swept if k in TRACING_NOISE_NAMES), None) or _first(pts[0][1], TRACING_NOISE_NAMES)
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
                label=f"{sym} = {_fmt(lvl)}")
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
    fig.suptitle(_notes([(f"n = {'/'.join(f'{v:,}' for v in ns)} people in the dataset" if ns else ""),
                         f"{sym}: {meaning}",
                         f"mean over {ntr} trials" + (f" of {int(params0['n_targets']):,} member and "
                                                      f"{int(params0['n_targets']):,} non-member games each"
                                                      if isinstance(params0.get("n_targets"), numbers.Integral) else "")
                         + f"; band: {_conf_text(conf)} t-interval"], size),
                 fontsize=6.5, color="0.2")
    _legend_above(ax, ncol=5)
    _title(fig, results)
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
        ax.errorbar(eps, r, yerr=_asymmetric_error(r - lo, hi - r), ls="none", color=st["color"], marker=st["marker"],
                    capsize=2, ms=3.2, label=f"n = {n:,}")
        # The exact curve is a closed form of saved parameters (no simulation is re-run).
        p = _point_params(results, gs[0])
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
    _legend_above(ax, ncol=4, title=_notes([title, "bars: 95% interval; dashed: exact s.d. ~ 1/(p\u221an)"], size))
    _title(fig, results)
    return fig


# 7 ----------------------------------------------------------------------------------------------
def _sequential_trajectory(result: dict):
    """``(samples, certified bounds, stopping reason)`` of a sequential audit's record, else None.

    Fixed-size audits (``stopping_reason`` "fixed") have one point and no
    trajectory to show.
    """
    traj = result.get("trajectory")
    if not isinstance(traj, dict) or result.get("stopping_reason") in (None, "fixed"):
        return None
    samples = np.asarray(traj.get("samples") or [], dtype=float)
    bounds = np.asarray(traj.get("epsilon_lower_bound") or [], dtype=float)
    if samples.size == 0 or samples.size != bounds.size:
        return None
    return samples, bounds, result.get("stopping_reason")


def _trial_claims(records: list[dict]) -> list[tuple]:
    """Each sequential trial's claimed (epsilon, delta): the point its trajectory is certified at."""
    return [(float(r["claimed_epsilon"]), float(r.get("claimed_delta") or 0.0)) for r in records
            if _sequential_trajectory(r) is not None and _finite(r.get("claimed_epsilon"))]


#: The most series (sweep point x mechanism) one trajectory figure draws.
MAX_SERIES = 12


def plot_trajectory(results, *, size="one-column", point=None):
    """Sequential audits: the certified epsilon lower bound against the releases drawn per side.

    One step line per trial (the bound after each round; it never goes
    down), ending where the audit stopped, with the stopping reason counted
    in the legend; the claim is a dashed line.  A curve claim compares each
    trial at its own delta: each trial's claim there is a dashed line, in the
    trial's colour and weight.  The first trial of each series is drawn
    solid, the others faint; every round of every trial is a marker (an audit
    that stopped in its first round is one).  Every sweep point is drawn (up
    to :data:`MAX_SERIES` series), unless ``point`` (1-based; or the config's
    ``plot.point``) chooses one.  Records of fixed-size audits (``--samples
    N``) have no trajectory: with none sequential, there is nothing to draw
    (None).
    """
    wanted = point if point is not None else (results.config.get("plot") or {}).get("point")
    if wanted is None:
        chosen, point_note = _groups(results), None
    else:
        chosen, point_note = _one_point(results, _groups(results), point)
    series, own_claims = [], []
    for g in chosen:
        records = [t["result"] for t in results.trials_at(g["point"], g["mechanism"])]
        rows = [tr for tr in (_sequential_trajectory(r) for r in records) if tr is not None]
        if rows:
            series.append((g, records[0], rows))
            own_claims.append(_trial_claims(records))
    if not series:
        return None
    paths = _differing_paths(results, [g for g, _, _ in series])
    n_series = len(series)
    series = series[:MAX_SERIES]
    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.75 + 0.13 * math.ceil((len(series) + 3) / 2))
    claims: dict = {}
    per_trial: list = []
    lo, hi, top = math.inf, 0.0, 0.0
    several_points = len({g["point"] for g, _, _ in series}) > 1
    for i, (g, first, rows) in enumerate(series):
        # A mechanism keeps its style across figures; drawn at several sweep points, each series needs its own.
        st = series_style(i) if several_points else _style_of(results, g["mechanism"], i)
        reasons: dict = {}
        for j, (samples, bounds, reason) in enumerate(rows):
            reasons[reason] = reasons.get(reason, 0) + 1
            # A marker on every round, faint trials included: a trial that stopped in its first round is one point.
            ax.plot(samples, bounds, color=st["color"], drawstyle="steps-post", lw=1.1 if j == 0 else 0.6,
                    alpha=1.0 if j == 0 else 0.35, marker=st["marker"], ms=3 if j == 0 else 2.2, zorder=3 - (j > 0),
                    gid="trajectory")
            # The stop: where the audit ended.
            ax.plot(samples[-1:], bounds[-1:], ls="none", marker="|", ms=7, color=st["color"],
                    alpha=1.0 if j == 0 else 0.35, zorder=3)
            lo, hi, top = min(lo, float(samples.min())), max(hi, float(samples.max())), max(top, float(bounds.max()))
        stops = ", ".join(f"{r} {n}" if len(rows) > 1 else r for r, n in sorted(reasons.items()))
        # A search kind's groups have no mechanism: its target names the series.
        name = _series_label(g, paths) if g.get("mechanism") or paths else str(first.get("target") or "audit")
        own = []
        if several_points and g.get("mechanism"):  # its own swept parameters tell its points apart
            own = [f"{k.split('.')[-1]}={_fmt(v)}" for k, v in g["sweep"].items()
                   if k.startswith(f"mechanisms.{g['mechanism']}.") or k.startswith("mechanisms.*.")]
        ax.plot([], [], color=st["color"], marker=st["marker"], ms=3, lw=1.1,
                label=f"{name} ({'; '.join([', '.join(own)] * bool(own) + [f'stopped: {stops}'])})")
        name = f"{name} ({', '.join(own)})" if own else name
        eps, delta = first.get("claimed_epsilon"), first.get("claimed_delta") or 0.0
        if len(set(own_claims[i])) > 1:  # a curve claim: each trial's bound is at its own delta
            per_trial.append((st["color"], name, first.get("claim"), own_claims[i]))
            top = max([top, *(e for e, _ in own_claims[i])])
        elif _finite(eps):
            claims.setdefault((float(eps), float(delta), first.get("claim")), []).append((st["color"], name))
            top = max(top, float(eps))
    for colour, name, spec, points in per_trial:
        for j, (eps, _) in enumerate(points):
            ax.plot([lo, hi], [eps, eps], color=colour, ls=(0, (5, 2)), lw=0.9 if j == 0 else 0.6,
                    alpha=1.0 if j == 0 else 0.35, zorder=2)
        ax.plot([], [], color=colour, ls=(0, (5, 2)), lw=0.9, label=f"{name}: claim {spec} at each trial's {DELTA}")
    for (eps, delta, spec), owners in sorted(claims.items(), key=lambda item: item[0][:2]):
        # A claim of one mechanism among several takes its colour; a shared one is grey and names its owners.
        colour = owners[0][0] if len(owners) == 1 and len(claims) > 1 else "0.35"
        label = "claim ({})".format(f"{EPS} = {eps:g}" + (f", {DELTA} = {delta:g}" if delta else ""))
        if spec is not None and not str(spec).startswith("eps:"):
            # A curve read at one delta: "claim (epsilon = 0.328852, delta = 0.0656296)" named neither the curve nor
            # that the point was the curve's; in one column a dpsgd: spec leaves no room for the point.
            spec = short_spec(spec)
            sep = "\n" if size == "one-column" and len(spec) > 20 else " "
            label = f"claim {spec}{sep}({EPS} = {eps:.4g} at {DELTA} = {delta:.2g})"
        # With several sweep points each series names its own parameters: the claim's value says whose it is.
        whose = f": {', '.join(n for _, n in owners)}" if len(claims) > 1 and not several_points else ""
        ax.axhline(eps, color=colour, ls=(0, (5, 2)), lw=0.9, zorder=2, label=label + whose)
    if hi / max(lo, 1.0) > 30:
        ax.set_xscale("log")
    else:  # from 0: a run whose audits all stopped at one size is not a point on an axis of +-5%
        ax.set_xlim(0, hi * 1.08)
    # Below 0 by a little: a bound of 0 (nothing certified yet) is a whole marker, not half of one cut by the axis.
    ax.set_ylim(-0.03 * (top if top > 0 else 1.0), top * 1.12 if top > 0 else 1.0)
    ax.set_xlabel("releases drawn per side (cumulative)")
    ax.set_ylabel(f"certified {EPS} lower bound")
    ntr = max(len(rows) for _, _, rows in series)
    conf = series[0][1].get("confidence")
    notes = [f"steps: the bound certified after each round, valid at {_conf_text(conf)} confidence whichever "
             "round the audit stopped in; |: the stop"
             + (f"; trial 1 solid, the other {ntr - 1} faint" if ntr > 2 else "; trial 1 solid, trial 2 faint"
                if ntr == 2 else "")]
    if n_series > len(series):
        notes.append(f"the first {len(series)} of {n_series} series; --point N draws one sweep point")
    _point_title(ax, point_note)
    return _finish(fig, results, notes, size, ncol=1)
