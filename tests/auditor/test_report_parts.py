"""The audit report is a few parts, not a flat record: every JSON key stays a read-only attribute, the JSON keeps
its keys and order, and every report of the package satisfies the one :class:`dpaudit.Report` protocol."""

import dataclasses
import json

import numpy as np
import pytest

import dpaudit
from dpaudit.attacks import run_differencing, run_reconstruction, run_tracing
from dpaudit.auditor import AuditReport, Report
from dpaudit.auditor.report import FLAT_KEYS
from dpaudit.auditor.report_parts import PARTS, FloatFinding


def noisy_count(dataset, size=None, rng=None):
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)


@pytest.fixture(scope="module")
def report():
    # numpy's float noise leaks by its bits: the report has a floating-point finding too
    return dpaudit.audit(noisy_count, [0, 1], [0, 0], epsilon=1.0, samples=20_000, seed=0)


@pytest.fixture(scope="module")
def score_report():
    rng = np.random.default_rng(0)
    return dpaudit.audit_scores(rng.normal(1, 1, 3000), rng.normal(0, 1, 2000), epsilon=1.0, seed=1)


def test_at_most_twenty_top_level_fields():
    assert len(dataclasses.fields(AuditReport)) <= 20


def test_every_json_key_is_an_attribute_with_the_json_value(report, score_report):
    for r in (report, score_report):
        d = r.to_dict()
        assert tuple(d) == FLAT_KEYS
        for key, value in d.items():
            attr = getattr(r, key)
            plain = attr.to_dict() if hasattr(attr, "to_dict") else attr
            assert (list(plain) if isinstance(plain, tuple) else plain) == value, key


def test_each_key_is_read_from_the_part_that_owns_it(report):
    for name, part in PARTS.items():
        for key in part.keys():
            assert getattr(report, key) is getattr(getattr(report, name), key) or key in part.DERIVED
    assert report.tp == report.events.tp and report.claim is report.claimed.claim
    assert report.tpr == report.tp / (report.tp + report.fn) and report.fpr == report.fp / (report.fp + report.tn)


def test_attributes_are_read_only(report):
    with pytest.raises(AttributeError):
        report.tp = 0
    with pytest.raises(AttributeError):
        report.notes = ()
    assert isinstance(report.notes, tuple)  # nothing to append to after the report is made


def test_json_round_trip(report, score_report):
    for r in (report, score_report):
        text = r.to_json()
        back = AuditReport.from_dict(json.loads(text))
        assert back == r and back.to_json() == text


def test_with_notes_and_with_values_give_new_reports(report, score_report):
    noted = report.with_notes("one", "two")
    assert noted.notes == (*report.notes, "one", "two") and "one" not in report.notes
    assert "note        two" in str(noted)
    changed = score_report.with_values(confidence=0.99, target="t")
    assert (changed.confidence, changed.target, score_report.confidence) == (0.99, "t", 0.95)
    assert changed.samples_in == score_report.samples_in == 3000
    with pytest.raises(TypeError, match="no_such_key"):
        report.with_values(no_such_key=1)


def test_the_float_finding_reads_as_its_json(report):
    fp = report.floating_point
    assert isinstance(fp, FloatFinding) and fp["attack"] == fp.attack and dict(fp) == report.to_dict()["floating_point"]
    # a report written before the float test's rates were recorded keeps its shorter form
    old = {k: v for k, v in report.to_dict().items()}
    old["floating_point"] = {k: old["floating_point"][k] for k in ("attack", "epsilon_lower_bound", "event", "tp", "fp",
                                                                   "n_test", "ceiling")}
    back = AuditReport.from_dict(old)
    assert "fn" not in back.floating_point and back.to_dict()["floating_point"] == old["floating_point"]
    assert "floating-point test" in str(back)


def test_every_report_is_a_report(report, score_report):
    rng = np.random.default_rng(0)
    inc = rng.integers(0, 2, 300)
    reports = {
        "audit": report,
        "scores": score_report,
        "anytime": dpaudit.audit("laplace", epsilon=0.5, ideal=True, stopping="anytime", max_samples=5000, seed=1),
        # a grey-box audit returns the audit's report with its analysis added (run in tests/greybox: a grey-box
        # audit here would move greybox.tape's process-wide call counter under the tests that rely on it)
        "grey-box": report.with_values(grey_box={"traces": 10, "findings": [], "epsilon_upper_bound": 1.0,
                                                 "exact": True}, violation_source="grey-box", verdict="violation"),
        "one-run": dpaudit.audit_one_run(inc * 2 + rng.normal(0, 1, 300), inc, epsilon=1.0, seed=0),
        "search": dpaudit.search("laplace", epsilon=1.0, size=2, low=0, high=1, ideal=True, max_samples=5000,
                                 seed=1),
        "differencing": run_differencing(n_people=200, epsilon=1.0, trials=20, rng=4),
        "reconstruction": run_reconstruction(n=50, noise="exact", trials=2, rng=0),
        "tracing": run_tracing(n=50, d=500, noise="gaussian", alpha=1.0, n_targets=50, fpr=0.05, rng=0),
    }
    for name, r in reports.items():
        assert isinstance(r, Report), name
        assert r.to_dict()["verdict"] == r.verdict and isinstance(r.epsilon_lower_bound, float), name
        assert r.verdict.upper() in r.summary(), name
    assert reports["grey-box"].grey_box is not None
    assert not isinstance(object(), Report)
