"""The survey's floating-point pass: the float features' events, chosen for the held-out size, certified on fresh releases.

An audit ranks its candidate events by what their selection counts certify at the selection split's own size.
A one-sided event of a few percent (releases on one dataset that are odd multiples of ``2**-54``, never on the
other) is a handful of counts there, which intervals at that size cannot tell from noise, so a broad event wins
and the held-out counts certify little.  This pass reads the same features as the audit's float attacks
(:mod:`dpaudit.auditor.distinguishers.floating`: the exponent of each release's lowest set bit, alone or with
its binade) and ranks their events by the bound they would give at the held-out size, projected from the
calibration releases' proportions; then it counts the chosen event on fresh releases and certifies it with the
Clopper-Pearson certificate (:func:`dpaudit.attacks._result.certify_counts`), whose result decides the verdict as
every audit's does.  The held-out releases are drawn after
the choice and independently of it, so the bound holds at its confidence whatever the choice was.

:func:`releases_are_float` decides, on releases of its own, whether a row's releases are floating point
(:func:`~dpaudit.auditor.distinguishers.float_choices`); the survey's worker then runs the search's audit and
this pass at half the row's failure probability each (Bonferroni) and reports the larger bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._rng import RNGLike, as_seed_sequence
from ..auditor.distinguishers.floating import binade, float_choices, lowest_set_bit_exponent
from ..sampling import draw_releases
from ..attacks._result import certify_counts
from ..claims import PointClaim
from ..stats import cp_lower, cp_upper, log_ratio_bound
from ..stats.verdict import verdict_of

__all__ = ["FloatEvent", "FEATURES", "PROBE", "CALIBRATION_SHARE", "MAX_CODES", "MIN_COUNT", "DEN_PRIOR", "releases_are_float",
           "choose_event", "float_pass", "split_confidence"]

#: Releases per probed dataset that decide whether a row's releases are floating point.
PROBE = 200
#: Share of the pass's releases per side that choose the event; the rest certify it.
CALIBRATION_SHARE = 0.25
#: Most feature values one event pools (the likeliest first).
MAX_CODES = 64
#: Feature values seen fewer times than this in the calibration releases of both sides together are left out
#: of events: their ratio is mostly noise (the float attacks' scores drop them the same way).
MIN_COUNT = 4
#: Releases added to each feature value's count on the event's unlikely side when events are ranked.
DEN_PRIOR = 0.5


def _binade_lsb(x: np.ndarray) -> np.ndarray:
    """One integer per release coding (binade, lowest-set-bit exponent): how many bits it uses where it lies."""
    return binade(x).astype(np.int64) * 16384 + lowest_set_bit_exponent(x).astype(np.int64) + 4096


#: The features the pass reads, by the name of the float attack that reads the same.
FEATURES = {"float-lsb": lowest_set_bit_exponent, "float-binade-lsb": _binade_lsb}


@dataclass(frozen=True)
class FloatEvent:
    """``feature`` of coordinate ``column`` takes one of ``codes``; likelier on D when ``on_d``, else on D'."""

    feature: str
    column: int
    codes: tuple
    on_d: bool
    projected: float

    def count(self, x: np.ndarray) -> int:
        f = FEATURES[self.feature](_columns(x)[:, self.column])
        return int(np.isin(f, np.asarray(self.codes)).sum())

    def describe(self) -> str:
        side = "D" if self.on_d else "D'"
        shown = self.codes if self.feature == "float-lsb" else tuple(
            (c // 16384, c % 16384 - 4096) for c in self.codes)
        what = "lowest set bit exponent" if self.feature == "float-lsb" else "(binade, lowest set bit exponent)"
        return f"{what} of coordinate {self.column} in {list(shown)[:8]}{' ...' if len(shown) > 8 else ''} " \
               f"(likelier on {side})"


def _columns(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return x.reshape(len(x), -1)


def split_confidence(confidence: float) -> float:
    """The confidence of each of two tests whose union holds at ``confidence`` (Bonferroni)."""
    return 1.0 - (1.0 - confidence) / 2.0


def releases_are_float(target: Any, datasets: list, seed: RNGLike, n: int = PROBE) -> bool:
    """Whether ``n`` releases on each of ``datasets`` (drawn from ``seed``'s own streams) are floating point with
    many values, the releases the float attacks read."""
    seeds = as_seed_sequence(seed).spawn(len(datasets))
    draws = [draw_releases(target, d, n, rng=s) for d, s in zip(datasets, seeds)]
    return bool(float_choices(draws[0], *draws[1:]))


def _best_prefix(num: np.ndarray, den: np.ndarray, n_cal: int, n_test: int, delta: float, alpha: float):
    """(projected bound, codes) of the best event pooling the codes likeliest on the numerator side.

    Each code's denominator count is taken :data:`DEN_PRIOR` releases higher than seen, so that a code seen a few
    times on one side and never on the other adds its chance on the other side rather than nothing.
    """
    order = np.lexsort((-num, -num / (den + DEN_PRIOR)))
    order = order[(num + den)[order] >= MIN_COUNT][:MAX_CODES]
    if not len(order):
        return 0.0, order
    k_num = np.minimum(np.cumsum(num[order]) * n_test / n_cal, n_test)
    k_den = np.minimum(np.cumsum(den[order] + DEN_PRIOR) * n_test / n_cal, n_test)
    bounds = log_ratio_bound(cp_lower(k_num, n_test, alpha), cp_upper(k_den, n_test, alpha), delta)
    best = int(np.argmax(bounds))
    return float(bounds[best]), order[: best + 1]


def choose_event(x0: np.ndarray, x1: np.ndarray, *, n_test: int, delta: float, confidence: float) -> FloatEvent | None:
    """The float feature event whose calibration proportions, projected to ``n_test`` held-out releases per side,
    certify most; None when none certifies anything.  Reads calibration releases only."""
    x0, x1 = _columns(x0), _columns(x1)
    n_cal = min(len(x0), len(x1))
    alpha = (1.0 - confidence) / 2.0
    best = None
    for name, feature in FEATURES.items():
        for j in range(x0.shape[1]):
            f0, f1 = feature(x0[:n_cal, j]), feature(x1[:n_cal, j])
            codes, inverse = np.unique(np.concatenate([f0, f1]), return_inverse=True)
            c0 = np.bincount(inverse[:n_cal], minlength=len(codes)).astype(float)
            c1 = np.bincount(inverse[n_cal:], minlength=len(codes)).astype(float)
            for on_d, num, den in ((True, c0, c1), (False, c1, c0)):
                value, picked = _best_prefix(num, den, n_cal, n_test, delta, alpha)
                if value > 0 and (best is None or value > best.projected):
                    best = FloatEvent(name, j, tuple(int(c) for c in codes[picked]), on_d, value)
    return best


def float_pass(target: Any, dataset: Any, neighbor: Any, *, epsilon: float, delta: float, confidence: float,
               samples: int, seed: RNGLike) -> dict:
    """Choose a float feature event on ``samples * CALIBRATION_SHARE`` releases per side, count it on the rest
    (fresh), and certify it at ``confidence``: the pass's verdict, bound, event and counts."""
    n_cal = max(int(samples * CALIBRATION_SHARE), 50)
    n_test = max(samples - n_cal, 50)
    s_cal0, s_cal1, s_test0, s_test1 = as_seed_sequence(seed).spawn(4)
    x0, x1 = draw_releases(target, dataset, n_cal, rng=s_cal0), draw_releases(target, neighbor, n_cal, rng=s_cal1)
    event = choose_event(x0, x1, n_test=n_test, delta=delta, confidence=confidence)
    out = {"verdict": verdict_of(False).value, "epsilon_lower_bound": 0.0, "attack": None, "event": None,
           "counts": None, "samples": n_cal + n_test, "confidence": confidence}
    if event is None:
        return out
    k0 = event.count(draw_releases(target, dataset, n_test, rng=s_test0))
    k1 = event.count(draw_releases(target, neighbor, n_test, rng=s_test1))
    k_num, k_den = (k0, k1) if event.on_d else (k1, k0)
    bound, verdict = certify_counts(k_num, n_test - k_num, k_den, n_test - k_den, PointClaim(epsilon, delta),
                                    confidence=confidence)
    value = float(bound.epsilon_lower_bound)
    out.update(verdict=verdict.value, epsilon_lower_bound=value, attack=event.feature,
               event=event.describe(), counts={"D": k0, "D'": k1, "held_out_per_side": n_test})
    return out
