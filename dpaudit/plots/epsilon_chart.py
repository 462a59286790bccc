"""``epsilon_vs_claimed``: the certified epsilon lower bounds against the claims.

One claimed value: a row per mechanism (bound, true epsilon, published bounds, claim, ceiling).
Several: the bound against the claimed epsilon, one series per mechanism, beside the diagonal.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .common import (WIDTH_HEIGHT, asymmetric_error, conf_text, differing_paths, finish, finite, fmt, groups_of,
                     samples_text, style_of)
from .elements import DELTA, EPS
from .style import new_figure, short_spec
from ..stats.verdict import Verdict

__all__ = ["plot_epsilon_vs_claimed"]

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
    groups = [g for g in groups_of(results) if "epsilon_lower_bound_median" in g]
    if not groups:
        return None
    if len({round(float(g["claimed_epsilon"]), 12) for g in groups if finite(g.get("claimed_epsilon"))}) == 1:
        return _per_mechanism_chart(results, groups, size)
    return _bound_vs_claim_chart(results, groups, size)


def _per_mechanism_chart(results, groups, size):
    """One row per group (config order: the summary lists groups point by point, mechanisms in config order)."""
    rows = groups
    refs = _reference_values(results)
    n = len(rows)
    n_published = len({k for published, _ in refs.values() for k in published})
    legend_lines = 6 + n_published if size == "one-column" else 3 + math.ceil(n_published / 2)
    fig, (ax,) = new_figure(size, height=0.75 + 0.17 * n + 0.115 * (legend_lines + 2))
    claim = float(rows[0]["claimed_epsilon"])
    ys = np.arange(n)[::-1]
    axis = _row_axis(ax, rows, refs, claim)
    n_trials = max(g["n_trials"] for g in rows)
    legend_items, at_zero = _draw_rows(ax, rows, ys, refs, axis, n_trials)
    _row_legend(ax, legend_items)
    # Reference lines after the points, so that the legend lists the bounds first.
    ax.axvline(claim, color="0.35", ls=(0, (5, 2)), lw=0.9, label=_claim_label(results, rows, size),
               zorder=1)
    if axis.ceiling_on_axis:
        txt = "ceiling: the most this sample size can certify"
        if len(axis.ceilings) == 1:
            ax.axvline(axis.ceilings[0], color="0.1", ls=(0, (1, 1.5)), lw=1.0, label=txt, zorder=1)
        else:
            ax.plot([g.get("ceiling") for g in rows], ys, ls="none", marker="|", ms=9, color="0.1", label=txt)
    ax.set_yticks(ys, _row_names(results, rows))
    ax.set_ylim(-0.7, n - 0.3)
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="y", visible=False)
    ax.set_xlabel(EPS + (" (log scale)" if axis.log else ""))
    notes = _row_notes(rows, n_trials, axis, at_zero)
    return finish(fig, results, notes, size, ncol=1 if size == "one-column" else 2)


@dataclass(frozen=True)
class _RowAxis:
    """The per-mechanism chart's epsilon axis: its scale, limits, where off-scale markers go, the ceilings."""

    log: bool
    lo_lim: float
    hi_lim: float
    edge_lo: float
    edge_hi: float
    ceilings: list
    ceiling_on_axis: bool


def _row_axis(ax, rows, refs, claim) -> _RowAxis:
    """Set the epsilon axis from the values drawn on it: log when they span more than a factor 30."""
    values = [claim]
    for g in rows:
        values += [g["epsilon_lower_bound_min"], g["epsilon_lower_bound_max"]]
        if finite(g.get("true_epsilon")):
            values.append(g["true_epsilon"])
        published, true = refs.get(g["mechanism"], ({}, None))
        values += list(published.values())
        if true and math.isfinite(true[0]):
            values.append(true[0])
    positive = [v for v in values if finite(v) and v > 0]
    log = bool(positive) and max(positive) / min(positive) > 30
    ceilings = sorted({round(g["ceiling"], 9) for g in rows if finite(g.get("ceiling"))})
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
    return _RowAxis(log, lo_lim, hi_lim, edge_lo, edge_hi, ceilings, ceiling_on_axis)


