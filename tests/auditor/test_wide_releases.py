"""Wide releases (hundreds to tens of thousands of coordinates): bounded memory, bounded fitting, valid bounds.

A 10,000-bin histogram used to stop with a 191 GiB MemoryError (Newton's Hessian of binned-logistic), after
chunks of 2^18 releases (21 GB) and per-coordinate float tables (4.5 GB at 1,000 coordinates).  Every audit
here is seeded, so each assertion is deterministic; a statistical assertion states its failure probability.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpaudit
import dpaudit.sampling as sampling
from dpaudit.auditor.distinguishers import auto_choices
from dpaudit.auditor.distinguishers._features import row_keys
from dpaudit.auditor.distinguishers.classifier import WIDE_CELLS, cell_bins
from dpaudit.auditor.distinguishers.vector import CoordinateScore
from dpaudit.mechanisms.float_safe import lattice_laplace
from dpaudit.stats import bound_from_scores

WIDTH = 600


def wide_histogram(dataset, size=None, rng=None):
    """A WIDTH-bin histogram with float-safe Laplace(1) noise on each bin: epsilon 1 for add/remove."""
    h = np.bincount(np.asarray(dataset, dtype=int), minlength=WIDTH).astype(float)
    n = 1 if size is None else size
    out = lattice_laplace(np.broadcast_to(h, (n, WIDTH)), 1.0, rng=rng)
    return out[0] if size is None else out


def test_memory_limits_keep_narrow_releases_as_they_were():
    assert sampling.memory_limits(8, 1 << 18, 10**6) == (1 << 18, 10**6)  # a scalar
    assert sampling.memory_limits(32 * 8, 1 << 18, 10**6) == (1 << 18, 10**6)  # 32 coordinates
    chunk, cap = sampling.memory_limits(10_000 * 8, 1 << 18, 10**6)
    assert chunk * 10_000 * 8 <= sampling.CHUNK_BYTES and cap * 10_000 * 8 <= sampling.POOL_BYTES
    assert sampling.memory_limits(10**9, 1 << 18, 10**6) == (1, sampling.MIN_POOL)


def test_the_width_probe_changes_no_report(monkeypatch):
    """The probe draws from its own seed stream, and 600 doubles are within the limits: with the limits
    skipped, the report is the same."""
    def run():
        r = dpaudit.audit(wide_histogram, [3, 7], [3], epsilon=0.5, samples=4_000, seed=2).to_dict()
        r.pop("elapsed_seconds")
        return r

    with_probe = run()
    monkeypatch.setattr(dpaudit.auditor.pipeline, "memory_limits", lambda row, chunk, cap: (chunk, cap))
    assert run() == with_probe


def test_a_wide_histogram_is_audited_in_bounded_memory(monkeypatch):
    """600 bins, one changed: the leak (epsilon 1 against a claim of 0.5) is certified; the calibration pool and
    the chunks are cut to the byte limits (here lowered to force them), and every size= call respects them."""
    sizes = []

    def recorded(dataset, size=None, rng=None):
        sizes.append(size)
        return wide_histogram(dataset, size=size, rng=rng)

    monkeypatch.setattr(sampling, "POOL_BYTES", 1_500 * WIDTH * 8)
    monkeypatch.setattr(sampling, "CHUNK_BYTES", 1_024 * WIDTH * 8)
    r = dpaudit.audit(recorded, [3, 7], [3], epsilon=0.5, samples=10_000, seed=1)
    assert r.verdict == "violation" and r.epsilon_lower_bound > 0.5
    assert r.n_calibration == 1_500
    assert max(s for s in sizes if s is not None) <= 1_024


def test_auto_leaves_the_cell_classifier_out_of_wide_vectors():
    rng = np.random.default_rng(0)
    assert "binned-logistic" in auto_choices("vector", rng.laplace(size=(200, WIDE_CELLS)))
    assert "binned-logistic" not in auto_choices("vector", rng.laplace(size=(200, WIDE_CELLS + 1)))
    assert cell_bins(16, 64) == 16 and cell_bins(16, WIDE_CELLS) == 2


def test_row_keys_of_many_coordinates_do_not_overflow():
    """17 codes in each of 256 coordinates: 10^315 possible keys, past float64 (numpy warned of the overflow)."""
    codes = np.random.default_rng(0).integers(0, 17, size=(50, 256))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keys = row_keys(codes, np.full(256, 17))
    assert len(np.unique(keys)) == 50


@pytest.mark.soundness
def test_coordinate_shortlist_soundness():
    """200 seeds of a 1-DP histogram (100 Laplace bins, one changed): the coordinate attack screened down to 4
    coordinates, fitted on 2,000 releases per side and certified on 4,000 held out, exceeds epsilon 1 in at
    most 5% of seeds (each does with probability <= 5%: the screen reads fitting releases only)."""
    exceed = 0
    for seed in range(200):
        rng = np.random.default_rng(9000 + seed)
        fit0, fit1 = rng.laplace(size=(2000, 100)), rng.laplace(size=(2000, 100))
        fit1[:, 37] += 1.0
        s = CoordinateScore(shortlist=4).fit(fit0, fit1)
        x0, x1 = rng.laplace(size=(4000, 100)), rng.laplace(size=(4000, 100))
        x1[:, 37] += 1.0
        exceed += bound_from_scores(s.score(x0), s.score(x1), confidence=0.95).epsilon_lower_bound > 1.0
    assert exceed <= 10, exceed


def test_narrow_dtypes_are_limited_at_the_bytes_they_are_fitted_in(monkeypatch):
    """Bool releases are fitted as float64, 8 bytes a coordinate: their pool is cut as 600 doubles' is (a pool
    of 20,000-coordinate bools limited at one byte each grew past 11 GB)."""
    def wide_bits(dataset, size=None, rng=None):
        n = 1 if size is None else size
        out = rng.random((n, WIDTH)) < 0.5
        out[:, 0] ^= rng.random(n) < (0.3 if len(dataset) > 1 else 0.0)
        return out[0] if size is None else out

    monkeypatch.setattr(sampling, "POOL_BYTES", 1_500 * WIDTH * 8)
    r = dpaudit.audit(wide_bits, [3, 7], [3], epsilon=0.5, samples=10_000, seed=1)
    assert r.n_calibration == 1_500
