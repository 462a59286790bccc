"""experiments/training/opacus_audit.py runs as its docstring says: where torch and opacus are installed.

Neither is a dependency of dpaudit, so without them this module is skipped whole (``make test`` has neither).
About 40 s of CPU: 300 white-box training runs, an audit of 300 runs per side and a one-run audit (one run).
"""

from __future__ import annotations

import numpy as np
import pytest
from _examples import load_example

pytest.importorskip("torch")
pytest.importorskip("opacus")


@pytest.fixture(scope="module")
def example():
    return load_example("training/opacus_audit.py", "opacus_audit")


@pytest.mark.filterwarnings("ignore")      # opacus' and torch's own warnings (secure RNG, backward hooks)
def test_the_opacus_recipe_moves_the_canary_parameter_as_dpsgd_does(example):
    rng = np.random.default_rng(0)
    data = example.make_data()
    with_canary = np.vstack([data, example.GRAD_CANARY])
    updates = np.array([np.asarray(example.white_box(with_canary, rng=rng)) for _ in range(300)])
    assert updates.shape == (300, example.STEPS)
    # each step moves w_J by -LR (C [sampled] + N(0, sigma^2 C^2)) / B: mean -LR C Q / B, sd LR sigma C / B
    mean, sd = -example.LR * example.CLIP * example.Q / example.BATCH, example.LR * example.SIGMA / example.BATCH
    assert abs(updates.mean() - mean) < 5 * sd / np.sqrt(updates.size)    # fails with probability < 1e-6


@pytest.mark.filterwarnings("ignore")
def test_the_opacus_recipe_audits_without_a_violation(example):
    data = example.make_data()
    report = example.dpaudit.audit(example.white_box, np.vstack([data, example.GRAD_CANARY]), data,
                                   claim=example.CLAIM, samples=300, seed=0, ideal=True)
    assert report.verdict == "no violation found"     # correct DP-SGD, seeded
    one = example.one_run_audit(canaries=200, seed=0)
    assert one.verdict == "no violation found" and one.canaries == 200
