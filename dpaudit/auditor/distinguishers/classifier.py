"""scikit-learn classifiers as distinguishers (DP-Sniper style)."""

from __future__ import annotations

import numpy as np

from ...exceptions import ParameterValueError

from .base import as_2d

__all__ = ["ClassifierScore"]


class ClassifierScore:
    """Vector outputs: a scikit-learn classifier's log-odds, in the spirit of DP-Sniper.

    Bichsel et al. 2021 train a classifier on releases labelled D / D' and
    threshold its output; any ``predict_proba`` estimator works.  Fitting uses
    at most ``max_fit`` releases per side so that the audit stays fast.
    """

    def __init__(self, kind: str = "logistic", *, max_fit: int = 20_000, random_state: int = 0):
        self.kind = kind
        self.name = kind
        self.max_fit = max_fit
        self.random_state = random_state

    def _model(self):
        if self.kind == "logistic":
            from sklearn.linear_model import LogisticRegression
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        if self.kind == "mlp":
            from sklearn.neural_network import MLPClassifier
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            return make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=(32, 32), max_iter=200,
                                                                  early_stopping=True,
                                                                  random_state=self.random_state))
        if self.kind == "boosting":
            from sklearn.ensemble import HistGradientBoostingClassifier

            return HistGradientBoostingClassifier(max_iter=100, random_state=self.random_state)
        raise ParameterValueError(f"attack must name a known classifier; got {self.kind!r}")

    def fit(self, x0, x1):
        a = as_2d(np.asarray(x0, float))[: self.max_fit]
        b = as_2d(np.asarray(x1, float))[: self.max_fit]
        X = np.concatenate([a, b])
        y = np.r_[np.ones(len(a)), np.zeros(len(b))]
        import warnings

        with warnings.catch_warnings():
            # A classifier that stops early on easy data is still a valid score;
            # its convergence warnings would otherwise abort the audit.
            warnings.simplefilter("ignore")
            self.model = self._model().fit(X, y)
        return self

    def score(self, x):
        p = self.model.predict_proba(as_2d(np.asarray(x, float)))[:, 1]
        p = np.clip(p, 1e-12, 1 - 1e-12)
        return np.log(p) - np.log1p(-p)



def _contrasts(c: int) -> np.ndarray:
    """A ``c x (c - 1)`` matrix whose orthonormal columns span the vectors of R^c that sum to 0.

    With an unpenalised intercept, a one-hot block's weights are centred at the L2-penalised
    optimum (any shift of a block is the intercept's to take, at no penalty), so fitting the
    weights ``Q theta`` with penalty ``|theta|^2`` is the same problem in ``c - 1`` unknowns.

    >>> q = _contrasts(3)
    >>> bool(np.allclose(q.T @ q, np.eye(2)) and np.allclose(q.sum(axis=0), 0))
    True
    """
    return np.linalg.qr(np.eye(c) - 1.0 / c)[0][:, : c - 1]  # the centring projector's range


