"""One audit's figure, for notebooks and scripts: :meth:`dpaudit.AuditReport.plot`.

Panels: the ROC on the held-out split with the claim's frontier and the
event the bound rests on; the privacy profile beside the claim; and, when the
audit ran in rounds, the certified bound against the samples drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._score_metrics import draw_tpr_at_fpr
from .elements import (DELTA, EPS, claim_curve_of, draw_curve_frontier, draw_curve_profile, draw_event, draw_frontier,
                       draw_profile_claim, draw_roc, roc_points, set_roc_axes)
from .style import legend_below, new_figure, paper_style, series_style, short_spec

__all__ = ["plot_report"]


def _as_dict(report) -> dict:
    if isinstance(report, dict):
        return report
    if hasattr(report, "to_dict"):
        return report.to_dict()
    raise TypeError(f"report must be an AuditReport or its dict; got {type(report).__name__}")


def _trajectory(d: dict):
    """``(samples, bounds)`` of a sequential audit with at least two rounds, else None."""
    traj = d.get("trajectory")
    if not isinstance(traj, dict):
        return None
    samples = np.asarray(traj.get("samples") or [], dtype=float)
    bounds = np.asarray(traj.get("epsilon_lower_bound") or [], dtype=float)
    if samples.size < 2 or samples.size != bounds.size:
        return None
    return samples, bounds


def _draw_bracket(ax, d: dict, x: float) -> float:
    """A grey-box audit's bracket at the claimed delta (``x``): the certified lower bound up to the upper bound
    (a filled cap when exact); returns the top it reaches (0 without a finite upper bound)."""
    gb = d.get("grey_box") or {}
    upper = gb.get("epsilon_upper_bound")
    if not isinstance(upper, (int, float)) or not np.isfinite(upper) or gb.get("bound") != "bound":
        return 0.0
    lower = float(d.get("epsilon_lower_bound") or 0.0)
    ax.plot([x, x], [lower, upper], color="black", lw=1.2, zorder=5)
    ax.plot([x], [lower], ls="none", marker="_", ms=8, color="black", zorder=5)
    ax.plot([x], [upper], ls="none", marker="v", ms=5, mfc="black" if gb.get("exact") else "white", mec="black",
            zorder=5, label=("grey-box: exact " if gb.get("exact") else "grey-box bracket: ") + f"{EPS} = {upper:.3g}")
    return float(upper)


def plot_report(report, *, size: str = "two-column"):
    """Draw one audit: ROC with the claim's frontier, privacy profile, sequential trajectory.

    Parameters
    ----------
    report : AuditReport or dict
        What :func:`dpaudit.audit` returned (or its ``to_dict()``/JSON).
    size : {"two-column", "one-column"}
        Panels side by side (6.9 in wide) or stacked (3.3 in wide).

    Returns
    -------
    matplotlib.figure.Figure
        Not shown: display it in a notebook or call ``fig.savefig(...)``.

    Examples
    --------
    >>> import dpaudit
    >>> from dpaudit.mechanisms import get_mechanism
    >>> m = get_mechanism("laplace", epsilon=1.0)
    >>> report = dpaudit.audit(m, *m.neighbouring_pair(), epsilon=1.0, samples=20_000, seed=0)
    >>> fig = report.plot()
    >>> [ax.get_xlabel() for ax in fig.axes]
    ['false positive rate', 'δ']
    """
    from ..exceptions import ParameterValueError
    from .style import WIDTHS

    if size not in WIDTHS:
        raise ParameterValueError(f"size must be one of {sorted(WIDTHS)}; got {size!r}")
    d = _as_dict(report)
    traj = _trajectory(d)
    panels = 3 if traj is not None else 2
    claimed = _claimed(d)
    st = series_style(0)
    label = str(d.get("target") or "audit")
    with paper_style():
        height = 2.9 if size == "two-column" else 2.6 * panels + 0.8
        fig, axes = new_figure(size, panels=panels, height=height)
        _roc_panel(axes[0], d, claimed, st, label)
        _profile_panel(axes[1], d, claimed, st)
        if traj is not None:
            _trajectory_panel(axes[2], d, claimed, traj)
        verdict = d.get("verdict", "")
        bound = d.get("epsilon_lower_bound")
        head = f"{label}: {verdict}"
        if isinstance(bound, (int, float)) and math.isfinite(bound):
            head += (f"; {EPS} \u2265 {bound:.3g} at {d.get('confidence', 0.95):.0%} confidence "
                     f"({claimed.text} claimed)")
        import textwrap

        fig.suptitle(textwrap.fill(head, 60 if size == "one-column" else 130), fontsize=7.5)
        legend_below(fig, ncol=3)
    return fig


@dataclass(frozen=True)
class _Claimed:
    """The report's claim as the panels draw it: the point (epsilon may be None), its text, the curve if any."""

    epsilon: float | None
    delta: float
    text: str
    curve: dict | None


def _claimed(d: dict) -> _Claimed:
    eps, delta = d.get("claimed_epsilon"), d.get("claimed_delta") or 0.0
    text = f"{EPS} = {eps:g}" + (f", {DELTA} = {delta:g}" if delta else "") if eps is not None else "no claim"
    curve = claim_curve_of(d)  # a claimed curve: drawn whole in both panels
    if curve is not None:
        text = str(d.get("claim") or "claimed curve")
    return _Claimed(eps, delta, text, curve)


