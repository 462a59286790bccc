"""Loading an example script of ``experiments/`` as a module, for the tests that run it.

Importable from any test as ``from _examples import load_example`` (``tests/conftest.py`` puts this folder on the path).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


def load_example(relative: str, name: str):
    """The module of ``experiments/<relative>``, executed under ``name``."""
    spec = importlib.util.spec_from_file_location(name, EXPERIMENTS / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
