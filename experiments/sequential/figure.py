"""The certified bound against releases per side, anytime-valid and planned looks, on NonDPLaplace1 at eps 0.1.

    PYTHONPATH=. python experiments/sequential/figure.py        # writes experiments/sequential/trajectory.png

Ten seeded anytime audits (their running bound after every look) and ten planned-looks audits
(``dpaudit.audit``'s default, bound after each round) of the same mechanism on D = (0), D' = (0, 1), with
the claim.  Each anytime line ends where it certified the violation.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import dpaudit  # noqa: E402

HERE = Path(__file__).resolve().parent


def non_dp_mean(dataset, size=None, rng=None):
    n = len(dataset)
    return float(np.sum(np.clip(dataset, 0, 1))) / n + rng.laplace(0.0, 1.0 / (0.1 * n), size=size)


def main() -> None:
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    for seed in range(1, 11):
        for stopping, colour in (("anytime", "tab:blue"), ("planned", "tab:orange")):
            r = dpaudit.audit(non_dp_mean, [0], [0, 1], epsilon=0.1, seed=seed, ideal=True, stopping=stopping,
                              max_samples=100_000)
            t = r.trajectory
            ax.step([0, *t["samples"]], [0.0, *t["epsilon_lower_bound"]], where="post", color=colour, alpha=0.6,
                    lw=1.2, label=f"{stopping} (10 seeds)" if seed == 1 else None)
            ax.plot(t["samples"][-1], t["epsilon_lower_bound"][-1], "o", color=colour, ms=3)
    ax.axhline(0.1, color="k", ls="--", lw=1, label="claim eps = 0.1")
    ax.set_xscale("log")
    ax.set_xlabel("releases drawn per side (calibration included)")
    ax.set_ylabel("certified epsilon lower bound")
    ax.set_title("NonDPLaplace1 (noise scaled by the true count), claim eps 0.1", fontsize=10)
    ax.legend(frameon=False, fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(HERE / "trajectory.png", dpi=150)


if __name__ == "__main__":
    main()
