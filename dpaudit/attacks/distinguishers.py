"""Moved: the distinguishers serve the auditor and live in :mod:`dpaudit.auditor.distinguishers`.

This module keeps the old import path working.
"""

from ..auditor.distinguishers import *  # noqa: F401,F403
from ..auditor.distinguishers import __all__  # noqa: F401
