"""The two held-out certificates side by side: two Clopper-Pearson intervals against the Poisson test.

For each row (a built-in with its own pair, or a DP-Sniper row as
``bench_attack_power.py`` builds it from ``configs/dp_sniper.yaml``) this runs the same seeded fixed-size
audits twice: once with the intervals only (the Poisson certificate switched
off) and once as shipped (the audit chooses the certificate on calibration
data), and prints the mean, spread and smallest bound of each and the
per-seed gain.  Same seeds, same calibration releases, so the difference is
the certificate (and the few releases the Poisson draw leaves out).

    python benchmarks/bench_certificate.py [--rows ReportNoisyMax1 SVT1 OneTimeRappor laplace]
                                           [--samples 1e6] [--seeds 4]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import dpaudit  # noqa: E402
from bench_attack_power import builtin_rows  # noqa: E402
from dpaudit.mechanisms import get_mechanism  # noqa: E402
from dpaudit.stats import selection  # noqa: E402


def _row(label: str, dp_sniper: dict):
    """(mechanism, pair, claimed epsilon, confidence) for a DP-Sniper label or a built-in name."""
    if label in dp_sniper:
        _, m, d, d2, _ = dp_sniper[label]
        return m, (d, d2), 0.1, 0.9  # DP-Sniper's table: every row claims 0.1, at confidence 0.9
    m = get_mechanism(label)
    return m, m.neighbouring_pair(), m.claim.point_epsilon, 0.95


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="+", default=["ReportNoisyMax1", "SVT1", "OneTimeRappor", "laplace"])
    parser.add_argument("--samples", type=float, default=1e6)
    parser.add_argument("--seeds", type=int, default=4)
    args = parser.parse_args(argv)
    shipped = selection.CalibrationRates.poisson_value

    def intervals_only(self, event):
        inequality, _ = shipped(self, event)
        return inequality, -1.0  # never better than the intervals

    print("| row | samples | intervals only: mean (sd, min) | as shipped: mean (sd, min) | gain per seed "
          "| certificates chosen |\n|---|---|---|---|---|---|")
    dp_sniper = {row[0]: row for row in builtin_rows()}
    for label in args.rows:
        m, (d, d2), eps, conf = _row(label, dp_sniper)
        out = {}
        t0 = time.perf_counter()
        for mode, fn in (("intervals", intervals_only), ("shipped", shipped)):
            selection.CalibrationRates.poisson_value = fn
            try:
                out[mode] = [dpaudit.audit(m, d, d2, epsilon=eps, samples=int(args.samples), confidence=conf,
                                           seed=s, ideal=True) for s in range(args.seeds)]
            finally:
                selection.CalibrationRates.poisson_value = shipped
        a = np.array([r.epsilon_lower_bound for r in out["intervals"]])
        b = np.array([r.epsilon_lower_bound for r in out["shipped"]])
        chosen = sorted({r.certificate for r in out["shipped"]})
        cell = lambda v: f"{v.mean():.4f} ({v.std():.4f}, {v.min():.4f})"  # noqa: E731
        print(f"| {label} | {int(args.samples):,} | {cell(a)} | {cell(b)} | {' '.join(f'{x:+.4f}' for x in b - a)} "
              f"| {', '.join(chosen)} |", flush=True)
        print(f"  ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
