"""Which sweep point a one-point figure (ROC, privacy profile, trajectory) draws, and how it says so.

Sweep points are numbered from 1 in the order of the config's sweep, as the figures' titles show them
(``sweep point 2 of 3``); ``dpaudit plot DIR --point N`` and the config's ``plot.point`` take that number.
"""

from __future__ import annotations

import numbers

from ..exceptions import ParameterValueError

__all__ = ["sweep_points", "check_point", "one_point", "ONE_POINT_FIGURES"]

#: The figures that draw one sweep point (the others draw every point).
ONE_POINT_FIGURES = ("roc", "privacy_profile", "trajectory")


def sweep_points(results) -> list[int]:
    """The run's sweep points (0-based indices as saved), with or without finished trials."""
    groups = (results.summary or {}).get("groups", [])
    return sorted({int(g["point"]) for g in groups} | {int(t["point"]) for t in results.trials})


def check_point(point, n_points: int, name: str = "--point") -> int:
    """``point`` (1-based) checked against the run's ``n_points``; a ParameterValueError names ``name``.

    >>> check_point(2, 3)
    2
    >>> check_point(4, 3)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: --point must be a sweep point from 1 to 3; got 4
    """
    if isinstance(point, bool) or not isinstance(point, numbers.Integral) or not 1 <= point <= max(n_points, 1):
        raise ParameterValueError(f"{name} must be a sweep point from 1 to {max(n_points, 1)}; got {point!r}")
    return int(point)


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, numbers.Real) and not isinstance(v, bool) else str(v)


def one_point(results, groups: list, point: int | None = None) -> tuple[list, str | None]:
    """The groups of one sweep point and a title saying which (None when the run has one point).

    ``point`` (1-based) wins over the config's ``plot.point``; without either, the last point.
    """
    points = sweep_points(results) or sorted({g["point"] for g in groups})
    wanted = point if point is not None else (results.config.get("plot") or {}).get("point")
    if len(points) <= 1:
        return groups, None
    number = len(points) if wanted is None else check_point(wanted, len(points),
                                                            "--point" if point is not None else "plot.point")
    chosen = [g for g in groups if g["point"] == points[number - 1]]
    values: dict = {}
    for g in chosen:
        for path, value in g["sweep"].items():
            shown = values.setdefault(path.split(".")[-1], [])
            if _fmt(value) not in shown:
                shown.append(_fmt(value))
    desc = ", ".join(f"{k} = {'/'.join(v)}" for k, v in values.items())
    how = "" if wanted is not None else "; --point N for another"
    return chosen, f"sweep point {number} of {len(points)}: {desc}{how}"
