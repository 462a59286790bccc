"""The human summary: every test in its own block, and each block's rates give that block's bound.

A reader checks a block by eye: the event's rate on the likelier side (lower end) over its rate on the
other side (upper end) is e^bound, with delta taken off the first (``ln((lo - delta) / hi)``) when the
block is certified by the two Clopper-Pearson intervals.  These tests do the reader's arithmetic on
the printed text.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

import dpaudit
from dpaudit.claims import parse_claim
from dpaudit.stats.curves import certified_curve

HEADER = re.compile(r"^(distribution test|floating-point test)  (\S+).*: epsilon >= ([\d.]+)")
NUM = r"([\d.]+(?:e-?\d+)?)"
RATES = re.compile(rf"^  rates     on (\S+) {NUM} in \[{NUM}, {NUM}\], on (\S+) {NUM} in \[{NUM}, {NUM}\]")


def blocks(summary: str) -> dict:
    """{test name: {"bound", "lines"}}; every line after ``meaning`` is a block's header, a block's line or a note."""
    lines = summary.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("meaning ")) + 1
    out, current = {}, None
    for ln in lines[start:]:
        m = HEADER.match(ln)
        if m:
            current = out.setdefault(m.group(1), {"bound": float(m.group(3)), "header": ln, "lines": []})
        elif ln.startswith("  "):
            assert current is not None, ln
            current["lines"].append(ln)
        else:
            assert ln.startswith("note "), ln  # nothing else after the blocks
    return out


def rates_bound(block: dict, delta: float) -> tuple[float, tuple[str, str]]:
    """``ln((lo_first - delta) / hi_second)`` read off the block's rates line, and the two sides in order."""
    (line,) = [ln for ln in block["lines"] if ln.startswith("  rates ")]
    m = RATES.match(line)
    assert m, line
    lo_first, hi_second = float(m.group(3)), float(m.group(8))
    assert float(m.group(2)) >= float(m.group(6))  # the likelier side first
    return math.log((lo_first - delta) / hi_second), (m.group(1), m.group(5))


def test_float_laplace_shows_two_blocks_each_with_its_own_rates():
    # The textbook float Laplace (Mironov 2012): the float test certifies far more than the distribution test.
    # At delta > 0 both are certified by two intervals, so each block's rates give its bound exactly.
    r = dpaudit.audit("float_laplace_mironov", epsilon=1, delta=1e-9, samples=20_000, seed=1)
    b = blocks(r.summary())
    assert set(b) == {"floating-point test", "distribution test"}
    fl, dist = b["floating-point test"], b["distribution test"]
    assert fl["bound"] == pytest.approx(r.floating_point["epsilon_lower_bound"], abs=1e-4)
    assert dist["bound"] == pytest.approx(r.distribution_epsilon_lower_bound, abs=1e-4)
    assert r.epsilon_lower_bound == pytest.approx(max(fl["bound"], dist["bound"]), abs=1e-4)
    assert fl["bound"] > 3 * dist["bound"]
    # The block that gave the headline comes first and says so; the verdict names it.
    text = r.summary()
    assert text.index("floating-point test  ") < text.index("distribution test  ")
    assert fl["header"].endswith("(the bound above)") and "(the bound above)" not in dist["header"]
    assert "from the floating-point test below; the distribution test certifies" in text
    for block in (fl, dist):
        got, _ = rates_bound(block, 1e-9)
        assert got == pytest.approx(block["bound"], abs=2e-3), block
    assert "GDP" in "".join(dist["lines"]) and "GDP" not in "".join(fl["lines"])
    # The JSON's float section carries what its block shows (additive keys).
    assert {"fn", "tn", "tpr_interval", "fpr_interval", "direction", "certificate"} <= set(r.floating_point)


def test_one_test_one_block():
    r = dpaudit.audit("laplace", [1], [0], epsilon=1, delta=1e-6, samples=20_000, seed=3, ideal=True)
    b = blocks(r.summary())
    assert list(b) == ["distribution test"] and r.floating_point is None
    got, sides = rates_bound(b["distribution test"], 1e-6)
    assert got == pytest.approx(r.epsilon_lower_bound, abs=2e-3) and set(sides) == {"D", "D'"}


@pytest.fixture(scope="module")
def score_files(tmp_path_factory):
    # IN ~ N(1.5, 1), OUT ~ N(0, 1): with these draws the better of the two tails certified is the low one
    # (scores below -1.43 are likelier OUT), read through the complement of the chosen event "score >= -1.43".
    rng = np.random.default_rng(3)
    d = tmp_path_factory.mktemp("scores")
    np.save(d / "in.npy", rng.normal(1.5, 1.0, 10_000))
    np.save(d / "out.npy", rng.normal(0.0, 1.0, 10_000))
    return d / "in.npy", d / "out.npy"


def test_scores_rates_describe_the_tail_certified(score_files, capsys):
    from _cli import cli

    code, out, err = cli(capsys, "scores", *score_files, "--epsilon", "1", "--delta", "1e-5", "--seed", "1", "--json")
    d = json.loads(out)
    assert code == 1 and d["direction"].endswith("complement")  # the case of the issue: the other tail
    b = blocks(err)
    got, sides = rates_bound(b["distribution test"], 1e-5)
    assert got == pytest.approx(d["epsilon_lower_bound"], abs=2e-3)
    assert sides == ("OUT", "IN")
    (event,) = [ln for ln in b["distribution test"]["lines"] if ln.startswith("  event ")]
    assert event.startswith("  event     score < ") and "likelier on OUT" in event and d["event"] in event


def test_curve_violation_is_reported_at_the_largest_factor_in_delta(score_files):
    r = dpaudit.audit_scores(str(score_files[0]), str(score_files[1]), claim="gdp:mu=1", seed=1)
    cv = r.curve_violation
    assert r.verdict == "violation"
    claim = parse_claim("gdp:mu=1")
    gd, ge = claim.grid()
    fpr, fnr = cv["fpr_upper"], cv["fnr_upper"]
    cert = certified_curve(fpr, fnr, gd)
    crossed = cert > ge
    # The reader's check: the delta certified at each crossed point's epsilon, over that point's delta.
    got = np.maximum(1 - fnr - np.exp(ge) * fpr, 1 - fpr - np.exp(ge) * fnr)
    factors = np.where(crossed, got / gd, 0.0)
    j = int(np.argmax(factors))
    assert cv["delta"] == gd[j] and cv["claimed_epsilon"] == pytest.approx(ge[j])
    assert cv["delta_factor"] == pytest.approx(factors[j]) and cv["delta_factor"] > 1.5
    assert cv["certified_delta"] == pytest.approx(got[j])
    # The witness is a point of the certified curve: at (almost) that delta, epsilon above the claim's.
    assert certified_curve(fpr, fnr, cv["certified_delta"] * (1 - 1e-9)) >= cv["claimed_epsilon"] - 1e-9
    # The top level is the reported point; the margin is still the largest over the grid.
    assert (r.claimed_delta, r.claimed_epsilon, r.epsilon_lower_bound) == (
        cv["delta"], cv["claimed_epsilon"], cv["epsilon_lower_bound"])
    assert r.epsilon_lower_bound > r.claimed_epsilon and cv["margin"] == pytest.approx(np.max(cert - ge))
    line = next(ln for ln in r.summary().splitlines() if "the claim allows delta" in ln)
    assert (f"at epsilon = {r.claimed_epsilon:g} the claim allows delta = {r.claimed_delta:.4g}; the audit certifies "
            f"delta >= {cv['certified_delta']:.4g} there, {cv['delta_factor']:.3g} times as much") in line
