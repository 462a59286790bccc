"""Claims as curves: parsing, the curves' values against known answers, and errors that name the part."""

import json
import math

import numpy as np
import pytest

from dpaudit.claims import (
    AccountantClaim,
    Claim,
    GaussianDPClaim,
    PointClaim,
    ProfileClaim,
    as_claim,
    dpsgd_event,
    parse_claim,
)
from dpaudit.claims.base import epsilon_grid
from dpaudit.exceptions import ParameterTypeError, ParameterValueError
from dpaudit.stats.gdp import gaussian_epsilon

DPSGD = "dpsgd:noise=1,rate=0.1,steps=10"


def test_dpsgd_curve_matches_the_accountant_reference_values():
    # dp-accounting 0.6.0's PLD accountant, add/remove (steps 10, rate 0.1): 2.855 / 1.572 / 0.887 at noise 1,
    # 4.543 / 2.570 / 1.500 at noise 0.8.
    c = parse_claim(DPSGD)
    assert np.allclose(c.epsilon([1e-5, 1e-3, 1e-2]), [2.855, 1.572, 0.887], atol=2e-3)
    c8 = parse_claim("dpsgd:noise=0.8,rate=0.1,steps=10")
    assert np.allclose(c8.epsilon([1e-5, 1e-3, 1e-2]), [4.543, 2.570, 1.500], atol=2e-3)


def test_accountant_curve_is_never_below_the_exact_one():
    # The accountant's own answer at 1e-4 discretisation; our grid reads chords above the convex profile.
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)
    acc.compose(dpsgd_event(1.0, 0.1, 10))
    c = parse_claim(DPSGD)
    for d in (3e-6, 2e-4, 5e-3, 0.05):
        exact = acc.get_epsilon(d)
        assert exact - 1e-9 <= c.epsilon(d) <= exact + 0.02


def test_gdp_claim_known_answers():
    c = parse_claim("gdp:mu=1")
    assert round(float(c.epsilon(1e-3)), 3) == 3.139  # Gaussian sigma 1, mu = 1
    assert float(c.tradeoff(0.05)) == pytest.approx(0.7405, abs=1e-4)  # Phi(Phi^-1(0.95) - 1)
    d = np.logspace(-10, -1, 25)
    grid_read = Claim.epsilon(c, d)  # the generic chord reading never understates the exact curve
    assert np.all(grid_read >= c.epsilon(d) - 1e-12) and np.max(grid_read - c.epsilon(d)) < 1e-3


def test_generic_tradeoff_agrees_with_gdp_closed_form():
    c = GaussianDPClaim(1.0)
    a = np.array([1e-4, 1e-3, 0.01, 0.1, 0.5])
    assert np.allclose(Claim.tradeoff(c, a), c.tradeoff(a), atol=1e-3)


def test_point_claim_is_a_step():
    c = parse_claim("eps:1,delta=1e-5")
    assert isinstance(c, PointClaim) and c.spec == "eps:1,delta=1e-5"
    assert c.epsilon([0.0, 1e-6, 1e-5, 0.5]).tolist() == [np.inf, np.inf, 1.0, 1.0]
    assert parse_claim("eps:epsilon=2").epsilon(0.0) == 2.0
    assert c.reference == (1.0, 1e-5)


