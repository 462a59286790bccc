"""The summary lines of a score audit's TPR at low FPR and AUC (:mod:`dpaudit.stats.score_metrics`).

One function, called from the distribution test's block of the summary (:mod:`._summary`): the
metrics are read on the same held-out scores as that test's rates.  Nothing here computes a statistic.
"""

from __future__ import annotations

from ..stats.bayes import format_confidence

__all__ = ["score_metric_lines"]


def score_metric_lines(extras, confidence: float) -> list[str]:
    """``TPR@FPR`` and ``AUC`` lines of a report's extras, or none when it has no such metrics (an audit of a target).

    >>> from types import SimpleNamespace
    >>> x = SimpleNamespace(auc={"auc": 0.75, "interval": [0.7, 0.8], "n_in": 70, "n_out": 70},
    ...                     tpr_at_fpr=[{"fpr_target": 0.1, "tpr": 0.5, "tpr_interval": [0.4, 0.6], "fpr": 0.09,
    ...                                  "fpr_interval": [0.05, 0.15], "resolved": True}])
    >>> print("\\n".join(score_metric_lines(x, 0.95)))
      TPR@FPR   0.1: TPR 0.5 in [0.4, 0.6] (held-out FPR 0.09 in [0.05, 0.15])
      AUC       0.75 in [0.7, 0.8] (Hoeffding; 70 IN and 70 OUT held-out scores; each interval 95%)
    """
    rows = extras.tpr_at_fpr or []
    auc = extras.auc
    lines = []
    for i, m in enumerate(rows):
        unresolved = "" if m.get("resolved", True) else "; too few selection OUT scores to aim this low"
        lines.append(f"  {'TPR@FPR' if i == 0 else '':10s}{m['fpr_target']:g}: TPR {m['tpr']:.4g} in "
                     f"[{m['tpr_interval'][0]:.4g}, {m['tpr_interval'][1]:.4g}] (held-out FPR {m['fpr']:.3g} in "
                     f"[{m['fpr_interval'][0]:.3g}, {m['fpr_interval'][1]:.3g}]{unresolved})")
    if auc:
        lines.append(f"  AUC       {auc['auc']:.4g} in [{auc['interval'][0]:.4g}, {auc['interval'][1]:.4g}] (Hoeffding; "
                     f"{auc['n_in']} IN and {auc['n_out']} OUT held-out scores; each interval "
                     f"{format_confidence(confidence)})")
    return lines