def _draw_rows(ax, rows, ys, refs, axis: _RowAxis, n_trials: int) -> tuple[dict, bool]:
    """Each row's bound (and range), true epsilon and published bounds; returns the legend's kinds and whether a
    bound below the axis was drawn at its edge."""
    legend_items: dict = {}

    def point(x, y, label, **kw):
        # Points carry no label; one proxy per kind is added later, in a fixed order.
        legend_items.setdefault(label, kw)
        ax.plot([x], [y], ls="none", clip_on=False, **kw)

    at_zero = False
    for y, g in zip(ys, rows):
        med, lo, hi = g["epsilon_lower_bound_median"], g["epsilon_lower_bound_min"], g["epsilon_lower_bound_max"]
        violation = g.get("verdict") == "violation"
        colour, marker = ("#D55E00", "D") if violation else ("#0072B2", "o")
        name = f"{EPS} lower bound: violation" if violation else f"{EPS} lower bound: {Verdict.NO_VIOLATION}"
        if n_trials > 1 and hi > lo:
            ax.plot([max(lo, axis.edge_lo) if axis.log else lo, hi], [y, y], color=colour, lw=1.4,
                    solid_capstyle="butt", zorder=3)
        x = med
        if axis.log and med <= axis.lo_lim:
            x, at_zero = axis.edge_lo, True
            ax.annotate(f"{med:.2g}", (x, y), xytext=(0, 3.5), textcoords="offset points", ha="center", va="bottom",
                        fontsize=6, color=colour)
        point(x, y, color=colour, marker=marker, ms=4.5, zorder=4, label=name)
        published, ref_true = refs.get(g["mechanism"], ({}, None))
        _true_marker(point, g.get("true_epsilon"), ref_true, y, axis)
        for j, (key, value) in enumerate(sorted(published.items())):
            c, m = _PUBLISHED_STYLES[j % len(_PUBLISHED_STYLES)]
            # Just under the row's line, so that neither marker hides the other.
            point(min(max(value, axis.edge_lo), axis.edge_hi) if axis.log else value, y - 0.3, color=c, marker=m,
                  ms=4, mew=0.8, zorder=5, label=_published_label(key))
    return legend_items, at_zero


def _true_marker(point, true, ref_true, y, axis: _RowAxis) -> None:
    """The row's true epsilon (the record's, else the config reference's): a square, or an arrow when it is
    infinite (at the axis' edge) or only an upper bound."""
    upper = False
    if true is None and ref_true is not None:
        true, upper = ref_true
    if not isinstance(true, numbers.Real) or isinstance(true, bool) or math.isnan(true):
        return
    if math.isinf(true):
        point(axis.edge_hi, y, color="black", marker=">", ms=4.5, mfc="none", mew=0.9, zorder=4,
              label=f"true {EPS} = \u221e (at the edge)")
    elif upper:
        point(true, y, color="black", marker="<", ms=4.5, mfc="none", mew=0.9, zorder=4, label=f"true {EPS}: at most")
    else:
        point(true, y, color="black", marker="s", ms=4.5, mfc="none", mew=0.9, zorder=3.5, label=f"true {EPS}")


def _row_legend(ax, legend_items: dict) -> None:
    """One legend proxy per kind of marker: bounds first, then the true epsilons, then published bounds."""
    def rank(label):
        return next((i for i, key in enumerate(("no violation", "violation", "true", "")) if key in label), 9)

    for label, kw in sorted(legend_items.items(), key=lambda item: rank(item[0])):
        ax.plot([], [], ls="none", label=label, **kw)


def _row_names(results, rows) -> list:
    """Each row's tick label: its mechanism, the sweep values that tell rows apart, a dagger if known broken."""
    multi_point = len({g["point"] for g in rows}) > 1
    paths = differing_paths(results, rows)
    names = []
    for g in rows:
        label = str(g["mechanism"] or "attack")
        if multi_point:
            label += " (" + ", ".join(f"{k.split('.')[-1]}={fmt(g['sweep'][k])}" for k in paths) + ")"
        names.append(label + (" \u2020" if g.get("broken") else ""))
    return names


def _row_notes(rows, n_trials: int, axis: _RowAxis, at_zero: bool) -> list:
    """The per-mechanism chart's notes: confidence and trials, sample sizes, what is off scale."""
    conf = rows[0].get("confidence")
    notes = [f"lower bounds at {conf_text(conf)} confidence; {n_trials} trial{'s' * (n_trials > 1)} per mechanism"
             + ("; bar: range over trials" if n_trials > 1 else "")]
    sample_text = samples_text(rows)
    if sample_text:
        # every row's own size: one figure may hold several (a sweep over samples)
        notes.append(sample_text)
    if any(g.get("broken") for g in rows):
        notes.append("\u2020 known not to satisfy its claim")
    if axis.ceilings and not axis.ceiling_on_axis:
        notes.append(f"ceiling {min(axis.ceilings):.3g} (off scale)")
    if at_zero:
        notes.append("bounds below the axis drawn at its left edge, value above")
    return notes


def _claim_label(results, rows, size) -> str:
    """The claim line's legend: a curve claim is compared at a delta of its own choosing, so it names both
    (an epsilon without its delta and curve would not say what the figure compares with)."""
    claim, delta = float(rows[0]["claimed_epsilon"]), rows[0].get("claimed_delta") or 0.0
    specs = {str(g["sweep"].get("audit.claim", (results.config.get("audit") or {}).get("claim"))) for g in rows}
    spec = specs.pop() if len(specs) == 1 else None
    if spec in (None, "None"):
        return f"claimed {EPS} = {claim:g}"
    label = f"claimed {EPS} = {claim:.4g} at {DELTA} = {delta:.2g}"
    # One column holds about 60 characters beside the legend's handle: a dpsgd: spec goes on a line of its own.
    return f"{label}{chr(10) if size == 'one-column' and len(label + spec) > 50 else ' '}({short_spec(spec)})"


