"""binned-logistic's contrast fit solves the same penalised problem as the full one-hot fit.

The reference here fits scikit-learn's LogisticRegression on the plain one-hot design of the
same cells (every used cell one column); the scores must agree up to a constant shift (the
one-hot blocks' free shifts are the intercept's).  Deterministic: fixed seeds, no tolerance on
the choice of event, only on floating-point agreement of two solvers of one convex problem.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpaudit.auditor.distinguishers.classifier import BinnedLogisticScore


def _one_hot_reference(score: BinnedLogisticScore, x0, x1, probe):
    from sklearn.linear_model import LogisticRegression

    pooled = np.concatenate([np.asarray(x0, float), np.asarray(x1, float)])
    cells = score._cells(pooled.T.copy())  # _cells reads (k, n) columns
    used = np.flatnonzero(np.bincount(cells.ravel(), minlength=score.weights.size))
    X = (cells[:, :, None] == used[None, None, :]).any(axis=1).astype(float)
    y = np.r_[np.ones(len(x0)), np.zeros(len(x1))]
    model = LogisticRegression(C=score.regularization, solver="newton-cholesky", max_iter=100).fit(X, y)
    w = np.zeros(score.weights.size)
    w[used] = model.coef_.ravel()
    return w[score._cells(np.asarray(probe, float).T.copy())].sum(axis=1)


def _bits(rng, n, k, p):
    return (rng.random((n, k)) < p).astype(np.int8)


CASES = {
    "bits": lambda rng: (_bits(rng, 6000, 12, np.linspace(0.3, 0.6, 12)), _bits(rng, 6000, 12, 0.45)),
    "numbers": lambda rng: (rng.laplace(0.2, 1.0, (6000, 4)), rng.laplace(0.0, 1.0, (6000, 4))),
    "specials and numbers": lambda rng: (
        np.where(rng.random((6000, 3)) < 0.6, -1.0, rng.normal(size=(6000, 3))),
        np.where(rng.random((6000, 3)) < 0.4, -1.0, rng.normal(size=(6000, 3)) + 0.2)),
    # Bits that are rarely 1 (ASUE-like): the design goes sparse, each block shifted by its common cell.
    "rare bits": lambda rng: (_bits(rng, 6000, 40, np.linspace(0.002, 0.02, 40)), _bits(rng, 6000, 40, 0.01)),
    "a constant coordinate": lambda rng: (np.c_[np.zeros(6000), rng.normal(0.3, 1, 6000)],
                                          np.c_[np.zeros(6000), rng.normal(0.0, 1, 6000)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_contrast_fit_matches_the_one_hot_fit(case):
    rng = np.random.default_rng(7)
    x0, x1 = CASES[case](rng)
    score = BinnedLogisticScore().fit(x0, x1)
    probe = np.concatenate([x0[:500], x1[:500]])
    ours = score.score(probe)
    ref = _one_hot_reference(score, x0, x1, probe)
    shift = np.mean(ref - ours)
    # Newton's method is affine-invariant: on the reparametrised design its iterates are the same
    # points, so the two fits agree to rounding, not only to the solver's tolerance.
    assert np.max(np.abs(ours + shift - ref)) < 1e-9 * max(1.0, float(np.ptp(ref)))
    assert np.ptp(ours) > 0  # a leak is there in every case: the score is not flat


def test_all_constant_coordinates_give_a_flat_score():
    x = np.zeros((1000, 3))
    score = BinnedLogisticScore().fit(x, x)
    assert np.all(score.score(x) == 0)


@pytest.mark.parametrize("case, sparse", [("rare bits", True), ("bits", False), ("numbers", False)])
def test_design_is_sparse_only_where_it_is_cheaper(case, sparse, monkeypatch):
    from scipy import sparse as sp

    from dpaudit.auditor.distinguishers import classifier

    made = []
    real = classifier._contrast_design
    monkeypatch.setattr(classifier, "_contrast_design", lambda *a: made.append(real(*a)) or made[-1])
    BinnedLogisticScore().fit(*CASES[case](np.random.default_rng(7)))
    assert sp.issparse(made[0][0]) == sparse
