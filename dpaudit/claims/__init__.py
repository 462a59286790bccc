"""Claims as whole privacy curves: what a mechanism promises at every delta, not at one.

A mechanism's privacy is a curve: for each delta the smallest epsilon with
(epsilon, delta)-DP, its *privacy profile*; equivalently a trade-off curve
f (Dong, Roth and Su 2022): every test of "D or D'" with false-positive rate
alpha has a false-negative rate of at least f(alpha) (Zhu, Dong and Wang 2022
for the translation between the two).  DP-SGD is accounted this way, so
auditing it against one (epsilon, delta) point of its curve throws most of the
promise away.  A claim here is an immutable value object that keeps the spec
it came from and answers ``epsilon(delta)`` (vectorised) and ``tradeoff(alpha)``.

Specs (``parse_claim``):

========================================  ==========================================================
``eps:EPS[,delta=DELTA]``                 the one point (EPS, DELTA), as ``--epsilon/--delta``
``gdp:mu=MU``                             mu-Gaussian DP (Dong, Roth and Su 2022)
``dpsgd:noise=SIGMA,rate=Q,steps=T``      T Poisson-subsampled Gaussian steps, add/remove
                                          neighbours, as dp-accounting's PLD accountant computes it
                                          (T at most :data:`MAX_STEPS`, 10^7)
``profile:FILE.json``                     a JSON list ``[[epsilon, delta], ...]``: (epsilon, delta)-DP
                                          for each pair
========================================  ==========================================================

From Python, a ``dp_accounting`` ``DpEvent`` is a claim too (:class:`AccountantClaim`).
A ``dpsgd:`` curve is computed once per machine and kept on disk (:func:`cache_dir`):
importing dp-accounting is slow, and every command would otherwise pay for it again.

The package: :mod:`~dpaudit.claims.base` (:class:`Claim`, the grid), :mod:`~dpaudit.claims.stated`
(point, GDP and profile claims), :mod:`~dpaudit.claims.accountant` (DP-SGD and ``DpEvent`` curves, the one
PLD accountant, the disk cache), :mod:`~dpaudit.claims.parsing` (specs; :data:`CLAIM_PARSERS` is the table
of spec kinds).

Every claim is tested on a finite grid of ``(delta, epsilon)`` points of its curve
(:meth:`Claim.grid`); a curve test may use any grid, since a certified lower
curve holds at every delta at once (:mod:`dpaudit.stats.curves`).  Curves the
library computes are never below the true one: the accountant's is its
pessimistic estimate, and between grid points ``epsilon(delta)`` is rounded up,
so a claim read here can only make a violation harder to certify.

Examples
--------
>>> c = parse_claim("gdp:mu=1")
>>> c.spec, round(float(c.epsilon(1e-3)), 3)
('gdp:mu=1', 3.139)
>>> parse_claim("eps:1,delta=1e-5").epsilon([0.0, 1e-5]).tolist()
[inf, 1.0]
"""

from __future__ import annotations

from .accountant import (CURVE_CACHE, MAX_STEPS, PLD_DISCRETIZATION, SLOW_NOTE_AFTER, AccountantClaim, DPSGDClaim,
                         cache_dir, dpsgd_event, pld_accountant)
from .base import DELTA_FLOOR, GRID_POINTS, Claim
from .parsing import CLAIM_KINDS, CLAIM_PARSERS, as_claim, parse_claim, register_claim_kind
from .stated import MAX_MU, GaussianDPClaim, PointClaim, ProfileClaim

__all__ = [
    "CLAIM_KINDS",
    "CLAIM_PARSERS",
    "register_claim_kind",
    "CURVE_CACHE",
    "DELTA_FLOOR",
    "GRID_POINTS",
    "MAX_MU",
    "MAX_STEPS",
    "PLD_DISCRETIZATION",
    "SLOW_NOTE_AFTER",
    "AccountantClaim",
    "Claim",
    "DPSGDClaim",
    "GaussianDPClaim",
    "PointClaim",
    "ProfileClaim",
    "as_claim",
    "cache_dir",
    "dpsgd_event",
    "parse_claim",
    "pld_accountant",
]
