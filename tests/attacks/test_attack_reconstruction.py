"""LP reconstruction: known answers, noise phase transition, subsampling, solver agreement."""

import numpy as np
import pytest

from dpaudit.attacks.reconstruction import (
    diffix_queries,
    random_queries,
    reconstruct,
    recovery_curve,
    run_reconstruction,
)
from dpaudit.exceptions import ParameterValueError


def test_exact_answers_k_4n_recover_everything_at_n_500():
    # Dinur-Nissim: with exact answers to 4n random subsets the LP's rounded solution is the data
    # (a wrong bit survives with probability ~ 2^-n); ~0.2 s per LP with the dense-ipm path.
    r = run_reconstruction(n=500, k=2000, noise="exact", trials=2, rng=0)
    assert r.fraction_recovered == 1.0 and r.solver == "dense-ipm"
    assert run_reconstruction(n=20, norm="linf", trials=2, rng=0).solver == "highs"


def test_diffix_family_exact_answers_recover_everything():
    r = run_reconstruction(n=200, query_family="diffix", noise="exact", trials=2, rng=1)
    assert r.fraction_recovered == 1.0


def test_l1_tolerates_laplace_noise_linf_is_weaker():
    # Laplace scale 2 << sqrt(n): L1 recovers ~all bits; L-infinity misses ~10% (measured: ~88%).
    l1 = run_reconstruction(n=200, noise="laplace", noise_scale=2.0, trials=2, rng=2)
    linf = run_reconstruction(n=200, noise="laplace", noise_scale=2.0, norm="linf", trials=2, rng=2)
    assert l1.fraction_recovered > 0.98
    assert linf.fraction_recovered < l1.fraction_recovered


def test_linf_feasibility_with_known_error_bound():
    r = run_reconstruction(n=150, noise="bounded", noise_scale=1.0, norm="linf", error_bound=1.0, trials=2, rng=3)
    assert r.fraction_recovered > 0.95


def test_phase_transition_in_noise_over_sqrt_n():
    # Gaussian sigma = c sqrt(n), n = 200: c = 0.05 recovers > 95% of bits, c = 2 is close to guessing.
    n = 200
    low, high = recovery_curve(parameter="noise_scale", values=[0.05 * n**0.5, 2 * n**0.5], n=n,
                               noise="gaussian", trials=2, rng=4)
    assert low.fraction_recovered > 0.95
    assert high.fraction_recovered < 0.75


def test_subsampling_defeats_reconstruction():
    # m = 10 rows out of 200: answer error ~ n / (2 sqrt(m)) ~ 30 >> sqrt(n) ~ 14.
    r = run_reconstruction(n=200, noise="subsample", subsample_size=10, trials=2, rng=5)
    assert r.fraction_recovered < 0.75 and r.claimed is None


def test_solver_paths_agree():
    g = np.random.default_rng(6)
    x = g.integers(0, 2, 40)
    F = random_queries(40, 160, rng=g)
    a = F @ x + g.laplace(0, 0.5, 160)
    guesses = {s: reconstruct(F, a, solver=s) >= 0.5
               for s in ("dense-ipm", "highs", "scipy", "pulp-highs", "pulp-cbc")}
    for s, gs in guesses.items():
        assert (gs == (x == 1)).mean() > 0.95, s


@pytest.mark.parametrize("seed", range(6))
def test_dense_ipm_reaches_the_highs_optimum(seed):
    # Same LP optimum as HiGHS (objective to 1e-5 relative) and the same rounded bits, for exact,
    # Laplace and rounded-Gaussian answers, random and Diffix queries, k below and above n.
    g = np.random.default_rng(seed)
    n, k = [(60, 240), (80, 50), (50, 500)][seed % 3]
    x = g.integers(0, 2, n)
    F = (random_queries if seed < 3 else diffix_queries)(n, k, rng=g)
    a = F @ x + [np.zeros(k), g.laplace(0, 1.0, k), np.round(g.normal(0, 3.0, k))][seed % 3]
    dense, highs = reconstruct(F, a, solver="dense-ipm"), reconstruct(F, a, solver="highs")
    objective = lambda z: np.abs(F @ z - a).sum()  # noqa: E731
    assert objective(dense) == pytest.approx(objective(highs), rel=1e-5, abs=1e-3)
    assert ((dense >= 0.5) == (highs >= 0.5)).all()
    assert ((0 <= dense) & (dense <= 1)).all()


def test_third_party_mechanism_and_attribute_inference_bound():
    def my_server(queries, x, rng):
        return queries @ x + rng.normal(0.0, 0.5, size=queries.shape[0])

    r = run_reconstruction(n=40, k=160, noise=my_server, trials=40, rng=7)
    assert r.mechanism == "my_server" and r.claimed is None and r.verdict == "no claim"
    # every target bit recovered: 20 D runs, 20 D' runs, all correct -> the ceiling of 40 trials
    assert r.bound.tp == 20 and r.bound.tn == 20 and r.epsilon_lower_bound == pytest.approx(r.bound.ceiling)


def test_claim_of_k_answers_and_no_violation_for_honest_laplace():
    # Laplace epsilon 0.05 per answer, k = 160 answers: claimed 8.0; the bound from 40 trials is
    # at most its ceiling (~4.3), so no violation can be reported.
    r = run_reconstruction(n=40, k=160, noise="laplace", epsilon=0.05, trials=40, rng=8)
    assert r.claimed.point_epsilon == pytest.approx(8.0)
    assert r.verdict == "no violation found"


def test_validation():
    with pytest.raises(ParameterValueError, match="solver"):
        run_reconstruction(solver="gurobi")
    with pytest.raises(ParameterValueError, match="trials"):
        run_reconstruction(trials=1)
    with pytest.raises(ParameterValueError, match="error_bound"):
        reconstruct(np.eye(2), np.ones(2), error_bound=1.0)
    with pytest.raises(ParameterValueError, match="dense-ipm"):
        reconstruct(np.eye(2), np.ones(2), norm="linf", solver="dense-ipm")
    with pytest.raises(ParameterValueError, match="query_family"):
        run_reconstruction(query_family="sql")
    assert diffix_queries(10, 3, rng=0).shape == (3, 10)
