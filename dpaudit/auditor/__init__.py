"""The black-box auditor: :func:`audit` and its :class:`AuditReport`."""

from .pipeline import (
    DEFAULT_CALIBRATION_CAP,
    DEFAULT_CHUNK_SIZE,
    DEFAULT_SAMPLES_PER_CALL,
    DEFAULT_SAMPLES_VECTORISED,
    ESTIMATORS,
    audit,
)
from .report import TIMING_FIELDS, AuditReport

__all__ = [
    "audit",
    "AuditReport",
    "TIMING_FIELDS",
    "DEFAULT_SAMPLES_VECTORISED",
    "DEFAULT_SAMPLES_PER_CALL",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_CALIBRATION_CAP",
    "ESTIMATORS",
]