def test_profile_claim_from_file(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(json.dumps([[1.0, 1e-3], [2.0, 1e-6], [3.0, 1e-7]]))
    c = parse_claim(f"profile:{f}")
    assert isinstance(c, ProfileClaim)
    assert c.epsilon([1e-8, 1e-7, 1e-6, 1e-3, 0.9]).tolist() == [np.inf, 3.0, 2.0, 1.0, 1.0]
    # Between two points: on the chord in (e^eps, delta), between their epsilons.
    assert 1.0 < c.epsilon(1e-4) < 2.0


@pytest.mark.parametrize("points, grid", [
    ([[1.0, 1e-5], [2.0, 1e-5]], ([1e-5], [1.0])),                 # one delta twice: the smaller epsilon
    ([[1.0, 1e-5], [1.0, 1e-5]], ([1e-5], [1.0])),                 # the same pair twice
    ([[2.0, 1e-5], [1.0, 1e-5], [3.0, 1e-6], [3.0, 1e-3]], ([1e-6, 1e-5], [3.0, 1.0])),  # and a dominated point
])
def test_profile_with_a_repeated_delta_keeps_its_smallest_epsilon(points, grid):
    # A file listing one delta twice once left an empty grid (an internal error on reading the claim).
    c = ProfileClaim(tuple(map(tuple, points)))
    assert [a.tolist() for a in c.grid()] == [grid[0], grid[1]]
    assert c.reference == (grid[1][0], grid[0][0])
    assert c.epsilon(1e-5) == 1.0


def test_dp_event_object_is_a_claim():
    ev = dpsgd_event(1.0, 0.1, 10)
    c = as_claim(ev)
    assert isinstance(c, AccountantClaim) and c.spec == repr(ev)
    assert float(c.epsilon(1e-2)) == pytest.approx(0.887, abs=2e-3)


def test_events_holding_lists_are_claims_and_a_non_private_one_is_refused():
    # ComposedDpEvent keeps its events in a list: hashing it for the cache was a TypeError.  A
    # NonPrivateDpEvent has no finite epsilon, which once ran numpy on inf and leaked dp-accounting's error.
    from dp_accounting import dp_event

    gauss = dp_event.GaussianDpEvent(1.0)
    composed = as_claim(dp_event.ComposedDpEvent([gauss, gauss]))
    twice = as_claim(dp_event.SelfComposedDpEvent(gauss, 2))
    assert float(composed.epsilon(1e-5)) == pytest.approx(float(twice.epsilon(1e-5)), rel=1e-6)
    with pytest.raises(ParameterValueError, match="no finite epsilon.*NonPrivateDpEvent"):
        as_claim(dp_event.NonPrivateDpEvent())
    # LaplaceDpEvent(0.001) is 1000-DP: the message said it "promises no finite epsilon"; now it says either.
    with pytest.raises(ParameterValueError, match=r"not private, or its epsilon is beyond what the accountant"):
        as_claim(dp_event.LaplaceDpEvent(0.001))


def test_an_event_dp_accounting_computes_for_replace_one_only_says_so():
    # "does not support the event RandomizedResponseDpEvent(...)" read as if dp-accounting had no curve for it;
    # it has one, for replace-one neighbours, and a claim here is an add/remove curve.
    from dp_accounting import dp_event

    if not hasattr(dp_event, "RandomizedResponseDpEvent"):  # dp-accounting 0.4.2 (our lower bound) has none
        pytest.skip("this dp-accounting has no RandomizedResponseDpEvent (nor any replace-one-only PLD event)")
    with pytest.raises(ParameterValueError, match=r"ResponseDpEvent.* for add/remove neighbours.*replace-one"):
        as_claim(dp_event.RandomizedResponseDpEvent(0.5, 10))


def test_an_event_dp_accounting_does_not_compute_says_only_that():
    from dp_accounting import dp_event

    with pytest.raises(ParameterValueError, match=r"UnsupportedDpEvent\(\)$"):
        as_claim(dp_event.UnsupportedDpEvent())


def test_claims_are_immutable_and_round_trip_their_spec():
    c = parse_claim(" gdp:mu=0.5 ")
    with pytest.raises(AttributeError):
        c.mu = 2.0
    assert c.spec == "gdp:mu=0.5" and c.to_dict()["mu"] == 0.5
    assert parse_claim(c.spec) == c


def test_as_claim_resolves_points_and_refuses_both():
    assert as_claim(epsilon=1.0, delta=1e-5).reference == (1.0, 1e-5)
    point = PointClaim(1.0, 1e-6)  # a mechanism's claim is one already
    assert as_claim(point) is point and as_claim(point).reference == (1.0, 1e-6)
    with pytest.raises(ParameterValueError, match="not both"):
        as_claim("gdp:mu=1", epsilon=1.0)
    with pytest.raises(ParameterValueError, match="not both"):
        as_claim("gdp:mu=1", delta=1e-5)
    with pytest.raises(ParameterValueError, match="epsilon: required"):
        as_claim()
    with pytest.raises(ParameterTypeError, match="claim must be"):
        as_claim(3.0)


@pytest.mark.parametrize("spec, part", [
    ("gdp", "unknown kind 'gdp'"),
    ("rdp:alpha=2", "unknown kind 'rdp'"),
    ("gdp:", "nothing after"),
    ("gdp:mu=-1", "mu must be"),
    ("gdp:mu=abc", "mu must be a number"),
    ("gdp:sigma=1", "unknown key 'sigma'"),
    ("dpsgd:noise=1,rate=0.1", "missing steps"),
    ("dpsgd:noise=1,rate=0,steps=10", "rate must be"),
    ("dpsgd:noise=1,rate=0.1,steps=2.5", "steps must be an integer"),
    ("dpsgd:noise=1,noise=2,rate=0.1,steps=1", "noise is given twice"),
    ("eps:-1", "epsilon must be"),
    ("eps:1,delta=1", "delta must be"),
    ("eps:1,2", "expected KEY=VALUE"),
    ("profile:/no/such/file.json", "cannot read"),
    ("gdp:mu=1_0", "mu must be a number, written without '_'"),  # float('1_0') is 10
    ("dpsgd:noise=1,rate=0.1,steps=1_0", "steps must be a number, written without '_'"),
    ("gdp:mu=0x10", "mu must be a number; got '0x10'"),
])
def test_malformed_specs_name_the_part(spec, part):
    with pytest.raises(ParameterValueError, match=part) as err:
        parse_claim(spec)
    assert spec.strip() in str(err.value) or "unknown kind" in str(err.value)


def test_a_profile_path_may_start_with_a_tilde(tmp_path, monkeypatch):
    # '--claim profile:~/p.json' reaches dpaudit unexpanded (the shell expands ~ only at a word's start), and
    # was "cannot read '~/p.json'", while --dataset ~/d.json worked.
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "p.json").write_text(json.dumps([[1.0, 1e-5]]))
    assert parse_claim("profile:~/p.json").epsilon(1e-5) == 1.0


