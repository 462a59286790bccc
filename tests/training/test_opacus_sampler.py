"""The sampler check on Opacus' and torch's own loaders, as docs/training.md's recipes read them.

Skipped where torch or opacus is not installed (neither is a dependency; ``make test`` has neither).
1,500 steps over 1,000 records at rate 0.01, as in ``test_sampler.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

from opacus.data_loader import DPDataLoader  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset, WeightedRandomSampler  # noqa: E402

from dpaudit.training import audit_sampler  # noqa: E402

N, Q, B, EPOCHS = 1000, 0.01, 10, 15   # 100 steps an epoch: 1,500 steps


def recorded(loader, epochs=EPOCHS):
    """The recipe: every batch the loader's batch sampler yields, epoch after epoch."""
    return [list(idx) for _ in range(epochs) for idx in loader.batch_sampler]


@pytest.mark.filterwarnings("ignore")
def test_dp_data_loader_passes():
    """Poisson sampling: each seed raises a finding w.p. <= 0.05 (2.65% measured), so 2 of 3 w.p. < 0.003."""
    dataset = TensorDataset(torch.arange(N, dtype=torch.float32)[:, None])
    flagged = 0
    for seed in range(3):
        loader = DPDataLoader(dataset, sample_rate=Q, generator=torch.Generator().manual_seed(seed))
        batches = recorded(loader)
        assert len(batches) == EPOCHS * int(1 / Q)
        flagged += audit_sampler(batches, N, rate=Q).violation
    assert flagged <= 1


@pytest.mark.filterwarnings("ignore")
def test_weighted_random_sampler_is_flagged():
    dataset = TensorDataset(torch.arange(N, dtype=torch.float32)[:, None])
    weights = np.ones(N)
    weights[7] = 20.0
    sampler = WeightedRandomSampler(weights.tolist(), num_samples=N, replacement=True,
                                    generator=torch.Generator().manual_seed(0))
    report = audit_sampler(recorded(DataLoader(dataset, batch_size=B, sampler=sampler)), N, rate=Q)
    assert report.verdict == "violation"
    assert any("record 7 is over-sampled" in f for f in report.findings)
    assert any("fixed-size" in f or "vary too little" in f for f in report.findings)


@pytest.mark.filterwarnings("ignore")
def test_shuffled_data_loader_is_flagged():
    dataset = TensorDataset(torch.arange(N, dtype=torch.float32)[:, None])
    loader = DataLoader(dataset, batch_size=B, shuffle=True, generator=torch.Generator().manual_seed(0))
    report = audit_sampler(recorded(loader), N, batch_size=B)
    assert report.verdict == "violation"
    assert any("too regular" in f for f in report.findings)
