"""experiments/training/tuning.py: the best-of-K procedure as a target, and the claims it is audited against.

The audit itself (minutes) is the experiment; these check its pieces on a few thousand runs, seeded.
"""

from __future__ import annotations

import numpy as np
import pytest
from _examples import load_example


@pytest.fixture(scope="module")
def tuning():
    return load_example("training/tuning.py", "tuning_example")


def test_one_learning_rate_is_one_run(tuning):
    """K = 1: the release is one run's canary score, Binomial(T, q) + N(0, T sigma^2) with the canary, else the noise."""
    t = tuning.BestOfK(1, twin=True)
    d, d2 = t.neighbouring_pair()
    cfg = t.config
    sd = np.sqrt(cfg.steps) * cfg.noise_multiplier
    with_c, without = t(d, size=4000, rng=0), t(d2, size=4000, rng=1)
    # means T q and 0, each estimated to within sd / sqrt(4000) x 5 (fails w.p. < 1e-6)
    assert abs(with_c.mean() - cfg.steps * cfg.sampling_rate) < 5 * sd / np.sqrt(4000)
    assert abs(without.mean()) < 5 * sd / np.sqrt(4000)


def test_the_twin_makes_the_choice_read_the_canary(tuning):
    """Without the canary, the released score of best-of-4 is one run's (no twin) or near the max of 4 (twin)."""
    sd = np.sqrt(4) * tuning.BestOfK(4, twin=False).config.noise_multiplier
    plain = tuning.BestOfK(4, twin=False)
    twin = tuning.BestOfK(4, twin=True)
    a = plain(plain.neighbouring_pair()[1], size=4000, rng=2)
    b = twin(twin.neighbouring_pair()[1], size=4000, rng=2)
    assert abs(a.mean()) < 5 * sd / np.sqrt(4000)      # the choice does not read the canary's parameter
    assert b.mean() > 0.8 * 1.0294 * sd                 # E[max of 4 N(0, sd^2)] = 1.0294 sd


def test_the_composed_claim_is_k_times_the_steps(tuning):
    cfg = tuning.BestOfK(1, twin=False).config
    c = tuning.claims(4, cfg)
    assert c["composed"].steps == 4 * cfg.steps and c["per_run"].steps == cfg.steps
    assert c["composed"].epsilon(1e-5) > c["per_run"].epsilon(1e-5)
    assert list(tuning.learning_rates(3)) == [0.3, 0.5, 0.7] and list(tuning.learning_rates(1)) == [0.5]
