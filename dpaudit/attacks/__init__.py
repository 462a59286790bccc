"""Attacks: black-box distinguishers for the auditor, and the attacks on released statistics.

The distinguishers (:mod:`dpaudit.attacks.distinguishers`) turn releases into
scores for :func:`dpaudit.audit`.  The attacks on statistics live in their own
modules and are imported on use, so that the command line starts fast:
:mod:`~dpaudit.attacks.differencing`, :mod:`~dpaudit.attacks.reconstruction`,
:mod:`~dpaudit.attacks.census`, :mod:`~dpaudit.attacks.tracing`.
"""

from .distinguishers import ATTACKS, Distinguisher, list_attacks, make_distinguisher, register_attack

__all__ = ["ATTACKS", "Distinguisher", "list_attacks", "make_distinguisher", "register_attack"]
