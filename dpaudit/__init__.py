"""dpaudit: measure, rather than trust, the privacy of differentially private mechanisms.

>>> import numpy as np, dpaudit
>>> def noisy_count(dataset, size=None, rng=None):
...     return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)
>>> report = dpaudit.audit(noisy_count, [0, 1], [0, 0], epsilon=1.0, samples=100_000, seed=0)
>>> report.verdict, report.floating_point["attack"].startswith("float-")  # numpy's float noise leaks by its bits
('violation', True)
>>> dpaudit.audit(noisy_count, [0, 1], [0, 0], epsilon=1.0, samples=100_000, seed=0, ideal=True).verdict
'no violation found'
"""

from ._version import __version__
from .auditor import AuditReport, OneRunReport, Report, audit, audit_one_run, audit_scores, one_run
from .exceptions import (
    ConfigError,
    DatasetError,
    DPAuditError,
    ParameterTypeError,
    ParameterValueError,
    TargetError,
    TargetTimeoutError,
)
from .pair_search import SearchReport, search
from . import adapters as _adapters  # noqa: F401  registers diffprivlib.* / opendp.* (imports neither library)
from .mechanisms import compose, get_mechanism, list_mechanisms, postprocess, rr_debias, subsample
from .privacy import Neighbouring, PrivacyClaim
from .claims import Claim, PointClaim, parse_claim
from .targets import Target, load_target, parse_dataset
from . import testing  # noqa: E402, F401  dpaudit.testing.assert_dp; imports nothing heavy

__all__ = [
    "__version__",
    "audit",
    "audit_scores",
    "audit_one_run",
    "one_run",
    "OneRunReport",
    "AuditReport",
    "Report",
    "search",
    "SearchReport",
    "DPAuditError",
    "ParameterTypeError",
    "ParameterValueError",
    "ConfigError",
    "DatasetError",
    "TargetError",
    "TargetTimeoutError",
    "Neighbouring",
    "PrivacyClaim",
    "Claim",
    "PointClaim",
    "parse_claim",
    "Target",
    "load_target",
    "parse_dataset",
    "get_mechanism",
    "list_mechanisms",
    "compose",
    "subsample",
    "postprocess",
    "rr_debias",
]
