"""Aggregate finished trials into ``summary.json`` and a printable table.

The summary is a pure function of the resolved config and the trials sorted
by index: no timings, no host names, no dates, so two runs with the same seed
give byte-identical summaries whatever ``--jobs``, backend or interruptions.
"""

from __future__ import annotations

import json
import math
import numbers

import numpy as np

from .._version import __version__
from ._table import HEADERS, TABLE_WIDTH, fit_columns, fmt_number, render
from .kinds import get_kind

__all__ = ["summarize", "describe", "format_table", "summary_json", "short_names"]


#: Numeric result fields that name a trial rather than measure it: their mean (of 128-bit seeds) is no metric.
IDENTIFIER_FIELDS = frozenset({"seed"})


def _numeric_fields(results: list[dict]) -> list[str]:
    """The result fields aggregated across trials: numbers in every trial, identifiers (a seed) left out."""
    keys = []
    for k, v in results[0].items():
        if k not in IDENTIFIER_FIELDS and all(isinstance(r.get(k), numbers.Real) and not isinstance(r.get(k), bool) for r in results):
            keys.append(k)
    return keys


def describe(values, confidence: float = 0.95) -> dict:
    """Mean, spread and a t-interval for the mean across trials.

    With one trial the interval collapses to the value (``n`` says so).

    >>> d = describe([1.0, 2.0, 3.0]); d["mean"], d["median"], d["n"]
    (2.0, 2.0, 3)
    >>> d = describe([math.inf, math.inf]); d["mean"], math.isnan(d["std"])   # a broken mechanism's true epsilon
    (inf, True)
    """
    from scipy.stats import t as student_t

    x = np.asarray(values, dtype=float)
    n = x.size
    mean = float(np.mean(x))
    # An infinite value (a broken mechanism's true epsilon) makes the spread NaN; say so without a warning.
    with np.errstate(invalid="ignore"):
        std = float(np.std(x, ddof=1)) if n > 1 else 0.0
    sem = std / math.sqrt(n) if n > 1 else 0.0
    half = float(student_t.ppf(0.5 + confidence / 2, n - 1)) * sem if n > 1 and sem > 0 else 0.0
    return {
        "n": int(n),
        "mean": mean,
        "std": std,
        "sem": sem,
        "ci_low": mean - half,
        "ci_high": mean + half,
        "median": float(np.median(x)),
        "min": float(np.min(x)),
        "max": float(np.max(x)),
    }


def summarize(config, trials: list[dict]) -> dict:
    """The summary of a run: one group per (sweep point, mechanism)."""
    kind = config.kind
    resolved = config.resolved
    confidence = resolved["estimator"]["confidence"]
    aggregate = kind.extra.get("aggregate")
    trials = sorted(trials, key=lambda t: t["index"])
    groups = []
    for p, point in enumerate(config.points):
        for label in config.mechanism_labels:
            ts = [t for t in trials if t["point"] == p and t.get("mechanism") == label]
            group = {"point": p, "sweep": dict(point), "mechanism": label, "n_trials": len(ts)}
            if ts:
                # Timing lives in its own key of each trial record and never enters the summary.
                results = [{k: v for k, v in t["result"].items() if k != "timing"} for t in ts]
                group["metrics"] = {k: describe([r[k] for r in results], confidence) for k in _numeric_fields(results)}
                if aggregate is not None:
                    group.update(aggregate(results, confidence))
            groups.append(group)
    expected = len(config.points) * len(config.mechanism_labels) * resolved["trials"]
    return {
        "name": resolved["name"],
        "kind": kind.name,
        "seed": resolved["seed"],
        "dpaudit_version": __version__,
        "confidence": confidence,
        "trials_expected": expected,
        "trials_finished": len(trials),
        "complete": len(trials) == expected,
        "sweep": {"mode": resolved["sweep"]["mode"], "parameters": list(resolved["sweep"]["parameters"])},
        "groups": groups,
    }


def summary_json(summary: dict) -> str:
    return json.dumps(summary, indent=2, sort_keys=False) + "\n"


def _fmt(v) -> str:
    return fmt_number(v)


def short_names(paths: list[str]) -> list[str]:
    """The shortest dotted suffix of each parameter path that tells it apart from the others.

    >>> short_names(["attack.params.n", "attack.params.epsilon"])
    ['n', 'epsilon']
    >>> short_names(["attack.params.epsilon", "estimator.epsilon"])
    ['params.epsilon', 'estimator.epsilon']
    """
    parts = [p.split(".") for p in paths]
    out = []
    for i, tokens in enumerate(parts):
        for depth in range(1, len(tokens) + 1):
            name = ".".join(tokens[-depth:])
            if all(".".join(other[-depth:]) != name for j, other in enumerate(parts) if j != i):
                break
        out.append(name)
    return out


#: Per-trial 0/1 results that the table shows as a count of trials (their mean is a share, not a number of trials).
COUNT_METRICS = ("violations", "curve_rejections")


def _count(group: dict, key: str) -> str:
    """How many of a group's trials had ``key``: from the kind's aggregate, else from the per-trial 0/1 metric."""
    if key in group:
        return str(int(group[key]))
    metric = group.get("metrics", {}).get(key)
    return "-" if metric is None else str(int(round(metric["mean"] * metric["n"])))


#: Per-trial fields that name the point a trial was compared at: a curve claim's trials may each have their own.
POINT_FIELDS = ("claimed_epsilon", "claimed_delta")


