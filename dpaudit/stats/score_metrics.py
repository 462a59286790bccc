"""What membership-inference users read beside epsilon: TPR at a low FPR and AUC, each with an exact interval.

Both are computed on the *held-out* scores, the part a score audit did not use to choose its event:

* **TPR at FPR alpha** (Carlini et al. 2022's headline): the threshold is chosen on the selection
  split's OUT scores, the smallest one that flags at most a share alpha of them; on the held-out
  scores the TPR and the FPR at that threshold are binomial proportions, each given its two-sided
  Clopper-Pearson interval.  The threshold never saw the held-out scores, so the intervals are exact.
  With fewer than 1/alpha selection OUT scores no threshold can aim at alpha (``resolved`` is then
  false: the threshold flags no selection score, and the held-out FPR says what it hit).
* **AUC**: the Mann-Whitney statistic of the held-out scores, P(IN > OUT) + P(IN = OUT) / 2.  Its
  interval is Hoeffding's (1963, section 5) bound for two-sample U-statistics with a kernel in [0, 1]:
  ``P(|U - AUC| >= t) <= 2 exp(-2 min(m, n) t^2)``, conservative whatever the score distributions
  (no normal approximation, no variance estimate as DeLong's needs).

Each interval holds at the given confidence on its own (they are not simultaneous).
"""

from __future__ import annotations

import math

import numpy as np

from .clopper_pearson import cp_lower, cp_upper

__all__ = ["FPR_TARGETS", "auc_interval", "score_metrics", "tpr_at_fpr"]

#: The false-positive rates a score audit reports the TPR at.
FPR_TARGETS = (0.001, 0.01, 0.1)


def _two_sided(k: int, n: int, confidence: float) -> list[float]:
    a = (1.0 - confidence) / 2.0
    return [float(cp_lower(k, n, a)), float(cp_upper(k, n, a))]


def tpr_at_fpr(selection_out, held_in, held_out, fpr: float, *, confidence: float = 0.95) -> dict:
    """TPR (and FPR) on held-out scores at the threshold that flags at most ``fpr`` of ``selection_out``.

    The event is ``score > threshold``; higher scores mean "more likely IN".

    Examples
    --------
    Selection OUT scores 0..99: at FPR 0.1 the threshold is 89 (10 of them above it).

    >>> m = tpr_at_fpr(np.arange(100.0), np.array([95.0, 50.0]), np.array([99.5, 10.0, 20.0, 30.0]), 0.1)
    >>> m["threshold"], m["tpr"], m["fpr"]
    (89.0, 0.5, 0.25)
    """
    sel = np.sort(np.asarray(selection_out, dtype=float))[::-1]
    held_in = np.asarray(held_in, dtype=float)
    held_out = np.asarray(held_out, dtype=float)
    k = int(math.floor(fpr * len(sel) + 1e-9))   # at most k selection OUT scores above the threshold
    threshold = float(sel[min(k, len(sel) - 1)])
    tp, fp = int((held_in > threshold).sum()), int((held_out > threshold).sum())
    return {"fpr_target": float(fpr), "threshold": threshold,
            "tpr": tp / len(held_in), "tpr_interval": _two_sided(tp, len(held_in), confidence),
            "fpr": fp / len(held_out), "fpr_interval": _two_sided(fp, len(held_out), confidence),
            "tp": tp, "fp": fp, "n_in": int(len(held_in)), "n_out": int(len(held_out)),
            "resolved": bool(len(sel) * fpr >= 1.0)}


def auc_interval(held_in, held_out, *, confidence: float = 0.95) -> dict:
    """The AUC of held-out scores (ties count one half) with Hoeffding's interval for two-sample U-statistics.

    Examples
    --------
    >>> a = auc_interval(np.array([2.0, 3.0]), np.array([1.0, 2.0]))
    >>> a["auc"], a["method"]
    (0.875, 'hoeffding')
    """
    from scipy.stats import rankdata

    x = np.asarray(held_in, dtype=float)
    y = np.asarray(held_out, dtype=float)
    m, n = len(x), len(y)
    ranks = rankdata(np.concatenate([x, y]))  # average ranks: a tie counts one half
    u = float(ranks[:m].sum() - m * (m + 1) / 2.0)
    auc = u / (m * n)
    half = math.sqrt(math.log(2.0 / (1.0 - confidence)) / (2.0 * min(m, n)))
    return {"auc": auc, "interval": [max(0.0, auc - half), min(1.0, auc + half)], "method": "hoeffding",
            "n_in": m, "n_out": n}


def score_metrics(selection_out, held_in, held_out, *, confidence: float = 0.95,
                  fprs=FPR_TARGETS) -> dict:
    """``{"tpr_at_fpr": [...], "auc": {...}}``: :func:`tpr_at_fpr` at each of ``fprs`` and :func:`auc_interval`."""
    return {"tpr_at_fpr": [tpr_at_fpr(selection_out, held_in, held_out, f, confidence=confidence) for f in fprs],
            "auc": auc_interval(held_in, held_out, confidence=confidence)}
