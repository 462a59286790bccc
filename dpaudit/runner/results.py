"""Results on disk, under the runner's old import path (the code lives in :mod:`dpaudit.results`).

The runner writes results and :mod:`dpaudit.plots` reads them; both import
:mod:`dpaudit.results`, so plotting never imports the runner.
"""

from ..results import (  # noqa: F401 - re-exported
    CONFIG_FILE,
    SUMMARY_FILE,
    TRIALS_FILE,
    Results,
    TrialLog,
    atomic_write_text,
    load_results,
    read_trials,
)

__all__ = [
    "CONFIG_FILE",
    "TRIALS_FILE",
    "SUMMARY_FILE",
    "atomic_write_text",
    "read_trials",
    "TrialLog",
    "Results",
    "load_results",
]