def _contrast_design(cells, offsets, sizes, counts):
    """The design of :class:`BinnedLogisticScore` in contrast coordinates, and how to map back.

    ``cells`` (n, k) holds each release's global cell per coordinate; only cells some release falls
    in are kept (an empty cell's weight is 0 at the optimum, uncoupled from the rest).  Returns
    ``(X, [(cells_j, Q_j), ...])``: ``X[:, block_j] = Q_j[local cell]``, weights ``w[cells_j] = Q_j theta_j``.

    When most releases sit in one cell of most coordinates (bits that are rarely 1), each block is
    shifted by its most common cell's row, ``Q_j[local] - Q_j[ref]``, and ``X`` is sparse: a constant
    shift of a column is the unpenalised intercept's, so the penalised problem and its optimum theta are
    the same, and Newton's method, affine-invariant, takes the same steps.  Its Hessian then costs the
    sum of squared nonzeros per row instead of a dense ``n p^2`` product (ASUE at k 200, epsilon 10:
    see ``docs/decisions/calibration-cost.md``).
    """
    from scipy import sparse

    blocks, bases, basis = [], [], {}
    for j in range(cells.shape[1]):
        cells_j = offsets[j] + np.flatnonzero(counts[offsets[j]:offsets[j] + sizes[j]])
        if len(cells_j) < 2:
            continue  # one cell: a constant column, the intercept's
        local = np.searchsorted(cells_j, cells[:, j])
        q = basis.get(len(cells_j))
        if q is None:
            q = basis[len(cells_j)] = _contrasts(len(cells_j))
        blocks.append((local, int(np.argmax(counts[cells_j]))))
        bases.append((cells_j, q))
    n, width = cells.shape[0], sum(q.shape[1] for _, q in bases)
    per_row = np.zeros(n)
    for (local, ref), (_, q) in zip(blocks, bases):
        per_row += (local != ref) * q.shape[1]
    if not blocks or float(per_row @ per_row) * SPARSE_HESSIAN_COST > float(n) * width * width:
        X = np.concatenate([q[local] for (local, _), (_, q) in zip(blocks, bases)], axis=1) if blocks \
            else np.empty((n, 0))
        return X, bases
    parts, start = [], 0
    for (local, ref), (_, q) in zip(blocks, bases):
        rows = np.flatnonzero(local != ref)
        vals = q[local[rows]] - q[ref]
        parts.append((np.repeat(rows, q.shape[1]), np.tile(np.arange(start, start + q.shape[1]), len(rows)),
                      vals.ravel()))
        start += q.shape[1]
    r, c, v = (np.concatenate(p) for p in zip(*parts))
    return sparse.csr_matrix((v, (r, c)), shape=(n, width)), bases


#: A nonzero pair of a sparse Hessian product costs about this many dense multiply-adds; the sparse
#: design is used when it is cheaper (the fits behind this value: docs/decisions/distinguisher-costs.md).
SPARSE_HESSIAN_COST = 100


#: Merge repeated fitting rows when at most this share of them is distinct (below it the merge pays).
MERGE_BELOW = 0.7


def _merge_repeats(cells, y, sizes, offsets):
    """``(cells, y, weight)``: each distinct (row of cells, label) once, weighted by its count; as given
    (weight None) when few rows repeat.

    The penalised log-likelihood is a sum over rows, so equal rows with equal labels may be one row
    with their count as its weight: the same optimum, found by Newton steps whose cost is linear in
    the rows (releases of rare bits repeat, as in asymmetric unary encoding at a large epsilon;
    docs/decisions/distinguisher-costs.md).  Rows are keyed by :func:`~._features.row_keys` of
    their local cells; a hashed key is trusted only after every row is checked equal to its key's
    first row.
    """
    from ._features import row_keys

    local = cells - offsets
    keys = row_keys(local, sizes)
    sides = [np.flatnonzero(y == label) for label in (1.0, 0.0)]
    found = [np.unique(keys[rows], return_index=True, return_inverse=True, return_counts=True) for rows in sides]
    if sum(len(f[0]) for f in found) > MERGE_BELOW * len(y):
        return cells, y, None
    out = []
    for label, rows, (uniq, first, inverse, count) in zip((1.0, 0.0), sides, found):
        if not np.array_equal(local[rows[first]][inverse.ravel()], local[rows]):
            return cells, y, None  # a hash collision: fit the rows as they are
        out.append((cells[rows[first]], np.full(len(uniq), label), count.astype(float)))
    return tuple(np.concatenate(parts) for parts in zip(*out))


#: Number bins of all coordinates together that binned-logistic aims at: each coordinate gets
#: ``CELL_BUDGET // coordinates`` bins (at most ``n_bins``, at least 2), so up to 64 coordinates keep 16 bins.
#: A fit costs about rows x cells^2 (Newton's Hessian), so the budget caps its time (fit times by width:
#: docs/decisions/distinguisher-costs.md).
CELL_BUDGET = 1024
#: Most design columns fitted by Newton's method; L-BFGS beyond (only an explicit choice gets there: ``auto``
#: leaves binned-logistic out above WIDE_CELLS coordinates).
NEWTON_FEATURES = 2048
#: Coordinates above which ``auto`` leaves binned-logistic out: 2 bins each is already CELL_BUDGET.
WIDE_CELLS = CELL_BUDGET // 2


