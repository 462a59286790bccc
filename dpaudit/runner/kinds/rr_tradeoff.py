"""Randomized response's privacy-accuracy trade-off (Warner 1965; Dwork and Roth 2014, section 3.2).

The survey, its debiased estimate, the estimate's exact error and the privacy
of one answer are in :mod:`dpaudit.mechanisms.rr_survey` (``second_coin:
fair`` or ``p``: the random answer's coin).

A trial simulates ``repetitions`` independent surveys with binomial draws and
records the pooled squared errors, so the summary's RMSE and its confidence
interval are exact sums over all trials.
"""

from __future__ import annotations

import math

import numpy as np

from ...exceptions import ConfigError
from ...mechanisms.rr_survey import (
    SECOND_COINS,
    debias,
    debiased_std,
    epsilon_of_p,
    p_of_epsilon,
    respondent_counts,
    simulate_rr_estimates,
)
from .._spec import Param
from .base import ExperimentKind, register_kind

__all__ = ["epsilon_of_p", "p_of_epsilon", "debiased_std", "debias", "simulate_rr_estimates"]


PARAMS = {
    "n": Param("int", 1000, low=1, help="respondents per survey"),
    "epsilon": Param("real", None, low=0, low_inclusive=False, nullable=True, help="privacy of one answer (or give p)"),
    "p": Param("real", None, low=0, high=1, low_inclusive=False, nullable=True, help="truth probability (instead of epsilon)"),
    "true_fraction": Param("real", 0.3, low=0, high=1, help="fraction of respondents whose bit is 1"),
    "repetitions": Param("int", 2000, low=1, help="independent surveys per trial"),
    "second_coin": Param("str", "fair", choices=SECOND_COINS, help="the random answer's coin"),
}


def _resolve_p(params: dict, path: str = "attack.params") -> tuple[float, float]:
    second = params["second_coin"]
    if params.get("p") is not None:
        if params.get("epsilon") is not None:
            raise ConfigError(f"{path}.p", "give either epsilon or p, not both")
        p = params["p"]
        return p, epsilon_of_p(p, second)
    eps = params.get("epsilon")
    if eps is None:
        raise ConfigError(f"{path}.epsilon", "expected a number > 0 (or give p instead), got None")
    if second == "p" and eps <= math.log(2):
        raise ConfigError(f"{path}.epsilon", f"expected a number > ln 2 = 0.693 for second_coin 'p', got {eps!r}")
    return p_of_epsilon(eps, second), eps


def check_params(params: dict, path: str = "attack.params") -> None:
    _resolve_p(params, path)


def run_trial(config: dict, mechanism, seed) -> dict:
    params = config["attack"]["params"]
    p, eps = _resolve_p(params)
    rng = np.random.default_rng(seed)
    est = simulate_rr_estimates(
        n=params["n"], p=p, true_fraction=params["true_fraction"], repetitions=params["repetitions"],
        second_coin=params["second_coin"], rng=rng,
    )
    n1, _ = respondent_counts(params["n"], params["true_fraction"])
    err = est - n1 / params["n"]
    sq = err * err
    return {
        "n": params["n"],
        "p": p,
        "epsilon": eps,
        "true_fraction": n1 / params["n"],
        "repetitions": params["repetitions"],
        "sum_error": float(err.sum()),
        "sum_squared_error": float(sq.sum()),
        "sum_fourth_error": float((sq * sq).sum()),
        "rmse": float(math.sqrt(sq.mean())),
        "theoretical_std": debiased_std(params["n"], p, params["true_fraction"], params["second_coin"]),
    }


def pooled_rmse(trials: list[dict], confidence: float = 0.95) -> dict:
    """RMSE over every survey of every trial, with a normal-approximation interval.

    The mean squared error is a mean of ``N`` i.i.d. squared errors, so its
    standard error is ``sd(err^2) / sqrt(N)``; the interval is mapped through
    the square root.
    """
    from scipy.stats import norm

    count = sum(t["repetitions"] for t in trials)
    mse = sum(t["sum_squared_error"] for t in trials) / count
    m4 = sum(t["sum_fourth_error"] for t in trials) / count
    se = math.sqrt(max(m4 - mse * mse, 0.0) / count)
    z = float(norm.ppf(0.5 + confidence / 2))
    return {
        "rmse": math.sqrt(mse),
        "rmse_low": math.sqrt(max(mse - z * se, 0.0)),
        "rmse_high": math.sqrt(mse + z * se),
        "bias": sum(t["sum_error"] for t in trials) / count,
        "surveys": count,
        "interval_confidence": confidence,
    }


register_kind(
    ExperimentKind(
        name="rr_tradeoff",
        description="randomized response: error of the debiased estimate against epsilon and n (Warner 1965)",
        section="attack",
        params=PARAMS,
        run_trial=run_trial,
        figures=("rr_tradeoff",),
        extra={"check": check_params, "aggregate": pooled_rmse},
    )
)
