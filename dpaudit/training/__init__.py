"""A DP-SGD lab to audit: numpy DP-SGD (correct and known-broken), its accountant's claim, canaries and threat models.

>>> import dpaudit
>>> from dpaudit.training import DPSGDConfig, WhiteBoxRelease, accountant_epsilon
>>> cfg = DPSGDConfig(noise_multiplier=2.385, sampling_rate=0.5, steps=4)
>>> round(accountant_epsilon(cfg, 1e-5), 2)
2.0
>>> release = WhiteBoxRelease(cfg)
>>> report = dpaudit.audit(release, *release.neighbouring_pair(), epsilon=2.0, delta=1e-5,
...                        samples=20_000, seed=0, ideal=True)
>>> report.verdict
'no violation found'
"""

from .accounting import (
    accountant_claim,
    accountant_epsilon,
    accountant_profile,
    dpsgd_event,
    noise_for_epsilon,
    shuffle_max_epsilon,
)
from .canaries import (
    GradientCanary,
    InputCanary,
    audit_dataset,
    mislabelled_canary,
    opposing_records,
    outlier_canary,
)
from .config import MODELS, DPSGDConfig, Variant
from .dpsgd import GRADIENT_LABEL, TrainingRuns, train_runs
from .sampler import SamplerReport, audit_sampler
from .threats import (
    STATISTICS,
    BlackBoxRelease,
    WhiteBoxRelease,
    make_score,
    make_train,
    updates_statistic,
)

__all__ = [
    "GRADIENT_LABEL",
    "MODELS",
    "STATISTICS",
    "SamplerReport",
    "BlackBoxRelease",
    "DPSGDConfig",
    "GradientCanary",
    "InputCanary",
    "TrainingRuns",
    "Variant",
    "WhiteBoxRelease",
    "accountant_claim",
    "accountant_epsilon",
    "accountant_profile",
    "audit_dataset",
    "audit_sampler",
    "dpsgd_event",
    "make_score",
    "make_train",
    "mislabelled_canary",
    "noise_for_epsilon",
    "opposing_records",
    "outlier_canary",
    "shuffle_max_epsilon",
    "train_runs",
    "updates_statistic",
]
