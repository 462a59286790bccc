"""Multidimensional LDP: each solution's report frequencies against formulas, true epsilons, audits and soundness."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import dpaudit
from dpaudit.exceptions import ParameterValueError
from dpaudit.mechanisms import get_mechanism
from dpaudit.mechanisms.ldp_multidim import rsfd_epsilon

N = 200_000


def _binom_ok(count, n, p, alpha=1e-4):
    # Two-sided binomial test at 1e-4 per check (about 20 checks here: family-wise failure below 0.2%).
    return stats.binomtest(int(count), n, p).pvalue > alpha


def _grr_keep(eps, k):
    return math.exp(eps) / (math.exp(eps) + k - 1)


def test_split_budget_reports_every_attribute_at_eps_over_d():
    m = get_mechanism("mdim_spl", epsilon=1.5, k=6, d=3, protocol="grr")
    x = m([0, 2, 5], size=N, rng=1)
    assert x.shape == (N, 3)
    for j, v in enumerate((0, 2, 5)):
        assert _binom_ok(np.sum(x[:, j] == v), N, _grr_keep(0.5, 6))


def test_sample_one_reports_one_attribute_with_its_index():
    m = get_mechanism("mdim_smp", epsilon=1.0, k=4, d=4, protocol="oue")
    x = m([1, 1, 1, 1], size=N, rng=2)
    assert x.shape == (N, 16)
    reported = (x.reshape(N, 4, 4) >= 0).all(axis=2)
    assert np.all(reported.sum(axis=1) == 1) and np.all((x == -1) | (x == 0) | (x == 1))
    for j in range(4):
        assert _binom_ok(reported[:, j].sum(), N, 0.25)
    bits = x.reshape(N, 4, 4)[reported]  # the reports themselves: OUE at epsilon 1
    assert _binom_ok(bits[:, 1].sum(), N, 0.5) and _binom_ok(bits[:, 0].sum(), N, 1 / (math.e + 1))


@pytest.mark.parametrize("protocol, fake", [("grr", "zero"), ("sue", "zero"), ("oue", "random")])
def test_rsfd_slot_frequencies(protocol, fake):
    eps, k, d = 1.0, 5, 3
    m = get_mechanism("rsfd", epsilon=eps, k=k, d=d, protocol=protocol, fake=fake)
    x = m([2, 2, 2], size=N, rng=3)
    amp = rsfd_epsilon(eps, d)
    if protocol == "grr":
        # Sampled (1/d): GRR at the amplified epsilon; fake: uniform.
        p = _grr_keep(amp, k) / d + (1 - 1 / d) / k
        for j in range(d):
            assert _binom_ok(np.sum(x[:, j] == 2), N, p)
        return
    p, q = (math.exp(amp / 2) / (math.exp(amp / 2) + 1), 1 / (math.exp(amp / 2) + 1)) if protocol == "sue" \
        else (0.5, 1 / (math.exp(amp) + 1))
    fake_own = q if fake == "zero" else p / k + q * (k - 1) / k  # the value's bit in a fake report
    fake_other = q if fake == "zero" else p / k + q * (k - 1) / k
    for j in range(d):
        block = x[:, j * k:(j + 1) * k]
        assert _binom_ok(block[:, 2].sum(), N, p / d + (1 - 1 / d) * fake_own)
        assert _binom_ok(block[:, 0].sum(), N, q / d + (1 - 1 / d) * fake_other)


def test_true_epsilons():
    assert rsfd_epsilon(1.0, 1) == pytest.approx(1.0)
    assert rsfd_epsilon(2.0, 4) == pytest.approx(math.log(4 * (math.e ** 2 - 1) + 1))
    assert get_mechanism("rsfd", epsilon=1.0, d=5).true_epsilon() == pytest.approx(rsfd_epsilon(1.0, 5))
    assert get_mechanism("rsfd", epsilon=1.0, d=5, differ=1).true_epsilon() == pytest.approx(1.0)
    assert get_mechanism("mdim_spl", epsilon=1.0, d=4, differ=2).true_epsilon() == pytest.approx(0.5)
    assert get_mechanism("mdim_smp", epsilon=1.0, d=4).true_epsilon() == 1.0
    a, b = get_mechanism("rsfd", d=4, differ=2, k=7).neighbouring_pair()
    assert a.tolist() == [0, 0, 0, 0] and b.tolist() == [6, 6, 0, 0]


@pytest.mark.parametrize("name, protocol", [("mdim_spl", "grr"), ("mdim_spl", "oue"), ("mdim_smp", "grr"),
                                            ("mdim_smp", "sue"), ("rsfd", "grr"), ("rsfd", "oue")])
def test_auto_certifies_close_to_the_truth_and_never_above(name, protocol):
    # Confidence 0.999: each of the six may exceed its truth with probability <= 0.1%.
    m = get_mechanism(name, epsilon=1.0, k=6, d=3, protocol=protocol)
    r = dpaudit.audit(m, epsilon=m.true_epsilon(), samples=300_000, seed=21, ideal=True, confidence=0.999)
    assert 0.8 * m.true_epsilon() <= r.epsilon_lower_bound <= m.true_epsilon() + 1e-9


def test_rsfd_is_flagged_on_whole_tuples_and_not_on_one_attribute():
    # Its epsilon is amplified for one changed attribute only: LDP-Auditor's pair (every attribute
    # changed) leaks ln(d (e^eps - 1) + 1) = 2.40 at eps 1, d 5.
    m = get_mechanism("rsfd", epsilon=1.0, k=4, d=5, protocol="grr")
    assert dpaudit.audit(m, epsilon=1.0, seed=22).verdict == "violation"
    one = get_mechanism("rsfd", epsilon=1.0, k=4, d=5, protocol="grr", differ=1)
    assert dpaudit.audit(one, epsilon=1.0, max_samples=200_000, seed=22).verdict == "no violation found"


def test_bad_values_are_named():
    with pytest.raises(ParameterValueError, match="0..3"):
        get_mechanism("mdim_spl", k=4, d=2)([0, 4])
    with pytest.raises(ParameterValueError, match="2 values|attribute"):
        get_mechanism("mdim_smp", k=4, d=2)([0, 1, 2])
    with pytest.raises(ParameterValueError, match="protocol"):
        get_mechanism("rsfd", protocol="olh")
    with pytest.raises(ParameterValueError, match="differ"):
        get_mechanism("rsfd", d=2, differ=3)


@pytest.mark.soundness
@pytest.mark.parametrize("name, protocol", [("mdim_spl", "grr"), ("mdim_spl", "oue"), ("mdim_smp", "grr"),
                                            ("mdim_smp", "oue"), ("rsfd", "grr"), ("rsfd", "sue")])
def test_soundness_over_200_seeds(name, protocol):
    # Sequential audits at the default settings against the true epsilon on the pair; 5% of 200 allowed.
    m = get_mechanism(name, epsilon=1.0, k=6, d=3, protocol=protocol)
    alarms = sum(dpaudit.audit(m, epsilon=m.true_epsilon(), max_samples=20_000, seed=s).verdict == "violation"
                 for s in range(200))
    assert alarms <= 10
