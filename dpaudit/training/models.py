"""Models with per-example gradients, vectorised over a leading axis of independent runs.

Parameters are ``(R, P)`` arrays (R runs at once).  Each model returns, for a
batch mask, the *clipped sum* of per-example gradients without building the
``(R, n, P)`` tensor where its structure allows (a logistic-regression
gradient is a scalar times the input, so its norm and its clipped sum are a
norm and a matrix product), which is what makes thousands of runs cheap.

Data rows are ``[x_1, ..., x_d, y]`` with labels in {0, 1}.
"""

from __future__ import annotations

import numpy as np

__all__ = ["clipped_sum", "init_params", "logits", "n_params"]


def n_params(model: str, n_features: int, hidden: int) -> int:
    """Number of parameters: ``d + 1`` (logistic) or ``d h + 2 h + 1`` (MLP).

    >>> n_params("logistic", 3, 8), n_params("mlp", 3, 8)
    (4, 41)
    """
    return n_features + 1 if model == "logistic" else n_features * hidden + 2 * hidden + 1


def init_params(model: str, n_features: int, hidden: int, runs: int, *, rng) -> np.ndarray:
    """Initial parameters: zeros for logistic regression; small Gaussian weights for the MLP."""
    p = n_params(model, n_features, hidden)
    if model == "logistic":
        return np.zeros((runs, p))
    rng = np.random.default_rng(rng)
    theta = np.zeros((runs, p))
    theta[:, : n_features * hidden] = rng.normal(0.0, 1.0 / np.sqrt(max(n_features, 1)), (runs, n_features * hidden))
    theta[:, n_features * hidden + hidden: n_features * hidden + 2 * hidden] = rng.normal(
        0.0, 1.0 / np.sqrt(hidden), (runs, hidden))
    return theta


def _mlp_parts(theta, d, h):
    w1 = theta[:, : d * h].reshape(-1, d, h)
    b1 = theta[:, d * h: d * h + h]
    w2 = theta[:, d * h + h: d * h + 2 * h]
    b2 = theta[:, -1]
    return w1, b1, w2, b2


def logits(model: str, theta: np.ndarray, x: np.ndarray, hidden: int) -> np.ndarray:
    """``(R, n)`` logits of ``x`` (``(n, d)``) under each run's parameters."""
    if model == "logistic":
        return theta[:, :-1] @ x.T + theta[:, -1:]
    w1, b1, w2, b2 = _mlp_parts(theta, x.shape[1], hidden)
    a = np.tanh(np.einsum("nd,rdh->rnh", x, w1) + b1[:, None, :])
    return np.einsum("rnh,rh->rn", a, w2) + b2[:, None]


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def clipped_sum(model: str, theta: np.ndarray, x: np.ndarray, y: np.ndarray, weight: np.ndarray,
                clip_norm: float | None, hidden: int) -> np.ndarray:
    """Sum over examples of ``weight * clip(grad)`` for each run: ``(R, P)``.

    ``weight`` is ``(R, n)`` (the batch mask, 0/1); ``clip_norm=None``
    sums the raw gradients (for a loop that clips the batch instead).
    """
    if model == "logistic":
        xa = np.concatenate([x, np.ones((x.shape[0], 1))], axis=1)  # (n, d+1)
        err = _sigmoid(theta[:, :-1] @ x.T + theta[:, -1:]) - y  # (R, n): the gradient is err * xa
        coef = weight * err
        if clip_norm is not None:
            norms = np.abs(err) * np.linalg.norm(xa, axis=1)
            coef = coef * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))
        return coef @ xa
    d, h = x.shape[1], hidden
    w1, b1, w2, b2 = _mlp_parts(theta, d, h)
    a = np.tanh(np.einsum("nd,rdh->rnh", x, w1) + b1[:, None, :])  # (R, n, h)
    err = _sigmoid(np.einsum("rnh,rh->rn", a, w2) + b2[:, None]) - y  # (R, n)
    dh = err[:, :, None] * w2[:, None, :] * (1.0 - a * a)  # (R, n, h): d loss / d pre-activation
    coef = weight
    if clip_norm is not None:
        sq = (np.sum(x * x, axis=1)[None, :] + 1.0) * np.sum(dh * dh, axis=2) + err * err * (np.sum(a * a, axis=2) + 1.0)
        coef = coef * np.minimum(1.0, clip_norm / np.maximum(np.sqrt(sq), 1e-300))
    cdh = coef[:, :, None] * dh
    g_w1 = np.einsum("nd,rnh->rdh", x, cdh).reshape(theta.shape[0], d * h)
    g_b1 = cdh.sum(axis=1)
    ce = coef * err
    g_w2 = np.einsum("rn,rnh->rh", ce, a)
    g_b2 = ce.sum(axis=1, keepdims=True)
    return np.concatenate([g_w1, g_b1, g_w2, g_b2], axis=1)
