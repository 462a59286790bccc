"""The report for people: str() is the summary, notebooks get HTML, the ROC comes as arrays."""

import json

import numpy as np
import pytest

import dpaudit
from dpaudit.auditor import AuditReport


@pytest.fixture(scope="module")
def report():
    return dpaudit.audit("laplace", [1], [0], epsilon=0.5, samples=20_000, seed=3)


def test_str_is_the_summary(report):
    assert str(report) == report.summary()
    assert str(report).splitlines()[1].startswith("verdict     VIOLATION")
    assert repr(report).startswith("AuditReport(verdict='violation'")


def test_html_for_notebooks(report):
    html = report._repr_html_()
    assert html.startswith("<table") and "VIOLATION" in html
    assert f"{report.epsilon_lower_bound:.4g}" in html and "&epsilon; = 0.5" in html
    assert "<script" not in html


def test_roc_as_read_only_arrays(report):
    roc = report.roc
    assert isinstance(roc.fpr, np.ndarray) and isinstance(roc.tpr, np.ndarray)
    assert roc.fpr.shape == roc.tpr.shape and roc.fpr.size >= 2
    assert np.all(np.diff(roc.fpr) >= 0)
    with pytest.raises(ValueError):
        roc.fpr[0] = 1.0
    assert roc["fpr"] is roc.fpr  # the mapping form of the JSON still works


def test_json_round_trip_keeps_lists_and_equality(report):
    d = report.to_dict()
    assert isinstance(d["roc"]["fpr"], list) and isinstance(d["roc"]["tpr"][0], float)
    back = AuditReport.from_dict(json.loads(json.dumps(d)))
    assert back == report and back.roc == report.roc


def test_a_confidence_near_one_is_never_shown_as_100_percent():
    # "{:.0%}" wrote --confidence 0.999 (assert_dp's default) as "with 100% confidence": a certainty no audit has.
    rng = np.random.default_rng(0)
    r = dpaudit.audit_scores(rng.normal(1, 1, 2000), rng.normal(0, 1, 2000), epsilon=1.0, confidence=0.999, seed=1)
    assert "with 99.9% confidence" in r.summary() and "with 99.9% confidence" in r.explanation
    assert "99.9% confidence" in r._repr_html_() and "100%" not in r.summary()
    inc = rng.integers(0, 2, 200)
    one = dpaudit.audit_one_run(inc + rng.normal(0, 1, 200), inc, epsilon=1.0, confidence=0.999999, seed=0)
    assert "with 99.9999% confidence" in one.summary()
