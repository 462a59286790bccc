"""The auditor: :func:`audit` (draws its own releases), :func:`audit_scores` (scores given) and their :class:`AuditReport`."""

from .pipeline import (
    DEFAULT_CALIBRATION_CAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_SAMPLES_PER_CALL,
    DEFAULT_SAMPLES_VECTORISED,
    ESTIMATORS,
    audit,
)
from .report import TIMING_FIELDS, AuditReport, Report
from .one_run import OneRunReport, audit_one_run, one_run
from .scores import audit_scores

__all__ = [
    "audit",
    "audit_scores",
    "audit_one_run",
    "one_run",
    "OneRunReport",
    "AuditReport",
    "Report",
    "TIMING_FIELDS",
    "DEFAULT_SAMPLES_VECTORISED",
    "DEFAULT_SAMPLES_PER_CALL",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_CALIBRATION_CAP",
    "ESTIMATORS",
]
