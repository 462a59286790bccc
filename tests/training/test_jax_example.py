"""experiments/training/jax_audit.py runs as its docstring says: where jax is installed.

jax is not a dependency of dpaudit, so without it this module is skipped whole (``make test`` has no jax).
About 20 s of CPU with it (most of it the audits' analysis): 2,200 white-box runs, audits of 2,000 and 5,000
runs per side (the second a ``size=`` target by vmap) and a one-run audit of 200 canaries.
"""

from __future__ import annotations

import numpy as np
import pytest
from _examples import load_example

pytest.importorskip("jax")


@pytest.fixture(scope="module")
def example():
    return load_example("training/jax_audit.py", "jax_audit")


def test_the_jax_recipe_moves_the_canary_parameter_as_dpsgd_does(example):
    with_canary = np.vstack([example.make_data(), example.GRAD_CANARY])
    updates = np.asarray(example.vmap_release()(with_canary, size=2000, rng=np.random.default_rng(0)))
    assert updates.shape == (2000, example.STEPS)
    # each step moves w_J by -LR (C [sampled] + N(0, sigma^2 C^2)) / B: mean -LR C Q / B, sd LR sigma C / B
    mean, sd = -example.LR * example.CLIP * example.Q / example.BATCH, example.LR * example.SIGMA / example.BATCH
    assert abs(updates.mean() - mean) < 5 * sd / np.sqrt(updates.size)    # fails with probability < 1e-6
    one = np.array([np.asarray(example.white_box(with_canary, rng=np.random.default_rng(s))) for s in range(200)])
    assert one.shape == (200, example.STEPS) and abs(one.mean() - mean) < 5 * sd / np.sqrt(one.size)


def test_the_jax_recipe_audits_without_a_violation_and_flags_the_unscaled_noise(example):
    data = example.make_data()
    with_canary = np.vstack([data, example.GRAD_CANARY])
    report = example.dpaudit.audit(example.white_box, with_canary, data, claim=example.CLAIM, samples=2000,
                                   seed=0, ideal=True)
    assert report.verdict == "no violation found"     # correct DP-SGD, seeded
    broken = example.vmap_release(clip=2.0, variant="noise-unscaled")
    report = example.dpaudit.audit(broken, with_canary, data, claim=example.CLAIM, samples=5000, seed=0,
                                   ideal=True)
    assert report.verdict == "violation"              # noise sigma instead of sigma C at C = 2, seeded
    one = example.one_run_audit(canaries=200, seed=0)
    assert one.verdict == "no violation found" and one.canaries == 200
