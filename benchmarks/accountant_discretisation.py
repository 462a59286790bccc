"""DP-SGD accountant curve: accuracy and time of the PLD discretisation (docs/decisions/accountant-discretisation.md).

For a few DP-SGD configurations, builds the curve the way a ``dpsgd:`` claim does (compose, epsilon at the
delta floor, delta on a 400-point epsilon grid) at value discretisations 1e-3 and 1e-4, and compares their
epsilon at a few deltas with a 1e-5 reference (all pessimistic: never below the exact curve).  One process,
no disk cache.  Run: ``python benchmarks/accountant_discretisation.py``.
"""

from __future__ import annotations

import time


CONFIGS = [  # (noise, rate, steps)
    (1.0, 0.1, 10),          # the claims' doctest curve
    (2.385, 0.5, 4),         # the training lab at epsilon 2
    (0.9, 0.1, 10),          # golden audit_curve_dpsgd's target
    (1.1, 0.01, 10_000),     # a typical DP-SGD run
    (0.5, 0.01, 1_000),      # little noise
]
DELTAS = (1e-10, 1e-5, 1e-3, 1e-2)
LEVELS = (1e-3, 1e-4)
REFERENCE = 1e-5


def curve(noise, rate, steps, discretisation):
    """(seconds, epsilon at each of DELTAS, read off the grid as a claim reads it)."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    from dpaudit.claims import DELTA_FLOOR, ProfileClaim, dpsgd_event
    from dpaudit.claims.base import epsilon_grid

    t0 = time.perf_counter()
    acc = pld_privacy_accountant.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
        value_discretization_interval=discretisation)
    acc.compose(dpsgd_event(noise, rate, steps))
    eps_max = float(acc.get_epsilon(DELTA_FLOOR))
    deltas, epsilons = epsilon_grid(acc._pld.get_delta_for_epsilon, eps_max)
    seconds = time.perf_counter() - t0
    claim = ProfileClaim(tuple(zip(epsilons.tolist(), deltas.tolist())))
    return seconds, [float(claim.epsilon(d)) for d in DELTAS]


def main() -> None:
    print("noise  rate   steps  | disc.  seconds | epsilon at delta " + ", ".join(f"{d:g}" for d in DELTAS)
          + " | largest excess over the 1e-5 reference")
    for noise, rate, steps in CONFIGS:
        _, ref = curve(noise, rate, steps, REFERENCE)
        for level in LEVELS:
            seconds, eps = curve(noise, rate, steps, level)
            excess = max(e - r for e, r in zip(eps, ref))
            print(f"{noise:<6g} {rate:<6g} {steps:<6d} | {level:<6g} {seconds:7.2f} | "
                  + ", ".join(f"{e:.4f}" for e in eps) + f" | {excess:.4f}")
        print(f"{'':21s} | ref    {'':7s} | " + ", ".join(f"{e:.4f}" for e in ref))


if __name__ == "__main__":
    main()