def test_a_profile_with_a_byte_order_mark_is_read(tmp_path):
    # Windows tools write UTF-8 JSON with a byte-order mark; score files read it, a profile was "not valid JSON".
    (tmp_path / "p.json").write_bytes(b"\xef\xbb\xbf" + json.dumps([[1.0, 1e-5]]).encode())
    assert parse_claim(f"profile:{tmp_path / 'p.json'}").epsilon(1e-5) == 1.0


def test_a_profile_of_large_epsilons_reads_without_overflow(tmp_path):
    # The chord between two points was taken through e^epsilon: beyond 709 it overflowed, and [[800, 1e-5],
    # [700, 1e-3]] read NaN at 1e-5 and 1e-4, so a one-run audit silently tested the claim at 1e-3 only.
    (tmp_path / "p.json").write_text(json.dumps([[800.0, 1e-5], [700.0, 1e-3]]))
    c = parse_claim(f"profile:{tmp_path / 'p.json'}")
    assert c.epsilon(1e-5) == 800.0 and c.epsilon(1e-3) == 700.0
    # the chord in the (e^epsilon, delta) plane: at delta 1e-4, 1/11 of the way, e^eps = e^800 (1 - 1/11) nearly
    assert float(c.epsilon(1e-4)) == pytest.approx(800.0 + math.log(10 / 11), abs=1e-9)


def test_a_computed_curve_drops_the_deltas_its_arithmetic_overflowed():
    # dp-accounting's e^epsilon overflows beyond ~709 and its delta comes out -inf (or NaN); clipped to 0, it
    # claimed (720, 0)-DP for DP-SGD at 10^7 steps, which has no finite epsilon at delta 0.
    deltas, epsilons = epsilon_grid(lambda e: np.where(e > 709, -np.inf, np.where(e > 600, np.nan, 1e-3)), 800.0)
    assert len(deltas) and np.all(deltas == 1e-3) and np.all(epsilons <= 600)


