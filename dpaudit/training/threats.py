"""Threat models: what an auditor sees of a training run, as a target, a ``train`` callable or a score.

*White box*: every iterate (Nasr et al. 2021, 2023), so each step's noisy
update is seen; with a gradient canary the release is the T updates along the
canary's direction, or a statistic of them.  *Black box*: the final model
only, queried on the canary.

A release object is a target in dpaudit's sense: ``release(dataset, size=n,
rng=...)`` returns n releases stacked, each from an independent training
run; the neighbouring pair is the dataset with and without the canary's row
(:meth:`WhiteBoxRelease.neighbouring_pair`), so ``dpaudit.audit(release,
epsilon=...)`` audits the training code.  For one-run audits (Steinke, Nasr
and Jagielski 2023), :func:`make_train` gives ``train(data, rng=...)`` returning
the model as a 1-D array and :func:`make_score` gives ``score(model, canary)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_choice, check_int
from ..exceptions import ParameterTypeError, ParameterValueError
from . import models
from .canaries import GradientCanary, InputCanary, audit_dataset
from .config import DPSGDConfig
from .dpsgd import train_runs

__all__ = ["STATISTICS", "BlackBoxRelease", "WhiteBoxRelease", "make_score", "make_train", "updates_statistic"]

#: White-box statistics of the T updates along the canary direction.
STATISTICS = ("llr", "updates", "max", "sum")


def updates_statistic(u: np.ndarray, config: DPSGDConfig, statistic: str) -> np.ndarray:
    """Reduce updates ``u`` (``(n, T)``, in units of C) to the release.

    ``"llr"``: the log-likelihood ratio of "canary present" for correct
    DP-SGD, ``sum_t log(1 - q + q exp((u_t - 1/2) / sigma^2))``, the most
    powerful test there (Neyman-Pearson); ``"updates"``: the T-vector itself;
    ``"max"``: the largest update; ``"sum"``: their total (what the final model
    shows).

    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=1.0, steps=2)
    >>> updates_statistic(np.array([[0.5, 1.5]]), cfg, "llr").tolist()  # q = 1: sum of (u - 1/2)
    [1.0]
    """
    if statistic == "updates":
        return u
    if statistic == "max":
        return u.max(axis=1)
    if statistic == "sum":
        return u.sum(axis=1)
    q, s2 = config.sampling_rate, config.noise_multiplier ** 2
    a = (u - 0.5) / s2
    if q >= 1.0:
        return a.sum(axis=1)
    return np.logaddexp(np.log1p(-q), np.log(q) + a).sum(axis=1)


class _CanaryPair:
    """The base dataset (default :func:`audit_dataset`) and the add/remove pair with the canary's row."""

    def _set_base(self):
        object.__setattr__(self, "base", audit_dataset() if self.base is None else _check_dataset(self.base))

    def neighbouring_pair(self):
        """``(base + canary, base)``: add/remove neighbours."""
        return np.vstack([self.base, self.canary.row(self.base.shape[1] - 1)]), self.base.copy()


def _check_dataset(dataset) -> np.ndarray:
    data = np.asarray(dataset, dtype=float)
    if data.ndim != 2:
        raise ParameterValueError(f"dataset must be 2-D rows [features..., label]; got shape {data.shape}")
    return data


@dataclass(frozen=True)
class WhiteBoxRelease(_CanaryPair):
    """Release of a white-box auditor with a gradient canary: the canary-direction updates of one training run.

    Parameters
    ----------
    config : DPSGDConfig
    canary : GradientCanary
    statistic : {"llr", "updates", "max", "sum"}
        See :func:`updates_statistic`.
    base : array_like, optional
        The dataset without the canary; default :func:`audit_dataset` (20
        records, 3 features, feature 0 unused).

    Examples
    --------
    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.5, steps=4)
    >>> rel = WhiteBoxRelease(cfg, GradientCanary(0))
    >>> d_in, d_out = rel.neighbouring_pair()
    >>> len(d_in) - len(d_out), rel(d_in, size=3, rng=0).shape
    (1, (3,))
    """

    config: DPSGDConfig
    canary: GradientCanary = field(default_factory=GradientCanary)
    statistic: str = "llr"
    base: np.ndarray | None = None

    def __post_init__(self):
        if not isinstance(self.canary, GradientCanary):
            raise ParameterTypeError(f"canary must be a GradientCanary; got {type(self.canary).__name__}")
        check_choice(self.statistic, "statistic", STATISTICS)
        self._set_base()

    def __call__(self, dataset, *, size=None, rng=None):
        n = 1 if size is None else check_int(size, "size", low=1)
        runs = train_runs(_check_dataset(dataset), self.config, runs=n, rng=rng, trace=True)
        u = runs.updates()[:, :, self.canary.index]
        out = updates_statistic(u, self.config, self.statistic)
        return out if size is not None else out[0]

    def to_dict(self) -> dict:
        return {"threat": "white-box", "config": self.config.to_dict(), "canary": self.canary.to_dict(),
                "statistic": self.statistic, "n_records": len(self.base)}


