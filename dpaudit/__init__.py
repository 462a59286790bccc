"""dpaudit: measure, rather than trust, the privacy of differentially private mechanisms."""

from ._version import __version__
from .exceptions import DPAuditError
from .privacy import Neighbouring, PrivacyClaim

__all__ = ["__version__", "DPAuditError", "Neighbouring", "PrivacyClaim"]
