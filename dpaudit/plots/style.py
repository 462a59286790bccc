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

__all__ = ["OKABE_ITO", "MARKERS", "WIDTHS", "new_figure", "save_figure", "colour", "paper_style"]

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision deficiencies.
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
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


@contextmanager
def paper_style():
    """Temporarily apply the paper rcParams."""
    with matplotlib.rc_context(_RC):
        yield


def new_figure(size: str = "one-column", *, panels: int = 1, aspect: float = 0.75) -> tuple[Figure, list]:
    """A figure ``WIDTHS[size]`` inches wide with ``panels`` axes.

    Two panels sit side by side in a two-column figure and stacked in a
    one-column one.
    """
    width = WIDTHS[size]
    if panels == 1:
        fig = Figure(figsize=(width, width * aspect), layout="constrained")
        axes = [fig.add_subplot(1, 1, 1)]
    elif size == "two-column":
        fig = Figure(figsize=(width, width / panels * aspect), layout="constrained")
        axes = [fig.add_subplot(1, panels, i + 1) for i in range(panels)]
    else:
        fig = Figure(figsize=(width, width * aspect * panels * 0.85), layout="constrained")
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
