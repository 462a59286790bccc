"""How an audit report shows itself: the ROC as arrays, and an HTML table for notebooks.

Kept apart from :mod:`dpaudit.auditor.report` so the report stays a plain
record; nothing here computes a statistic: the table reads the report's parts.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..stats.bayes import format_confidence

__all__ = ["RocCurve", "report_html"]


class RocCurve(Mapping):
    """The empirical ROC of an audit: ``fpr`` and ``tpr`` as read-only numpy arrays.

    It is also a read-only mapping (``roc["fpr"]``), so code written for the
    JSON form keeps working, and :meth:`to_dict` gives that form back (lists).

    Examples
    --------
    >>> roc = RocCurve({"fpr": [0.0, 0.5, 1.0], "tpr": [0.0, 0.8, 1.0]})
    >>> roc.fpr
    array([0. , 0.5, 1. ])
    >>> float(roc["tpr"][1]), sorted(roc)
    (0.8, ['fpr', 'tpr'])
    >>> roc.to_dict()
    {'fpr': [0.0, 0.5, 1.0], 'tpr': [0.0, 0.8, 1.0]}
    """

    def __init__(self, data: Mapping[str, Any] | None = None):
        data = dict(data or {})
        self._data: dict[str, Any] = {}
        for key, value in data.items():
            if isinstance(value, (list, tuple, np.ndarray)):
                arr = np.array(value, dtype=float)
                arr.flags.writeable = False
                self._data[key] = arr
            else:
                self._data[key] = value
        for key in ("fpr", "tpr"):
            if key not in self._data:
                empty = np.zeros(0)
                empty.flags.writeable = False
                self._data[key] = empty

    @property
    def fpr(self) -> np.ndarray:
        """False-positive rates, increasing."""
        return self._data["fpr"]

    @property
    def tpr(self) -> np.ndarray:
        """True-positive rates at those false-positive rates."""
        return self._data["tpr"]

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        if set(self) != set(other):
            return False
        return all(np.array_equal(np.asarray(self[k]), np.asarray(other[k])) if isinstance(self[k], np.ndarray)
                   else self[k] == other[k] for k in self)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking contents: not hashable, like a dict

    def __repr__(self) -> str:
        return f"RocCurve({len(self.fpr)} points)"

    def __deepcopy__(self, memo) -> "RocCurve":
        return self  # immutable

    def to_dict(self) -> dict:
        """The JSON form: lists of floats."""
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self._data.items()}


def _fmt(value: Any, spec: str = ".4g") -> str:
    if isinstance(value, float):
        if math.isinf(value):
            return "&infin;" if value > 0 else "-&infin;"
        return format(value, spec)
    return html.escape(str(value))


def _test_rows(report: Any) -> list[tuple[str, str]]:
    """One row per test (distribution, floating point), the summary's block as its lines: each test's own
    bound, event, rates and ceiling, never one test's rates beside the other's bound."""
    from ._summary import _test_blocks

    rows = []
    for name, _, lines in _test_blocks(report):
        head, _, rest = lines[0].partition("  ")
        rows.append((name, "<br>".join(html.escape(ln.strip()) for ln in [rest, *lines[1:]])))
    return rows


def report_html(report: Any) -> str:
    """A small HTML table of an :class:`~dpaudit.auditor.AuditReport` for Jupyter (``_repr_html_``)."""
    cert, claimed, subject = report.certified, report.claimed, report.subject
    colour = "#b2182b" if report.violation else "#1a7837"
    delta = f", &delta; = {_fmt(claimed.claimed_delta)}" if claimed.claimed_delta else ""
    rows = [
        ("verdict", f'<b style="color:{colour}">{html.escape(report.verdict.upper())}</b>'),
        ("epsilon lower bound",
         f"<b>{_fmt(cert.epsilon_lower_bound)}</b> with {format_confidence(cert.confidence)} confidence"),
        ("claim", f"&epsilon; = {_fmt(claimed.claimed_epsilon)}{delta}"),
        ("ceiling", f"{_fmt(cert.ceiling)} (the most {report.sampling.held_out_text(',')} could certify)"),
        ("target", f"{html.escape(str(subject.target))} ({'seeded' if subject.seeded else 'unseeded'}; "
                   f"{html.escape(str(subject.output_kind))} output)"),
        ("meaning", html.escape(str(report.extras.explanation))),
        *_test_rows(report),
        ("seed", html.escape(str(report.sampling.seed))),
    ]
    rows += [("note", html.escape(str(n))) for n in report.notes]
    body = "".join(f'<tr><th style="text-align:left;padding-right:1em">{k}</th>'
                   f'<td style="text-align:left">{v}</td></tr>' for k, v in rows)
    return f'<table class="dpaudit-report">{body}</table>'
