"""What a survey finding's witness script prints: the releases on both datasets and the event that tells them apart.

A witness (written by ``experiments/library_survey/witness.py``, run in the library version's own
environment) draws releases on the found pair and calls :func:`show_leak`, which prints the most direct
evidence there is, then audits the pair with :func:`dpaudit.audit`:

- for a floating-point finding (attack ``float-*``): the releases' lowest-set-bit exponent ``e`` (the release is
  an odd multiple of ``2**e``; with the binade for ``float-binade-lsb``), tabulated on both sides, with the
  values only one side produces and one such release in hexadecimal (Mironov 2012);
- otherwise: the outcomes themselves when they are few (bit vectors, clipped counts), else threshold events
  ``x > t`` / ``x <= t`` on the coordinate whose means differ most; the events with the largest ratio of
  frequencies, and those seen on one side only.

Frequencies are counts, not a certificate: the audit that ends the witness is what bounds epsilon.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from typing import Any, Callable

import numpy as np

__all__ = ["draw", "show_leak", "events", "show_one", "certify"]


def draw(target: Callable, dataset: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` releases of ``target`` on ``dataset`` as an ``(n, k)`` float array (``rng`` passed when taken)."""
    takes_rng = "rng" in inspect.signature(target).parameters
    x = target(dataset, size=n, rng=rng) if takes_rng else target(dataset, size=n)
    x = np.asarray(x, dtype=float)
    return x.reshape(n, -1)


def _features(x0: np.ndarray, x1: np.ndarray, attack: str) -> tuple[list, list, str]:
    """Per release, the feature the float attack reads, on the coordinate whose features differ most."""
    from ..auditor.distinguishers.floating import LatticeScore, binade, lowest_set_bit_exponent

    col = LatticeScore().fit(x0, x1).column if x0.shape[1] > 1 else 0
    a, b = x0[:, col], x1[:, col]
    where = f" of coordinate {col}" if x0.shape[1] > 1 else ""
    if attack == "float-binade-lsb":
        f = [list(zip(binade(v).tolist(), lowest_set_bit_exponent(v).tolist())) for v in (a, b)]
        return f[0], f[1], f"(binade, lowest set bit exponent){where}"
    return (lowest_set_bit_exponent(a).tolist(), lowest_set_bit_exponent(b).tolist(),
            f"lowest set bit exponent e (release = odd multiple of 2^e){where}")


def events(f0: list, f1: list, top: int = 8) -> list[tuple[Any, int, int]]:
    """``(value, count on D, count on D')`` of the feature values whose frequencies differ most (one-sided first).

    >>> events([1, 1, 2], [2, 2, 3], top=2)
    [(1, 2, 0), (3, 0, 1)]
    """
    c0, c1 = Counter(f0), Counter(f1)
    n0, n1 = max(1, len(f0)), max(1, len(f1))

    def strength(v):
        p, q = (c0[v] + 0.5) / n0, (c1[v] + 0.5) / n1
        return (c0[v] == 0 or c1[v] == 0, abs(math.log(p / q)) * math.sqrt(c0[v] + c1[v]))

    keys = sorted(set(c0) | set(c1), key=lambda v: (strength(v), str(v)), reverse=True)
    return [(v, c0[v], c1[v]) for v in keys[:top]]


def _threshold_events(x0: np.ndarray, x1: np.ndarray, top: int) -> tuple[list, str]:
    col = int(np.argmax(np.abs(x0.mean(axis=0) - x1.mean(axis=0)))) if x0.shape[1] > 1 else 0
    a, b = x0[:, col], x1[:, col]
    grid = np.unique(np.quantile(np.concatenate([a, b]), np.linspace(0.01, 0.99, 99)))
    rows = []
    for t in grid:
        for name, m0, m1 in ((f"x > {t:.6g}", a > t, b > t), (f"x <= {t:.6g}", a <= t, b <= t)):
            rows.append((name, int(m0.sum()), int(m1.sum())))
    n0, n1 = len(a), len(b)

    def strength(r):
        _, k0, k1 = r
        one_sided = (k0 == 0) != (k1 == 0)
        return one_sided, k0 + k1 if one_sided else abs(math.log(((k0 + 0.5) / n0) / ((k1 + 0.5) / n1)))

    rows.sort(key=strength, reverse=True)
    kept, seen = [], set()
    for name, k0, k1 in rows:  # the strongest event of each direction and kind (one-sided or not)
        kind = (name.split()[1], k0 == 0, k1 == 0)
        if kind not in seen:
            seen.add(kind)
            kept.append((name, k0, k1))
    rows = kept
    where = f"coordinate {col} of the release" if x0.shape[1] > 1 else "the release"
    return rows[:top], f"threshold events on {where}"