def test_malformed_profile_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ParameterValueError, match="not valid JSON"):
        parse_claim(f"profile:{bad}")
    bad.write_text(json.dumps([[1.0, 2.0]]))
    with pytest.raises(ParameterValueError, match="entry 0 delta"):
        parse_claim(f"profile:{bad}")
    bad.write_text(json.dumps([[1e-5, 2.0], [1e-3, 1.0]]))  # [delta, epsilon] pairs: say which way round
    with pytest.raises(ParameterValueError, match=r"entry 0 delta .*got 2\.0 \(each pair is \[epsilon, delta\]"):
        parse_claim(f"profile:{bad}")
    bad.write_text(json.dumps([[1.0]]))
    with pytest.raises(ParameterValueError, match="entry 0 must be a pair"):
        parse_claim(f"profile:{bad}")
    bad.write_text(json.dumps([]))
    with pytest.raises(ParameterValueError, match="at least one"):
        parse_claim(f"profile:{bad}")


def test_the_accountant_curve_is_computed_once_per_event():
    # In one process, by a spec (the disk cache is not even read again) and by a DpEvent.
    from dpaudit.claims.accountant import _accountant_grid, _dpsgd_grid

    for cache, make in ((_dpsgd_grid, lambda: parse_claim(DPSGD)),
                        (_accountant_grid, lambda: AccountantClaim(dpsgd_event(1.0, 0.1, 10)))):
        make()
        before = cache.cache_info()
        for _ in range(5):
            make().epsilon(np.logspace(-8, -1, 50))
        after = cache.cache_info()
        assert after.misses == before.misses and after.hits == before.hits + 5


def test_gaussian_epsilon_reference():
    assert float(parse_claim("gdp:mu=1").epsilon(1e-5)) == pytest.approx(gaussian_epsilon(1.0, 1e-5))


def test_a_dpsgd_spec_is_the_accountants_curve_to_the_bit():
    from dpaudit.claims import DPSGDClaim

    c = parse_claim("dpsgd:noise=1,rate=0.1,steps=10")
    direct = AccountantClaim(dpsgd_event(1.0, 0.1, 10))
    assert isinstance(c, DPSGDClaim) and c.kind == "dpsgd" and repr(c.event) == repr(direct.event)
    assert all(np.array_equal(a, b) for a, b in zip(c.grid(), direct.grid()))
    assert DPSGDClaim(1.0, 0.1, 10).spec == "dpsgd:noise=1,rate=0.1,steps=10"
    assert c.to_dict()["steps"] == 10


_PROBE = ("import sys; from dpaudit.claims import parse_claim; "
          "c = parse_claim('dpsgd:noise=1.3,rate=0.05,steps=20'); "
          "print(repr(float(c.epsilon(1e-5))), 'dp_accounting' in sys.modules, 'joblib' in sys.modules)")


def _probe(env):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    eps, imported, joblib = out.stdout.split()
    assert joblib == "False"  # the disk cache is read without joblib, whose import cost a one-run command 46 ms
    return float(eps), imported == "True"


