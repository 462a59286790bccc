"""The pure-ldp and multi-freq-ldpy clients as targets: the library's code audited, its old bug re-found."""

from __future__ import annotations

import pytest

import dpaudit
from dpaudit.mechanisms import get_mechanism

# Each test skips on its own library only: a module-level skip on pure_ldp left multi-freq-ldpy untested
# wherever it was installed without pure-ldp (as `pip install 'dpaudit[multi-freq-ldpy]'` does).


def test_pure_ldp_unary_encoding_before_1_2_is_flagged_and_1_2_is_not():
    pytest.importorskip("pure_ldp")
    # The client before pure-ldp 1.2.0 kept its own bit 1 with probability p + (1 - p) q: epsilon 1.68
    # against a claim of 1 (Arcolezi and Gambs 2024 found it; upstream fc622e3 fixed it).
    buggy = get_mechanism("pure_ldp.ue_before_1_2", epsilon=1.0, k=4)
    assert buggy.broken and buggy.true_epsilon() == pytest.approx(1.680, abs=1e-3)
    r = dpaudit.audit(buggy, epsilon=1.0, seed=1)
    assert r.verdict == "violation" and r.samples <= 20_000
    fixed = dpaudit.audit(get_mechanism("pure_ldp.sue", epsilon=1.0, k=4), epsilon=1.0, max_samples=20_000, seed=1,
                          confidence=0.999)
    assert fixed.verdict == "no violation found"


@pytest.mark.parametrize("name", ["pure_ldp.de", "pure_ldp.oue", "multi_freq_ldpy.grr", "multi_freq_ldpy.sue",
                                  "multi_freq_ldpy.oue"])
def test_library_clients_are_seeded_and_not_flagged(name):
    pytest.importorskip(name.split(".")[0])
    m = get_mechanism(name, epsilon=1.0, k=5)
    a, b = m([2], size=50, rng=3), m([2], size=50, rng=3)
    assert (a == b).all()  # the library's global generators are seeded from rng
    # GRR's and UE's outcome ratios are exactly e^eps: at 0.95 a correct client is flagged in up to 5% of
    # seeds (seed 2 does it to multi_freq_ldpy.grr: 1.0016); at 0.999 each of these five fails w.p. <= 0.1%.
    r = dpaudit.audit(m, epsilon=1.0, max_samples=20_000, seed=2, confidence=0.999)
    assert r.verdict == "no violation found"


def test_library_clients_check_the_value():
    pytest.importorskip("pure_ldp")
    with pytest.raises(dpaudit.ParameterValueError, match="0..4"):
        get_mechanism("pure_ldp.de", epsilon=1.0, k=5)([5])