def show_leak(x0: np.ndarray, x1: np.ndarray, attack: str | None, *, top: int = 8, out: Callable = print) -> None:
    """Print the events that tell ``x0`` (releases on D) from ``x1`` (on D'), as the module docstring says."""
    n0, n1 = len(x0), len(x1)
    example = None
    if attack and attack.startswith("float"):
        f0, f1, what = _features(x0, x1, attack)
        rows = events(f0, f1, top)
        out(f"{what}: the values whose frequencies differ most over {n0} releases on D, {n1} on D'")
        for value, k0, k1 in rows:
            if (k0 == 0) != (k1 == 0):
                side, x, f = ("D", x0, f0) if k1 == 0 else ("D'", x1, f1)
                r = x[f.index(value)]
                example = (f"  e.g. a release on {side} that the other side never produced: {r.tolist()}  "
                           f"({' '.join(float(v).hex() for v in r)})")
                break
    elif len({tuple(r) for r in x0.tolist()} | {tuple(r) for r in x1.tolist()}) <= 64:
        rows = events([tuple(r) for r in x0.tolist()], [tuple(r) for r in x1.tolist()], top)
        out(f"the release's outcomes whose frequencies differ most over {n0} releases on D, {n1} on D'")
    else:
        rows, what = _threshold_events(x0, x1, top)
        out(f"{what}: the events whose frequencies differ most over {n0} releases on D, {n1} on D'")
    out("  " + "event".ljust(40) + " " + "on D".rjust(8) + " " + "on D'".rjust(8) + "  ln(ratio)")
    for value, k0, k1 in rows:
        ratio = "only on D" if k1 == 0 else "only on D'" if k0 == 0 else f"{math.log((k0 / n0) / (k1 / n1)):+.2f}"
        out(f"  {str(value):<40} {k0:>8} {k1:>8}  {ratio}")
    if example:
        out(example)


def show_one(label: str, value: Any, *, out: Callable = print) -> None:
    """One release as numbers and as exact float hex, so a float leak's bit pattern is visible."""
    v = np.asarray(value, dtype=float).ravel()
    out(f"one call on {label}: {v.tolist()}  ({' '.join(float(x).hex() for x in v)})")


def certify(release: Callable, dataset: Any, neighbor: Any, *, epsilon: float, delta: float, max_samples: int,
            confidence: float, seed: int, ideal: bool, float_pass: bool = False, out: Callable = print) -> int:
    """The audit that certifies a witness's finding, printed in one line; the exit status (0: violation certified).

    One place for every generated witness script's last step, so the scripts hold only what is theirs.
    ``float_pass``: the finding is the survey's float pass's (:mod:`dpaudit.survey.float_pass`), which this runs
    instead of :func:`dpaudit.audit`, on ``max_samples`` releases per side.
    """
    import dpaudit

    if float_pass:
        from ..targets import load_target
        from .float_pass import float_pass as run_pass

        got = run_pass(load_target(release), dataset, neighbor, epsilon=epsilon, delta=delta, confidence=confidence,
                       samples=max_samples, seed=seed)
        out(f"float pass: {got['verdict']}; epsilon >= {got['epsilon_lower_bound']:.3f} (claimed {epsilon:g}, "
            f"confidence {confidence}, {got['samples']} releases per side); event: {got['event']}; held out: "
            f"{got['counts']}")
        return 0 if got["verdict"] == "violation" else 1
    report = dpaudit.audit(release, dataset, neighbor, epsilon=epsilon, delta=delta, max_samples=max_samples,
                           confidence=confidence, seed=seed, ideal=ideal)
    out(f"audit: {report.verdict}; epsilon >= {report.epsilon_lower_bound:.3f} (claimed {epsilon:g}, "
        f"confidence {confidence}, {report.samples} releases per side)")
    return 0 if report.violation else 1
