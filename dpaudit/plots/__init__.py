"""Figures for papers, drawn only from saved results (``dpaudit plot DIR/<name>``).

Nothing here runs a mechanism or an attack: each figure reads the resolved
config, ``trials.jsonl`` and ``summary.json`` of a results folder.

Figures (names usable in a config's ``plot.figures``):

``epsilon_vs_claimed``  epsilon lower bound vs claimed epsilon, diagonal and ceiling
``roc``                 an attack's ROC on log-log axes with the claimed frontier
``privacy_profile``     empirical epsilon(delta) vs the claimed curve
``reconstruction``      reconstruction accuracy vs noise/sqrt(n) and vs queries
``tracing``             tracing TPR at fixed FPR vs d, one curve per noise level
``rr_tradeoff``         randomized response error vs epsilon for several n
``trajectory``          a sequential audit's certified bound vs the releases drawn, per round
``one_run``             a one-run audit's guess precision and certified bound vs the number of guesses

:func:`plot_report` draws one audit (``AuditReport.plot()``).
"""

from __future__ import annotations

from pathlib import Path

from .figures import (
    plot_epsilon_vs_claimed,
    plot_privacy_profile,
    plot_reconstruction,
    plot_roc,
    plot_rr_tradeoff,
    plot_tracing,
    plot_trajectory,
)
from .one_run import plot_one_run
from .points import ONE_POINT_FIGURES, check_point, sweep_points
from .report import plot_report
from .style import OKABE_ITO, WIDTHS, paper_style, save_figure

__all__ = ["FIGURES", "draw_figures", "OKABE_ITO", "WIDTHS"] + [
    "plot_epsilon_vs_claimed", "plot_roc", "plot_privacy_profile", "plot_reconstruction", "plot_tracing",
    "plot_rr_tradeoff", "plot_trajectory", "plot_one_run", "plot_report",
]

FIGURES = {
    "epsilon_vs_claimed": plot_epsilon_vs_claimed,
    "roc": plot_roc,
    "privacy_profile": plot_privacy_profile,
    "reconstruction": plot_reconstruction,
    "tracing": plot_tracing,
    "rr_tradeoff": plot_rr_tradeoff,
    "trajectory": plot_trajectory,
    "one_run": plot_one_run,
}


def draw_figures(directory: "str | Path", *, size: str | None = None, figures=None, point: int | None = None
                 ) -> list[Path]:
    """Redraw a results folder's figures (PDF and PNG) from its files alone.

    Parameters
    ----------
    directory : path
        ``DIR/<name>`` as written by ``dpaudit run``.
    size : {"one-column", "two-column"}, optional
        Override the config's ``plot.size``.
    figures : list of str, optional
        Override the config's ``plot.figures``.
    point : int, optional
        The sweep point (from 1, as the figures number them) that the one-point figures (ROC, privacy
        profile, trajectory) draw; overrides the config's ``plot.point``.  Default: the last (the
        trajectory: every point).

    Returns
    -------
    list of Path
        The files written (a figure with nothing to draw is skipped).
    """
    from ..exceptions import ParameterValueError
    from ..results import load_results

    results = load_results(directory)
    plot_cfg = results.config.get("plot") or {}
    size = size or plot_cfg.get("size", "one-column")
    if size not in WIDTHS:
        raise ParameterValueError(f"--size must be one of {sorted(WIDTHS)}; got {size!r}")
    names = figures if figures is not None else plot_cfg.get("figures", [])
    if point is not None:
        check_point(point, len(sweep_points(results)))
    written: list[Path] = []
    for name in names:
        if name not in FIGURES:
            raise ParameterValueError(f"figure must be one of {sorted(FIGURES)}; got {name!r}")
        with paper_style():
            fig = FIGURES[name](results, size=size, **({"point": point} if name in ONE_POINT_FIGURES else {}))
            if fig is not None:
                written += save_figure(fig, Path(directory) / name, dpi=plot_cfg.get("dpi", 300))
    return written
