"""DP-SGD in numpy, R independent runs at once.

One call trains R runs of the same configuration on the same data with
independent randomness (arrays carry a leading runs axis), which is what an
audit needs: thousands of models on D and on D'.  Runs are processed in
blocks of :data:`BLOCK` so memory stays bounded; the block size is fixed, so
the same ``rng`` gives the same models whatever ``runs`` is split into.

Data rows are ``[x_1, ..., x_d, y]``.  A row with label :data:`GRADIENT_LABEL`
(-1) is a *gradient record*: whatever the model, its gradient is the fixed
vector ``x_2 * C * e_j`` with ``j = int(x_1)`` (a Dirac canary, Nasr et al.
2021, 2023, or an adversary-crafted record).  Such rows are sampled, clipped
and noised like any other record, so the loop cannot tell them apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._rng import as_generator
from ..exceptions import ParameterValueError
from . import models
from .config import DPSGDConfig, Variant

__all__ = ["BLOCK", "GRADIENT_LABEL", "TrainingRuns", "batch_masks", "split_rows", "train_runs"]

#: The label that marks a gradient record.
GRADIENT_LABEL = -1.0
#: Runs trained together; part of the reproducibility key with the seed.
BLOCK = 2048


def split_rows(data, config: DPSGDConfig):
    """``(x, y, g)``: input records, their labels, and the gradient records' fixed vectors ``(n_g, P)``.

    Examples
    --------
    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.5, steps=2, clip_norm=2.0)
    >>> x, y, g = split_rows([[0.0, 1.0, 1.0], [1.0, 0.5, -1.0]], cfg)
    >>> x.shape, g.tolist()
    ((1, 2), [[0.0, 1.0, 0.0]])
    """
    data = np.asarray(data, dtype=float)
    if data.ndim != 2 or data.shape[1] < 2:
        raise ParameterValueError(f"data must be a 2-D array of rows [features..., label]; got shape {data.shape}")
    if not np.all(np.isfinite(data)):
        raise ParameterValueError("data contains NaN or infinite values")
    labels = data[:, -1]
    if not np.all(np.isin(labels, (0.0, 1.0, GRADIENT_LABEL))):
        raise ParameterValueError(f"data labels must be 0, 1 or {GRADIENT_LABEL:g} (a gradient record); "
                                  f"got {sorted(set(labels.tolist()) - {0.0, 1.0, GRADIENT_LABEL})[:5]}")
    d = data.shape[1] - 1
    p = models.n_params(config.model, d, config.hidden)
    grad_rows = data[labels == GRADIENT_LABEL]
    g = np.zeros((len(grad_rows), p))
    for i, row in enumerate(grad_rows):
        j = int(row[0])
        if j != row[0] or not 0 <= j < p:
            raise ParameterValueError(f"a gradient record's first entry is a parameter index in [0, {p}); got {row[0]!r}")
        g[i, j] = row[1] * config.clip_norm
    keep = labels != GRADIENT_LABEL
    return data[keep, :-1], data[keep, -1], g


@dataclass(frozen=True)
class TrainingRuns:
    """R trained models: final parameters ``(R, P)`` and, when traced, every iterate ``(R, T + 1, P)``."""

    config: DPSGDConfig
    params: np.ndarray
    iterates: np.ndarray | None = None

    def updates(self) -> np.ndarray:
        """Each step's noisy clipped gradient sum in units of C: ``(theta_t - theta_{t+1}) * B / (lr * C)``, ``(R, T, P)``."""
        if self.iterates is None:
            raise ParameterValueError("updates need the iterates: train with trace=True")
        c = self.config
        return -np.diff(self.iterates, axis=1) * (c.batch_size / (c.learning_rate * c.clip_norm))

    def to_dict(self) -> dict:
        return {"config": self.config.to_dict(), "runs": int(self.params.shape[0]),
                "n_params": int(self.params.shape[1]), "traced": self.iterates is not None}


