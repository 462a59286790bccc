"""The screening steps of :func:`dpaudit.search`: which pairs are screened, on which seed streams, in which order.

0. A quick look at the fixed patterns (sequential searches), which ends the search when one already exceeds
   the claim; 1. the patterns and random pairs (:func:`dpaudit.pairs.candidate_pairs`); 2. a local search
   from the best three (:func:`dpaudit.pairs.mutate_pair`, a (1+1) hill-climb with an adaptive step); 3.
   successive halving of the leaders on larger fresh samples.  Each pair is scored by
   :func:`~dpaudit.pair_search_screen.screen_pair`; the scores only choose which pair the final audit sees.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .pair_search_screen import screen_pair, separated_bound
from .pairs import candidate_pairs, mutate_pair

__all__ = ["Screener", "ScreenSettings", "run_screening", "screening_sizes", "distinct_rows", "pair_key",
           "REFINE_LEVELS", "QUICK_SAMPLES", "MAX_PATTERNS_REFINED", "PATTERN_RANK_LIMIT"]

#: Successive halving of the leaders: (how many, sample factor) per level, each on fresh samples.
#: Large budgets (final audit >= 100 screenings) take two levels, small ones one.
REFINE_LEVELS = {"large": ((8, 4), (2, 16)), "small": ((3, 4),)}
#: Fixed patterns that always reach the first level of successive halving (large budgets).
MAX_PATTERNS_REFINED = 12
#: ... when ranked within this many times the first level's leaders on the screening sample.
PATTERN_RANK_LIMIT = 2
#: Releases per side of the quick first look at the patterns (sequential searches only).
QUICK_SAMPLES = 1000
#: Seed stream of each screening stage (with the level of successive halving): ``(0, stream, level)``.
STREAMS = {"quick": 0, "screen": 1, "local": 1, "refine": 2}


@dataclass(frozen=True)
class ScreenSettings:
    """What every screening of one search shares: the target, the seed, sizes, the clock and the certificate."""

    target: Any
    entropy: int
    n_samples: int
    delta: float
    budget: float | None
    progress: bool
    #: Held-out releases per side of the final audit the scores anticipate.
    project_to: int | None = None
    #: Grey-box screening (:mod:`dpaudit.greybox.screen`): pairs a few traces settle exactly are ranked by
    #: their exact epsilon; the others are screened black-box.
    grey_box: bool | str = False
    #: What chooses each screening's event (:func:`~dpaudit.pair_search_screen.point_certificate`).
    certificate: Any = None
    #: Seconds between progress lines on stderr.
    progress_every: float = 5.0


#: Grey-box screenings tried before a search whose traces settled none of them screens black-box only: a target
#: whose release hides the aligned draws (an argmax, a comparison) never gives an exact value.
GREY_TRIALS = 8


class Screener:
    """Screens pairs in order, each on its stage's seed stream, until the time budget runs out."""

    def __init__(self, settings: ScreenSettings):
        self.settings = settings
        self.n_samples = settings.n_samples
        #: Target calls of the grey-box screenings (one release each); grey-box screenings tried, pairs they
        #: settled, and why the search stopped trying (None while it tries).
        self.grey_calls = self.grey_tried = self.grey_settled = 0
        self.grey_off: str | None = None
        self.start = time.perf_counter()
        self.last_report = self.start
        self.rows: list[dict] = []
        self.pairs: set = set()  # distinct pairs among the rows (a pair may be screened many times)
        self.out_of_time = False

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def time_left(self) -> bool:
        budget = self.settings.budget
        if budget is not None and self.rows and self.elapsed() >= budget:
            self.out_of_time = True
        return not self.out_of_time

    def __call__(self, origin, a, b, *, factor: int = 1, n_samples: int | None = None, stage: str = "screen",
                 level: int = 0) -> dict:
        # Common random numbers: every pair of one stage (and level) is screened on the same seed
        # stream, so that two pairs are compared on the same noise and their scores differ by what the
        # pairs do, not by luck.  Each stage and level has its own stream, so successive halving still
        # ranks on fresh releases.  Within a pair the two sides are coupled (one stream).
        s = self.settings
        seq = np.random.SeedSequence(s.entropy, spawn_key=(0, STREAMS[stage], level))
        n = n_samples if n_samples is not None else self.n_samples * factor
        res = self._grey(a, b, seq) if s.grey_box else None
        if res is None:
            res = screen_pair(s.target, a, b, n_samples=n, delta=s.delta, project_to=s.project_to, rng=seq,
                              coupled=True, cheap=stage == "quick", certificate=s.certificate)
        else:
            n = 0  # no releases drawn: the traces' calls are counted in grey_calls
        row = {"origin": origin, "stage": stage, "dataset": a, "neighbor": b, "score": res["score"],
               "bound": res["bound"], "attack": res["attack"], "samples": n}
        self.rows.append(row)
        self.pairs.add(pair_key(np.asarray(a), np.asarray(b)))
        self._maybe_report()
        return row

    def _grey(self, a, b, seq) -> dict | None:
        """A grey-box screening of the pair, or None (screen it black-box).

        Black-box from then on: after :data:`GREY_TRIALS` grey-box screenings that settled no pair, and, with
        ``grey_box="auto"``, for a target whose randomness cannot be recorded (its final audit says why).
        """
        from .greybox import GreyBoxError
        from .greybox.screen import grey_screen

        if self.grey_off is None and self.grey_tried >= GREY_TRIALS and not self.grey_settled:
            self.grey_off = f"no exact value in the first {GREY_TRIALS} grey-box screenings"
        if self.grey_off is not None:
            return None
        try:
            res = grey_screen(self.settings.target, a, b, delta=self.settings.delta,
                              seed=np.random.SeedSequence(seq.entropy, spawn_key=(46,)))
        except GreyBoxError as exc:
            if self.settings.grey_box != "auto":
                raise
            self.grey_off = str(exc)
            return None
        self.grey_calls += res["calls"]
        self.grey_tried += 1
        self.grey_settled += res["score"] is not None
        return res if res["score"] is not None else None

    def count_text(self) -> str:
        """The screenings and the distinct pairs they covered, both named: a pair is screened again on larger
        samples, and the local search can revisit one."""
        n = len(self.pairs)
        return f"{len(self.rows)} screening{'s' * (len(self.rows) != 1)} of {n} distinct pair{'s' * (n != 1)}"

    def _maybe_report(self) -> None:
        now = time.perf_counter()
        if self.settings.progress and now - self.last_report >= self.settings.progress_every:
            self.last_report = now
            best = max(self.rows, key=lambda r: r["score"])
            print(f"search: {self.count_text()} in {now - self.start:.0f} s; best projected "
                  f"epsilon {best['score']:.3f} ({best['origin']})", file=sys.stderr, flush=True)


