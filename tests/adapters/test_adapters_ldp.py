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


def _perturb_1_1_2(self, index):
    """pure-ldp 1.1.2's ``UEClient._perturb``, verbatim: the last release before the fix (fc622e3)."""
    import random

    import numpy as np

    oh_vec = np.random.choice([1, 0], size=self.d, p=[self.q, 1-self.q])  # If entry is 0, flip with prob q
    if random.random() < self.p:
        oh_vec[index] = 1
    return oh_vec


def test_ue_before_1_2_draws_what_pure_ldp_1_1_2_drew(monkeypatch):
    # The extra admits pure-ldp >= 1.2.0 only, so the old client is re-created: seed for seed it must give
    # the reports pure-ldp 1.1.2's own client gives (checked once by installing 1.1.2; this keeps it so).
    pytest.importorskip("pure_ldp")
    from dpaudit.adapters.ldp_libraries import pure_ldp_oracle

    buggy = get_mechanism("pure_ldp.ue_before_1_2", epsilon=1.0, k=6)([4], size=300, rng=5)
    monkeypatch.setattr(pure_ldp_oracle("unary_encoding").UEClient, "_perturb", _perturb_1_1_2)
    old = get_mechanism("pure_ldp.sue", epsilon=1.0, k=6)([4], size=300, rng=5)
    assert old.shape == buggy.shape == (300, 6) and (old == buggy).all()
