"""The one-run audit's figure: how precise the guesses are, and what each number of guesses certifies.

Drawn from the trial records alone (each record's ``tests``: for every number of guesses tried, the
correct guesses and the bound certified at that count's share of the confidence).
"""

from __future__ import annotations

import math
import textwrap

import numpy as np

from ..stats.clopper_pearson import clopper_pearson_interval
from .common import finite
from .elements import DELTA, EPS
from .style import legend_below, new_figure, series_style, short_spec

__all__ = ["plot_one_run"]


def _claim_name(r: dict) -> str:
    if r.get("claim"):
        return short_spec(str(r["claim"]))
    eps, delta = r.get("claimed_epsilon"), r.get("claimed_delta") or 0.0
    return f"{EPS} = {eps:g}" + (f", {DELTA} = {delta:g}" if delta else "")


def _records(results) -> list[dict]:
    """The first trial of every sweep point that holds a one-run audit, in sweep order."""
    seen, out = set(), []
    for t in sorted(results.trials, key=lambda t: (t["point"], t.get("repetition", 0))):
        r = t.get("result") or {}
        if t["point"] in seen or not isinstance(r.get("tests"), list) or not r["tests"] or "canaries" not in r:
            continue
        seen.add(t["point"])
        out.append(r)
    return out


def plot_one_run(results, *, size="one-column"):
    """One-run audits: the guesses' precision and the certified epsilon against the number of guesses.

    Top: the share of correct guesses among the r highest-scored canaries, with 95% Clopper-Pearson
    intervals (the same scores give the same points, drawn once), beside e^eps / (1 + e^eps), the most
    an epsilon-DP release lets a guess be right on average (Steinke, Nasr and Jagielski 2023; pure
    claims only), and chance.  Bottom: each claim's certified epsilon lower bound for every number of
    guesses, at the delta the audit reported, with that claim's epsilon there (dashed); the star is
    the reported bound.  None when no trial holds a one-run audit.
    """
    records = _records(results)
    if not records:
        return None
    fig, (ax_p, ax_e) = new_figure(size, panels=2, height=5.4 if size == "one-column" else 3.0)
    drawn: dict = {}
    bounds: dict = {}
    claim_lines: list = []
    top = 0.0
    for i, r in enumerate(records):
        st = series_style(i)
        name = _claim_name(r)
        rows = sorted(r["tests"], key=lambda row: row["guesses"])
        _precision(ax_p, r, rows, st, drawn)
        eps, delta = r.get("claimed_epsilon"), r.get("claimed_delta") or 0.0
        if not r.get("claim") and not delta and finite(eps):
            ax_p.axhline(math.exp(eps) / (1 + math.exp(eps)), color=st["color"], ls=(0, (5, 2)), lw=0.9,
                         label=f"most an {name} claim allows: e^{EPS}/(1+e^{EPS})")
        at_delta = [row for row in rows if float(row.get("delta") or 0.0) == float(delta)]
        rejected = ", whole curve rejected" if r.get("curve_rejected") else ""
        verdict = "violation" if r.get("verdict") == "violation" else "no violation"
        at = f" at {DELTA} = {delta:.2g}" if r.get("claim") else ""
        # The claim at the reported delta: a point test's row, or the f-DP test's crossed point (no row of its own).
        claimed = float(at_delta[0]["claimed_epsilon"]) if at_delta else r.get("claimed_epsilon")
        top = max(top, _bounds(ax_e, r, at_delta, st, bounds))
        if finite(claimed):
            claim_lines.append((float(claimed), st["color"], f"claim {name}{at}: {verdict}{rejected}"))
    _draw_claim_lines(ax_e, claim_lines, top)
    _one_run_axes(ax_p, ax_e, records, bounds)
    _wrap_labels((ax_p, ax_e), 52 if size == "one-column" else 110)
    legend_below(fig, ncol=1)
    title = (results.config.get("plot") or {}).get("title")
    if title:
        fig.suptitle(title, fontsize=8)
    return fig


def _precision(ax_p, r: dict, rows: list, st: dict, drawn: dict) -> None:
    """Correct / guesses at each number of guesses with Clopper-Pearson bars, once per set of scores (the
    precision is the scores', not the claim's)."""
    guesses = sorted({int(row["guesses"]) for row in rows})
    correct = [next(int(row["correct"]) for row in rows if row["guesses"] == g) for g in guesses]
    key = (tuple(guesses), tuple(correct))
    if key in drawn:
        return
    drawn[key] = st
    g, c = np.array(guesses, dtype=float), np.array(correct, dtype=float)
    lo, hi = clopper_pearson_interval(c, g)
    ax_p.errorbar(g, c / g, yerr=np.vstack([c / g - lo, hi - c / g]), color="0.15", marker="o", ms=3.2,
                  lw=1.0, capsize=2, label=f"correct / guesses ({r['canaries']:,} canaries)" if not
                  ax_p.get_legend_handles_labels()[1] else None, zorder=3)


