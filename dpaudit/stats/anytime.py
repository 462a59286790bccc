"""Anytime-valid audits: test supermartingales that bet on paired indicators of an event.

A claim of (epsilon, delta)-DP on the pair (D, D') says, for every event E,
``P(E) <= e^epsilon Q(E) + delta`` with P the release's law on D and Q on D'
(and the same with D and D' swapped).  Draw one release ``x`` on D and one
``y`` on D', with E fixed before they are drawn, and put ``X = 1[x in E]``,
``Y = 1[y in E]``.  Under the claim ``Z = X - e^epsilon Y - delta`` has
conditional mean at most 0 and ``Z >= -(e^epsilon + delta)``, so for any
betting fraction ``lambda in [0, 1)`` chosen from the past,

    W_t = prod_{s <= t} (1 + lambda_s Z_s / (e^epsilon + delta))

is a nonnegative supermartingale starting at 1: a test supermartingale
(Shafer 2021; Waudby-Smith and Ramdas 2023, "Estimating means of bounded
random variables by betting").  By Ville's inequality
``P(sup_t W_t >= 1/alpha) <= alpha``, so rejecting the claim the first time
``W_t >= 1/alpha`` is a level-alpha test at *any* stopping time: after every
release, at a time chosen by a clock or by a person watching the numbers.
An average of test supermartingales on the same releases is one too, so the
bets are mixed over several fractions (``lambda`` times each of
:data:`DEFAULT_MULTIPLIERS`); the event, its direction and the fraction are
chosen from past releases only (:func:`choose_bets`), which keeps every
factor fair under the claim.

**The bound, by inversion.**  The same bets are placed against every
``epsilon'`` of a grid: ``Z(epsilon') = X - e^epsilon' Y - delta``.  The
certified bound after ``t`` pairs is the largest grid point up to which
every grid point's e-process has crossed ``1/alpha`` at some time so far
(the crossed prefix).  If it exceeds the true epsilon, the first grid point
at or above the truth, a true null, has crossed, which happens with
probability at most alpha: so the running bound is a lower confidence
sequence, valid whenever the audit stops (no union over the grid: only one
true null decides).  A claimed curve is tested at ``F`` of its points, each
its own family of e-processes at level ``alpha / F`` (:class:`AnytimeAudit`).

All arrays carry a leading axis of independent runs, so that many seeded
audits are simulated at once; an audit is the case of one run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_confidence, check_delta, check_epsilon
from ..exceptions import ParameterValueError
from .certificate import Certificate, CertificateResult
from .curves import CurveTest

__all__ = [
    "DEFAULT_MULTIPLIERS",
    "MAX_FRACTION",
    "QUANTILE_LEVELS",
    "epsilon_grid",
    "BetChoice",
    "choose_bets",
    "kelly_fractions",
    "AnytimeAudit",
    "EProcessBounds",
    "EProcess",
    "certify_stream",
]

#: The betting fraction of each mixed e-process, as multiples of the fraction the past suggests (Kelly's).
DEFAULT_MULTIPLIERS = (1.0,)
#: Largest betting fraction: a bet never stakes more than this share of the wealth.
MAX_FRACTION = 0.9
#: Candidate thresholds: these quantiles of the pooled past scores.
QUANTILE_LEVELS = np.array([0.002, 0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6,
                            0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.94, 0.97, 0.99, 0.998])
#: Grid points above a claimed epsilon: the violation test sits one fine step above the claim.
_FINE_STEP = 0.002
#: Pseudo-pairs by which the past rates of a candidate event are shrunk toward their pooled rate.
SHRINK = 20.0
_TOP = 25.0


def epsilon_grid(epsilon: float, *, full: bool = True) -> np.ndarray:
    """The epsilons an e-process family bets against, increasing from 0, with ``epsilon`` on it.

    The point just above ``epsilon`` (a relative step of 0.2%, at least 1e-4)
    is the violation test; ``full=False`` keeps the claim and that point only
    (what a type-I error check needs), ``full=True`` adds 60 points below
    (relative gaps from 0.1% just below the claim to the whole of it at 0) and
    a geometric ladder of 80 to 25 above (the confidence sequence's resolution).

    >>> g = epsilon_grid(1.0)
    >>> float(g[0]), 1.0 in g, round(float(g[np.searchsorted(g, 1.0) + 1]), 4), float(g[-1])
    (0.0, True, 1.002, 25.0)
    >>> epsilon_grid(0.5, full=False).tolist()
    [0.5, 0.501]
    """
    epsilon = float(epsilon)
    step = max(_FINE_STEP * epsilon, 1e-4)
    if not full:
        return np.array([epsilon, epsilon + step])
    # Below the claim, finer toward it: the bound of a correct mechanism ends near its claim.
    below = epsilon * np.concatenate([[0.0], 1.0 - np.geomspace(1.0, 1e-3, 60), [1.0]])
    above = epsilon + np.geomspace(step, max(_TOP - epsilon, 2 * step), 80)
    return np.unique(np.concatenate([below, above]))


@dataclass(frozen=True)
class BetChoice:
    """The bet of each run (axis 0) and family (axis 1) for the next releases, chosen from past ones.

    ``witness``: which score; the event is ``score > threshold`` (``upper``) or
    ``score <= threshold``; ``reverse``: the event is bet to be likelier on D'
    than on D (the claim's other direction); ``fraction``: the betting
    fraction the past suggests (0: no bet); ``growth``: its estimated log
    growth per pair.
    """

    witness: np.ndarray
    threshold: np.ndarray
    upper: np.ndarray
    reverse: np.ndarray
    fraction: np.ndarray
    growth: np.ndarray
    #: The chosen event's estimated rates on the side bet to be likelier and on the other, (runs, families, 2):
    #: each grid point of the confidence sequence bets its own Kelly fraction from them (:func:`kelly_fractions`).
    rates: np.ndarray = None

    def indicators(self, scores0: np.ndarray, scores1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(X, Y)``: whether each new pair's releases fall in the bet's event, D's first once oriented.

        ``scores0``, ``scores1``: (witnesses, runs, pairs) scores of the new releases on D and D'.
        Returns booleans of shape (runs, families, pairs).
        """
        r_idx = np.arange(self.witness.shape[0])[:, None]
        s0 = scores0[self.witness, r_idx]  # (runs, families, pairs)
        s1 = scores1[self.witness, r_idx]
        t = self.threshold[..., None]
        up = self.upper[..., None]
        in0 = np.where(up, s0 > t, s0 <= t)
        in1 = np.where(up, s1 > t, s1 <= t)
        rev = self.reverse[..., None]
        return np.where(rev, in1, in0), np.where(rev, in0, in1)


def _outcome_values(epsilon, delta):
    """Z for the outcomes (X, Y) = (1, 0), (0, 1), (1, 1), (0, 0), divided by e^epsilon + delta (last axis 4)."""
    e = np.exp(np.asarray(epsilon, dtype=float))
    d = np.asarray(delta, dtype=float)
    c = e + d
    return np.stack([(1.0 - d) / c, -(e + d) / c, (1.0 - e - d) / c, -d / c], axis=-1)


def _expected_log_growth(p, q, z, fraction):
    """E log(1 + fraction Z) for independent X ~ Bernoulli(p), Y ~ Bernoulli(q) (z: the 4 outcome values)."""
    probs = np.stack([p * (1 - q), (1 - p) * q, p * q, (1 - p) * (1 - q)], axis=-1)
    return np.sum(probs * np.log1p(fraction[..., None] * z), axis=-1)


def kelly_fractions(rates, epsilons, deltas) -> np.ndarray:
    """The betting fraction ``E[Z] / E[Z^2]`` (clipped to [0, MAX_FRACTION]) of normalised bets at each epsilon.

    ``rates`` (..., 2): the event's rate on the side bet likelier and on the other;
    ``epsilons`` broadcast against ``rates[..., 0]``.  A second-order Kelly fraction: it maximises
    ``lambda E[Z] - lambda^2 E[Z^2] / 2``, the expected log growth to second order.
    """
    px, py = rates[..., 0], rates[..., 1]
    z = _outcome_values(epsilons, deltas)
    mean = px * (1 - py) * z[..., 0] + (1 - px) * py * z[..., 1] + px * py * z[..., 2] + (1 - px) * (1 - py) * z[..., 3]
    second = (px * (1 - py) * z[..., 0] ** 2 + (1 - px) * py * z[..., 1] ** 2 + px * py * z[..., 2] ** 2
              + (1 - px) * (1 - py) * z[..., 3] ** 2)
    return np.clip(mean / np.maximum(second, 1e-300), 0.0, MAX_FRACTION)


def choose_bets(scores0, scores1, *, epsilons, deltas, levels=QUANTILE_LEVELS) -> BetChoice:
    """For each run and each claimed point, the event, direction and fraction the past releases favour.

    Parameters
    ----------
    scores0, scores1 : ndarray, shape (witnesses, runs, n)
        Each witness's scores of the past releases on D and on D' (the same
        ``n`` per side).
    epsilons, deltas : array_like, shape (families,)
        The claimed points the families test.
    levels : array_like
        Quantiles of the pooled scores tried as thresholds.

    Returns
    -------
    BetChoice
        Per run and family: the candidate (witness, threshold, side of it,
        direction) whose estimated Kelly growth on the past is largest, with
        that fraction.  Rates are estimated as ``(count + 1/2) / (n + 1)`` so
        that an event seen in no past release still gets a cautious bet.
        Only the past is read, so the choice is predictable and every bet
        stays fair under the claim, however well or badly it was chosen.
    """
    scores0 = np.asarray(scores0, dtype=float)
    scores1 = np.asarray(scores1, dtype=float)
    n_w, runs, n = scores0.shape
    eps = np.broadcast_to(np.asarray(epsilons, dtype=float), (runs, np.shape(deltas)[-1]))
    dl = np.broadcast_to(np.asarray(deltas, dtype=float), eps.shape)
    pooled = np.concatenate([scores0, scores1], axis=2)
    thresholds = np.quantile(pooled, levels, axis=2, method="lower")  # (K, W, R)
    thresholds = np.moveaxis(thresholds, 0, -1)  # (W, R, K)
    above0 = np.empty(thresholds.shape)
    above1 = np.empty(thresholds.shape)
    step = max(1, 2_000_000 // max(n * len(levels), 1))
    for lo in range(0, runs, step):
        sl = slice(lo, lo + step)
        t = thresholds[:, sl, None, :]
        above0[:, sl] = np.sum(scores0[:, sl, :, None] > t, axis=2)
        above1[:, sl] = np.sum(scores1[:, sl, :, None] > t, axis=2)
    # Candidates on the last axis: (above, below) x (forward, reverse) per threshold.
    # Each side's rate shrunk toward the pooled rate by SHRINK pseudo-pairs (and away from 0 and 1): the best of
    # many candidates scored on the data that chose it looks better than it is, most of all after a few pairs.
    k = SHRINK
    pooled_rate = (above0 + above1 + 1.0) / (2.0 * n + 2.0)
    p_above = (above0 + k * pooled_rate) / (n + k)
    q_above = (above1 + k * pooled_rate) / (n + k)
    p_below = 1.0 - p_above
    q_below = 1.0 - q_above
    # Oriented (likelier-side, other-side) rates: forward bets the event is likelier on D.
    px = np.stack([p_above, p_below, q_above, q_below], axis=-1)  # (W, R, K, 4)
    py = np.stack([q_above, q_below, p_above, p_below], axis=-1)
    px = px.reshape(n_w, runs, -1)[:, :, None, :]  # (W, R, 1, C)
    py = py.reshape(n_w, runs, -1)[:, :, None, :]
    z = _outcome_values(eps, dl)[None, :, :, None, :]  # (1, R, F, 1, 4)
    c = (np.exp(eps) + dl)[None, :, :, None]
    mean = (px - np.exp(eps)[None, :, :, None] * py - dl[None, :, :, None]) / c  # (W, R, F, C)
    second = (px * (1 - py) * z[..., 0] ** 2 + (1 - px) * py * z[..., 1] ** 2 + px * py * z[..., 2] ** 2
              + (1 - px) * (1 - py) * z[..., 3] ** 2)
    fraction = np.clip(mean / np.maximum(second, 1e-300), 0.0, MAX_FRACTION)
    growth = _expected_log_growth(px, py, z, fraction)
    growth = np.where(mean > 0, growth, -np.inf)
    # The best candidate over witnesses and candidates, per run and family.
    n_f = eps.shape[1]
    flat = np.moveaxis(growth, 0, 2).reshape(runs, n_f, -1)  # (R, F, W*C)
    best = np.argmax(flat, axis=-1)
    n_c = growth.shape[-1]
    w_idx, cand = np.divmod(best, n_c)
    k_idx, kind = np.divmod(cand, 4)
    r_idx = np.arange(runs)[:, None]
    best_growth = np.take_along_axis(flat, best[..., None], axis=-1)[..., 0]
    frac = np.moveaxis(fraction, 0, 2).reshape(runs, n_f, -1)
    best_fraction = np.take_along_axis(frac, best[..., None], axis=-1)[..., 0]
    bet = np.isfinite(best_growth)
    pick = np.moveaxis(np.broadcast_to(np.stack([px, py], axis=-1), (n_w, runs, n_f, n_c, 2)), 0, 2)
    rates = np.take_along_axis(pick.reshape(runs, n_f, -1, 2), best[..., None, None], axis=2)[:, :, 0]
    return BetChoice(
        witness=w_idx, threshold=thresholds[w_idx, r_idx, k_idx], upper=(kind % 2) == 0, reverse=kind >= 2,
        fraction=np.where(bet, best_fraction, 0.0), growth=np.where(bet, best_growth, 0.0),
        rates=np.where(bet[..., None], rates, 0.5),
    )


class AnytimeAudit:
    """The e-processes of one claim for many independent runs, updated one batch of pairs at a time.

    Parameters
    ----------
    runs : int
        Independent audits simulated at once (1 for an audit).
    epsilons, deltas : array_like
        The claimed points tested (one for a point claim; ``F`` for a curve,
        each at level ``alpha / F``).
    confidence : float
        ``1 - alpha``: the probability that no bound ever exceeds the truth.
    full_grid : bool
        False: only the claim and the point just above it (a type-I check);
        True: the whole confidence-sequence grid (:func:`epsilon_grid`).
    multipliers : tuple of float
        The mixed e-processes' fractions, as multiples of the suggested one.

    State after ``t`` pairs: ``log_wealth`` (runs, families, grid, multipliers),
    ``crossed`` (runs, families, grid), ``pairs``.  Mutable on purpose: a look
    must cost microseconds next to drawing, and many-seed runs update
    thousands of audits per batch.
    """

    def __init__(self, runs: int, epsilons, deltas, *, confidence: float = 0.95, full_grid: bool = True,
                 multipliers=DEFAULT_MULTIPLIERS):
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
        dl = np.atleast_1d(np.asarray(deltas, dtype=float))
        for e in eps:
            check_epsilon(float(e))
        for d in dl:
            check_delta(float(d))
        if eps.shape != dl.shape:
            raise ParameterValueError(f"epsilons and deltas must have the same length; got {eps.shape} and "
                                      f"{dl.shape}")
        self.confidence = check_confidence(confidence)
        self.epsilons, self.deltas = eps, dl
        self.families = len(eps)
        grids = [epsilon_grid(e, full=full_grid) for e in eps]
        width = max(len(g) for g in grids)
        # Families share one grid width; shorter grids repeat their last point (never reported past its end).
        self.grid = np.stack([np.concatenate([g, np.full(width - len(g), g[-1])]) for g in grids])
        self.claim_index = np.array([int(np.searchsorted(g, e)) for g, e in zip(grids, eps)])
        self.multipliers = np.asarray(multipliers, dtype=float)
        self.log_threshold = float(np.log(self.families / (1.0 - self.confidence)))
        self.values = _outcome_values(self.grid, dl[:, None])  # (F, G, 4)
        self.log_wealth = np.zeros((runs, self.families, width, len(self.multipliers)))
        self.crossed = np.zeros((runs, self.families, width), dtype=bool)
        self.max_claim_log_e = np.zeros((runs, self.families))
        self.pairs = 0
        self.bet_pairs = np.zeros((runs, self.families), dtype=np.int64)
        self.hits = np.zeros((runs, self.families, 2), dtype=np.int64)  # X and Y counts of the bets placed

    @property
    def runs(self) -> int:
        return self.log_wealth.shape[0]

    def update(self, x, y, choice: BetChoice) -> None:
        """Bet on one batch of pairs: ``x``, ``y`` booleans (runs, families, pairs) from ``choice``.

        ``x`` is whether each pair's release from the side the bet favours fell
        in the event, ``y`` the other side's (:meth:`BetChoice.indicators`).
        Each grid point bets its own Kelly fraction of the chosen event's past
        rates (the claim's point: the choice's own), so that the confidence
        sequence grows below a claim that holds.  Only the four outcome counts
        matter, so a batch costs the same as one pair.
        """
        fraction = choice.fraction
        x = np.asarray(x, dtype=bool)
        y = np.asarray(y, dtype=bool)
        counts = np.stack([np.sum(x & ~y, axis=-1), np.sum(~x & y, axis=-1), np.sum(x & y, axis=-1),
                           np.sum(~x & ~y, axis=-1)], axis=-1).astype(float)  # (R, F, 4)
        per_point = kelly_fractions(choice.rates[:, :, None, :], self.grid[None], self.deltas[None, :, None])
        placed_any = (np.asarray(fraction) > 0)[..., None]
        per_point = np.where(placed_any, per_point, 0.0)  # (R, F, G)
        lam = np.minimum(per_point[..., None] * self.multipliers, MAX_FRACTION)  # (R, F, G, M)
        # log(1 + lam z) for each outcome: (R, F, G, M, 4)
        steps = np.log1p(lam[..., None] * self.values[None, :, :, None, :])
        self.log_wealth += np.einsum("rfgmo,rfo->rfgm", steps, counts)
        log_e = np.logaddexp.reduce(self.log_wealth, axis=-1) - np.log(len(self.multipliers))
        self.crossed |= log_e >= self.log_threshold
        claim_e = np.take_along_axis(log_e, np.broadcast_to(self.claim_index[None, :, None],
                                                            (self.runs, self.families, 1)), axis=-1)[..., 0]
        self.max_claim_log_e = np.maximum(self.max_claim_log_e, claim_e)
        n = x.shape[-1]
        self.pairs += n
        placed = np.asarray(fraction) > 0
        self.bet_pairs += np.where(placed, n, 0)
        self.hits[..., 0] += np.where(placed, x.sum(axis=-1), 0)
        self.hits[..., 1] += np.where(placed, y.sum(axis=-1), 0)

    def log_evalue(self) -> np.ndarray:
        """log of each grid point's mixed e-value now, (runs, families, grid)."""
        return np.logaddexp.reduce(self.log_wealth, axis=-1) - np.log(len(self.multipliers))

    def claim_log_evalue(self) -> np.ndarray:
        """log e-value of each family at its claimed epsilon, (runs, families)."""
        idx = self.claim_index[None, :, None]
        return np.take_along_axis(self.log_evalue(), np.broadcast_to(idx, (self.runs, self.families, 1)),
                                  axis=-1)[..., 0]

    def bounds(self) -> np.ndarray:
        """Each family's certified epsilon, (runs, families): the end of the crossed prefix of its grid, else 0."""
        prefix = np.cumprod(self.crossed, axis=-1).astype(bool)
        last = prefix.sum(axis=-1) - 1  # index of the prefix's last point, -1 when none
        at = np.take_along_axis(self.grid[None], np.maximum(last, 0)[..., None], axis=-1)[..., 0] \
            if self.runs else np.zeros((0, self.families))
        return np.where(last >= 0, at, 0.0)

    def violations(self) -> np.ndarray:
        """Whether each family certified more than its claim, (runs, families)."""
        return self.bounds() > self.epsilons[None, :]

    def ceiling(self, pairs: int | None = None) -> float:
        """The most ``pairs`` pairs could certify at one family: every pair in the event on one side only, the
        largest fraction, from the first pair on."""
        n = self.pairs if pairs is None else pairs
        if n <= 0:
            return 0.0
        # n log(1 + f (1 - delta) / (e^eps + delta)) - log M >= log threshold, solved for eps (delta ~ 0).
        need = (self.log_threshold + np.log(len(self.multipliers))) / n
        if need >= np.log1p(MAX_FRACTION * max(self.multipliers)):
            return 0.0
        ratio = MAX_FRACTION * max(self.multipliers) / np.expm1(need)
        return float(max(np.log(ratio), 0.0))


@dataclass(frozen=True)
class EProcessBounds:
    """One stream's evidence at a look: each tested point ``(epsilons[j], deltas[j])`` of the claim with the
    epsilon its e-processes certify there, all valid at once and at every look (Ville's inequality), and the
    most the releases seen could certify (``ceiling``).  Points in increasing delta."""

    epsilons: tuple
    deltas: tuple
    certified: tuple
    ceiling: float

    @classmethod
    def of(cls, audit: "AnytimeAudit", run: int = 0) -> "EProcessBounds":
        """Run ``run`` of ``audit`` now."""
        order = np.argsort(audit.deltas, kind="stable")
        bounds = audit.bounds()[run]
        return cls(tuple(audit.epsilons[order].tolist()), tuple(audit.deltas[order].tolist()),
                   tuple(bounds[order].tolist()), float(audit.ceiling()))


class EProcess(Certificate):
    """The anytime audit's certificate: the confidence sequence's bounds at the claim's tested points, read as a
    certified curve on those points, so that its verdict, reported point and margin follow :class:`CurveTest`."""

    name = "e-process"
    description = "e-processes at the claim's points (stopping=anytime); valid at every look"
    evidence = EProcessBounds

    def _certify(self, evidence, claim, *, confidence, delta):
        region = CurveTest(claim.spec, confidence, np.asarray(evidence.deltas, dtype=float),
                           np.asarray(evidence.certified, dtype=float), np.asarray(evidence.epsilons, dtype=float),
                           reference_delta=delta)
        at = float(region.certified_at(delta))
        return CertificateResult(self.name, confidence, evidence, region, max(evidence.ceiling, at), delta, at)


def certify_stream(audit: "AnytimeAudit", claim, *, confidence: float, run: int = 0):
    """The :class:`~dpaudit.stats.certificate.CertificateResult` of run ``run`` of ``audit`` against ``claim``: the
    verdict, the reported point and the margin of an anytime audit, by the rules every certificate follows."""
    return EProcess().certify(EProcessBounds.of(audit, run), claim, confidence=confidence)
