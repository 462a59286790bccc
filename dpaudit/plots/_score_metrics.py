"""A score audit's TPR at FPR 0.001, 0.01 and 0.1 (and its AUC) on the report's ROC panel; reads saved results only."""

from __future__ import annotations

__all__ = ["draw_tpr_at_fpr"]


def draw_tpr_at_fpr(ax, result: dict, *, color, floor: float) -> bool:
    """Diamonds at (held-out FPR, TPR) with both intervals as error bars; the AUC in the label.

    Returns False (nothing drawn) for a report without the metrics (an audit of a target).
    """
    rows = result.get("tpr_at_fpr") or []
    pts = [m for m in rows if m["tpr"] > 0]
    if not pts:
        return False
    x = [max(m["fpr"], floor) for m in pts]
    y = [m["tpr"] for m in pts]
    xerr = [[xi - max(m["fpr_interval"][0], floor) for xi, m in zip(x, pts)],
            [m["fpr_interval"][1] - xi for xi, m in zip(x, pts)]]
    yerr = [[m["tpr"] - max(m["tpr_interval"][0], floor) for m in pts],
            [m["tpr_interval"][1] - m["tpr"] for m in pts]]
    auc = result.get("auc")
    targets = "/".join(f"{m['fpr_target']:g}" for m in pts)
    label = f"TPR at FPR {targets} (held out)" + (
        f"; AUC {auc['auc']:.3f} [{auc['interval'][0]:.3f}, {auc['interval'][1]:.3f}]" if auc else "")
    ax.errorbar(x, y, xerr=xerr, yerr=yerr, ls="none", marker="D", ms=3.5, mfc="white", mec="black", mew=0.8,
                ecolor="0.15", elinewidth=0.8, capsize=1.5, zorder=4, label=label)
    return True
