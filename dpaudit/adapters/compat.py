"""Let a library that no longer imports beside the installed scikit-learn import again.

diffprivlib 0.6.6 (its newest release) imports ``DOUBLE`` and ``DTYPE`` from
``sklearn.tree._tree`` in ``diffprivlib.models.forest``, and ``diffprivlib/__init__``
imports ``models``: with scikit-learn 1.9, which dropped those two names, ``import
diffprivlib`` and ``import diffprivlib.tools`` fail with ``ImportError: cannot import
name 'DOUBLE' from 'sklearn.tree._tree'``.  They were plain aliases of numpy dtypes
(``float64`` and ``float32``); :func:`fix_diffprivlib_import` puts them back.

``import dpaudit`` calls :func:`install_diffprivlib_import_fix`, so a user's own code
that imports diffprivlib after dpaudit (a target file given to ``dpaudit audit``, a
script or notebook that imports dpaudit first) imports it unchanged.  Code that
imports diffprivlib *before* dpaudit calls :func:`fix_diffprivlib_import` first.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys

import numpy as np

__all__ = ["fix_diffprivlib_import", "install_diffprivlib_import_fix"]

#: Names scikit-learn 1.9 removed from ``sklearn.tree._tree`` that diffprivlib 0.6.6 imports, with the
#: values they had up to scikit-learn 1.8 (``from numpy import float32 as DTYPE, float64 as DOUBLE``).
SKLEARN_TREE_ALIASES = {"DTYPE": np.float32, "DOUBLE": np.float64}


def fix_diffprivlib_import() -> tuple[str, ...]:
    """Make ``import diffprivlib`` work beside scikit-learn >= 1.9: restore ``sklearn.tree._tree``'s dtype aliases.

    Adds only the names in :data:`SKLEARN_TREE_ALIASES` that the installed scikit-learn lacks, with
    their old values, so it changes nothing for scikit-learn <= 1.8 and is safe to call any number of
    times.  Returns the names it added (empty when none was missing, or when scikit-learn is not
    installed: then diffprivlib cannot import anyway, and its own error says why).
    Why: diffprivlib 0.6.6's models import these aliases, and its ``__init__`` imports the models.

    Examples
    --------
    >>> from dpaudit.adapters.compat import fix_diffprivlib_import
    >>> added = fix_diffprivlib_import()  # ("DTYPE", "DOUBLE") with scikit-learn 1.9, unless already added
    >>> fix_diffprivlib_import()  # a second call has nothing left to add
    ()
    """
    try:
        tree = importlib.import_module("sklearn.tree._tree")
    except ImportError:
        return ()
    added = tuple(name for name in SKLEARN_TREE_ALIASES if not hasattr(tree, name))
    for name in added:
        setattr(tree, name, SKLEARN_TREE_ALIASES[name])
    return added


class _BeforeDiffprivlib(importlib.abc.MetaPathFinder):
    """A finder that finds nothing: it applies :func:`fix_diffprivlib_import` when ``diffprivlib`` is first looked up."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "diffprivlib":
            fix_diffprivlib_import()
        return None


def install_diffprivlib_import_fix() -> None:
    """Apply :func:`fix_diffprivlib_import` just before diffprivlib is first imported in this process.

    Imports nothing now (scikit-learn costs about a second to import); idempotent.  Does nothing
    for a diffprivlib already imported.
    """
    if not any(isinstance(finder, _BeforeDiffprivlib) for finder in sys.meta_path):
        sys.meta_path.insert(0, _BeforeDiffprivlib())