def _bound_vs_claim_chart(results, groups, size):
    """The bound against the claimed epsilon, one series per mechanism, beside the diagonal and the ceiling."""
    labels = list(dict.fromkeys(g["mechanism"] for g in groups))
    claims = [float(g["claimed_epsilon"]) for g in groups if finite(g.get("claimed_epsilon"))]
    bounds = [g["epsilon_lower_bound_max"] for g in groups] + [g["epsilon_lower_bound_min"] for g in groups]
    # A claimed epsilon of 0 (a curve claim reported where it promises nothing above 0) has no place on a log axis.
    log = min(claims) > 0 and max(claims) / min(claims) > 30
    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.85 + 0.13 * math.ceil((len(labels) + 2) / 2))
    # Series at the same claim are nudged apart (a fraction of the axis) so that none hides another.
    span = (math.log(max(claims)) - math.log(min(claims))) if log else (max(claims) - min(claims) or 1.0)
    nudge = 0.012 * span
    deltas = sorted({float(g.get("claimed_delta") or 0.0) for g in groups})
    for i, label in enumerate(labels):
        gs = sorted((g for g in groups if g["mechanism"] == label), key=lambda g: g["claimed_epsilon"])
        off = (i - (len(labels) - 1) / 2) * nudge
        _claim_series(ax, gs, style_of(results, label, i), label, offset=off, log=log, several_deltas=len(deltas) > 1)
    top = _claim_axes(ax, bounds, claims, log)
    notes = _ceiling_line(ax, groups, top)
    # Every bound is at its claim's delta: the axis says which (one delta), or that the legend does.
    ax.set_xlabel(f"claimed {EPS} (at {DELTA} = {deltas[0]:g})" if len(deltas) == 1
                  else f"claimed {EPS} (at {DELTA} = 0 unless the legend gives one)" if deltas[0] == 0
                  else f"claimed {EPS} (at each claim's {DELTA}, in the legend)")
    conf = groups[0].get("confidence")
    ax.set_ylabel(f"{EPS} lower bound at the claimed {DELTA}\n({conf_text(conf)} confidence)")
    ntr = max(g["n_trials"] for g in groups)
    notes[:0] = [f"bars: range over {ntr} trials" if ntr > 1 else "1 trial per point", samples_text(groups)]
    if any(finite(g.get("true_epsilon")) and abs(g["true_epsilon"] - g["claimed_epsilon"]) > 1e-9 for g in groups):
        notes.append(f"open: true {EPS}")
    if any(g.get("broken") for g in groups):
        notes.append("\u2020 known not to satisfy its claim")
    return finish(fig, results, notes, size, ncol=2)


def _claim_series(ax, gs, st, label, *, offset: float, log: bool, several_deltas: bool) -> None:
    """One mechanism's bounds (median, range bars) at its claims shifted by ``offset``, and its open true epsilons."""
    x = np.array([g["claimed_epsilon"] for g in gs], dtype=float)
    x = x * math.exp(offset) if log else x + offset
    y = np.array([g["epsilon_lower_bound_median"] for g in gs], dtype=float)
    lo = np.array([g["epsilon_lower_bound_min"] for g in gs], dtype=float)
    hi = np.array([g["epsilon_lower_bound_max"] for g in gs], dtype=float)
    broken = any(g.get("broken") for g in gs)
    # An (epsilon, delta) claim says its delta where the claims differ in delta (the quickstart's Gaussian).
    own = sorted({float(g.get("claimed_delta") or 0.0) for g in gs})
    at = f" ({DELTA} = {own[0]:g})" if several_deltas and len(own) == 1 and own[0] > 0 else ""
    ax.errorbar(x, y, yerr=asymmetric_error(y - lo, hi - y), color=st["color"], marker=st["marker"],
                ls=st["linestyle"], capsize=2, lw=1.0, ms=3.8,
                label=str(label or "bound") + at + (" \u2020" if broken else ""), zorder=3)
    true = [(xx, g["true_epsilon"]) for xx, g in zip(x, gs) if finite(g.get("true_epsilon"))
            and abs(g["true_epsilon"] - g["claimed_epsilon"]) > 1e-9]
    if true:
        tx, ty = zip(*true)
        ax.plot(tx, ty, ls="none", marker=st["marker"], mfc="none", color=st["color"], ms=6, mew=0.8, zorder=2)


def _claim_axes(ax, bounds, claims, log: bool) -> float:
    """Limits (log-log or from 0) and the diagonal bound = claim; returns the top of the bound axis."""
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
    return top


def _ceiling_line(ax, groups, top: float) -> list:
    """The ceiling against the claim when it is on the axis; else a note saying where it is."""
    ceilings = sorted({round(g["ceiling"], 9) for g in groups if finite(g.get("ceiling"))})
    samples = groups[0].get("samples")
    if ceilings and min(ceilings) <= top:
        txt = f"ceiling ({samples:,} samples per side)" if isinstance(samples, int) else "ceiling"
        cx = sorted({(g["claimed_epsilon"], g["ceiling"]) for g in groups if finite(g.get("ceiling"))})
        ax.plot(*zip(*cx), color="0.1", ls=(0, (1, 1.5)), lw=0.9, label=txt)
        return []
    return [f"ceiling {min(ceilings):.3g} (off scale)"] if ceilings else []
