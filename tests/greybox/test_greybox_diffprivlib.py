"""diffprivlib's mechanisms audited grey-box: taped at mechanism level, each declared sensitivity checked."""

import math

import numpy as np
import pytest

from dpaudit.adapters import available
from dpaudit.greybox import analyse
from dpaudit.mechanisms import get_mechanism

pytestmark = pytest.mark.skipif(not available("diffprivlib"), reason="diffprivlib is not installed")


def _call(mech):
    return lambda data, rng: mech(data, rng=rng)


@pytest.mark.parametrize("name, params, delta, expected", [
    ("diffprivlib.laplace", {"epsilon": 1.0}, 0.0, 1.0),
    ("diffprivlib.geometric", {"epsilon": 1.0}, 0.0, 1.0),
    ("diffprivlib.gaussian_analytic", {"epsilon": 1.0, "delta": 1e-5}, 1e-5, 1.0),
    ("diffprivlib.binary", {"epsilon": math.log(3)}, 0.0, math.log(3)),
])
def test_the_adapters_are_exact_and_keep_their_declared_sensitivity(name, params, delta, expected):
    mech = get_mechanism(name, **params)
    d1, d2 = mech.neighbouring_pair()
    r = analyse(_call(mech), d1, d2, traces=30, delta=delta, seed=1)
    assert r.library_hooks and r.findings == [] and r.exact
    assert math.isclose(r.epsilon_upper_bound, expected, rel_tol=2e-3)


def test_the_exponential_mechanism_is_exact_from_its_probabilities():
    mech = get_mechanism("diffprivlib.exponential", epsilon=1.0)
    d1, d2 = mech.neighbouring_pair()
    r = analyse(_call(mech), d1, d2, traces=30, seed=2)
    assert r.library_hooks and r.findings == [] and r.exact and 0 < r.epsilon_upper_bound <= 1.0


def test_a_value_moving_more_than_the_declared_sensitivity_is_found():
    from dpaudit.adapters.diffprivlib import load_mechanisms

    lib = load_mechanisms()

    def unclipped_mean_sum(data, rng):  # declares sensitivity 1 but never clips the records
        state = np.random.RandomState(int(rng.integers(2**31)))
        return lib.Laplace(epsilon=1.0, sensitivity=1.0, random_state=state).randomise(float(np.sum(data)))

    r = analyse(unclipped_mean_sum, np.array([3.0]), np.array([0.0]), traces=20, seed=3)
    (f,) = r.findings
    assert f["kind"] == "sensitivity" and "diffprivlib.Laplace" in f["detail"] and "moves by 3" in f["detail"]
    assert r.exact and math.isclose(r.epsilon_upper_bound, 3.0)


def test_a_truncating_tool_is_exact_through_its_clamped_law():
    """``diffprivlib.tools.mean`` releases ``LaplaceTruncated``'s value: Laplace noise clamped to the bounds, taped as
    that law (atoms at the bounds), with the declared sensitivity (upper - lower) / n checked against the mean's
    move; the mean of [0, 1, 1] -> [0, 1, 0] moves by exactly that, so the pair's epsilon is the claim."""
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.tools import mean

    def dp_mean(data, rng):
        return mean(np.asarray(data, float), epsilon=1.0, bounds=(0, 1), random_state=int(rng.integers(2**31)),
                    accountant=BudgetAccountant())

    r = analyse(dp_mean, np.array([0.0, 1.0, 1.0]), np.array([0.0, 1.0, 0.0]), traces=30, seed=4)
    assert r.library_hooks and r.findings == [] and r.exact
    assert math.isclose(r.epsilon_upper_bound, 1.0, rel_tol=1e-6)


def test_a_folding_mechanism_is_a_bound_through_its_parent():
    """``LaplaceFolded`` folds ``Laplace.randomise``'s value into the bounds: taped at the parent, post-processing, so
    the bound is the noise's and it is never called exact (the fold hides the draw where it acts)."""
    from dpaudit.adapters.diffprivlib import load_mechanisms

    lib = load_mechanisms()

    def folded(data, rng):
        return lib.LaplaceFolded(epsilon=1.0, sensitivity=1.0, lower=0.0, upper=2.0,
                                 random_state=int(rng.integers(2**31))).randomise(float(np.sum(data)))

    r = analyse(folded, np.array([1.0, 1.0]), np.array([1.0]), traces=20, seed=5)
    assert r.library_hooks and r.findings == [] and not r.exact and "LaplaceFolded" in r.explanation
    assert math.isclose(r.epsilon_upper_bound, 1.0, rel_tol=1e-6)

