"""TPR at low FPR and AUC of score audits: exact intervals on the held-out split.

Gaussian scores N(mu, 1) IN against N(0, 1) OUT have known answers: at threshold t the TPR is
1 - Phi(t - mu) and the FPR 1 - Phi(t); the AUC is Phi(mu / sqrt 2).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import dpaudit
from dpaudit.cli import main
from dpaudit.stats.score_metrics import FPR_TARGETS, auc_interval, score_metrics, tpr_at_fpr

MU = 1.0


def _draw(rng, n_sel=3000, n_held=7000):
    return rng.normal(0, 1, n_sel), rng.normal(MU, 1, n_held), rng.normal(0, 1, n_held)


def _covered(seed: int) -> tuple[list[bool], list[bool], bool]:
    sel_out, held_in, held_out = _draw(np.random.default_rng(seed))
    m = score_metrics(sel_out, held_in, held_out, confidence=0.95)
    tpr_ok, fpr_ok = [], []
    for row in m["tpr_at_fpr"]:
        t = row["threshold"]
        true_tpr, true_fpr = stats.norm.sf(t - MU), stats.norm.sf(t)
        tpr_ok.append(row["tpr_interval"][0] <= true_tpr <= row["tpr_interval"][1])
        fpr_ok.append(row["fpr_interval"][0] <= true_fpr <= row["fpr_interval"][1])
    lo, hi = m["auc"]["interval"]
    return tpr_ok, fpr_ok, lo <= stats.norm.cdf(MU / math.sqrt(2)) <= hi


def test_known_answers():
    # 10 of the selection scores 0..99 lie above 89; held-out IN 95 and 50, OUT 99.5 above it and three below
    m = tpr_at_fpr(np.arange(100.0), np.array([95.0, 50.0]), np.array([99.5, 10.0, 20.0, 30.0]), 0.1)
    assert (m["threshold"], m["tp"], m["fp"]) == (89.0, 1, 1)
    assert m["tpr_interval"][0] == pytest.approx(1 - math.sqrt(0.975)) and m["tpr_interval"][1] == pytest.approx(
        math.sqrt(0.975))
    assert not tpr_at_fpr(np.arange(100.0), [1.0], [1.0], 0.001)["resolved"]  # 100 scores cannot aim at 0.001
    # AUC: identical sides 0.5; separated sides 1; the Hoeffding half-width sqrt(log(2 / 0.05) / (2 min(m, n)))
    a = auc_interval(np.zeros(50), np.zeros(80))
    assert a["auc"] == 0.5 and a["interval"][1] - 0.5 == pytest.approx(math.sqrt(math.log(40) / 100))
    assert auc_interval(np.ones(10), np.zeros(10))["auc"] == 1.0


def test_intervals_cover_the_truth_on_seeded_gaussian_scores():
    """20 seeds: each TPR/FPR interval misses w.p. <= 0.05, the AUC's far less; allow 3 misses of 60 per kind."""
    cover = [_covered(seed) for seed in range(20)]
    tpr_miss = sum(not ok for c in cover for ok in c[0])
    fpr_miss = sum(not ok for c in cover for ok in c[1])
    assert tpr_miss <= 3 and fpr_miss <= 3 and all(c[2] for c in cover), (tpr_miss, fpr_miss)


@pytest.mark.soundness
def test_interval_coverage_over_many_seeds():
    """400 seeds: each of the six intervals covers the truth in >= 95% - 3 sd of them (misses Binomial(400, <= 0.05)).

    P[Bin(400, 0.05) > 32] = 0.8% per interval kind; the AUC's Hoeffding interval is conservative and never misses here.
    """
    cover = [_covered(1000 + seed) for seed in range(400)]
    for j in range(len(FPR_TARGETS)):
        assert sum(not c[0][j] for c in cover) <= 32
        assert sum(not c[1][j] for c in cover) <= 32
    assert sum(not c[2] for c in cover) <= 32


def test_audit_scores_reports_them_in_json_summary_and_figure(tmp_path, capsys):
    rng = np.random.default_rng(3)
    a, b = rng.normal(MU, 1, 10_000), rng.normal(0, 1, 10_000)
    r = dpaudit.audit_scores(a, b, epsilon=1.0, delta=1e-5, seed=1)
    assert [m["fpr_target"] for m in r.tpr_at_fpr] == list(FPR_TARGETS)
    assert r.tpr_at_fpr[0]["n_in"] == r.n_test_in == 7000
    assert r.auc["interval"][0] <= stats.norm.cdf(MU / math.sqrt(2)) <= r.auc["interval"][1]
    text = r.summary()
    assert "  TPR@FPR   0.001: TPR" in text and "AUC" in text
    np.save(tmp_path / "in.npy", a)
    np.save(tmp_path / "out.npy", b)
    assert main(["scores", str(tmp_path / "in.npy"), str(tmp_path / "out.npy"), "--epsilon", "1", "--delta", "1e-5",
                 "--seed", "1", "--json"]) == 1
    out = capsys.readouterr()
    d = json.loads(out.out)
    assert d["tpr_at_fpr"] == json.loads(json.dumps(r.tpr_at_fpr)) and d["auc"]["method"] == "hoeffding"
    assert "TPR@FPR" in out.err
    assert dpaudit.AuditReport.from_dict(d).auc == d["auc"]
    fig = r.plot()
    labels = fig.axes[0].get_legend_handles_labels()[1] + [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("TPR at FPR 0.001/0.01/0.1" in s and "AUC" in s for s in labels)
