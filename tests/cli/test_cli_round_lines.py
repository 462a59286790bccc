"""Progress in a log: when stderr is not a terminal, a long sequential audit prints one plain line per round.

The bar is for terminals (in a log it is a smear of carriage returns); under nohup or CI a long
audit otherwise says nothing until it ends.  Short audits (under ``ROUND_LINES_AFTER`` seconds) stay
quiet, so the stderr of a quick audit, and of one that fails, is unchanged.  The tests run the
command in this process, where stderr (pytest's capture) is not a terminal, and set the quiet
period to 0 to see the lines without a slow audit.
"""

from __future__ import annotations

import json

import pytest

import dpaudit._progress as progress
from dpaudit.cli import main

AUDIT = ["audit", "laplace", "--epsilon", "1", "--max-samples", "2e4", "--seed", "1", "--ideal", "--json"]


def _cli(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _round_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("progress: round ")]


def test_a_long_audit_prints_one_line_per_round_when_stderr_is_not_a_terminal(capsys, monkeypatch):
    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "ROUND_LINES_AFTER", 0.0)
    code, out, err = _cli(capsys, *AUDIT)
    report = json.loads(out)  # stdout still holds exactly the JSON object
    lines = _round_lines(err)
    assert code == 0 and len(lines) == report["rounds"] >= 2, err
    last = f"round {report['rounds']} of "
    assert last in lines[-1] and f"{report['samples']} releases per side" in lines[-1]
    assert "epsilon >= " in lines[-1] and "so far (claimed 1)" in lines[-1]


@pytest.mark.parametrize("extra, env", [((), None), (("--no-progress",), None), ((), "0")])
def test_short_audits_and_a_choice_keep_stderr_quiet(capsys, monkeypatch, extra, env):
    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    if env is not None:
        monkeypatch.setenv("DPAUDIT_PROGRESS", env)
    if extra or env is not None:
        monkeypatch.setattr(progress, "ROUND_LINES_AFTER", 0.0)  # quiet because it was asked, not because short
    code, out, err = _cli(capsys, *AUDIT, *extra)
    assert code == 0 and json.loads(out)["rounds"] >= 2 and _round_lines(err) == [], err


def test_a_fixed_size_audit_has_no_rounds_to_report(capsys, monkeypatch):
    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "ROUND_LINES_AFTER", 0.0)
    code, out, err = _cli(capsys, "audit", "laplace", "--epsilon", "1", "--samples", "2e4", "--seed", "1", "--ideal",
                          "--json")
    assert code in (0, 1) and _round_lines(err) == []


def test_on_round_only_watches(monkeypatch):
    import dpaudit

    seen = []
    kw = dict(epsilon=1.0, max_samples=20_000, seed=1, ideal=True)
    watched = dpaudit.audit("laplace", on_round=seen.append, **kw).to_dict()
    plain = dpaudit.audit("laplace", **kw).to_dict()
    watched.pop("elapsed_seconds"), plain.pop("elapsed_seconds")
    assert watched == plain
    assert [p.round for p in seen] == list(range(1, plain["rounds"] + 1))
    assert [p.samples for p in seen] == plain["trajectory"]["samples"]
    assert seen[-1].epsilon_lower_bound == pytest.approx(plain["trajectory"]["epsilon_lower_bound"][-1])


def test_a_curve_claims_round_lines_name_the_delta_they_compare_at(capsys, monkeypatch):
    # Against dpsgd:... a user's log read "epsilon >= 0.2526 so far (claimed 0.386884)" and, a round later,
    # "epsilon >= 0.1981 so far (claimed 0.270819)": a bound that seemed to fall, at a claim that seemed to
    # change, because the point of the curve compared at moves with the event.  The line now names its delta.
    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    monkeypatch.setattr(progress, "ROUND_LINES_AFTER", 0.0)
    code, out, err = _cli(capsys, "audit", "subsampled_gaussian_steps", "--claim", "dpsgd:noise=1,rate=0.1,steps=10",
                          "--max-samples", "8000", "--seed", "1", "--ideal", "--json")
    lines = _round_lines(err)
    assert code in (0, 1) and len(lines) >= 2, err
    assert all(" at delta " in line for line in lines), lines
    report = json.loads(out)  # seeded: the correct view runs to its budget, so the last line is the report's point
    assert report["stopping_reason"] == "budget"
    assert f"(claimed {report['claimed_epsilon']:g} at delta {report['claimed_delta']:.3g})" in lines[-1]
    # A point claim's delta is fixed: its lines stay as they were.
    _, _, err = _cli(capsys, *AUDIT)
    assert not any(" at delta " in line for line in _round_lines(err))