def _roc_panel(ax_roc, d: dict, claimed: _Claimed, st: dict, label: str) -> None:
    """The held-out ROC with its boxes, the event the bound uses, the claim's frontier and chance."""
    roc = d.get("roc") or {}
    n = int(d.get("n_test") or max(1, int(d.get("samples") or 2) // 2))
    floor = 1.0
    if roc.get("fpr"):
        pts = roc_points(roc["fpr"], roc["tpr"], n)
        draw_roc(ax_roc, pts, style=st, label=f"{label}: ROC (95% boxes)")
        pos = pts["x_lo"][pts["x_lo"] > 0]
        floor = float(pos.min()) if pos.size else float(np.min(pts["x"][pts["x"] > 0], initial=1.0))
    draw_event(ax_roc, d, style=st, label="event the bound uses")
    floor = max(min(floor, 1.0 / n), 1e-12)
    draw_tpr_at_fpr(ax_roc, d, color=st["color"], floor=floor / 2)
    if claimed.curve is not None:
        draw_curve_frontier(ax_roc, claimed.curve, x_min=floor / 2, label=f"claimed frontier ({claimed.text})")
    elif claimed.epsilon is not None:
        draw_frontier(ax_roc, claimed.epsilon, claimed.delta, x_min=floor / 2,
                      label=f"claimed frontier ({claimed.text})")
    ax_roc.plot([floor / 2, 1], [floor / 2, 1], color="0.6", lw=0.7, ls=(0, (1, 2)), label="chance")
    set_roc_axes(ax_roc, floor / 2)
    ax_roc.set_title(f"ROC ({n:,} held-out samples per side)", fontsize=7)


def _profile_panel(ax_prof, d: dict, claimed: _Claimed, st: dict) -> None:
    """The certified epsilon(delta) beside the claimed curve or point, and a grey-box bracket if any."""
    eps, delta, curve = claimed.epsilon, claimed.delta, claimed.curve
    prof = d.get("privacy_profile") or {}
    pd = np.asarray(prof.get("delta") or [], dtype=float)
    pe = np.asarray(prof.get("epsilon") or [], dtype=float)
    keep = pd > 0
    d_lo = min([v for v in list(pd[keep]) + [delta] if v > 0] or [1e-6])
    if curve is not None:
        d_lo = min(d_lo, max(1e-8, float(np.min(curve["delta"][curve["delta"] > 0], initial=d_lo))))
    d_range = (d_lo / 2, max(list(pd) + [delta, 0.2]) * 2)
    if keep.any():
        ax_prof.plot(pd[keep], pe[keep], color=st["color"], marker=st["marker"], ms=3, lw=1.1,
                     label=f"{EPS}({DELTA}) lower bound")
    top = max([float(pe.max()) if pe.size else 0.0, float(eps or 0.0), float(d.get("epsilon_lower_bound") or 0)])
    if curve is not None:
        draw_curve_profile(ax_prof, curve, color=st["color"], label=f"claimed curve ({short_spec(claimed.text)})",
                           certified_label=f"certified by the event (all {DELTA} at once)")
        shown = curve["claimed_epsilon"][(curve["delta"] >= d_range[0]) & np.isfinite(curve["claimed_epsilon"])]
        top = max(top, float(np.max(shown, initial=0.0)))
        ax_prof.plot([delta], [d.get("epsilon_lower_bound") or 0.0], ls="none", marker="*", ms=8, mfc=st["color"],
                     mec="black", mew=0.5, label=f"reported point ({DELTA} = {delta:.2g})", zorder=4)
    elif eps is not None:
        draw_profile_claim(ax_prof, eps, delta, color="0.35" if not delta else st["color"], delta_range=d_range,
                           label=f"claim ({claimed.text})" + ("" if delta else f" (pure: every {DELTA})"))
    top = max(top, _draw_bracket(ax_prof, d, delta if delta else d_range[0] * 2))
    ax_prof.set_xscale("log")
    ax_prof.set_xlim(*d_range)
    ax_prof.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    ax_prof.set_xlabel(DELTA)
    ax_prof.set_ylabel(f"{EPS}({DELTA})")
    conf = prof.get("confidence") or d.get("confidence")
    ax_prof.set_title(f"privacy profile ({conf:.0%}, simultaneous)" if conf else "privacy profile", fontsize=7)


def _trajectory_panel(ax_t, d: dict, claimed: _Claimed, traj) -> None:
    """A sequential audit's certified bound after each round, beside the claimed epsilon."""
    eps = claimed.epsilon
    samples, bounds = traj
    tst = series_style(2)  # not the profile's style: a different quantity
    ax_t.plot(samples, bounds, color=tst["color"], marker=tst["marker"], ms=3, lw=1.1, drawstyle="steps-post",
              label=f"certified {EPS} lower bound")
    if eps is not None:
        at = f" at {DELTA} = {claimed.delta:.2g}" if claimed.curve is not None else ""  # a curve: the reported point's
        ax_t.axhline(eps, color="0.35", ls=(0, (5, 2)), lw=0.9, label=f"claimed {EPS} = {eps:.3g}{at}")
    if samples.max() / max(samples.min(), 1.0) >= 8:  # doubling rounds: evenly spaced on a log axis
        ax_t.set_xscale("log")
    ax_t.set_ylim(0, max(float(np.nanmax(bounds)), float(eps or 0.0)) * 1.15 or 1.0)
    ax_t.set_xlabel("samples per side (cumulative)")
    ax_t.set_ylabel(f"{EPS} lower bound")
    rounds = d.get("rounds") or len(samples)
    reason = d.get("stopping_reason")
    ax_t.set_title(f"sequential: {rounds} rounds" + (f"\nstopped: {reason}" if reason else ""), fontsize=7)
