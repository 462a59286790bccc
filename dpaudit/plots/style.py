"""Figure style for papers: Okabe-Ito colours, column widths, vector PDF + PNG.

Figures are built on :class:`matplotlib.figure.Figure` with the Agg canvas,
never through ``pyplot``, so drawing does not touch the global backend or
open windows.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = [
    "OKABE_ITO",
    "MARKERS",
    "LINESTYLES",
    "WIDTHS",
    "new_figure",
    "save_figure",
    "colour",
    "series_style",
    "legend_below",
    "columns_that_fit",
    "paper_style",
]

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision deficiencies.
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
# Series colours: Okabe-Ito without its yellow, which is too pale for lines and markers on white.
SERIES_COLOURS = [c for c in OKABE_ITO if c != "#F0E442"]
LINESTYLES = ["-", (0, (5, 1.5)), (0, (3, 1, 1, 1)), (0, (1, 1))]
WIDTHS = {"one-column": 3.3, "two-column": 6.9}

_RC = {
    "font.size": 8,
    "axes.labelsize": 8,
    "axes.titlesize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 6.5,
    "legend.frameon": False,
    "lines.linewidth": 1.2,
    "lines.markersize": 4,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "grid.linewidth": 0.5,
    "pdf.fonttype": 42,  # embed TrueType so journals' checkers accept the PDF
    "ps.fonttype": 42,
    "savefig.dpi": 300,
}


def colour(i: int) -> str:
    """The i-th colour of the palette (cycling).

    >>> colour(0), colour(8)
    ('#0072B2', '#0072B2')
    """
    return OKABE_ITO[i % len(OKABE_ITO)]


def series_style(i: int) -> dict:
    """Colour, marker and line style of the i-th series of a figure.

    Colours (7) and markers (8) cycle with coprime periods, so no two of the
    first 56 series share a colour+marker pair; the line style changes too,
    so curves that coincide stay distinguishable in print.

    >>> series_style(0) == series_style(56), series_style(0) == series_style(7)
    (True, False)
    >>> len({(series_style(i)["color"], series_style(i)["marker"]) for i in range(56)})
    56
    """
    return {
        "color": SERIES_COLOURS[i % len(SERIES_COLOURS)],
        "marker": MARKERS[i % len(MARKERS)],
        "linestyle": LINESTYLES[i % len(LINESTYLES)],
    }


def legend_below(fig: Figure, *, ncol: int = 2, **kw):
    """A figure legend under the axes, outside every axes, inside the figure.

    Constrained layout shrinks the axes to make room, so the legend never
    covers data, ticks or tick labels.  Returns None when nothing is labelled.
    """
    handles, labels = [], []
    for ax in fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if not handles:
        return None
    fits = columns_that_fit(labels, fig.get_figwidth() * 0.97)
    return fig.legend(handles, labels, loc="outside lower center", ncol=max(1, min(ncol, fits, len(handles))), **kw)


def columns_that_fit(labels, width_inches: float) -> int:
    """How many legend columns of these labels fit in ``width_inches`` (about 0.6 em a character).

    >>> columns_that_fit(["k = 250", "k = 550"], 3.3), columns_that_fit(["a rather long legend label"] * 3, 3.3)
    (4, 1)
    """
    em = matplotlib.rcParams["legend.fontsize"]
    em = (em if isinstance(em, (int, float)) else 7.0) / 72.0
    column = 4.2 * em + 0.6 * em * max(len(lab) for lab in labels)
    return max(1, int(width_inches // column))


def short_spec(spec) -> str:
    """A claim spec for a legend: its numbers to 4 significant digits (``noise=2.38539450839`` -> ``noise=2.385``)."""
    import re

    return re.sub(r"\d+\.\d{4,}(?:e[-+]?\d+)?", lambda m: f"{float(m.group()):.4g}", str(spec))


@contextmanager
def paper_style():
    """Temporarily apply the paper rcParams."""
    with matplotlib.rc_context(_RC):
        yield


def new_figure(size: str = "one-column", *, panels: int = 1, aspect: float = 0.75,
               height: float | None = None) -> tuple[Figure, list]:
    """A figure ``WIDTHS[size]`` inches wide with ``panels`` axes.

    Two panels sit side by side in a two-column figure and stacked in a
    one-column one.  ``height`` (inches) overrides the aspect ratio.
    """
    width = WIDTHS[size]
    if panels == 1:
        fig = Figure(figsize=(width, height or width * aspect), layout="constrained")
        axes = [fig.add_subplot(1, 1, 1)]
    elif size == "two-column":
        fig = Figure(figsize=(width, height or width / panels * aspect), layout="constrained")
        axes = [fig.add_subplot(1, panels, i + 1) for i in range(panels)]
    else:
        fig = Figure(figsize=(width, height or width * aspect * panels * 0.85), layout="constrained")
        axes = [fig.add_subplot(panels, 1, i + 1) for i in range(panels)]
    FigureCanvasAgg(fig)
    return fig, axes


def save_figure(fig: Figure, stem: "str | Path", *, dpi: int = 300) -> list[Path]:
    """Write ``stem.pdf`` (vector) and ``stem.png``; return both paths.

    Metadata that changes from run to run (creation date) is left out.
    """
    stem = Path(stem)
    pdf, png = stem.with_suffix(".pdf"), stem.with_suffix(".png")
    fig.savefig(pdf, format="pdf", metadata={"CreationDate": None})
    fig.savefig(png, format="png", dpi=dpi)
    return [pdf, png]