def run_screening(screen: Screener, domain, cand_rng, *, max_candidates: int, levels, finalists: int, quick: bool,
                  epsilon: float) -> tuple[list[dict], list[dict]]:
    """Steps 0-3: (the finalists, best first; the quick look's rows when they already exceed the claim, else [])."""
    fixed = candidate_pairs(domain, rng=cand_rng)
    n_fixed = min(len(fixed), max_candidates)
    early = _quick_look(screen, fixed[:n_fixed], epsilon=epsilon) if quick else []
    if early:
        return distinct_rows(early)[:finalists], early
    # 1. Patterns and random pairs: patterns first, random ones fill a quarter of what is left.
    n_random = max(0, (max_candidates - n_fixed) // 4)
    for origin, a, b in fixed[:n_fixed] + candidate_pairs(domain, n_random=n_random, rng=cand_rng)[len(fixed):]:
        if not screen.time_left():
            break
        screen(origin, a, b)
    _local_search(screen, domain, cand_rng, max_candidates)
    return _halving(screen, fixed, levels, finalists), early


def screening_sizes(n_final: int, screen_samples, max_candidates) -> tuple[int, tuple, int]:
    """(releases per screened pair, halving levels, pairs screened at most): the screening draws about as
    many releases as the final audit."""
    if screen_samples is None:
        screen_samples = min(max(n_final // 100, 1000), 20_000)
    levels = REFINE_LEVELS["large" if n_final // screen_samples >= 100 else "small"]
    if max_candidates is None:
        max_candidates = max(20, n_final // screen_samples - sum(k * f for k, f in levels))
    return screen_samples, levels, max_candidates


def _quick_look(screen: Screener, patterns, *, epsilon) -> list[dict]:
    """0. The patterns on a few releases each: rows that already exceed the claim, best first (else none).

    A sequential audit certifies a gross violation in a few thousand releases, and a search that
    then spent its full budget would cost many audits.  A pattern at the bound of completely
    separated sides is about as strong as this sample can show: the look stops there.
    """
    ceiling = separated_bound(QUICK_SAMPLES, screen.settings.delta)
    for origin, a, b in patterns:
        if not screen.time_left():
            break
        row = screen(origin, a, b, n_samples=QUICK_SAMPLES, stage="quick")
        if row["bound"] > epsilon and row["bound"] >= ceiling * (1.0 - 1e-9):
            break
    early = sorted(screen.rows, key=lambda r: -r["bound"])
    return early if early and early[0]["bound"] > epsilon else []


def _local_search(screen: Screener, domain, cand_rng, max_candidates: int) -> None:
    """2. From the three best: a (1+1) hill-climb per start, step x1.5 on success, x0.7 on failure."""
    starts = sorted((r for r in screen.rows if r["stage"] != "quick"), key=lambda r: -r["score"])[:3]
    incumbents = [dict(r, scale=0.25) for r in starts]
    n_local = max_candidates - sum(r["stage"] != "quick" for r in screen.rows)
    for step in range(max(0, n_local)):
        if not incumbents or not screen.time_left():
            break
        inc = incumbents[step % len(incumbents)]
        a, b = mutate_pair(domain, inc["dataset"], inc["neighbor"], rng=cand_rng, scale=inc["scale"])
        if len(a) == len(b) and np.array_equal(a, b):
            continue  # a move that made the datasets equal shows nothing
        origin = inc["origin"] if inc["origin"].startswith("local") else f"local from {inc['origin']}"
        row = screen(origin, a, b, stage="local")
        if row["score"] > inc["score"]:
            inc.update(dataset=a, neighbor=b, score=row["score"], scale=min(inc["scale"] * 1.5, 1.0), origin=origin)
        else:
            inc["scale"] = max(inc["scale"] * 0.7, 0.01)


def _halving(screen: Screener, fixed, levels, finalists: int) -> list[dict]:
    """3. The leaders again on larger fresh samples (successive halving): the finalists, best first.

    Each level screens the best of the previous one again and ranks them by that alone, so a pair
    lucky on a small sample does not win by luck.  Quick-look scores (smaller samples, inflated
    by the max over thresholds) do not rank.  With a large budget, the fixed patterns ranked within
    PATTERN_RANK_LIMIT times the leaders also go to the first level: patterns are the known worst
    cases of whole families (StatDP, DP-Sniper), and a weak leak can rank them a few places too low.
    """
    full = [r for r in screen.rows if r["stage"] != "quick"] or screen.rows
    pool = distinct_rows(sorted(full, key=lambda r: -r["score"]))
    pattern_keys = {pair_key(a, b) for _, a, b in fixed[:MAX_PATTERNS_REFINED]}
    for level, (n_keep, factor) in enumerate(levels):
        leaders = pool[:max(n_keep, finalists)]
        if level == 0 and len(levels) > 1:
            chosen_keys = {_row_key(r) for r in leaders}
            near = pool[:PATTERN_RANK_LIMIT * len(leaders)]
            leaders = leaders + [r for r in near if _row_key(r) in pattern_keys - chosen_keys]
        again_rows = []
        for r in leaders:
            if not screen.time_left():
                break
            again = screen(r["origin"], r["dataset"], r["neighbor"], factor=factor, stage="refine", level=level)
            again_rows.append(dict(r, score=again["score"], first_score=r["score"]))
        if len(again_rows) < len(leaders):
            break  # out of time within a level: keep the previous level's ranking
        pool = sorted(again_rows, key=lambda r: -r["score"])
    return pool[:finalists]


def distinct_rows(rows: list[dict]) -> list[dict]:
    """Rows with distinct pairs, order kept (a pair screened twice counts once: its first, better score)."""
    seen, out = set(), []
    for r in rows:
        key = _row_key(r)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def pair_key(dataset: np.ndarray, neighbor: np.ndarray) -> tuple[bytes, bytes]:
    """A hashable key equal exactly when two pairs are the same."""
    return dataset.tobytes(), neighbor.tobytes()


def _row_key(row: dict) -> tuple[bytes, bytes]:
    return pair_key(row["dataset"], row["neighbor"])
