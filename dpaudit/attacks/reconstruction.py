"""Linear-programming reconstruction (Dinur and Nissim 2003; Dwork, McSherry, Talwar 2007).

``n`` people each hold a secret bit ``x_i``.  The attacker asks ``k`` subset
counts ``F x`` (``F`` a ``k x n`` 0/1 matrix) and receives perturbed answers
``a`` from a query mechanism.  It then solves a linear program over
``0 <= x <= 1`` and rounds at 1/2:

* ``norm="l1"`` (Dwork-McSherry-Talwar; tolerates a fraction of wild answers):
  minimise ``sum(e+ + e-)`` subject to ``F x - e+ + e- = a``, ``e+, e- >= 0``.
  This compact equality form with split error variables is much faster than
  the textbook pair of inequalities per query.
* ``norm="linf"`` (Dinur-Nissim): minimise ``t`` subject to ``|F x - a| <= t``
  (written ``F x - e = a``, ``-t <= e <= t``); with ``error_bound=E`` it is the
  feasibility problem ``|F x - a| <= E``.

With ``k = O(n)`` random queries and errors ``<< sqrt(n)`` nearly every bit
comes back; with errors ``>> sqrt(n)`` (e.g. a subsampling curator,
error ``~ sqrt(n log k)``) reconstruction collapses.

Solvers (``solver=``): ``"dense-ipm"`` (L1 only) is a primal-dual interior
point method (Mehrotra predictor-corrector) written for this LP: it works on
the dual, ``max a'y - 1'w`` subject to ``F'y <= w``, ``-1 <= y <= 1``,
``w >= 0``, whose Newton systems are ``n x n`` (``4 F' D F`` plus a diagonal,
one dense Cholesky factorisation per iteration) however many queries there are;
``x`` is the dual's multiplier.  ``"highs"`` builds the constraint matrix with
``scipy.sparse`` and passes it to HiGHS' interior point method through
``highspy`` with crossover off; ``"scipy"`` uses
``scipy.optimize.linprog(method="highs-ipm")`` on the same matrices;
``"pulp-highs"`` and ``"pulp-cbc"`` build the model with pulp (the modelling
layer, readable but slow for large ``n``).  ``"auto"`` is ``"dense-ipm"`` for
``norm="l1"`` with ``n <= 5000`` and ``"highs"`` otherwise, the fastest
correct path (timed in ``docs/attacks.md``): HiGHS' interior point (IPX) solves
its Newton systems by preconditioned conjugate gradients, which the dense 0/1
``F`` (``k n / 2`` nonzeros) makes slow.

Attribute inference: each trial draws a fresh database and one random target
person; the target's secret is 1 (the run is on D) in even trials and 0 (on
D') in odd ones.  The guess
for the target's bit gives one of ``tp, fn, fp, tn``; trials are independent,
so the counts feed :func:`dpaudit.stats.epsilon_lower_bound`, compared with
the claimed budget of the ``k`` answers.  (The other bits of a run are
reported in ``fraction_recovered`` but not counted: they are not independent.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from dpaudit._rng import RNGLike, as_generator, as_seed_sequence, seed_entropy
from dpaudit._validation import check_choice, check_confidence, check_int, check_real
from dpaudit.attacks._pulp import add_variable
from dpaudit.attacks._result import AttackResult
from dpaudit.attacks._result import certify_counts
from dpaudit.attacks.query_mechanisms import mechanism_label, as_query_mechanism, claimed_budget
from dpaudit.exceptions import ParameterValueError

__all__ = [
    "QUERY_FAMILIES",
    "SOLVERS",
    "NORMS",
    "random_queries",
    "diffix_queries",
    "make_queries",
    "reconstruct",
    "ReconstructionResult",
    "run_reconstruction",
    "recovery_curve",
]

SOLVERS = ("auto", "dense-ipm", "highs", "scipy", "pulp-highs", "pulp-cbc")
DENSE_IPM_MAX_N = 5000  # "auto" above this: HiGHS (the n x n normal matrix would pass 200 MB)
NORMS = ("l1", "linf")


def random_queries(n: int, k: int, *, rng: RNGLike = None) -> np.ndarray:
    """``k`` uniformly random subsets of ``n`` people, as a ``(k, n)`` 0/1 float matrix.

    >>> random_queries(4, 2, rng=0).shape
    (2, 4)
    """
    n = check_int(n, "n", low=1)
    k = check_int(k, "k", low=1)
    return (as_generator(rng).random((k, n)) < 0.5).astype(float)


def diffix_queries(n: int, k: int, *, rng: RNGLike = None, first_id: int = 2000) -> np.ndarray:
    """A structured pseudo-random query family, after Cohen and Nissim's Diffix attack.

    Person ``i`` has public identifier ``id = first_id + i``.  Query ``j``
    selects the people with ``frac(c_j * (s_j * id) ** p_j) < 1/2``, the
    condition ``FLOOR(c (s id)^p) = FLOOR(c (s id)^p + 0.5)`` that Diffix
    answered with only constant noise, since it has a constant number of
    terms.  ``c_j, s_j, p_j`` are drawn per query.

    >>> q = diffix_queries(500, 3, rng=0)
    >>> q.shape, bool(0.4 < q.mean() < 0.6)
    ((3, 500), True)
    """
    n = check_int(n, "n", low=1)
    k = check_int(k, "k", low=1)
    g = as_generator(rng)
    ids = first_id + np.arange(n, dtype=float)
    scale = g.uniform(10.0, 1000.0, size=(k, 1))
    stretch = g.uniform(1.0, 3.0, size=(k, 1))
    power = g.uniform(0.5, 0.9, size=(k, 1))
    values = scale * (stretch * ids[None, :]) ** power
    return ((values - np.floor(values)) < 0.5).astype(float)


QUERY_FAMILIES = {"random": random_queries, "diffix": diffix_queries}
"""Registry of query families by name: ``f(n, k, *, rng) -> (k, n)`` matrix."""


def make_queries(family: Any, n: int, k: int, *, rng: RNGLike = None) -> np.ndarray:
    """Queries from a family name in :data:`QUERY_FAMILIES` or a callable ``f(n, k, *, rng)``.

    >>> make_queries("random", 3, 5, rng=1).shape
    (5, 3)
    """
    if isinstance(family, str):
        check_choice(family, "query_family", sorted(QUERY_FAMILIES))
        return QUERY_FAMILIES[family](n, k, rng=rng)
    if not callable(family):
        raise ParameterValueError(f"query_family must be one of {sorted(QUERY_FAMILIES)} or a callable; got {family!r}")
    q = np.asarray(family(n, k, rng=rng), dtype=float)
    if q.shape != (k, n):
        raise ParameterValueError(f"query_family returned shape {q.shape}; expected {(k, n)}")
    return q


# --- the linear programs, in matrix form --------------------------------------------------------

def _lp_matrices(queries, answers, norm: str, error_bound: float | None):
    """(cost, col_lower, col_upper, A (csc), row_lower, row_upper, n) of the LP."""
    F = sp.csc_matrix(queries, dtype=float)
    k, n = F.shape
    a = np.asarray(answers, dtype=float)
    eye = sp.identity(k, format="csc")
    if norm == "l1":
        A = sp.hstack([F, -eye, eye], format="csc")
        cost = np.r_[np.zeros(n), np.ones(2 * k)]
        lo = np.zeros(n + 2 * k)
        hi = np.r_[np.ones(n), np.full(2 * k, np.inf)]
        return cost, lo, hi, A, a, a, n
    if error_bound is not None:  # feasibility: F x - e = a, |e| <= E
        A = sp.hstack([F, -eye], format="csc")
        cost = np.zeros(n + k)
        lo = np.r_[np.zeros(n), np.full(k, -error_bound)]
        hi = np.r_[np.ones(n), np.full(k, error_bound)]
        return cost, lo, hi, A, a, a, n
    # min t: F x - e = a;  e - t <= 0;  -e - t <= 0
    zero_kn = sp.csc_matrix((k, n))
    ones = sp.csc_matrix(np.ones((k, 1)))
    A = sp.vstack([
        sp.hstack([F, -eye, sp.csc_matrix((k, 1))]),
        sp.hstack([zero_kn, eye, -ones]),
        sp.hstack([zero_kn, -eye, -ones]),
    ], format="csc")
    cost = np.r_[np.zeros(n + k), 1.0]
    lo = np.r_[np.zeros(n), np.full(k, -np.inf), 0.0]
    hi = np.r_[np.ones(n), np.full(k, np.inf), np.inf]
    row_lo = np.r_[a, np.full(2 * k, -np.inf)]
    row_hi = np.r_[a, np.zeros(2 * k)]
    return cost, lo, hi, A, row_lo, row_hi, n


def _solve_highspy(cost, lo, hi, A, row_lo, row_hi, *, crossover: bool = False) -> np.ndarray:
    import highspy

    inf = highspy.kHighsInf
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", "ipm")
    h.setOptionValue("run_crossover", "on" if crossover else "off")
    lp = highspy.HighsLp()
    lp.num_col_ = A.shape[1]
    lp.num_row_ = A.shape[0]
    lp.col_cost_ = cost
    lp.col_lower_ = np.where(np.isinf(lo), -inf, lo)
    lp.col_upper_ = np.where(np.isinf(hi), inf, hi)
    lp.row_lower_ = np.where(np.isinf(row_lo), -inf, row_lo)
    lp.row_upper_ = np.where(np.isinf(row_hi), inf, row_hi)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS did not solve the reconstruction LP: {h.modelStatusToString(status)}")
    return np.asarray(h.getSolution().col_value)


def _solve_dense_ipm(queries, answers, *, tol: float = 1e-6, max_iter: int = 200) -> np.ndarray:
    """``argmin ||F x - a||_1`` over ``0 <= x <= 1`` by an interior point method on the dual.

    The dual, as a minimisation in standard form with ``y = 2 v - 1``::

        min -2 a'v + 1'w   s.t.   2 F'v - w + s = F'1,   0 <= v <= 1,   w, s >= 0

    has ``n`` equality rows, so each Newton step factors the ``n x n`` matrix
    ``4 F' diag(theta_v) F + diag(theta_w + theta_s)`` (one BLAS ``syrk`` of
    ``k n^2`` flops); ``x`` is minus the multiplier ``lambda`` of those rows.
    Mehrotra's predictor-corrector from the centre ``v = 1/2``; stops when the
    relative primal and dual residuals and the duality gap are below ``tol``,
    loose enough because only the rounding of ``x`` at 1/2 is used (``docs/attacks.md``).
    """
    # One BLAS thread: a second OpenBLAS thread competing with other work slows this solver
    # down (docs/attacks.md); threadpoolctl comes with scikit-learn.
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _dense_ipm(queries, answers, tol=tol, max_iter=max_iter)


def _max_step(x: np.ndarray, dx: np.ndarray) -> float:
    """The longest step, at most 1, along ``dx`` that keeps ``x`` non-negative."""
    neg = dx < 0
    return min(1.0, float(np.min(-x[neg] / dx[neg]))) if neg.any() else 1.0


def _step_lengths(primal, primal_step, dual, dual_step) -> tuple[float, float]:
    """(primal, dual) step lengths of an interior point step: the longest keeping every variable >= 0."""
    return (min(_max_step(x, dx) for x, dx in zip(primal, primal_step)),
            min(_max_step(z, dz) for z, dz in zip(dual, dual_step)))


def _dense_ipm(queries, answers, *, tol: float, max_iter: int) -> np.ndarray:
    import scipy.linalg as sla

    F = queries.toarray() if sp.issparse(queries) else np.asarray(queries, dtype=float)
    F = np.asarray(F, dtype=float)
    a = np.asarray(answers, dtype=float)
    k, n = F.shape
    FT = np.ascontiguousarray(F.T)  # rows of FT scaled by columns: (FT * d).T is Fortran-ordered for syrk
    b = F.sum(axis=0)
    cv = -2.0 * a
    v, r = np.full(k, 0.5), np.full(k, 0.5)  # r = 1 - v, kept separately for accuracy near v = 1
    w, s = np.ones(n), np.ones(n)
    lam = np.zeros(n)
    zv, tv, zw, zs = np.ones(k), np.ones(k), np.ones(n), np.ones(n)  # dual slacks of v >= 0, v <= 1, w, s
    scale_b = 1.0 + np.linalg.norm(b)
    scale_c = 1.0 + np.sqrt(cv @ cv + n)
    m = 2 * (k + n)

    for _ in range(max_iter):
        rb = b - (2.0 * (FT @ v) - w + s)
        rcv = cv - 2.0 * (F @ lam) - zv + tv
        rcw = 1.0 + lam - zw
        rcs = -lam - zs
        primal, dual = cv @ v + w.sum(), b @ lam - tv.sum()
        if (np.linalg.norm(rb) < tol * scale_b
                and np.sqrt(rcv @ rcv + rcw @ rcw + rcs @ rcs) < tol * scale_c
                and abs(primal - dual) < tol * (1.0 + abs(primal))):
            return np.clip(-lam, 0.0, 1.0)
        mu = (v @ zv + r @ tv + w @ zw + s @ zs) / m
        thv = 1.0 / (zv / v + tv / r)
        thw, ths = w / zw, s / zs
        G = FT * (2.0 * np.sqrt(thv))
        normal = sla.blas.dsyrk(1.0, G.T, trans=1)  # upper triangle of G G'
        normal[np.diag_indices(n)] += thw + ths
        factor = sla.cho_factor(normal, lower=False, overwrite_a=True, check_finite=False)

        def newton(pv, pt, pw, ps):
            # complementarity right-hand sides pv = target - v zv, ... (see Wright, Primal-Dual IPMs, ch. 11)
            gv = thv * (pv / v - pt / r - rcv)
            gw = thw * (pw / w - rcw)
            gs = ths * (ps / s - rcs)
            dl = sla.cho_solve(factor, rb - (2.0 * (FT @ gv) - gw + gs), check_finite=False)
            dv = 2.0 * thv * (F @ dl) + gv
            dw, ds = gw - thw * dl, gs + ths * dl
            return dl, dv, dw, ds, (pv - zv * dv) / v, (pt + tv * dv) / r, (pw - zw * dw) / w, (ps - zs * ds) / s

        def lengths(dv, dw, ds, dzv, dtv, dzw, dzs):
            return _step_lengths((v, r, w, s), (dv, -dv, dw, ds), (zv, tv, zw, zs), (dzv, dtv, dzw, dzs))

        _, dv, dw, ds, dzv, dtv, dzw, dzs = newton(-v * zv, -r * tv, -w * zw, -s * zs)  # affine predictor
        ap, ad = lengths(dv, dw, ds, dzv, dtv, dzw, dzs)
        mu_affine = ((v + ap * dv) @ (zv + ad * dzv) + (r - ap * dv) @ (tv + ad * dtv)
                     + (w + ap * dw) @ (zw + ad * dzw) + (s + ap * ds) @ (zs + ad * dzs)) / m
        target = (mu_affine / mu) ** 3 * mu
        dl, dv, dw, ds, dzv, dtv, dzw, dzs = newton(target - v * zv - dv * dzv, target - r * tv + dv * dtv,
                                                    target - w * zw - dw * dzw, target - s * zs - ds * dzs)
        ap, ad = lengths(dv, dw, ds, dzv, dtv, dzw, dzs)
        ap, ad = 0.99 * ap, 0.99 * ad
        v, r, w, s = v + ap * dv, r - ap * dv, w + ap * dw, s + ap * ds
        lam, zv, tv, zw, zs = lam + ad * dl, zv + ad * dzv, tv + ad * dtv, zw + ad * dzw, zs + ad * dzs
    raise RuntimeError(f"dense-ipm did not solve the reconstruction LP in {max_iter} iterations")


def _solve_scipy(cost, lo, hi, A, row_lo, row_hi) -> np.ndarray:
    from scipy.optimize import linprog

    eq = row_lo == row_hi
    A = A.tocsr()
    kwargs = {}
    if eq.any():
        kwargs.update(A_eq=A[eq], b_eq=row_lo[eq])
    if (~eq).any():  # only "<= upper" rows occur here
        kwargs.update(A_ub=A[~eq], b_ub=row_hi[~eq])
    bounds = np.c_[lo, hi]
    bounds = [(None if np.isinf(lo_) else lo_, None if np.isinf(hi_) else hi_) for lo_, hi_ in bounds]
    res = linprog(cost, bounds=bounds, method="highs-ipm", **kwargs)
    if res.status != 0:
        raise RuntimeError(f"scipy linprog did not solve the reconstruction LP: {res.message}")
    return np.asarray(res.x)


def _solve_pulp(queries, answers, norm: str, error_bound: float | None, which: str) -> np.ndarray:
    import pulp

    F = np.asarray(queries, dtype=float)
    a = np.asarray(answers, dtype=float)
    k, n = F.shape
    prob = pulp.LpProblem("reconstruction", pulp.LpMinimize)
    x = [add_variable(prob, f"x{i}", 0, 1) for i in range(n)]
    rows = [np.flatnonzero(F[j]) for j in range(k)]
    if norm == "l1":
        ep = [add_variable(prob, f"ep{j}", 0) for j in range(k)]
        em = [add_variable(prob, f"em{j}", 0) for j in range(k)]
        prob += pulp.lpSum(ep) + pulp.lpSum(em)
        for j in range(k):
            expr = pulp.LpAffineExpression([(x[i], F[j, i]) for i in rows[j]] + [(ep[j], -1.0), (em[j], 1.0)])
            prob += expr == a[j], f"q{j}"
    else:
        bound = error_bound
        t = None
        if bound is None:
            t = add_variable(prob, "t", 0)
            prob += t
        else:
            prob += pulp.LpAffineExpression([])
        for j in range(k):
            fx = pulp.LpAffineExpression([(x[i], F[j, i]) for i in rows[j]])
            if t is None:
                prob += fx <= a[j] + bound, f"u{j}"
                prob += fx >= a[j] - bound, f"l{j}"
            else:
                prob += fx - t <= a[j], f"u{j}"
                prob += fx + t >= a[j], f"l{j}"
    if which == "pulp-cbc":
        import warnings

        with warnings.catch_warnings():  # pulp 3.3 deprecates its bundled CBC (removed in 4.0); still the CBC we have
            warnings.filterwarnings("ignore", message="PULP_CBC_CMD is deprecated", category=DeprecationWarning)
            solver = pulp.PULP_CBC_CMD(msg=False)
    else:
        solver = pulp.HiGHS(msg=False, solver="ipm", run_crossover="off")
    status = prob.solve(solver)
    if pulp.LpStatus[status] != "Optimal":
        raise RuntimeError(f"{which} did not solve the reconstruction LP: {pulp.LpStatus[status]}")
    return np.array([v.varValue for v in x], dtype=float)


def _resolve_solver(solver: str, norm: str, n: int) -> str:
    if solver == "auto":
        return "dense-ipm" if norm == "l1" and n <= DENSE_IPM_MAX_N else "highs"
    if solver == "dense-ipm" and norm != "l1":
        raise ParameterValueError(f"solver='dense-ipm' solves norm='l1' only; got norm={norm!r}")
    return solver


def reconstruct(
    queries: Any,
    answers: np.ndarray,
    *,
    norm: str = "l1",
    solver: str = "auto",
    error_bound: float | None = None,
) -> np.ndarray:
    """Solve the reconstruction LP; return the fractional solution in ``[0, 1]^n``.

    Round it at 1/2 (``x_hat >= 0.5``) to guess the bits.

    Parameters
    ----------
    queries : (k, n) array_like or sparse matrix
        The query matrix ``F``.
    answers : (k,) array_like
        The (noisy) answers ``a``.
    norm : {"l1", "linf"}
        Which error to minimise (see the module docstring).
    solver : {"auto", "dense-ipm", "highs", "scipy", "pulp-highs", "pulp-cbc"}
        ``"auto"`` is ``"dense-ipm"`` for ``norm="l1"`` and ``n <= 5000``,
        else ``"highs"`` (highspy, interior point, crossover off); see the
        module docstring.
    error_bound : float, optional
        ``linf`` only: solve the feasibility problem ``|F x - a| <= error_bound``.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> x = np.array([1, 0, 1, 1, 0, 0, 1, 0])
    >>> F = random_queries(8, 32, rng=0)
    >>> x_hat = reconstruct(F, F @ x)
    >>> bool(((x_hat >= 0.5) == x).all())
    True
    """
    check_choice(norm, "norm", NORMS)
    check_choice(solver, "solver", SOLVERS)
    if error_bound is not None:
        if norm != "linf":
            raise ParameterValueError(f"error_bound applies to norm='linf' only; got norm={norm!r}")
        error_bound = check_real(error_bound, "error_bound", low=0.0)
    k, n = queries.shape
    if np.shape(answers) != (k,):
        raise ParameterValueError(f"answers must have shape ({k},); got {np.shape(answers)}")
    solver = _resolve_solver(solver, norm, n)
    if solver == "dense-ipm":
        return _solve_dense_ipm(queries, answers)
    if solver in ("pulp-highs", "pulp-cbc"):
        x = _solve_pulp(queries.toarray() if sp.issparse(queries) else queries, answers, norm, error_bound, solver)
    else:
        cost, lo, hi, A, row_lo, row_hi, n = _lp_matrices(queries, answers, norm, error_bound)
        if solver == "scipy":
            sol = _solve_scipy(cost, lo, hi, A, row_lo, row_hi)
        else:
            sol = _solve_highspy(cost, lo, hi, A, row_lo, row_hi)
        x = sol[:n]
    return np.clip(x, 0.0, 1.0)


@dataclass(frozen=True, repr=False)
class ReconstructionResult(AttackResult):
    """Outcome of :func:`run_reconstruction`.

    Attributes
    ----------
    n, k, trials : int
        People, queries per release, independent trials.
    query_family, mechanism, norm, solver : str
        What was asked, how it was answered, and how it was solved.
    fraction_recovered : float
        Mean over trials of the fraction of bits guessed right.
    fraction_recovered_per_trial : tuple of float
    noise_rms : float
        Root mean square of (answer - exact answer) over all trials.
    solve_seconds : float
        Mean wall time of one LP.
    bound : EpsilonBound
        Bound from the target bit of each trial (one independent sample per trial).
    claimed : PointClaim or None
        Claimed budget of the ``k`` answers.
    verdict : str
    seed : int
    """

    attack = "reconstruction"

    n: int
    k: int
    trials: int
    query_family: str
    mechanism: str
    norm: str
    solver: str
    fraction_recovered: float
    fraction_recovered_per_trial: tuple
    noise_rms: float
    solve_seconds: float


def run_reconstruction(
    *,
    n: int = 100,
    k: int | None = None,
    query_family: Any = "random",
    noise: Any = "exact",
    noise_scale: float | None = None,
    epsilon: float | None = None,
    subsample_size: int | None = None,
    solver: str = "auto",
    norm: str = "l1",
    error_bound: float | None = None,
    trials: int = 2,
    confidence: float = 0.95,
    rng: RNGLike = None,
) -> ReconstructionResult:
    """Reconstruct ``n`` secret bits from ``k`` answered queries, ``trials`` times.

    Parameters
    ----------
    n : int, default 100
        People (secret bits).
    k : int, optional
        Queries per release; default ``4 n``.
    query_family : {"random", "diffix"} or callable
        See :data:`QUERY_FAMILIES`.
    noise : str or callable, default "exact"
        The query mechanism: a name from
        :data:`~dpaudit.attacks.query_mechanisms.QUERY_MECHANISMS` or a
        third-party callable.
    noise_scale, epsilon, subsample_size : optional
        Parameters of a named mechanism (bound / Laplace scale / sigma;
        Laplace per-answer epsilon; subsample rows ``m``).
    solver : {"auto", "dense-ipm", "highs", "scipy", "pulp-highs", "pulp-cbc"}
    norm : {"l1", "linf"}
    error_bound : float, optional
        ``linf`` feasibility bound ``E``.
    trials : int, default 2
        Independent databases, each with one target bit for the bound; the
        target's bit is 1 (a run on D) in even trials and 0 (on D') in odd
        ones, so at least two are needed.
    confidence : float, default 0.95
    rng : Generator, SeedSequence, int or None
        One child seed per trial.

    Returns
    -------
    ReconstructionResult

    Examples
    --------
    >>> r = run_reconstruction(n=60, trials=2, rng=0)
    >>> r.fraction_recovered
    1.0
    >>> r = run_reconstruction(n=60, noise="laplace", epsilon=0.1, trials=2, rng=0)
    >>> r.claimed.point_epsilon
    24.0
    """
    n = check_int(n, "n", low=1)
    k = 4 * n if k is None else check_int(k, "k", low=1)
    trials = check_int(trials, "trials", low=2)
    confidence = check_confidence(confidence)
    check_choice(norm, "norm", NORMS)
    check_choice(solver, "solver", SOLVERS)
    resolved_solver = _resolve_solver(solver, norm, n)
    mech = as_query_mechanism(noise, noise_scale=noise_scale, epsilon=epsilon, subsample_size=subsample_size,
                              name="noise")
    claimed = claimed_budget(mech, k)
    seq = as_seed_sequence(rng)

    fractions, sq_noise, seconds = [], 0.0, 0.0
    tp = fn = fp = tn = 0
    for trial, child in enumerate(seq.spawn(trials)):
        g = np.random.default_rng(child)
        x = g.integers(0, 2, size=n).astype(float)
        target = int(g.integers(0, n))
        x[target] = 1.0 if trial % 2 == 0 else 0.0  # alternate D and D' runs
        F = make_queries(query_family, n, k, rng=g)
        a = mech(F, x, rng=g)
        sq_noise += float(np.sum((a - F @ x) ** 2))
        t0 = time.perf_counter()
        guess = reconstruct(F, a, norm=norm, solver=resolved_solver, error_bound=error_bound) >= 0.5
        seconds += time.perf_counter() - t0
        fractions.append(float(np.mean(guess == (x == 1))))
        if x[target] == 1:
            tp += int(guess[target])
            fn += int(not guess[target])
        else:
            fp += int(guess[target])
            tn += int(not guess[target])

    bound, verdict = certify_counts(
        tp, fn, fp, tn, claimed, confidence=confidence,
        details={"attack": "reconstruction", "event": "target bit reconstructed as 1"},
    )
    return ReconstructionResult(
        n=n,
        k=k,
        trials=trials,
        query_family=query_family if isinstance(query_family, str) else getattr(query_family, "__name__", "callable"),
        mechanism=mechanism_label(mech),
        norm=norm,
        solver=resolved_solver,
        fraction_recovered=float(np.mean(fractions)),
        fraction_recovered_per_trial=tuple(fractions),
        noise_rms=float(np.sqrt(sq_noise / (trials * k))),
        solve_seconds=seconds / trials,
        bound=bound,
        claimed=claimed,
        verdict=verdict,
        seed=seed_entropy(seq),
    )


def recovery_curve(*, parameter: str, values, **params) -> tuple[ReconstructionResult, ...]:
    """:func:`run_reconstruction` for each value of one parameter (same seed each time).

    The phase transition: ``parameter="noise_scale"`` with Gaussian noise
    ``c * sqrt(n)`` for ``c`` from 0.05 to 2; subsampling:
    ``parameter="subsample_size"`` with ``noise="subsample"``.

    >>> rs = recovery_curve(parameter="noise_scale", values=[0.5, 40.0], n=64, noise="gaussian", rng=1)
    >>> rs[0].fraction_recovered > rs[1].fraction_recovered
    True
    """
    if parameter in ("rng",) or not values:
        raise ParameterValueError(f"parameter must name a run_reconstruction argument and values be non-empty; got {parameter!r}")
    return tuple(run_reconstruction(**{**params, parameter: v}) for v in values)