@dataclass(frozen=True)
class BlackBoxRelease(_CanaryPair):
    """Release of a black-box auditor: the final model's score on the canary, one per training run.

    For an input canary, the logit toward its label; for a gradient canary,
    minus its parameter scaled to units of C (both: higher means "more
    likely trained on").

    Examples
    --------
    >>> from dpaudit.training.canaries import outlier_canary
    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.5, steps=4)
    >>> rel = BlackBoxRelease(cfg, outlier_canary(3))
    >>> rel(rel.neighbouring_pair()[0], size=2, rng=0).shape
    (2,)
    """

    config: DPSGDConfig
    canary: GradientCanary | InputCanary = field(default_factory=GradientCanary)
    base: np.ndarray | None = None

    def __post_init__(self):
        if not isinstance(self.canary, (GradientCanary, InputCanary)):
            raise ParameterTypeError(f"canary must be a GradientCanary or InputCanary; got {type(self.canary).__name__}")
        self._set_base()

    def __call__(self, dataset, *, size=None, rng=None):
        n = 1 if size is None else check_int(size, "size", low=1)
        data = _check_dataset(dataset)
        params = train_runs(data, self.config, runs=n, rng=rng).params
        out = _final_score(params, self.canary, self.config, data.shape[1] - 1)
        return out if size is not None else out[0]

    def to_dict(self) -> dict:
        return {"threat": "black-box", "config": self.config.to_dict(), "canary": self.canary.to_dict(),
                "n_records": len(self.base)}


def _final_score(params: np.ndarray, canary, config: DPSGDConfig, n_features: int) -> np.ndarray:
    if isinstance(canary, GradientCanary):
        return -params[:, canary.index] * (config.batch_size / (config.learning_rate * config.clip_norm))
    x = np.asarray(canary.features, dtype=float)[None, :]
    z = models.logits(config.model, params, x, config.hidden)[:, 0]
    return z if canary.label == 1 else -z


def make_train(config: DPSGDConfig, *, white_box: bool = False):
    """``train(data, *, rng=None)`` -> the model as a 1-D array (final parameters, or every iterate concatenated).

    The callable a one-run audit calls once on the data plus the included canaries.

    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.5, steps=4)
    >>> make_train(cfg, white_box=True)(audit_dataset(), rng=0).shape  # (T + 1) * P
    (20,)
    """
    def train(data, *, rng=None):
        runs = train_runs(data, config, runs=1, rng=rng, trace=white_box)
        return (runs.iterates if white_box else runs.params)[0].ravel()

    train.__name__ = f"train_{'white' if white_box else 'black'}_box"
    return train


def make_score(config: DPSGDConfig, *, n_features: int, white_box: bool = False, statistic: str = "llr"):
    """``score(model, canary)`` for models from :func:`make_train`: higher means "more likely included".

    White box: the statistic of the canary-direction updates (gradient
    canaries; input canaries are scored on the final iterate).  Black box:
    the final model's score as in :class:`BlackBoxRelease`.

    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.5, steps=4)
    >>> model = make_train(cfg, white_box=True)(audit_dataset(), rng=0)
    >>> float(make_score(cfg, n_features=3, white_box=True)(model, GradientCanary(0))) < 50
    True
    """
    check_choice(statistic, "statistic", ("llr", "max", "sum"))
    p = models.n_params(config.model, n_features, config.hidden)

    def score(model, canary):
        theta = np.asarray(model, dtype=float).reshape(-1, p)
        if white_box and isinstance(canary, GradientCanary):
            u = -np.diff(theta[:, canary.index]) * (config.batch_size / (config.learning_rate * config.clip_norm))
            return float(updates_statistic(u[None, :], config, statistic)[0])
        return float(_final_score(theta[-1:], canary, config, n_features)[0])

    return score
