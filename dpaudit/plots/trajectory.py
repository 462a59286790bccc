"""``trajectory``: a sequential audit's certified bound against the releases drawn, round by round."""

from __future__ import annotations

import math

import numpy as np

from .common import (WIDTH_HEIGHT, conf_text, differing_paths, finish, finite, fmt, groups_of, point_title,
                     series_label, style_of)
from .elements import DELTA, EPS
from .points import one_point
from .style import new_figure, series_style, short_spec

__all__ = ["plot_trajectory", "MAX_SERIES"]


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
            if _sequential_trajectory(r) is not None and finite(r.get("claimed_epsilon"))]


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
    series, own_claims, point_note = _trajectory_series(results, point)
    if not series:
        return None
    paths = differing_paths(results, [g for g, _, _ in series])
    n_series = len(series)
    series = series[:MAX_SERIES]
    fig, (ax,) = new_figure(size, height=WIDTH_HEIGHT[size] + 0.75 + 0.13 * math.ceil((len(series) + 3) / 2))
    claims: dict = {}
    per_trial: list = []
    lo, hi, top = math.inf, 0.0, 0.0
    several_points = len({g["point"] for g, _, _ in series}) > 1
    for i, (g, first, rows) in enumerate(series):
        # A mechanism keeps its style across figures; drawn at several sweep points, each series needs its own.
        st = series_style(i) if several_points else style_of(results, g["mechanism"], i)
        stops, (s_lo, s_hi, s_top) = _draw_trials(ax, rows, st)
        lo, hi, top = min(lo, s_lo), max(hi, s_hi), max(top, s_top)
        # A search kind's groups have no mechanism: its target names the series.
        name = series_label(g, paths) if g.get("mechanism") or paths else str(first.get("target") or "audit")
        own = []
        if several_points and g.get("mechanism"):  # its own swept parameters tell its points apart
            own = [f"{k.split('.')[-1]}={fmt(v)}" for k, v in g["sweep"].items()
                   if k.startswith(f"mechanisms.{g['mechanism']}.") or k.startswith("mechanisms.*.")]
        ax.plot([], [], color=st["color"], marker=st["marker"], ms=3, lw=1.1,
                label=f"{name} ({'; '.join([', '.join(own)] * bool(own) + [f'stopped: {stops}'])})")
        name = f"{name} ({', '.join(own)})" if own else name
        eps, delta = first.get("claimed_epsilon"), first.get("claimed_delta") or 0.0
        if len(set(own_claims[i])) > 1:  # a curve claim: each trial's bound is at its own delta
            per_trial.append((st["color"], name, first.get("claim"), own_claims[i]))
            top = max([top, *(e for e, _ in own_claims[i])])
        elif finite(eps):
            claims.setdefault((float(eps), float(delta), first.get("claim")), []).append((st["color"], name))
            top = max(top, float(eps))
    _per_trial_claim_lines(ax, per_trial, lo, hi)
    _claim_lines(ax, claims, size=size, several_points=several_points)
    if hi / max(lo, 1.0) > 30:
        ax.set_xscale("log")
    else:  # from 0: a run whose audits all stopped at one size is not a point on an axis of +-5%
        ax.set_xlim(0, hi * 1.08)
    # Below 0 by a little: a bound of 0 (nothing certified yet) is a whole marker, not half of one cut by the axis.
    ax.set_ylim(-0.03 * (top if top > 0 else 1.0), top * 1.12 if top > 0 else 1.0)
    ax.set_xlabel("releases drawn per side (cumulative)")
    ax.set_ylabel(f"certified {EPS} lower bound")
    point_title(ax, point_note)
    return finish(fig, results, _trajectory_notes(series, n_series), size, ncol=1)


def _trajectory_series(results, point) -> tuple[list, list, str | None]:
    """``[(group, its first record, its trials' trajectories)]`` of the groups with a sequential trial, each
    group's per-trial claims, and the title naming the sweep point drawn (every point unless one is chosen)."""
    wanted = point if point is not None else (results.config.get("plot") or {}).get("point")
    if wanted is None:
        chosen, point_note = groups_of(results), None
    else:
        chosen, point_note = one_point(results, groups_of(results), point)
    series, own_claims = [], []
    for g in chosen:
        records = [t["result"] for t in results.trials_at(g["point"], g["mechanism"])]
        rows = [tr for tr in (_sequential_trajectory(r) for r in records) if tr is not None]
        if rows:
            series.append((g, records[0], rows))
            own_claims.append(_trial_claims(records))
    return series, own_claims, point_note


def _draw_trials(ax, rows, st) -> tuple[str, tuple[float, float, float]]:
    """One series' trials as step lines (the first solid, the others faint) with a mark at each stop; returns
    the stopping reasons counted and (fewest samples, most samples, largest bound) drawn."""
    reasons: dict = {}
    lo, hi, top = math.inf, 0.0, 0.0
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
    return stops, (lo, hi, top)


def _per_trial_claim_lines(ax, per_trial: list, lo: float, hi: float) -> None:
    """A curve claim's point at each trial's own delta: a dashed line per trial, in the series' colour."""
    for colour, name, spec, points in per_trial:
        for j, (eps, _) in enumerate(points):
            ax.plot([lo, hi], [eps, eps], color=colour, ls=(0, (5, 2)), lw=0.9 if j == 0 else 0.6,
                    alpha=1.0 if j == 0 else 0.35, zorder=2)
        ax.plot([], [], color=colour, ls=(0, (5, 2)), lw=0.9, label=f"{name}: claim {spec} at each trial's {DELTA}")


def _claim_lines(ax, claims: dict, *, size: str, several_points: bool) -> None:
    """One dashed line per claimed (epsilon, delta), labelled with the curve it was read from, if any."""
    for (eps, delta, spec), owners in sorted(claims.items(), key=lambda item: item[0][:2]):
        # A claim of one mechanism among several takes its colour; a shared one is grey and names its owners.
        colour = owners[0][0] if len(owners) == 1 and len(claims) > 1 else "0.35"
        label = "claim ({})".format(f"{EPS} = {eps:g}" + (f", {DELTA} = {delta:g}" if delta else ""))
        if spec is not None and not str(spec).startswith("eps:"):
            # A curve read at one delta names the curve and its point there; in one column a dpsgd: spec takes
            # a line of its own.
            spec = short_spec(spec)
            sep = "\n" if size == "one-column" and len(spec) > 20 else " "
            label = f"claim {spec}{sep}({EPS} = {eps:.4g} at {DELTA} = {delta:.2g})"
        # With several sweep points each series names its own parameters: the claim's value says whose it is.
        whose = f": {', '.join(n for _, n in owners)}" if len(claims) > 1 and not several_points else ""
        ax.axhline(eps, color=colour, ls=(0, (5, 2)), lw=0.9, zorder=2, label=label + whose)


def _trajectory_notes(series: list, n_series: int) -> list:
    """What the steps, the stop and the faint lines mean, and how many series were left out."""
    ntr = max(len(rows) for _, _, rows in series)
    conf = series[0][1].get("confidence")
    notes = [f"steps: the bound certified after each round, valid at {conf_text(conf)} confidence whichever "
             "round the audit stopped in; |: the stop"
             + (f"; trial 1 solid, the other {ntr - 1} faint" if ntr > 2 else "; trial 1 solid, trial 2 faint"
                if ntr == 2 else "")]
    if n_series > len(series):
        notes.append(f"the first {len(series)} of {n_series} series; --point N draws one sweep point")
    return notes
