"""The terminal table of ``dpaudit run``: at most :data:`TABLE_WIDTH` columns, numbers without e-notation.

The search, training, scores and tracing kinds have 15 to 23 metric columns, too wide for a terminal, and
counts read badly in e-notation (``fn 4.122e+04``).  A table that does not fit keeps the columns a reader
needs first (the bound, the claim, the verdict's count, the rates, the samples: :data:`PRIORITY`), then
others while they fit; every statistic of every metric stays in ``summary.json``.
"""

from __future__ import annotations

import math

__all__ = ["TABLE_WIDTH", "PRIORITY", "HEADERS", "fmt_number", "fit_columns", "render"]

#: Characters a terminal table may take.
TABLE_WIDTH = 100

#: Metric columns a reader needs, most needed first; a table too wide for the terminal shows these first.
PRIORITY = (
    "epsilon_lower_bound", "claimed_epsilon", "claimed_delta", "verdict", "violations", "curve_rejections",
    "candidates_screened", "true eps", "true_epsilon", "tpr", "fpr", "theory_tpr", "accuracy", "samples", "ceiling",
    "gdp_mu_lower_bound", "rounds",
)

#: Shorter column names for the longest metrics (the audit kind's table says "claimed eps" too).
HEADERS = {"epsilon_lower_bound": "eps_lower_bound", "claimed_epsilon": "claimed_eps",
           "distribution_epsilon_lower_bound": "distribution_eps_lower_bound"}

_SEP = "  "


def fmt_number(v) -> str:
    """A table cell: whole numbers as integers (a count of 41220, not ``4.122e+04``), others to 4 digits.

    >>> [fmt_number(v) for v in (41220.0, 200000, 0.09002, 1e-05, 12345.6, float("inf"), None, "laplace")]
    ['41220', '200000', '0.09002', '1e-05', '12346', 'inf', '-', 'laplace']
    """
    if v is None:
        return "-"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if not math.isfinite(v):
        return str(v)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    if abs(v) >= 1e4:
        return f"{v:.0f}"
    return f"{v:.4g}"


def _width(columns: list[list[str]]) -> int:
    return sum(max(len(c) for c in col) for col in columns) + len(_SEP) * (len(columns) - 1)


def fit_columns(header: list[str], rows: list[list[str]], *, keep: int, names: list[str],
                width: int = TABLE_WIDTH) -> list[int]:
    """Indices of the columns to show: all when they fit in ``width``; else the first ``keep`` (what a row is:
    the sweep point and its trials), then the others by :data:`PRIORITY` of their metric ``names`` (one per
    column after ``keep``), then in order, each while the table still fits.

    >>> fit_columns(["d", "fn", "tpr"], [["100", "41220", "0.5"]], keep=1, names=["fn", "tpr"], width=9)
    [0, 2]
    """
    columns = [[h, *(r[i] for r in rows)] for i, h in enumerate(header)]
    if _width(columns) <= width:
        return list(range(len(header)))
    chosen = list(range(min(keep, len(header))))
    rest = list(range(keep, len(header)))
    rank = {name: i for i, name in enumerate(PRIORITY)}
    rest.sort(key=lambda i: (rank.get(names[i - keep], len(PRIORITY)), i))
    for i in rest:
        if _width([columns[j] for j in chosen + [i]]) <= width:
            chosen.append(i)
    return chosen


def render(header: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns two spaces apart, a rule under the header."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)] if rows else [len(h) for h in header]
    lines = [_SEP.join(str(x).ljust(w) for x, w in zip(header, widths)).rstrip()]
    lines.append(_SEP.join("-" * w for w in widths))
    lines += [_SEP.join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)
