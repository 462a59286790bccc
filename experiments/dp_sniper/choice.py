"""What each distinguisher's chosen event would certify on a DP-Sniper row, without drawing the held-out set.

    python experiments/dp_sniper/choice.py --rows SVT3 --seeds 0 1 2
    python experiments/dp_sniper/choice.py --rows SVT3 SVT34Parallel --calibration 4e6 --held-out 6e6

For each seed it draws the calibration pool (``--calibration`` releases per
side, split in halves as the audit splits it), fits every distinguisher
``auto`` would try (and ``--attacks``), chooses each one's event on the
selection half exactly as the audit does for ``--held-out`` held-out releases
per side, and values the chosen event at expected counts on that held-out
size (``ceiling.best_event_bound`` of the event and its complement).  The
event's probabilities are exact where ``ceiling.py`` has them on a grid of
releases (SVT3: the position and value of the first above answer), else
estimated on ``--fresh`` fresh releases per side.  The row ``auto`` is the
distinguisher ``auto`` chooses.  Only calibration data choose anything here,
so the numbers are what an audit of that size would certify on average.
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


def event_value(p0: float, p1: float, n_test: int, confidence: float) -> float:
    from ceiling import best_event_bound

    return best_event_bound(np.array([p0, 1 - p0]), np.array([p1, 1 - p1]), n_test, confidence)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", nargs="+", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--calibration", type=float, default=1e6, help="calibration releases per side (both halves)")
    ap.add_argument("--held-out", type=float, default=9e6)
    ap.add_argument("--fresh", type=float, default=2e6, help="fresh releases per side to value an event")
    ap.add_argument("--attacks", nargs="*", default=[], help="distinguishers tried beside auto's")
    ap.add_argument("--only", nargs="*", default=None, help="only these distinguishers (no auto row)")
    ap.add_argument("--confidence", type=float, default=0.9)
    args = ap.parse_args(argv)

    import sys

    sys.path.insert(0, str(HERE))
    from dpaudit.auditor.distinguishers import auto_choices
    from dpaudit.auditor.pipeline import choose_test
    from dpaudit.mechanisms import get_mechanism

    config = yaml.safe_load((HERE / "dp_sniper.yaml").read_text())
    entries = {e["label"]: e for e in config["mechanisms"]}
    n_cal, n_test = int(args.calibration), int(args.held_out)
    for label in args.rows:
        e = entries[label]
        mech = get_mechanism(e["mechanism"], **e["params"])
        d, d2 = mech.neighbouring_pair()
        grid = svt3_grid(mech, d, d2) if e["mechanism"] == "svt_lyu_alg3" else None
        for seed in args.seeds:
            rng = np.random.default_rng([seed, 50])
            pool = (np.asarray(mech(d, size=n_cal, rng=rng), float), np.asarray(mech(d2, size=n_cal, rng=rng), float))
            if grid is None:
                n_f = int(args.fresh)
                fresh = (np.asarray(mech(d, size=n_f, rng=rng), float), np.asarray(mech(d2, size=n_f, rng=rng), float))
            names = list(auto_choices("vector", pool[0][: n_cal // 2])) + [a for a in args.attacks]
            names = list(dict.fromkeys(args.only or names))
            results = {}
            for name in names:
                t = time.perf_counter()
                test = choose_test((name,), pool, confidence=args.confidence, full=False, n_test=n_test, delta=0.0)
                fit_s = time.perf_counter() - t
                if grid is None:
                    p0 = float(np.mean(test.event.guess_d(test.scorer.score(fresh[0]))))
                    p1 = float(np.mean(test.event.guess_d(test.scorer.score(fresh[1]))))
                else:
                    hit = test.event.guess_d(test.scorer.score(grid[0]))
                    p0, p1 = float(grid[1][hit].sum()), float(grid[2][hit].sum())
                results[name] = (test.value, event_value(p0, p1, n_test, args.confidence), fit_s)
            chosen = max(names, key=lambda n: (results[n][0], -names.index(n)))
            for name in names:
                sel, val, s = results[name]
                mark = " <- auto" if name == chosen and not args.only else ""
                print(f"{label} seed {seed} {name:>20}: selection {sel:.4f}  expected held-out {val:.4f}  "
                      f"fit+choose {s:.1f} s{mark}", flush=True)


if __name__ == "__main__":
    main()