def train_runs(data, config: DPSGDConfig, *, runs: int = 1, rng=None, trace: bool = False) -> TrainingRuns:
    """Train ``runs`` independent DP-SGD models on ``data``.

    Each step: draw the batch (Poisson with rate q, or a permutation's
    fixed-size batches for :attr:`Variant.SHUFFLE`), clip each example's
    gradient to ``C``, sum, add ``N(0, (sigma C)^2)`` per coordinate, divide by
    the public ``batch_size`` and step (Abadi et al. 2016).  A broken
    ``config.variant`` changes exactly the step it names.

    Parameters
    ----------
    data : array_like, shape (n, d + 1)
        Rows ``[features..., label]``; label -1 marks a gradient record.
    config : DPSGDConfig
    runs : int
        Independent runs trained at once.
    rng : numpy Generator, int or None
        All randomness (batches, noise, MLP initialisation).
    trace : bool
        Keep every iterate (white-box threat models need them).

    Examples
    --------
    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.5, steps=3)
    >>> out = train_runs([[0.0, 1.0, 1.0], [0.0, -1.0, 0.0]], cfg, runs=4, rng=0, trace=True)
    >>> out.params.shape, out.iterates.shape, out.updates().shape
    ((4, 3), (4, 4, 3), (4, 3, 3))
    """
    if not isinstance(config, DPSGDConfig):
        raise ParameterValueError(f"config must be a DPSGDConfig; got {type(config).__name__}")
    runs = int(runs)
    if runs < 1:
        raise ParameterValueError(f"runs must be >= 1; got {runs}")
    rng = as_generator(rng)
    x, y, g = split_rows(data, config)
    params, iterates = [], []
    for start in range(0, runs, BLOCK):
        p, it = _train_block(x, y, g, config, min(BLOCK, runs - start), rng, trace)
        params.append(p)
        iterates.append(it)
    return TrainingRuns(config, np.concatenate(params), np.concatenate(iterates) if trace else None)


def batch_masks(config: DPSGDConfig, n_records: int, *, runs: int = 1, rng=None, steps: int | None = None):
    """The loop's batches, one boolean mask ``(runs, n_records)`` per step (``steps``, default ``config.steps``).

    Poisson sampling at rate q, or for :attr:`Variant.SHUFFLE` the fixed-size batches of a fresh
    permutation per epoch of ``round(1 / q)`` batches.  :func:`train_runs` draws its batches here (a
    generator, so each step's batch is drawn just before that step's noise), and a sampler check
    (:func:`~dpaudit.training.audit_sampler`) reads the same batches.

    >>> cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.5, steps=2, variant="shuffle")
    >>> [int(m.sum()) for m in batch_masks(cfg, 10, rng=0)]
    [5, 5]
    """
    rng = as_generator(rng)
    n = int(n_records)
    shuffled = config.variant is Variant.SHUFFLE
    k = max(1, round(1.0 / config.sampling_rate))  # batches per epoch when shuffling
    batch_of = None
    for t in range(config.steps if steps is None else int(steps)):
        if shuffled:
            if t % k == 0:  # a fresh permutation; position i -> batch floor(i k / n)
                position = np.argsort(rng.random((runs, n)), axis=1).argsort(axis=1)
                batch_of = (position * k) // max(n, 1)
            yield batch_of == t % k
        else:
            yield rng.random((runs, n)) < config.sampling_rate


def _train_block(x, y, g, c: DPSGDConfig, r: int, rng, trace: bool):
    n_in, n = len(x), len(x) + len(g)
    theta = models.init_params(c.model, x.shape[1], c.hidden, r, rng=rng)
    p = theta.shape[1]
    per_example = c.variant is not Variant.BATCH_CLIP
    g_norm = np.linalg.norm(g, axis=1)
    g_used = g * np.minimum(1.0, c.clip_norm / np.maximum(g_norm, 1e-300))[:, None] if per_example else g
    std = c.noise_multiplier * (1.0 if c.variant is Variant.NOISE_UNSCALED else c.clip_norm)
    fixed_noise = rng.standard_normal((r, p)) if c.variant is Variant.REUSED_NOISE else None
    out = np.empty((r, c.steps + 1, p)) if trace else None
    if trace:
        out[:, 0] = theta
    masks = batch_masks(c, n, runs=r, rng=rng)
    for t in range(c.steps):
        mask = next(masks).astype(float)
        total = models.clipped_sum(c.model, theta, x, y, mask[:, :n_in], c.clip_norm if per_example else None,
                                   c.hidden) if n_in else np.zeros((r, p))
        if len(g):
            total = total + mask[:, n_in:] @ g_used
        if not per_example:  # the bug: clip the batch's sum, not each example
            norm = np.linalg.norm(total, axis=1, keepdims=True)
            total = total * np.minimum(1.0, c.clip_norm / np.maximum(norm, 1e-300))
        z = fixed_noise if fixed_noise is not None else rng.standard_normal((r, p))
        theta = theta - (c.learning_rate / c.batch_size) * (total + std * z)
        if trace:
            out[:, t + 1] = theta
    return theta, out