def cell_bins(n_bins: int, coordinates: int) -> int:
    """Number bins per coordinate under :data:`CELL_BUDGET`: ``n_bins`` up to 64 coordinates, fewer beyond.

    >>> cell_bins(16, 10), cell_bins(16, 128), cell_bins(16, 5000)
    (16, 8, 2)
    """
    return max(2, min(n_bins, CELL_BUDGET // max(1, coordinates)))


#: Rows x columns (one per used cell, less one per coordinate) up to which binned-logistic fits on a
#: dense design (8 bytes each: 128 MB).
DENSE_CELLS = 16_000_000


class BinnedLogisticScore:
    """DP-Sniper-style classifier on engineered features: logistic regression over one-hot cells.

    Bichsel et al. (2021) feed a classifier the raw release plus a flag for
    each special value (``FlagsFeatureTransformer``).  Here every coordinate
    becomes one categorical cell: its special value (abort, "below", a bit),
    or the quantile bin of its number (``n_bins`` pooled bins).  A logistic
    regression on the one-hot cells learns one weight per cell *jointly*, so
    unlike naive Bayes it discounts coordinates that repeat one another (the
    answers of a sparse vector after an abort); it is fitted on at most
    ``max_fit`` releases per side and scores with one table look-up per
    coordinate, as cheap as naive Bayes.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x0 = np.where(rng.random((4000, 3)) < 0.6, -1.0, rng.normal(size=(4000, 3)))
    >>> x1 = np.where(rng.random((4000, 3)) < 0.4, -1.0, rng.normal(size=(4000, 3)))
    >>> s = BinnedLogisticScore().fit(x0, x1)
    >>> bool(s.score(np.array([[-1.0, -1.0, -1.0]]))[0] > s.score(np.array([[0.1, 0.2, 0.3]]))[0])
    True
    """

    name = "binned-logistic"

    def __init__(self, *, n_bins: int = 16, max_fit: int = 25_000, regularization: float = 1.0):
        self.n_bins = n_bins
        self.max_fit = max_fit
        self.regularization = regularization

    def _cells(self, cols):
        """(n, k) cell index per release and coordinate, from its (k, n) :func:`columns`."""
        from ._features import bin_index, symbol_codes

        codes = symbol_codes(cols, self.specials, transposed=True)
        cells = np.empty(cols.shape, dtype=np.int64)  # (k, n)
        for j, edges in enumerate(self.edges):
            code = codes[:, j]
            if len(edges):
                nb = bin_index(edges, cols[j])  # 0 .. len(edges)
                cells[j] = self.offsets[j] + np.where(code > 0, len(edges) + code, nb)
            else:
                cells[j] = self.offsets[j] + code
        return cells.T

    def _bins(self, pooled):
        """Each coordinate's specials and number bins from the pooled (k, n) columns; its count of cells."""
        from ._features import quantile_edges, special_values, symbol_codes

        self.specials = special_values(pooled, transposed=True)
        codes = symbol_codes(pooled, self.specials, transposed=True)
        self.edges, sizes = [], []
        n_bins = cell_bins(self.n_bins, len(pooled))
        for j in range(len(pooled)):
            numbers = pooled[j][codes[:, j] == 0].astype(float)
            edges = quantile_edges(numbers, n_bins) if len(numbers) >= 2 * n_bins else np.empty(0)
            self.edges.append(edges)
            sizes.append(len(edges) + 1 + len(self.specials[j]))
        return sizes

    def fit(self, x0, x1):
        import warnings

        from scipy import sparse
        from sklearn.linear_model import LogisticRegression

        from ._features import columns

        # (k, n) columns, integers in their own dtype: only compared with float specials and edges,
        # where an integer compares as its float64 (bits: a table lookup per coordinate).
        a, b = (columns(as_2d(np.asarray(x))[: self.max_fit], exact=True) for x in (x0, x1))
        pooled = np.concatenate([a, b], axis=1)
        sizes = self._bins(pooled)
        self.offsets = np.cumsum(np.r_[0, sizes[:-1]]).astype(np.int64)
        n_cells = int(sum(sizes))
        cells = self._cells(pooled)
        # A cell no fitting release falls in (a third of a binary vector's: the number bin of a coordinate of
        # specials only) has weight 0 at the optimum, uncoupled; leaving it out: (2/3)^2 of Newton's cost.
        counts = np.bincount(cells.ravel(), minlength=n_cells)
        used = np.flatnonzero(counts)
        y = np.r_[np.ones(a.shape[1]), np.zeros(b.shape[1])]
        cells, y, weight = _merge_repeats(cells, y, np.asarray(sizes), self.offsets)  # repeated rows weighted
        # The dense design has one column fewer than its used cells per coordinate (_contrast_design).
        seen = np.count_nonzero(np.logical_or.reduceat(counts > 0, self.offsets))  # coordinates with a used cell
        dense = len(cells) * (len(used) - seen) <= DENSE_CELLS
        if dense:
            # Newton's Hessian X'WX on a sparse X is a sparse product per step, slow when every row
            # has a cell in each of many coordinates (1.1 s a step at k 100 binary coordinates,
            # 50,000 rows); dense, it is one BLAS product (same optimum).  Each coordinate's one-hot
            # block is written in an orthonormal basis of its sum-zero contrasts (_contrasts): one
            # column fewer per coordinate, none for a coordinate seen in one cell only.
            X, bases = _contrast_design(cells, self.offsets, sizes, counts)
        else:
            rows = np.repeat(np.arange(len(cells)), cells.shape[1])
            X = sparse.csr_matrix((np.ones(cells.size), (rows, cells.ravel())), shape=(len(cells), n_cells))[:, used]
        self.weights = np.zeros(n_cells)
        if X.shape[1] == 0:  # every coordinate constant on the fitting releases: nothing to weigh
            return self
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an early stop is still a valid score
            # Newton steps on the few hundred one-hot cells converge in a handful of iterations
            # to the penalised optimum; L-BFGS (sklearn's default) stops short of it and is slower
            # (docs/decisions/distinguisher-costs.md).
            # Beyond NEWTON_FEATURES columns Newton's Hessian (columns^2 per row) is out of reach: L-BFGS then.
            solver = "newton-cholesky" if X.shape[1] <= NEWTON_FEATURES else "lbfgs"
            model = LogisticRegression(C=self.regularization, solver=solver, max_iter=100).fit(X, y, sample_weight=weight)
        coef = model.coef_.ravel()
        if dense:
            start = 0
            for cells_j, q in bases:
                self.weights[cells_j] = q @ coef[start:start + q.shape[1]]
                start += q.shape[1]
        else:
            self.weights[used] = coef
        return self

    def score(self, x):
        # The sum of each coordinate's cell weight, one coordinate at a time: the same cells as
        # _cells without the (n, k) index matrix (held-out chunks are scored on every round).
        from ._features import bin_index, column_codes, columns

        cols = columns(x, exact=True)
        out = np.zeros(cols.shape[1])
        for j, edges in enumerate(self.edges):
            vals = self.specials[j]
            w = self.weights[self.offsets[j]:self.offsets[j] + len(edges) + 1 + len(vals)]
            idx = bin_index(edges, cols[j], narrow=True) if len(edges) else np.zeros(cols.shape[1], np.uint8)
            if len(vals):
                code = column_codes(cols[j], vals)
                idx = np.where(code > 0, len(edges) + code, idx)
            out += w[idx]
        return out
