"""What each distinguisher's chosen event would certify on a DP-Sniper row, without drawing the held-out set.

    python experiments/dp_sniper/choice.py --rows SVT3 --seeds 0 1 2
    python experiments/dp_sniper/choice.py --rows SVT3 SVT34Parallel --calibration 4e6 --held-out 6e6
    python experiments/dp_sniper/choice.py --rows LaplaceParallel --seeds 0 1 2 --oracle --own-best --draws 4000
    python experiments/dp_sniper/choice.py --rows SVT34Parallel --oracle --only exact --events 1 2 3 4 --spread 4 --draws 4000

For each seed it draws the calibration pool (``--calibration`` releases per
side, split in halves as the audit splits it), fits every distinguisher
``auto`` would try (and ``--attacks``), chooses each one's event on the
selection half exactly as the audit does for ``--held-out`` held-out releases
per side, and values the chosen event at expected counts on that held-out
size (``ceiling.best_event_bound`` of the event and its complement).  When the
audit would also certify events nested in it (``alt_events``), all are
valued at an even share of the failure probability and the best is shown beside it.
The event's probabilities are exact where ``ceiling.py`` has them on a grid of
releases (SVT3: the position and value of the first above answer); where
``ceiling.py`` has the row's exact log likelihood ratio they are estimated on
``--fresh`` fresh releases per side, each side's count averaged with the other
side's count weighted by the exact ratio (so an event's ratio is nearly exact
and only its mass is estimated); else counted on the fresh releases.  The row
``auto`` is the distinguisher ``auto`` chooses.  Only calibration data choose
anything here, so the numbers are what an audit of that size would certify on
average.

``--oracle`` adds the candidate ``exact``: the exact log likelihood ratio as the
score, nothing fitted (what no distinguisher can beat), chosen on the selection
half like the others.  ``--own-best`` also values the best event of each score's
own order (what a perfect selection would find with that score): a score far
below the ceiling there is the limit, a score near it with a poor chosen event
is limited by the selection.  ``--draws N`` simulates N Poisson held-out sets of
the chosen event(s) at their estimated probabilities, certified as the audit
certifies them, and prints the mean bound and how often it reaches 98% of the
row's ceiling (the YAML's ``ceiling_1e7`` at 9 x 10^6 held out).  ``--rank-trusted`` also ranks the
candidates by their value on the selection counts trusted twice (marked ``<- trusted``).

``--events K ...`` (with ``--draws``) certifies, for each K, the chosen event of ``auto``'s choice (and of
``exact``) with up to K - 1 events nested in it, each at failure probability alpha / K (Bonferroni), the best
kept: chosen on the ``--trust-ladder`` (the j-th at the j-th trust; 2, 8 is the audit's rule) and, with
``--spread R``, spread over the top of the score's order (regions of 1/R, 1/R^2, ... of the chosen region's
selection releases; ``l+spread R``: the audit's two events, then spread ones).  K = 2 on the ladder 2, 8 is
what the audit certifies today.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent


def svt3_grid(mech, d, d2, cells: int = 4000):
    """(releases, P(release cell | D), P(release cell | D')) on ceiling.py's exact grid of Algorithm 3, c = 1."""
    from ceiling import exact_svt_value_probabilities

    probs = exact_svt_value_probabilities(mech, d, d2, cells=cells)
    if probs is None:
        return None
    m = mech.n_queries
    half = 40 * max(mech.rho_scale, mech.nu_scale)
    width = 2 * half / cells
    v = mech.threshold - half + width * (np.arange(cells) + 0.5)
    rows = []
    for i in range(m):
        x = np.zeros((cells, 2 * m))
        x[:, :i] = 0.0
        x[:, i] = 1.0
        x[:, i + 1:m] = -1.0
        x[:, m + i] = v
        rows.append(x)
    rows.append(np.zeros((1, 2 * m)))
    return np.vstack(rows), probs[0], probs[1]


def event_value(p0: float, p1: float, n_test: int, confidence: float, complement=None) -> float:
    """What the event with P_D = ``p0``, P_D' = ``p1`` certifies at expected counts (its complement's masses
    ``complement`` when estimated apart: ``1 - p`` loses a rare complement to the estimate's noise)."""
    from ceiling import best_event_bound

    q0, q1 = complement if complement is not None else (1 - p0, 1 - p1)
    return best_event_bound(np.array([p0, q0]), np.array([p1, q1]), n_test, confidence)


def exact_log_ratio(mech, d, d2):
    """The row's exact log likelihood ratio from ``ceiling.py``, or None (sparse vector with cutoff 1 and statuses
    only: the log ratio of the position of the first above answer, exact)."""
    from ceiling import exact_svt_probabilities, laplace_log_ratio, numerical_svt_log_ratio, svt34_log_ratio

    llr = laplace_log_ratio(mech, d, d2) or svt34_log_ratio(mech, d, d2) or numerical_svt_log_ratio(mech, d, d2)
    probs = None if llr is not None else exact_svt_probabilities(mech, d, d2)
    if probs is None:
        return llr
    table = np.log(probs[0]) - np.log(probs[1])  # positions 0..m-1, then none above

    def svt_llr(x):
        above = np.asarray(x).reshape(len(x), -1) == 1
        return table[np.where(above.any(axis=1), np.argmax(above, axis=1), above.shape[1])]

    return svt_llr


class ExactScore:
    """The oracle candidate: a known log likelihood ratio as the score, nothing fitted."""

    name = "exact"

    def __init__(self, llr):
        self.llr = llr

    def fit(self, x0, x1):
        return self

    def score(self, x):
        return self.llr(x)


class Valuer:
    """P(event | D) and P(event | D') of events given as hit masks on fixed releases (a grid or fresh draws)."""

    def __init__(self, releases, p=None, llr=None):
        self.releases, self.p = releases, p
        self.r = None if llr is None or p is not None else (llr(releases[0]), llr(releases[1]))

    def scores(self, scorer):
        if self.p is not None:
            return scorer.score(self.releases), None
        return scorer.score(self.releases[0]), scorer.score(self.releases[1])

    def masses(self, h0, h1=None):
        """(P_D, P_D') of the event whose hits are ``h0`` (on D's releases, or the grid) and ``h1`` (on D''s)."""
        h0 = np.asarray(h0, bool)
        h1 = None if h1 is None else np.asarray(h1, bool)
        if self.p is not None:
            return float(self.p[0][h0].sum()), float(self.p[1][h0].sum())
        if self.r is None:
            return float(np.mean(h0)), float(np.mean(h1))
        r0, r1 = self.r
        return (0.5 * (np.mean(h0) + np.mean(h1 * np.exp(r1))), 0.5 * (np.mean(h1) + np.mean(h0 * np.exp(-r0))))

    def binned(self, s0, s1, bins: int = 4000):
        """Masses of quantile bins of a score, in increasing score order (atoms kept whole)."""
        pooled = s0 if s1 is None else np.concatenate([s0, s1])
        edges = np.unique(np.quantile(pooled, np.linspace(0, 1, bins + 1)[1:-1]))
        i0 = np.searchsorted(edges, s0, side="right")
        m = len(edges) + 1
        if self.p is not None:
            return np.bincount(i0, self.p[0], m), np.bincount(i0, self.p[1], m)
        i1 = np.searchsorted(edges, s1, side="right")
        c0, c1 = np.bincount(i0, minlength=m) / len(s0), np.bincount(i1, minlength=m) / len(s1)
        if self.r is None:
            return c0, c1
        r0, r1 = self.r
        w1 = np.bincount(i1, np.exp(r1), m) / len(s1)
        w0 = np.bincount(i0, np.exp(-r0), m) / len(s0)
        return 0.5 * (c0 + w1), 0.5 * (c1 + w0)


def held_out_draws(ev, alt, n_test: int, confidence: float, certs, draws: int, rng) -> np.ndarray:
    """Bounds certified on ``draws`` Poisson held-out sets: the event ``ev`` (its masses and its complement's) and a
    nested ``alt`` (each then at half the failure probability, the better kept), each by its certificate
    (``certs``: the chosen test's), its counts drawn region by region (disjoint regions' Poisson counts are
    independent)."""
    from dpaudit.stats.bounds import poisson_held_out_mean

    lam = poisson_held_out_mean(n_test)
    fail = 1.0 - confidence if alt is None else (1.0 - confidence) / 2
    (e0, e1), comp = ev
    regions = [(e0, e1), comp] if alt is None else [alt[0], (e0 - alt[0][0], e1 - alt[0][1]), comp]
    counts = [(rng.poisson(lam * max(p0, 0.0), draws), rng.poisson(lam * max(p1, 0.0), draws)) for p0, p1 in regions]
    n0, n1 = sum(c[0] for c in counts), sum(c[1] for c in counts)
    in_ev = (n0 - counts[-1][0], n1 - counts[-1][1])
    sets = [in_ev] if alt is None else [in_ev, counts[0]]
    out = np.zeros(draws)
    for (c0, c1), cert in zip(sets, certs):
        out = np.maximum(out, certified(c0, c1, n0, n1, cert, fail))
    return out


def best_run(p0: np.ndarray, p1: np.ndarray, n_test: int, confidence: float):
    """The best event among the top and bottom runs of bins in score order, by ``event_value``: (value, masses of
    the event and of its complement, the certificate that values it: intervals or the Poisson test)."""
    from dpaudit.stats.certificate import ClopperPearson, PoissonConditional

    from ceiling import best_event_bound

    best = (-1.0, None, None, None)
    total = (p0.sum(), p1.sum())
    for top in (True, False):  # the event "guess D": a top run; or a bottom run as the complement of a top one
        order = np.arange(len(p0))[::-1] if top else np.arange(len(p0))
        c0, c1 = np.cumsum(p0[order]), np.cumsum(p1[order])
        step = max(1, len(c0) // 2000)
        for k in range(0, len(c0) - 1, step):
            run, rest = (c0[k], c1[k]), (max(total[0] - c0[k], 0.0), max(total[1] - c1[k], 0.0))
            ev, comp = (run, rest) if top else (rest, run)
            for cert in ("intervals", "poisson"):
                v = best_event_bound(np.array([ev[0], comp[0]]), np.array([ev[1], comp[1]]), n_test, confidence,
                                     certificate=cert)
                if v > best[0]:
                    ratio_ev, ratio_comp = ev[0] / max(ev[1], 1e-300), comp[1] / max(comp[0], 1e-300)
                    inequality = "event" if ratio_ev >= ratio_comp else "complement"
                    best = (v, ev, comp, ClopperPearson() if cert == "intervals" else PoissonConditional(inequality))
    return best


def value_test(test, valuer, scores, n_test: int, confidence: float):
    """(the chosen event's value; the best of the audit's events, each at an even share of the failure probability;
    the event's masses and its complement's)."""
    s0, s1 = scores
    h0, h1 = test.event.guess_d(s0), None if s1 is None else test.event.guess_d(s1)
    ev = valuer.masses(h0, h1), valuer.masses(~h0, None if h1 is None else ~h1)
    val = event_value(*ev[0], n_test, confidence, ev[1])
    if not test.alt_events:
        return val, val, ev
    cells, masks = nested_cells((test.event, *test.alt_events), valuer, scores)
    return val, nested_value(cells, masks, n_test, confidence), ev


def trusted_value(name, pool, confidence: float, equal: bool = False) -> float:
    """A candidate's value on its selection counts trusted ``SELECTION_TRUST`` times, at the event chosen so: the
    objective that chooses the winner's event on large held-out sets, as a ranking of the candidates.  ``equal``:
    instead, every candidate's counts read at the selection half's size (a candidate that chooses on the whole pool
    trusted half), so that no candidate is ranked with twice the others' precision."""
    from dpaudit.auditor import calibrate
    from dpaudit.claims import PointClaim
    from dpaudit.stats.curves import CurveCertificate
    from dpaudit.stats.selection import calibration_counts, calibration_rates, selection_halves

    fit, sel = selection_halves(pool)
    _, s0, s1 = calibrate._selection_scores(name, pool, fit, sel)
    cal = calibration_counts(s0, s1)
    trust = len(sel[0]) / cal[2] if equal else calibrate.SELECTION_TRUST
    rates = calibration_rates(cal, n_test0=trust * cal[2], n_test1=trust * cal[4], confidence=confidence, nested=True)
    cert = CurveCertificate(PointClaim(1.0, 0.0))
    return cert.value(rates, cert.choose(rates))


def nested_events(test, cal, confidence: float, k: int, *, ladder=(2, 8, 32, 128), spread=None,
                  after_ladder: bool | str = False) -> list:
    """The chosen event and up to ``k - 1`` events nested in it, each to be certified at failure ``alpha / len``.

    Ladder (``spread`` None): the j-th rarer event is the best nested one with the selection counts trusted
    ``ladder[j]`` times (``CurveCertificate.choose_rarer``), kept when, read at that trust, it beats the chosen event
    at failure ``alpha / k``.  Spread (``spread = r``): the nested events whose region holds about ``1 / r``,
    ``1 / r^2``, ... of the chosen region's selection releases (``calibrate._spread_events``); ``after_ladder``:
    the audit's rule (``calibrate.nested_events``: the ladder's trust-8 event, then spread ones up to ``k``);
    ``"plus32"``: those, then the trust-32 event as one more when its check, at ``alpha / (len + 1)``, keeps it;
    ``"deep"``: the ladder's trust-8 and trust-32 events, then spread ones up to ``k`` (measured, not built).
    Calibration data only, so the Bonferroni split keeps each bound valid.
    """
    from dpaudit.auditor import calibrate
    from dpaudit.claims import PointClaim
    from dpaudit.stats.curves import CurveCertificate

    cert = CurveCertificate(PointClaim(1.0, 0.0))
    base = test.event
    chosen_on = calibrate._trusted(cal, calibrate.SELECTION_TRUST, confidence)

    def rung(events, trust, shares):
        # The best nested event at ``trust``, kept when, read there at alpha / shares, it beats the chosen event.
        trusted = calibrate._trusted(cal, trust, confidence)
        rare = cert.choose_rarer(trusted, base, chosen_on=chosen_on)
        each = 1.0 - (1.0 - confidence) / shares
        if (rare is not None and rare not in events
                and cert.value(calibrate._trusted(cal, trust, each), rare) > cert.value(trusted, base)):
            events.append(rare)
        return events

    def spread_up_to(events, limit):
        for event in calibrate._spread_events(cal, base, cert._family(chosen_on, base), chosen_on._index(base),
                                              spread, k):
            if len(events) < limit and event not in events:
                events.append(event)
        return events

    if spread is not None and after_ladder == "plus32":  # the audit's K events, then the trust-32 event as one more
        events = calibrate.nested_events(cert, cal, base, confidence, k=k, spread=spread, chosen_on=chosen_on)
        return rung(events, 32, len(events) + 1)
    if spread is not None and after_ladder == "deep":  # the ladder's rungs 8 and 32, then spread events up to k
        return spread_up_to(nested_events(test, cal, confidence, k, ladder=(2, 8, 32)), k)
    if spread is not None and after_ladder:  # the audit's rule
        return calibrate.nested_events(cert, cal, base, confidence, k=k, spread=spread, chosen_on=chosen_on)
    if spread is None:
        events = [base]
        for trust in ladder[1:k]:
            rung(events, trust, k)
        return events
    return spread_up_to([base], k)


def nested_cells(events, valuer, scores):
    """(cells' masses under D and D' as two arrays, each event's cells as boolean masks): the score line cut at the
    events' thresholds (all events of one score on one side: ``score >= t``, or ``< t`` when ``reverse``)."""
    s0, s1 = scores
    cuts = np.unique([e.threshold for e in events])
    edges = np.concatenate([[-np.inf], cuts, [np.inf]])
    m0, m1 = [], []
    for lo, hi in zip(edges[:-1], edges[1:]):
        h0 = (s0 >= lo) & (s0 < hi)
        h1 = None if s1 is None else (s1 >= lo) & (s1 < hi)
        a, b = valuer.masses(h0, h1)
        m0.append(a)
        m1.append(b)
    m0, m1 = np.array(m0), np.array(m1)
    lows = edges[:-1]
    masks = [(lows < e.threshold) if e.reverse else (lows >= e.threshold) for e in events]
    return (m0, m1), masks


def nested_value(cells, masks, n_test: int, confidence: float) -> float:
    """The best of the events at expected held-out counts, each at failure ``alpha / len(masks)``."""
    (m0, m1), each = cells, 1.0 - (1.0 - confidence) / len(masks)
    return max(event_value(m0[h].sum(), m1[h].sum(), n_test, each, (m0[~h].sum(), m1[~h].sum())) for h in masks)


def nested_draws(cells, masks, certs, n_test: int, confidence: float, draws: int, rng, first=None) -> np.ndarray:
    """Bounds certified on ``draws`` Poisson held-out sets: each event by its certificate at failure
    ``alpha / len(masks)``, the best kept (each cell's counts drawn apart: disjoint cells' Poisson counts are
    independent).  ``first``: the first event at failure ``first * alpha`` and the others at an even share of the
    rest (a weighted union bound)."""
    from dpaudit.stats.bounds import poisson_held_out_mean

    lam = poisson_held_out_mean(n_test)
    (m0, m1), alpha = cells, 1.0 - confidence
    fails = [alpha / len(masks)] * len(masks)
    if first is not None and len(masks) > 1:
        fails = [first * alpha] + [(1.0 - first) * alpha / (len(masks) - 1)] * (len(masks) - 1)
    c0 = rng.poisson(lam * np.maximum(m0, 0.0)[:, None], (len(m0), draws))
    c1 = rng.poisson(lam * np.maximum(m1, 0.0)[:, None], (len(m1), draws))
    n0, n1 = c0.sum(axis=0), c1.sum(axis=0)
    out = np.zeros(draws)
    for h, cert, fail in zip(masks, certs, fails):
        out = np.maximum(out, certified(c0[h].sum(axis=0), c1[h].sum(axis=0), n0, n1, cert, fail))
    return out


def certified(c0, c1, n0, n1, cert, fail: float) -> np.ndarray:
    """The bound ``cert`` certifies from the event's counts ``c0``, ``c1`` among ``n0``, ``n1`` at failure ``fail``."""
    from dpaudit.stats.bounds import poisson_log_ratio
    from dpaudit.stats.certificate import POISSON_SHARE
    from dpaudit.stats.clopper_pearson import cp_lower, cp_upper

    if getattr(cert, "inequality", None) is not None:
        a, b = (c0, c1) if cert.inequality == "event" else (n1 - c1, n0 - c0)
        return poisson_log_ratio(a, b, fail * POISSON_SHARE)
    lo, hi = cp_lower(c0, n0, fail / 2), cp_upper(c1, n1, fail / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.maximum(np.log(lo) - np.log(hi), np.log1p(-hi) - np.log1p(-lo))
    return np.where(np.isfinite(val), np.maximum(val, 0.0), 0.0)


def study_events(label, seed, name, test, pool, valuer, args, ceiling) -> None:
    """Print, for each ``k`` of ``--events``, the best of ``k`` nested events of ``name``'s chosen event (ladder, and
    spread when ``--spread``) at expected held-out counts and on ``--draws`` simulated held-out sets."""
    from dpaudit.auditor import calibrate
    from dpaudit.claims import PointClaim
    from dpaudit.stats.certificate import ClopperPearson
    from dpaudit.stats.curves import CurveCertificate
    from dpaudit.stats.selection import calibration_counts, calibration_rates, selection_halves

    fit, sel = selection_halves(pool)
    _, s0, s1 = calibrate._selection_scores(name, pool, fit, sel)
    cal = calibration_counts(s0, s1)
    rates = calibration_rates(cal, n_test0=cal[2], n_test1=cal[4], confidence=args.confidence, nested=True)
    cert = CurveCertificate(PointClaim(1.0, 0.0))
    today = nested_events(test, cal, args.confidence, 3, ladder=(2, 8), spread=4, after_ladder=True)
    if today[1:] != list(test.alt_events):
        print(f"{label} seed {seed} {name}: l+spread 4 at K = 3 differs from the audit's events", flush=True)
    scores = valuer.scores(test.scorer)
    n_test = int(args.held_out)
    rules = [("ladder", None, False)] + [(f"spread {r:g}", r, False) for r in args.spread]
    rules += [(f"l+spread {r:g}", r, True) for r in args.spread]
    rules += [(f"gate {g}", (args.spread or [4.0])[0], g) for g in args.gate]
    rules += [(f"l32+spread {r:g}", r, "deep") for r in args.spread if args.deep]
    rules += [(f"l+spread+32 {r:g}", r, "plus32") for r in args.spread if args.deep]
    for k in args.events:
        for rule, spread, after in rules:
            events = nested_events(test, cal, args.confidence, k, ladder=tuple(args.trust_ladder), spread=spread,
                                   after_ladder=after if after in ("deep", "plus32") else bool(after))
            if isinstance(after, str) and after not in ("deep", "plus32"):
                events = gated(events, cal, cert, args.confidence, k, *map(float, after.split(":")))
            own = [calibrate._variant(ClopperPearson(), rates, e, cert.value(rates, e), poisson=True) for e in events]
            # As the audit: the chosen event's Poisson test reads the nested events too (calibrate.choose_test).
            certs = own if isinstance(own[0], ClopperPearson) else [own[0]] * len(own)
            cells, masks = nested_cells(events, valuer, scores)
            line = (f"{label} seed {seed} {name:>20}: K={k} {rule:>12} events {len(events)}"
                    f"  expected {nested_value(cells, masks, n_test, args.confidence):.4f}")
            if args.draws:
                b = nested_draws(cells, masks, certs, n_test, args.confidence, args.draws,
                                 np.random.default_rng([seed, k]))
                line += "  drawn " + _drawn(b, ceiling)
                line += f" share {b.mean() / ceiling:.3f}" if ceiling else ""
                if args.own_certificates and after is True and own != certs:
                    b = nested_draws(cells, masks, own, n_test, args.confidence, args.draws,
                                     np.random.default_rng([seed, k]))
                    line += f"  | each its own certificate: mean {b.mean():.4f}"
                    line += f" share {b.mean() / ceiling:.3f}" if ceiling else ""
                    line += f" ({'/'.join(type(c).__name__[:2] for c in own)})"
                for w in args.first_share if len(events) > 1 else ():
                    b = nested_draws(cells, masks, certs, n_test, args.confidence, args.draws,
                                     np.random.default_rng([seed, k]), first=w)
                    line += f"  | first at {w:g}: mean {b.mean():.4f}"
                for share in args.split if len(events) > 1 else ():
                    b = split_draws(cells, masks, certs, n_test, args.confidence, args.draws, share,
                                    np.random.default_rng([seed, k, 7]))
                    line += f"  | split {share:g}: mean {b.mean():.4f}"
                    line += f" share {b.mean() / ceiling:.3f}" if ceiling else ""
            print(line, flush=True)


def gated(events, cal, cert, confidence: float, k: int, trust: float, share: float) -> list:
    """``events[0]`` and those of the others that, with the selection counts trusted ``trust`` times and each at
    failure ``alpha / k``, certify at least ``share`` of what ``events[0]`` certifies read the same way: nested
    events kept only where the calibration data say they may compete (calibration data only)."""
    from dpaudit.auditor import calibrate

    rates = calibrate._trusted(cal, trust, 1.0 - (1.0 - confidence) / k)
    floor = share * cert.value(rates, events[0])
    return [events[0]] + [e for e in events[1:] if cert.value(rates, e) >= floor]


def split_draws(cells, masks, certs, n_test: int, confidence: float, draws: int, share: float, rng) -> np.ndarray:
    """Bounds on ``draws`` simulated Poisson held-out sets split in two: the first ``share`` of the releases chooses
    the event whose bound on it is largest (each at the full failure probability), the rest certifies that one event
    at the full failure probability.  The other way to certify the best of nested events: no split of the failure
    probability, fewer releases to certify on (each part's cell counts are independent Poisson variables)."""
    from dpaudit.stats.bounds import poisson_held_out_mean

    lam = poisson_held_out_mean(n_test)
    (m0, m1), fail = cells, 1.0 - confidence

    def part(scale):
        c0 = rng.poisson(scale * lam * np.maximum(m0, 0.0)[:, None], (len(m0), draws))
        c1 = rng.poisson(scale * lam * np.maximum(m1, 0.0)[:, None], (len(m1), draws))
        return c0, c1, c0.sum(axis=0), c1.sum(axis=0)

    (a0, a1, na0, na1), (b0, b1, nb0, nb1) = part(share), part(1.0 - share)
    chosen = np.stack([certified(a0[h].sum(axis=0), a1[h].sum(axis=0), na0, na1, c, fail)
                       for h, c in zip(masks, certs)])
    pick = np.argmax(chosen, axis=0)
    held = np.stack([certified(b0[h].sum(axis=0), b1[h].sum(axis=0), nb0, nb1, c, fail)
                     for h, c in zip(masks, certs)])
    return held[pick, np.arange(draws)]


def audit_draws(test, ev, valuer, scores, n_test: int, confidence: float, draws: int, rng) -> np.ndarray:
    """The audit's events (the chosen one and ``alt_events``) certified on ``draws`` simulated held-out sets."""
    if not test.alt_events:
        return held_out_draws(ev, None, n_test, confidence, [test.certificate], draws, rng)
    certs = [test.certificate] + [c or test.certificate for c in test.alt_certificates]
    cells, masks = nested_cells((test.event, *test.alt_events), valuer, scores)
    return nested_draws(cells, masks, certs, n_test, confidence, draws, rng)


def _drawn(b: np.ndarray, ceiling) -> str:
    text = f"mean {b.mean():.4f} sd {b.std():.4f}"
    return text + (f" P(>=98%) {np.mean(b >= 0.98 * ceiling):.2f}" if ceiling else "")


class _MeanScore:
    """The mean of two fitted scores."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def score(self, x):
        return 0.5 * (np.asarray(self.a.score(x), float) + np.asarray(self.b.score(x), float))


def _matched(o0, o1, ref):
    """``o0``, ``o1`` carried to ``ref``'s scale: each value replaced by ``ref``'s quantile at its mid-rank among
    ``o0`` and ``o1`` together."""
    both = np.concatenate([o0, o1])
    srt = np.sort(both)
    mid = 0.5 * (np.searchsorted(srt, both, "left") + np.searchsorted(srt, both, "right")) / len(both)
    ref = np.sort(np.asarray(ref, float))
    out = ref[np.clip(np.ceil(mid * len(ref)).astype(np.int64) - 1, 0, len(ref) - 1)]  # the inverted CDF
    return out[: len(o0)], out[len(o0):]


def cross_fit(held_out: str) -> None:
    """Make the audit's calibration cross-fit its fitted candidates (a study, not the audit's rule): each half is
    scored by the candidate fitted on the other, and the event chosen on both; the held-out releases are scored
    by the first half's fit (``"first"``) or by the mean of the two fits (``"mean"``); ``"matched"``: the first half's
    fit, with the other fit's scores carried to its scale by matching quantiles (both sides pooled), so that a
    threshold means the same share of releases under both fits.  Pooled candidates as
    before.  Calibration data only, so the held-out bound stays valid."""
    from dpaudit.auditor import calibrate
    from dpaudit.auditor.distinguishers import make_distinguisher

    plain = calibrate._selection_scores

    def crossed(name, pool, fit, sel):
        scorer, s0, s1 = plain(name, pool, fit, sel)
        if len(s0) == len(pool[0]):  # pooled: fitted and chosen on the whole pool already
            return scorer, s0, s1
        other = make_distinguisher(name).fit(sel[0], sel[1])
        o0, o1 = np.asarray(other.score(fit[0]), float), np.asarray(other.score(fit[1]), float)
        if held_out == "matched":
            o0, o1 = _matched(o0, o1, np.concatenate([s0, s1]))
        s0, s1 = np.concatenate([o0, s0]), np.concatenate([o1, s1])
        return (_MeanScore(scorer, other) if held_out == "mean" else scorer), s0, s1

    calibrate._selection_scores = crossed


def draw_seed(mech, pair, seed: int, n_cal: int, n_fresh: int, grid, llr):
    """(the calibration pool of ``seed``, the valuer of its events: ``grid`` when given, else ``n_fresh`` fresh
    releases per side drawn after the pool, weighted by ``llr`` when given)."""
    rng = np.random.default_rng([seed, 50])
    d, d2 = pair
    pool = (np.asarray(mech(d, size=n_cal, rng=rng), float), np.asarray(mech(d2, size=n_cal, rng=rng), float))
    if grid is not None:
        return pool, Valuer(grid[0], p=grid[1:])
    fresh = (np.asarray(mech(d, size=n_fresh, rng=rng), float), np.asarray(mech(d2, size=n_fresh, rng=rng), float))
    return pool, Valuer(fresh, llr=llr)


def run_row(label, e, args, names_extra) -> None:
    from dpaudit.auditor.distinguishers import ATTACKS, auto_choices, output_kind, register_attack
    from dpaudit.auditor.pipeline import choose_test
    from dpaudit.mechanisms import get_mechanism

    mech = get_mechanism(e["mechanism"], **e["params"])
    d, d2 = mech.neighbouring_pair()
    n_cal, n_test = int(args.calibration), int(args.held_out)
    grid = svt3_grid(mech, d, d2) if e["mechanism"] == "svt_lyu_alg3" else None
    llr = exact_log_ratio(mech, d, d2)
    if args.oracle and llr is not None:
        register_attack("exact", lambda: ExactScore(llr), outputs="vector", description="the exact log ratio")
    ceiling = e["reference"].get("ceiling_1e7") if n_test == 9_000_000 else None
    for seed in args.seeds:
        pool, valuer = draw_seed(mech, (d, d2), seed, n_cal, int(args.fresh), grid, llr)
        names = list(auto_choices(output_kind(np.concatenate([pool[0][:10_000], pool[1][:10_000]])), pool[0][: n_cal // 2])) + names_extra
        names = list(args.only or names)
        if args.oracle and llr is not None:
            names.append("exact")
        names = list(dict.fromkeys(names))
        results = {}
        for name in names:
            t = time.perf_counter()
            test = choose_test((name,), pool, confidence=args.confidence, full=False, n_test=n_test, delta=0.0)
            fit_s = time.perf_counter() - t
            scores = valuer.scores(test.scorer)
            val, with_nested, ev = value_test(test, valuer, scores, n_test, args.confidence)
            own = best_run(*valuer.binned(*scores), n_test, args.confidence) if args.own_best else None
            trusted = (trusted_value(name, pool, args.confidence, equal=args.equal_footing)
                       if args.rank_trusted or args.equal_footing else None)
            results[name] = (test.value, val, with_nested, own, fit_s, test, ev, trusted)
        fitted = [n for n in names if n != "exact"] or names
        # auto's choice is the audit's own ranking (each candidate's event chosen on its selection counts, before the
        # winner's is re-chosen at SELECTION_TRUST), not the re-chosen events' values printed below.
        chosen = choose_test(tuple(fitted), pool, confidence=args.confidence, full=False, n_test=n_test, delta=0.0).name
        by_trust = (max(fitted, key=lambda n: (results[n][7], -fitted.index(n)))
                    if args.rank_trusted or args.equal_footing else None)
        for name in names:
            sel, val, with_nested, own, s, test, ev, trusted = results[name]
            mark = " <- auto" if name == chosen and not args.only else ""
            mark += " <- trusted" if name == by_trust else ""
            line = (f"{label} seed {seed} {name:>20}: selection {sel:.4f}  expected held-out {val:.4f}"
                    f"  with nested {with_nested:.4f}")
            if own is not None:
                line += f"  own best {own[0]:.4f}"
            if trusted is not None:
                line += f"  trusted {trusted:.4f}"
            if args.draws and (name == chosen or name == "exact"):
                scores = valuer.scores(test.scorer)  # this candidate's, not the last fitted one's
                b = audit_draws(test, ev, valuer, scores, n_test, args.confidence, args.draws,
                                np.random.default_rng(seed))
                line += "  drawn " + _drawn(b, ceiling)
                if own is not None and name == "exact":  # the ceiling's own event, known in advance
                    b = held_out_draws((own[1], own[2]), None, n_test, args.confidence, [own[3]], args.draws,
                                       np.random.default_rng(seed))
                    line += "  its best event drawn " + _drawn(b, ceiling)
            print(line + f"  fit+choose {s:.1f} s{mark}", flush=True)
        for name in dict.fromkeys([chosen, "exact"] if "exact" in names else [chosen]) if args.events else ():
            study_events(label, seed, name, results[name][5], pool, valuer, args, ceiling)
    ATTACKS.pop("exact", None)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", nargs="+", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--calibration", type=float, default=1e6, help="calibration releases per side (both halves)")
    ap.add_argument("--held-out", type=float, default=9e6)
    ap.add_argument("--fresh", type=float, default=2e6, help="fresh releases per side to value an event")
    ap.add_argument("--attacks", nargs="*", default=[], help="distinguishers tried beside auto's")
    ap.add_argument("--only", nargs="*", default=None, help="only these distinguishers (no auto row)")
    ap.add_argument("--oracle", action="store_true", help="also the exact log likelihood ratio as a score")
    ap.add_argument("--own-best", action="store_true", help="also each score's best event (a perfect selection)")
    ap.add_argument("--rank-trusted", action="store_true",
                    help="also rank the candidates by their value with the selection counts trusted twice")
    ap.add_argument("--equal-footing", action="store_true",
                    help="also rank the candidates with every one's selection counts read at the selection half's "
                         "size (<- trusted)")
    ap.add_argument("--draws", type=int, default=0, help="simulated held-out sets of auto's (and exact's) events")
    ap.add_argument("--events", type=int, nargs="*", default=[],
                    help="certify K nested events of auto's (and exact's) chosen event, for each K given")
    ap.add_argument("--trust-ladder", type=float, nargs="+", default=[2, 8, 32, 128],
                    help="the trust each of the K events is chosen at (the first: the audit's SELECTION_TRUST)")
    ap.add_argument("--spread", type=float, nargs="*", default=[],
                    help="also the K events whose regions hold 1/R, 1/R^2, ... of the chosen region's releases, "
                         "and the audit's two events followed by such events (l+spread), for each R")
    ap.add_argument("--split", type=float, nargs="*", default=[],
                    help="with --events: also choose among the events on this share of the held-out set and certify "
                         "the choice on the rest, at the full failure probability")
    ap.add_argument("--first-share", type=float, nargs="*", default=[],
                    help="with --events: also the chosen event at this share of the failure probability, the "
                         "others at an even share of the rest")
    ap.add_argument("--gate", nargs="*", default=[],
                    help="with --events: also l+spread with its nested events kept only when, trusted T times and at "
                         "alpha / K, they certify at least S of the chosen event's bound read so (T:S, e.g. 8:0.9)")
    ap.add_argument("--deep", action="store_true",
                    help="with --events and --spread: also the ladder's events at trust 8 and 32 (each when its check "
                         "keeps it), then spread events up to K (l32+spread); and l+spread then the trust-32 event as "
                         "one more (l+spread+32)")
    ap.add_argument("--own-certificates", action="store_true",
                    help="with --events: also each nested event by the variant its own selection counts ask for "
                         "(the audit reads them by the chosen event's Poisson test when it has one)")
    ap.add_argument("--cross-fit", choices=["first", "mean", "matched"], default=None,
                    help="choose fitted candidates' events on both halves, each scored by the fit on the other; the "
                         "held-out score is the first half's fit ('first') or the two fits' mean ('mean')")
    ap.add_argument("--confidence", type=float, default=0.9)
    args = ap.parse_args(argv)
    if any(k < 1 or k > len(args.trust_ladder) for k in args.events):
        ap.error(f"--events: each K must be between 1 and the ladder's length {len(args.trust_ladder)}")
    if args.cross_fit:
        cross_fit(args.cross_fit)

    import sys

    sys.path.insert(0, str(HERE))
    config = yaml.safe_load((HERE / "dp_sniper.yaml").read_text())
    entries = {e["label"]: e for e in config["mechanisms"]}
    for label in args.rows:
        run_row(label, entries[label], args, list(args.attacks))


if __name__ == "__main__":
    main()
