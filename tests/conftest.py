"""Suite-wide settings.

Property-based tests are seeded like every other random test: the
default Hypothesis profile is derandomized, so `make test` and CI see the same
examples on every run.  To explore new examples locally, run
``DPAUDIT_HYPOTHESIS=explore make test`` (this is how the posterior-interval
rounding bug and the '~0' dataset-path crash were found).
"""

import os

from hypothesis import settings

settings.register_profile("seeded", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=1000)
settings.load_profile("explore" if os.environ.get("DPAUDIT_HYPOTHESIS") == "explore" else "seeded")

# Computed curves are cached on disk between processes (dpaudit.claims.cache_dir); the suite keeps its own
# cache, never the user's, so a run neither reads a stale one nor writes to the home directory.
if "DPAUDIT_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["DPAUDIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="dpaudit-test-cache-")
    atexit.register(shutil.rmtree, os.environ["DPAUDIT_CACHE_DIR"], ignore_errors=True)