def test_a_dpsgd_curve_is_computed_once_per_machine(tmp_path):
    # First process: computes (imports dp-accounting) and stores; second: reads it, never imports dp-accounting
    # (about a second of every command), same curve.  A cache that cannot be written, or none: computed each time.
    import os

    env = {**os.environ, "DPAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    first = _probe(env)
    second = _probe(env)
    assert first[1] and not second[1] and first[0] == second[0]
    (tmp_path / "file").write_text("not a directory")
    for where in (str(tmp_path / "file"), "off"):
        assert _probe({**env, "DPAUDIT_CACHE_DIR": where}) == (first[0], True)


def test_the_disk_cache_is_keyed_by_the_code_that_builds_a_grid(monkeypatch, tmp_path):
    # A stored curve is keyed by the code that builds it: joblib's key, the cached function's own code only, kept
    # serving grids made before a fix in what it calls (the grid's dropping of overflowed deltas), (711, 0)-DP for
    # DP-SGD at 10^7 steps.
    import dpaudit.claims.accountant as claims

    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    built = claims.epsilon_grid

    def fewer_points(delta_at, eps_max):  # a change in how a grid is built
        deltas, epsilons = built(delta_at, eps_max)
        return deltas[1:], epsilons[1:]

    def grid():
        claims._dpsgd_grid.cache_clear()
        claims._accountant_grid.cache_clear()
        return claims._dpsgd_grid(1.3, 0.05, 20)

    try:
        before = grid()
        monkeypatch.setattr(claims, "epsilon_grid", fewer_points)
        assert len(grid()[0]) == len(before[0]) - 1
    finally:
        monkeypatch.undo()
        grid()


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    from dpaudit.claims import cache_dir

    monkeypatch.setenv("DPAUDIT_CACHE_DIR", "off")
    assert cache_dir() is None
    monkeypatch.delenv("DPAUDIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "dpaudit"
    monkeypatch.delenv("XDG_CACHE_HOME")

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr("pathlib.Path.home", staticmethod(no_home))
    assert cache_dir() is None


@pytest.mark.parametrize("spec", ["gdp:mu=1", "dpsgd:noise=1,rate=0.1,steps=10", "eps:1,delta=1e-5"])
def test_a_delta_read_twice_gives_the_same_epsilon_as_the_array_read(spec):
    # One delta's epsilon is kept on the claim (an audit asks for the same few many times): the kept
    # answer must be the array computation's, for numpy and Python scalars alike, and must not touch
    # the claim's equality or hash.
    c = parse_claim(spec)
    deltas = [0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2]
    array = c.epsilon(deltas)
    for d, e in zip(deltas, array):
        assert c.epsilon(d) == e or (np.isinf(e) and np.isinf(c.epsilon(d)))
        assert c.epsilon(np.float64(d)) == c.epsilon(d)
        assert isinstance(c.epsilon(d), float)
    assert c == parse_claim(spec) and hash(c) == hash(parse_claim(spec))
    assert c.epsilon(np.array(deltas)).tolist() == array.tolist()


@pytest.mark.parametrize("steps, shown", [("1e300", "1e+300"), ("10000001", "10000001"), (str(10**40), "1e+40")])
def test_steps_have_a_documented_limit_and_the_error_shows_no_huge_number(steps, shown):
    # steps=1e300 reached dp_accounting, whose OverflowError echoed the event with a 301-digit count.
    from dpaudit.claims import MAX_STEPS, DPSGDClaim

    assert MAX_STEPS == 10**7
    spec = f"dpsgd:noise=1,rate=0.1,steps={steps}"
    with pytest.raises(ParameterValueError) as err:
        parse_claim(spec)
    assert str(err.value) == f"claim {spec!r}: steps must be an integer in [1, 1e+07]; got {shown}"
    with pytest.raises(ParameterValueError, match=r"steps must be an integer in \[1, 1e\+07\]; got 1e\+300$"):
        DPSGDClaim(1.0, 0.1, int(1e300))


def test_a_slow_accountant_curve_says_so_on_stderr_and_a_quick_one_does_not(monkeypatch, capfd):
    # dpsgd:noise=0.01,rate=0.01,steps=1 spent a minute inside dp-accounting without a word.
    import time

    import dpaudit.claims.accountant as claims

    grid = (np.array([1e-5]), np.array([1.0]))
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", "off")
    monkeypatch.setattr(claims, "SLOW_NOTE_AFTER", 0.05)
    monkeypatch.setenv("DPAUDIT_PROGRESS", "1")  # as on a terminal
    monkeypatch.setattr(claims, "_dpsgd_grid_computed", lambda *a: time.sleep(0.5) or grid)
    claims._dpsgd_grid.cache_clear()
    try:
        assert claims.DPSGDClaim(0.0123, 0.01, 1).grid() is grid
        err = capfd.readouterr().err
        assert err.count("\n") == 1 and err.startswith("note: computing the accountant's curve for "
                                                       "dpsgd:noise=0.0123,rate=0.01,steps=1;"), err
        monkeypatch.setattr(claims, "_dpsgd_grid_computed", lambda *a: grid)
        monkeypatch.setattr(claims, "SLOW_NOTE_AFTER", 5.0)
        claims.DPSGDClaim(0.0124, 0.01, 1)
        assert capfd.readouterr().err == ""
        monkeypatch.setattr(claims, "SLOW_NOTE_AFTER", 0.05)  # slow, but stderr a log: no line before an error
        monkeypatch.setenv("DPAUDIT_PROGRESS", "0")  # as in a log
        monkeypatch.setattr(claims, "_dpsgd_grid_computed", lambda *a: time.sleep(0.3) or grid)
        claims.DPSGDClaim(0.0125, 0.01, 1)
        assert capfd.readouterr().err == ""
    finally:
        claims._dpsgd_grid.cache_clear()