def _cell(metric: dict, key: str) -> str:
    """A metric's table cell: its mean; for the claimed point, its range when the trials differ (a curve claim's
    trials each report at their own delta, and a mean of claimed epsilons at different deltas is no claim).

    A count (whole numbers in every trial, some above 1: releases, rounds, true positives) is shown as a whole
    number, its mean rounded: two trials' 1000 and 997 true positives read "998", not "998.5".

    >>> _cell({"mean": 998.5, "min": 997.0, "max": 1000.0}, "tp"), _cell({"mean": 0.5, "min": 0.0, "max": 1.0}, "tpr")
    ('998', '0.5')
    """
    if key in POINT_FIELDS and metric and metric.get("min") != metric.get("max"):
        return f"{_fmt(metric['min'])} to {_fmt(metric['max'])}"
    mean, low, high = metric.get("mean"), metric.get("min"), metric.get("max")
    whole = all(isinstance(v, (int, float)) and math.isfinite(v) and v == int(v) for v in (mean, low, high)[1:])
    if whole and high > 1 and isinstance(mean, (int, float)) and math.isfinite(mean):
        return f"{mean:.0f}"
    return _fmt(mean)


def format_table(summary: dict, config: dict, *, width: int | None = TABLE_WIDTH) -> str:
    """A plain-text table of the summary, one row per group: means over each group's trials.

    At most ``width`` characters wide (``None``: every column): a wider table keeps the columns a reader needs
    first (:mod:`dpaudit.runner._table`); ``summary.json`` holds every statistic of every metric.
    """
    kind = get_kind(summary["kind"], "attack.name")
    if kind.name == "audit":
        header, rows, keep, names = _audit_table(summary, config)
    else:
        header, rows, keep, names = _metric_table(summary, pooled=["rmse"] if kind.name == "rr_tradeoff" else [])
    if width is not None:
        shown = fit_columns(header, rows, keep=keep, names=names, width=width)
        header = [header[i] for i in shown]
        rows = [[r[i] for i in shown] for r in rows]
    return render(header, rows)


def _audit_table(summary: dict, config: dict) -> tuple[list, list, int, list]:
    """(header, rows, columns always kept, names of the others) of an audit kind's table."""
    rows = []
    # a mechanism's own swept parameters show up through its claimed epsilon
    sweep_keys = [k for k in summary["sweep"]["parameters"] if not k.startswith("mechanisms.")]
    refs = sorted({k for m in config.get("mechanisms", []) for k in (m.get("reference") or {})})
    # A claimed curve is compared at a point of its own choosing (docs/claims.md): shown without its delta,
    # that point's epsilon reads as a wrong number.
    curve = (config.get("audit") or {}).get("claim") is not None or "audit.claim" in sweep_keys
    header = ["mechanism", *short_names(sweep_keys), "claimed eps", *(["at delta"] if curve else []),
              "eps lower bound (median [min, max])", "ceiling", "true eps", "verdict", *[f"ref {r}" for r in refs]]
    keep = header.index("ceiling")  # a row is a mechanism and its point: its claim and bound
    names = header[keep:]
    ref_of = {m["label"]: (m.get("reference") or {}) for m in config.get("mechanisms", [])}
    for g in summary["groups"]:
        if not g["n_trials"]:
            continue
        lb = f"{g['epsilon_lower_bound_median']:.4g} [{g['epsilon_lower_bound_min']:.4g}, {g['epsilon_lower_bound_max']:.4g}]"
        at = [_fmt(g.get("claimed_delta"))] if curve else []
        rows.append([g["mechanism"], *[_fmt(g["sweep"][k]) for k in sweep_keys], _fmt(g["claimed_epsilon"]), *at,
                     lb,
                     _fmt(g["ceiling"]), _fmt(g["true_epsilon"]), g["verdict"],
                     *[_fmt(ref_of[g["mechanism"]].get(r)) for r in refs]])
    return header, rows, keep, names


def _metric_table(summary: dict, *, pooled: list) -> tuple[list, list, int, list]:
    """(header, rows, columns always kept, names of the others) of the other kinds' tables; ``pooled``: metrics
    pooled over every trial (rr_tradeoff's squared errors), shown instead of the mean of per-trial ones."""
    rows = []
    sweep_keys = summary["sweep"]["parameters"]
    sweep_names = short_names(sweep_keys)
    metric_names = []
    for g in summary["groups"]:
        for k in g.get("metrics", {}):
            if k in metric_names or k.startswith("sum_") or k in pooled:
                continue
            # A metric that only echoes a swept parameter adds a column with the same name and value.
            swept = [sk for sk, name in zip(sweep_keys, sweep_names) if name == k]
            if swept and all(g2.get("metrics", {}).get(k, {}).get("mean") == g2["sweep"].get(swept[0])
                             for g2 in summary["groups"] if g2.get("metrics")):
                continue
            metric_names.append(k)
    extra = [f"rmse, pooled [{summary['confidence']:.0%} CI]"] if pooled else []
    # How many trials flagged a violation, a count: the scores and one_run kinds record it per trial (whose mean,
    # a share, would read "violations 1" for three of three), training and search in their aggregate (no column).
    if any("violations" in g for g in summary["groups"]) and "violations" not in metric_names:
        metric_names.append("violations")
    taken = set(sweep_names)
    metric_headers = [f"{k} (mean)" if k in taken else HEADERS.get(k, k) for k in metric_names]
    header = [*sweep_names, "trials", *metric_headers, *extra]
    keep = len(sweep_names) + 1
    names = [*metric_names, *extra]
    for g in summary["groups"]:
        if not g["n_trials"]:
            continue
        row = [*[_fmt(g["sweep"][k]) for k in sweep_keys], str(g["n_trials"])]
        row += [_count(g, k) if k in COUNT_METRICS else _cell(g["metrics"].get(k, {}), k) for k in metric_names]
        if extra:
            row.append(f"{g['rmse']:.4g} [{g['rmse_low']:.4g}, {g['rmse_high']:.4g}]")
        rows.append(row)
    return header, rows, keep, names
