"""The DP-SGD lab's threat models and calibrated configurations, shared by the ``training`` YAML kind and
``experiments/training/``.

:data:`CURVE_THREATS` and :data:`VARIANT_THREATS` name what an auditor sees; :func:`curve_config` is the
configuration claiming an epsilon at delta 1e-5; :func:`one_run_audit` and :func:`sampler_check` audit a
configuration in one training run and by its batches.  Results are plain dicts (JSON).
"""

from __future__ import annotations

import time

import numpy as np

from .accounting import accountant_epsilon, noise_for_epsilon
from .canaries import GradientCanary, audit_dataset, opposing_records, outlier_canary
from .config import DPSGDConfig
from .dpsgd import batch_masks
from .sampler import audit_sampler
from .threats import BlackBoxRelease, WhiteBoxRelease

__all__ = [
    "CURVE_THREATS",
    "DELTA",
    "VARIANT_THREATS",
    "curve_config",
    "one_run_audit",
    "profile_ratio",
    "sampler_check",
]

DELTA = 1e-5
#: Few steps and a large rate: each step's canary signal is strong, so the audit gets close to the claim.
SAMPLING_RATE, STEPS = 0.5, 4


def curve_config(epsilon: float, *, sampling_rate: float = SAMPLING_RATE, steps: int = STEPS, **kw) -> DPSGDConfig:
    """The DP-SGD configuration claiming ``epsilon`` at delta 1e-5 (noise calibrated by the accountant)."""
    sigma = noise_for_epsilon(epsilon, DELTA, sampling_rate=sampling_rate, steps=steps)
    return DPSGDConfig(noise_multiplier=sigma, sampling_rate=sampling_rate, steps=steps, **kw)


def _white(c):
    return WhiteBoxRelease(c)


def _black_input(c):
    return BlackBoxRelease(c, outlier_canary(3))


CURVE_THREATS = {"white-box gradient canary": _white, "black-box input canary": _black_input}


def _adv_batch_clip(c):
    return WhiteBoxRelease(c, GradientCanary(0, magnitude=100.0),
                           base=np.vstack([audit_dataset(), opposing_records(0, count=60, magnitude=0.1, n_features=3)]))


def _adv_fixed_batches(c):
    return WhiteBoxRelease(c, GradientCanary(0), statistic="updates",
                           base=opposing_records(0, count=21, magnitude=1.0, n_features=3))


#: Threat models tried on every variant.  The last two use adversarial datasets (the white-box auditor
#: chooses the other records; Nasr et al. 2021): 60 small opposing gradient records, whose sum the batch
#: clip pins at -C, and 21 unit opposing records, whose split into fixed-size batches the canary changes.
VARIANT_THREATS = {
    "white-box LLR": _white,
    "white-box updates": lambda c: WhiteBoxRelease(c, statistic="updates"),
    "black-box gradient canary": lambda c: BlackBoxRelease(c),
    "black-box input canary": _black_input,
    "white-box, opposing records": _adv_batch_clip,
    "white-box, fixed-size batches": _adv_fixed_batches,
}


def profile_ratio(report, config) -> dict | None:
    """The profile point where the certified epsilon is the largest share of the accountant's (None if none)."""
    prof = report.privacy_profile
    best = None
    for d, lb in zip(prof["delta"], prof["epsilon"]):
        if d <= 0:
            continue
        acc = accountant_epsilon(config, d)
        if acc < 0.05:  # the accountant's epsilon is ~0 there: a ratio says nothing
            continue
        if best is None or lb / acc > best["ratio"]:
            best = {"delta": float(d), "certified": float(lb), "accountant": float(acc), "ratio": float(lb / acc)}
    return best


def one_run_audit(config: DPSGDConfig, *, canaries: int = 1000, seed: int = 0, delta: float = DELTA,
                  claim=None) -> dict:
    """One training run with ``canaries`` gradient canaries (each included with probability 1/2), white box.

    Each canary moves its own parameter, which no record of the base dataset moves, so the
    canaries' scores are independent given the inclusion bits (Steinke, Nasr and Jagielski 2023).
    The audit is against the accountant's epsilon at ``delta``, or against ``claim`` (a spec or
    curve, such as the accountant's whole curve) when given.
    """
    from .. import one_run
    from .threats import make_score, make_train

    base = audit_dataset()
    n_base = base.shape[1] - 1
    n_features = n_base + canaries
    data = np.column_stack([base[:, :n_base], np.zeros((len(base), canaries)), base[:, -1:]])
    rows = np.array([GradientCanary(n_base + j).row(n_features) for j in range(canaries)])
    score = make_score(config, n_features=n_features, white_box=True)
    t0 = time.perf_counter()
    rep = one_run(make_train(config, white_box=True), data, rows,
                  lambda model, row: score(model, GradientCanary(int(row[0]))),
                  **({"claim": claim} if claim is not None else
                     {"epsilon": accountant_epsilon(config, delta), "delta": delta}), seed=seed)
    return {"epsilon_lower_bound": rep.epsilon_lower_bound, "claimed_epsilon": rep.claimed_epsilon,
            "delta": delta, "canaries": canaries, "guesses": rep.guesses, "correct": rep.correct,
            "ceiling": rep.ceiling, "verdict": rep.verdict, "seconds": round(time.perf_counter() - t0, 2)}


def sampler_check(config: DPSGDConfig, *, n_records: int = 1000, steps: int = 1500, seed: int = 0) -> dict:
    """The loop's own batches (``steps`` of them over ``n_records`` records) against Poisson sampling at the accounted rate.

    No model is trained: :func:`~dpaudit.training.dpsgd.batch_masks` draws the batches exactly as the
    loop does, and :func:`~dpaudit.training.audit_sampler` tests them against the rate the accountant
    is given, so a loader that is not Poisson, or a claim computed at another rate, shows directly.
    """
    masks = np.stack([m[0] for m in batch_masks(config, n_records, steps=steps, rng=seed)])
    rep = audit_sampler(masks, n_records, rate=config.accounted_rate)
    return {"verdict": rep.verdict, "findings": list(rep.findings), "measured_rate_max": rep.measured_rate_max,
            "measured_rate": rep.measured_rate, "rate": rep.rate, "n_records": n_records, "steps": steps}
