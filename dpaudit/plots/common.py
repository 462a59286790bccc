"""Helpers shared by the results figures: the groups and sweep points a figure reads, styles, notes, legends.

Public names in a module of their own, so that each figure's module imports them without reaching
into another module's private names.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .style import legend_below, series_style

__all__ = [
    "WIDTH_HEIGHT", "add_title", "asymmetric_error", "conf_text", "differing_paths", "finish", "finite", "first_key",
    "fmt", "groups_of", "notes_text", "point_params", "point_title", "samples_text", "series_label", "style_index",
    "style_of", "sweep_paths",
]

#: Height of the axes area (inches) before legends and notes are added under or over it.
WIDTH_HEIGHT = {"one-column": 2.6, "two-column": 3.2}


def groups_of(results) -> list:
    """The summary's groups (sweep point x mechanism) that have at least one finished trial."""
    return [g for g in (results.summary or {}).get("groups", []) if g.get("n_trials")]


def point_params(results, group) -> dict:
    """The attack parameters at a group's sweep point (config values overridden by the sweep)."""
    params = dict(results.config.get("attack", {}).get("params", {}))
    for path, value in group["sweep"].items():
        if path.startswith("attack.params."):
            params[path[len("attack.params."):]] = value
    return params


def first_key(d: dict, names) -> str | None:
    """The first of ``names`` that is a key of ``d``, else None."""
    for n in names:
        if n in d:
            return n
    return None


def add_title(fig, results) -> None:
    """Put the config's ``plot.title`` (if any) above the figure's own title."""
    title = (results.config.get("plot") or {}).get("title")
    if title:
        existing = fig.get_suptitle()
        fig.suptitle(f"{title}\n{existing}" if existing else title, fontsize=8)


def style_index(results) -> dict:
    """Mechanism label -> its style index: its place in the config, the same in every figure."""
    labels = [m.get("label") for m in results.config.get("mechanisms") or [] if isinstance(m, dict)]
    return {label: i for i, label in enumerate(labels)}


def style_of(results, label, fallback: int) -> dict:
    """The series style of mechanism ``label`` (``fallback`` is its index when the config does not list it)."""
    return series_style(style_index(results).get(label, fallback))


def fmt(v) -> str:
    """A number to 4 significant digits, anything else as text."""
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return f"{v:.4g}"
    return str(v)


def sweep_paths(results) -> list:
    """The swept config paths (``attack.params.epsilon``, ...), in the sweep's order."""
    return list((results.summary or {}).get("sweep", {}).get("parameters", []))


def point_title(ax, point_note) -> None:
    """Say above the axes which sweep point a one-point figure shows."""
    if point_note:
        import textwrap

        width = int(75 * ax.get_position().width * ax.figure.get_figwidth() / 3.3)
        ax.set_title(textwrap.fill(point_note, width), fontsize=6.5, loc="left")


def series_label(group, shown_paths, fallback: str = "attack") -> str:
    """A series' legend: its mechanism and the values of ``shown_paths`` at its sweep point."""
    parts = [group["mechanism"]] if group.get("mechanism") else []
    # a mechanism's own swept parameters show up through its claim; name the others
    parts += [f"{k.split('.')[-1]}={fmt(group['sweep'][k])}" for k in shown_paths
              if not k.startswith("mechanisms.") and k in group["sweep"]]
    return ", ".join(parts) or fallback


def differing_paths(results, groups) -> list:
    """The swept paths whose values differ between ``groups``: the ones a legend must name."""
    return [k for k in sweep_paths(results) if len({str(g["sweep"].get(k)) for g in groups}) > 1]


def finite(v) -> bool:
    """True for a finite real number (not a bool)."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def notes_text(notes, size) -> str:
    """Notes for a legend title, one per line, wrapped to the figure's width."""
    import textwrap

    width = 62 if size == "one-column" else 130
    return "\n".join(textwrap.fill(n, width) for n in notes if n)


def finish(fig, results, notes, size, *, ncol):
    """The figures' common ending: the notes as the title of a legend below the axes (in grey), the title."""
    legend = legend_below(fig, ncol=ncol, title=notes_text(notes, size), title_fontsize=6)
    legend.get_title().set_color("0.3")
    add_title(fig, results)
    return fig


def samples_text(rows, key="samples", what="samples") -> str:
    """``"200,000 samples per side"`` (or a range), or "" when the rows do not say."""
    ns = sorted({int(r[key]) for r in rows if isinstance(r.get(key), numbers.Integral) and r[key] > 0})
    if not ns:
        return ""
    text = f"{ns[0]:,}" if len(ns) == 1 else f"{ns[0]:,} to {ns[-1]:,}"
    return f"{text} {what} per side"


def conf_text(conf) -> str:
    """A confidence as a percentage, or "stated" when the record does not give it."""
    return f"{conf:.0%}" if finite(conf) else "stated"

def asymmetric_error(below, above) -> np.ndarray:
    """``errorbar``'s ``yerr`` for errors ``below`` and ``above`` each point, as one 2 x n float array.

    One array, not a list of two: matplotlib checks a list row by row, which numpy warns about on a
    one-point series.
    """
    return np.vstack([np.asarray(below, dtype=float), np.asarray(above, dtype=float)])
