"""The held-out figures of one sweep point: ``roc`` (the attack's ROC beside the claimed frontier) and
``privacy_profile`` (the certified epsilon(delta) beside the claimed curve).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .common import (WIDTH_HEIGHT, conf_text, differing_paths, finish, finite, groups_of, point_title, samples_text,
                     series_label, style_of)
from .elements import (DELTA, EPS, claim_curve_of, draw_curve_frontier, draw_curve_profile, draw_event, draw_frontier,
                       draw_profile_claim, draw_roc, roc_points, set_roc_axes)
from .points import one_point
from .style import new_figure, short_spec

__all__ = ["plot_roc", "plot_privacy_profile"]


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
    chosen, point_note = one_point(results, groups_of(results), point)
    curves = []
    for g in chosen:
        ts = results.trials_at(g["point"], g["mechanism"])
        if ts and isinstance(ts[0]["result"].get("roc"), dict) and ts[0]["result"]["roc"].get("fpr"):
            curves.append((g, ts[0]["result"], len(ts)))
    if not curves:
        return None
    paths = differing_paths(results, [g for g, _, _ in curves])
    curves = curves[:12]
    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.55 + 0.13 * math.ceil((len(curves) + 3) / 2))
    floor = 1.0
    frontiers: dict = {}
    curve_frontiers: dict = {}
    for i, (g, r, _) in enumerate(curves):
        st = style_of(results, g["mechanism"], i)
        pts = roc_points(r["roc"]["fpr"], r["roc"]["tpr"], _roc_n(r))
        draw_roc(ax, pts, style=st, label=series_label(g, paths))
        draw_event(ax, r, style=st, label=None)
        pos = pts["x"][(pts["x"] > 0) & (pts["y"] > 0)]
        if pos.size:
            floor = min(floor, float(pos.min()), float(np.min(pts["x_lo"][pts["x_lo"] > 0], initial=1.0)))
        eps, delta = r.get("claimed_epsilon"), r.get("claimed_delta") or 0.0
        if claim_curve_of(r) is not None:  # a claimed curve: its whole frontier, once per claim
            curve_frontiers.setdefault(str(r.get("claim")), claim_curve_of(r))
        elif finite(eps):
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
    set_roc_axes(ax, floor / 2)
    held_out = [{"n": _roc_n(r)} for _, r, _ in curves]
    notes = ["shaded: 95% Clopper-Pearson box on both rates, per point",
             samples_text(held_out, key="n", what="held-out samples")]
    ntr = max(n for _, _, n in curves)
    if ntr > 1:
        notes.append(f"trial 1 of {ntr}")
    point_title(ax, point_note)
    return finish(fig, results, notes, size, ncol=2)


# 3 ----------------------------------------------------------------------------------------------
def plot_privacy_profile(results, *, size="one-column", point=None):
    """Certified lower bounds on epsilon(delta) beside each claim.

    Line: median over trials; band: range over trials.  An (epsilon, delta)
    claim is a point (star); a pure claim (delta = 0) bounds every delta and is
    a dashed line.  The mechanism's exact epsilon(delta) is dotted when known
    (for a correct mechanism it is the claimed mechanism's own curve).
    """
    series, point_note = _profile_series(results, point)
    if not series:
        return None
    paths = differing_paths(results, [g for g, _ in series])
    series = series[:12]
    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.75 + 0.13 * math.ceil((len(series) + 3) / 2))
    results_of = [ts[0]["result"] for _, ts in series]
    all_delta = np.concatenate([np.asarray(r["privacy_profile"]["delta"], dtype=float) for r in results_of]
                               + [[r.get("claimed_delta") or 0.0 for r in results_of]])
    d_range = (all_delta[all_delta > 0].min() / 2, all_delta.max() * 2)
    # Claims equal to 6 decimals are one claim (randomized response's p is given to 8 digits).
    pure = {round(float(r["claimed_epsilon"]), 6) for r in results_of
            if finite(r.get("claimed_epsilon")) and not r.get("claimed_delta")}
    top = max(pure, default=0.0)
    shared = None
    if len(pure) == 1:  # one pure claim shared by every mechanism: one grey line
        shared = pure.pop()
        draw_profile_claim(ax, shared, 0.0, color="0.35", delta_range=d_range)
    kinds, curves_drawn = set(), set()
    for i, (g, ts) in enumerate(series):
        st = style_of(results, g["mechanism"], i)
        label = series_label(g, paths, "certified lower bound") + (" \u2020" * bool(g.get("broken")))
        top = max(top, _measured_profile(ax, ts, st, label))
        r = ts[0]["result"]
        top = max(top, _claimed_profile(ax, r, st, d_range, pure, kinds, curves_drawn))
        top = max(top, _true_profile(ax, r, st, kinds))
    _profile_legend(ax, kinds, shared)
    ax.set_xscale("log")
    ax.set_xlim(*d_range)
    ax.set_ylim(0, top * 1.08 if top > 0 else 1.0)
    ax.set_xlabel(DELTA)
    ax.set_ylabel(f"{EPS}({DELTA})")
    ntr = max(len(ts) for _, ts in series)
    conf = results_of[0]["privacy_profile"].get("confidence") or results_of[0].get("confidence")
    notes = [f"markers: lower bounds, simultaneous over {DELTA} at {conf_text(conf)} confidence"
             + (f"; line: median, band: range over {ntr} trials" if ntr > 1 else ""), samples_text(results_of)]
    if any(g.get("broken") for g, _ in series):
        notes.append("\u2020 known not to satisfy its claim")
    point_title(ax, point_note)
    return finish(fig, results, notes, size, ncol=2)


def _profile_series(results, point) -> tuple[list, str | None]:
    """``[(group, trials)]`` whose every trial recorded a profile, and the title naming the sweep point drawn."""
    groups = groups_of(results)
    wanted = point if point is not None else (results.config.get("plot") or {}).get("point")
    if wanted is None and _one_claim(results, groups):  # the points differ only in what is audited: draw them all
        chosen, point_note = groups, None
    else:
        chosen, point_note = one_point(results, groups, point)
    series = []
    for g in chosen:
        ts = results.trials_at(g["point"], g["mechanism"])
        prof = [t["result"].get("privacy_profile") for t in ts]
        if prof and all(isinstance(p, dict) and p.get("delta") for p in prof):
            series.append((g, ts))
    return series, point_note


def _measured_profile(ax, ts, st, label) -> float:
    """The certified profile: median over trials (solid), range as a band; returns its largest epsilon."""
    delta = np.asarray(ts[0]["result"]["privacy_profile"]["delta"], dtype=float)
    eps = np.array([t["result"]["privacy_profile"]["epsilon"] for t in ts], dtype=float)
    keep = delta > 0
    if len(ts) > 1:
        ax.fill_between(delta[keep], eps.min(0)[keep], eps.max(0)[keep], color=st["color"], alpha=0.2, lw=0)
    # Solid: in this figure dashes mean a claim and dots an exact curve.
    ax.plot(delta[keep], np.median(eps, 0)[keep], color=st["color"], marker=st["marker"], ls="-",
            ms=3, lw=1.1, label=label, zorder=3)
    return float(eps.max())


def _claimed_profile(ax, r, st, d_range, pure, kinds: set, curves_drawn: set) -> float:
    """The record's claim: a curve drawn whole (once per claim), a point, or a pure claim's line (when not the
    shared grey one); records the kind in ``kinds``; returns the largest epsilon drawn (-inf if none)."""
    claim_eps, claim_delta = r.get("claimed_epsilon"), r.get("claimed_delta") or 0.0
    curve = claim_curve_of(r)
    if curve is not None:  # a claimed curve, drawn whole (dashed), once
        if str(r.get("claim")) not in curves_drawn:
            curves_drawn.add(str(r.get("claim")))
            draw_curve_profile(ax, curve, color=st["color"], label=f"claimed curve ({short_spec(r.get('claim'))})")
        return float(np.max(curve["claimed_epsilon"][(curve["delta"] >= d_range[0])
                                                     & np.isfinite(curve["claimed_epsilon"])], initial=0.0))
    if not finite(claim_eps):
        return -math.inf
    kinds.add("point" if claim_delta else "line")
    if claim_delta or round(float(claim_eps), 6) in pure:
        draw_profile_claim(ax, claim_eps, claim_delta, color=st["color"], delta_range=d_range)
    return float(claim_eps)


def _true_profile(ax, r, st, kinds: set) -> float:
    """The mechanism's exact epsilon(delta), dotted, when the record knows it; returns its largest epsilon."""
    true = r.get("true_profile")
    if not (isinstance(true, dict) and true.get("delta")):
        return -math.inf
    td = np.asarray(true["delta"], dtype=float)
    te = np.array([np.nan if e is None else e for e in true["epsilon"]], dtype=float)
    ok = (td > 0) & np.isfinite(te)
    if not ok.any():
        return -math.inf
    kinds.add("exact")
    ax.plot(td[ok], te[ok], color=st["color"], ls=(0, (1, 1.2)), lw=1.2, zorder=2)
    return float(np.nanmax(te[ok]))


def _profile_legend(ax, kinds: set, shared) -> None:
    """One legend entry per kind of line, in grey: the colours are the mechanisms'."""
    if "line" in kinds:
        value = f" = {shared:g}" if shared is not None else ""
        ax.plot([], [], color="0.35", ls=(0, (5, 2)), lw=0.9, label=f"claim {EPS}{value} (pure: every {DELTA})")
    if "point" in kinds:
        ax.plot([], [], ls="none", marker="*", ms=8, mfc="0.6", mec="black", mew=0.5, label=f"claim ({EPS}, {DELTA})")
    if "exact" in kinds:
        ax.plot([], [], color="0.35", ls=(0, (1, 1.2)), lw=1.2, label=f"exact {EPS}({DELTA}) of the mechanism")


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