def _bounds(ax_e, r: dict, at_delta: list, st: dict, bounds: dict) -> float:
    """The bound per number of guesses at the reported delta (one line per distinct set of bounds: a pure
    claim's do not depend on the claim) and the reported bound (a star); returns the largest bound drawn."""
    top = 0.0
    colour = st["color"]
    if at_delta:
        x = np.array([row["guesses"] for row in at_delta], dtype=float)
        y = np.array([row["epsilon_lower_bound"] for row in at_delta], dtype=float)
        curve = (tuple(x), tuple(np.round(y, 9)))
        if curve not in bounds:
            bounds[curve] = st
            ax_e.plot(x, y, color=st["color"], marker=st["marker"], ls="-", ms=3.2, lw=1.1, zorder=3)
        colour = bounds[curve]["color"]
        top = max(top, float(np.max(y, initial=0.0)))
    if finite(r.get("epsilon_lower_bound")) and finite(r.get("guesses")):
        ax_e.plot([r["guesses"]], [r["epsilon_lower_bound"]], ls="none", marker="*", ms=8, mfc=colour,
                  mec="black", mew=0.5, zorder=4)
        top = max(top, float(r["epsilon_lower_bound"]))
    return top


def _draw_claim_lines(ax_e, claim_lines: list, top: float) -> None:
    """Each claim's epsilon (dashed); claims far above every bound would squash the bounds to the floor: they
    are named, not drawn."""
    top = max([top * 1.6] + [c for c, _, _ in claim_lines if c <= top * 1.6])
    for claimed, colour, label in claim_lines:
        if claimed <= top:
            ax_e.axhline(claimed, color=colour, ls=(0, (5, 2)), lw=0.9, zorder=2, label=label)
        else:
            ax_e.plot([], [], color=colour, ls=(0, (5, 2)), lw=0.9,
                      label=f"{label} ({EPS} = {claimed:.3g}, above the axis)")
    ax_e.set_ylim(0, top * 1.05 if top > 0 else 1.0)


def _one_run_axes(ax_p, ax_e, records: list, bounds: dict) -> None:
    """Both panels' axes (the numbers of guesses tried as ticks), chance, the bound legend, the titles."""
    ax_p.axhline(0.5, color="0.5", ls=(0, (1, 1.5)), lw=0.8, label="chance")
    ticks = sorted({int(row["guesses"]) for r in records for row in r["tests"]})
    for ax in (ax_p, ax_e):
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks, [f"{t:,}" for t in ticks])  # the counts tried (m, m/2, ...), not powers of two
        ax.minorticks_off()
        ax.set_xlabel("number of guesses r (the r highest-scored canaries)")
    ax_p.set_ylabel("share of guesses correct")
    ax_p.set_ylim(0.4, 1.02)
    ax_e.set_ylabel(f"certified {EPS} lower bound")
    shared = len(bounds) == 1 and len(records) > 1 and all(
        any(float(row.get("delta") or 0.0) == float(r.get("claimed_delta") or 0.0) for row in r["tests"])
        for r in records)
    ax_e.plot([], [], color="0.15", marker="o", ms=3.2, lw=1.1,
              label=f"certified {EPS} lower bound" + (" (the same for every claim)" if shared else
                                                       " (in its claim's colour)"))
    ax_e.plot([], [], ls="none", marker="*", ms=8, mfc="0.6", mec="black", mew=0.5, label="the reported bound")
    conf = records[0].get("confidence")
    deltas = sorted({float(r.get("claimed_delta") or 0.0) for r in records})
    ax_p.set_title("guess precision (bars: 95% Clopper-Pearson)", fontsize=7, loc="left")
    ax_e.set_title(f"bound per number of guesses at {conf:.0%} confidence (each count its share), at "
                   + (f"{DELTA} = {deltas[0]:g}" if len(deltas) == 1 else f"each claim's reported {DELTA}"),
                   fontsize=7, loc="left", wrap=True)


def _wrap_labels(axes, width: int) -> None:
    """Legend labels wrapped to ``width`` characters (one column holds about 52 beside a legend handle)."""
    for ax in axes:
        for artist in ax.get_lines() + ax.containers:
            label = artist.get_label()
            if label and not label.startswith("_") and len(label) > width:
                artist.set_label(textwrap.fill(label, width))
