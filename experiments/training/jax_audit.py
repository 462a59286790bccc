"""Audit your own DP-SGD written in plain JAX with dpaudit: white box, black box, ``size=`` targets, one run.

Not part of ``make test``: jax is not a dependency of dpaudit (nor of its ``all`` extra). Install it in a venv
of its own (the CPU build is about 620 MB):

    python3.11 -m venv /tmp/venv_jax
    /tmp/venv_jax/bin/pip install jax jaxlib     # checked: jax 0.10.2, CPU
    /tmp/venv_jax/bin/pip install -e .           # dpaudit, from the repository root
    /tmp/venv_jax/bin/python experiments/training/jax_audit.py --samples 10000 --vmap-samples 30000

Logistic regression on 200 synthetic records, DP-SGD at noise 2.385, Poisson rate 0.5, 4 steps, clip 1 (the
accountant's epsilon is 2 at delta 1e-5): the configuration of ``opacus_audit.py``. Per-example gradients by
``jax.vmap(jax.grad(loss))``, clipped to C, summed, plus N(0, (sigma C)^2) noise. Each audit claims the
accountant's whole curve (``dpsgd:noise=2.385,rate=0.5,steps=4``) with ``ideal=True`` (the algorithm, not
float32's bits).

The wrapping:

* JAX's random state comes from dpaudit's ``rng``: ``jax.random.key(rng.integers(2**63))``. Without
  ``jax_enable_x64`` the key keeps the seed's low 32 bits, so runs may repeat a key with probability about
  runs^2 / 2^33 (1e-3 for 3,000 runs, 0.1 for 30,000): a ``size=n`` target splits one key into n
  (``jax.random.split``), whose keys do not repeat.
* A gradient canary is a record marked by label -1: its per-example gradient is replaced by ``C x`` (``C e_J``
  for the canary's row ``e_J``) before clipping, noise and Poisson sampling treat it as any record. An input
  canary is an outlier record in a feature no other record uses.
* A ``size=n`` target is ``jax.vmap`` of the training run over n keys. Each new n compiles once (a sequential
  audit asks for about a dozen sizes) and holds n x records x d per-example gradients: pass ``chunk_size=`` to
  ``dpaudit.audit`` to bound n (default 262,144: 1.3 GB here).

A target may return jax arrays, in float32 or bfloat16 (dpaudit reads their numbers).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import dpaudit

SIGMA, Q, STEPS, CLIP, LR = 2.385, 0.5, 4, 1.0, 0.5
N, D = 200, 6                         # feature D-1 is zero in every record: the canary's own parameter
J = D - 1
BATCH = Q * N                         # the public expected batch size: the sum's divisor on every dataset
CLAIM = f"dpsgd:noise={SIGMA},rate={Q},steps={STEPS}"
INPUT_CANARY = np.r_[np.zeros(D - 1), 10.0, 1.0]    # an outlier along feature J, label 1
GRAD_CANARY = np.r_[np.zeros(D - 1), 1.0, -1.0]     # label -1: its per-example gradient becomes C e_J


def make_data(seed=0):
    """``N`` records: ``D`` features (the last zero) and a 0/1 label."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=(N, D - 1)), np.zeros(N)])
    y = (X[:, 0] + 0.5 * rng.normal(size=N) > 0).astype(float)
    return np.column_stack([X, y])


def _loss(theta, x, y):
    z = theta @ x
    return jnp.logaddexp(0.0, z) - y * z                # binary cross-entropy with logits


_per_example = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))


@functools.partial(jax.jit, static_argnames=("clip", "variant"))
def train(data, key, clip=CLIP, variant="correct"):
    """One DP-SGD run on ``data`` (rows: features, then the label): the (STEPS,) changes of weight J and the
    final weights. ``variant``: ``"noise-unscaled"`` adds N(0, sigma^2) instead of N(0, (sigma C)^2),
    ``"batch-clip"`` clips the batch's summed gradient instead of each example's (both known-broken)."""
    X, y = data[:, :-1], data[:, -1]
    theta, steps = jnp.zeros(X.shape[1]), []
    for _ in range(STEPS):
        key, k_sample, k_noise = jax.random.split(key, 3)
        g = _per_example(theta, X, jnp.maximum(y, 0.0))
        g = jnp.where((y < 0)[:, None], clip * X, g)                        # gradient canaries: C e_J
        g = g * (jax.random.uniform(k_sample, y.shape) < Q)[:, None]        # Poisson sampling
        if variant == "batch-clip":
            total = g.sum(0) * jnp.minimum(1.0, clip / jnp.maximum(jnp.linalg.norm(g.sum(0)), 1e-12))
        else:
            total = (g * jnp.minimum(1.0, clip / jnp.maximum(jnp.linalg.norm(g, axis=1, keepdims=True), 1e-12))
                     ).sum(0)
        std = SIGMA if variant == "noise-unscaled" else SIGMA * clip
        step = -LR * (total + std * jax.random.normal(k_noise, total.shape)) / BATCH
        theta, steps = theta + step, steps + [step[J]]
    return jnp.stack(steps), theta


def white_box(dataset, rng=None):
    """Every iterate: the STEPS changes of the canary's weight J (a float32 jax array)."""
    return train(jnp.asarray(dataset), jax.random.key(rng.integers(2**63)))[0]


def black_box(dataset, rng=None):
    """The release an outsider sees: the final model's logit on the input canary (a 0-d jax array)."""
    theta = train(jnp.asarray(dataset), jax.random.key(rng.integers(2**63)))[1]
    return theta @ jnp.asarray(INPUT_CANARY[:-1])


def white_box_noise_unscaled(dataset, rng=None):
    """Known-broken: clip 2 and noise N(0, sigma^2), the standard deviation not scaled by C."""
    key = jax.random.key(rng.integers(2**63))
    return train(jnp.asarray(dataset), key, clip=2.0, variant="noise-unscaled")[0]


def vmap_release(white=True, clip=CLIP, variant="correct"):
    """A ``size=`` target: n training runs per call by ``jax.vmap`` over n keys split from one seed."""
    def release(dataset, size=None, rng=None):
        keys = jax.random.split(jax.random.key(rng.integers(2**63)), 1 if size is None else size)
        data = jnp.asarray(dataset)
        steps, theta = jax.vmap(lambda k: train(data, k, clip=clip, variant=variant))(keys)
        out = steps if white else theta @ jnp.asarray(INPUT_CANARY[:-1])
        return out if size is not None else out[0]
    return release


def opposing_pair():
    """An auditor's dataset for batch clipping (Nasr et al. 2021): 60 gradient records of -0.1 C and 140 zero
    rows, and with them a gradient canary of 100 C, which flips the clipped batch sum from -C to C."""
    rows = np.zeros((N, D + 1))
    rows[:60, J], rows[:60, -1] = -0.1, -1.0
    return np.vstack([rows, np.r_[np.zeros(D - 1), 100.0, -1.0]]), rows


def one_run_audit(canaries=1000, seed=0):
    """One training run with ``canaries`` gradient canaries, each in its own unused feature and included with
    probability 1/2 (Steinke, Nasr and Jagielski 2023), against the accountant's curve."""
    base = make_data()
    data = np.column_stack([base[:, :-1], np.zeros((N, canaries)), base[:, -1]])
    rows = np.zeros((canaries, data.shape[1]))
    rows[np.arange(canaries), D + np.arange(canaries)], rows[:, -1] = 1.0, -1.0

    def train_once(data, rng):                                # the final weights, a jax array
        return train(jnp.asarray(data), jax.random.key(rng.integers(2**63)))[1]

    def score(weights, row):                                  # a gradient canary pushes its weight down
        return -weights[int(np.argmax(row[:-1]))]

    return dpaudit.one_run(train_once, data, rows, score, claim=CLAIM, seed=seed)


def _row(name, report, t0):
    row = {"audit": name, "verdict": report.verdict, "epsilon_lower_bound": report.epsilon_lower_bound,
           "claimed_epsilon": report.claimed_epsilon, "at_delta": report.claimed_delta,
           "seconds": round(time.time() - t0, 1)}
    print(json.dumps(row), flush=True)
    return row


def _audit(name, target, canary, samples):
    """One many-run audit against the accountant's curve; ``canary`` None: the opposing pair."""
    with_canary, data = opposing_pair() if canary is None else (np.vstack([make_data(), canary]), make_data())
    t0 = time.time()
    return _row(name, dpaudit.audit(target, with_canary, data, claim=CLAIM, samples=samples, seed=0, ideal=True), t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=10000, help="runs per side of each one-run-per-call audit")
    ap.add_argument("--vmap-samples", type=int, default=30000, help="runs per side of each size= audit (0: none)")
    ap.add_argument("--canaries", type=int, default=1000, help="canaries of the one-run audit (0: none)")
    a = ap.parse_args(argv)
    rows = [_audit("white box, gradient canary", white_box, GRAD_CANARY, a.samples),
            _audit("black box, input canary", black_box, INPUT_CANARY, a.samples),
            _audit("white box, noise unscaled, clip 2 (broken)", white_box_noise_unscaled, GRAD_CANARY, a.samples)]
    if a.vmap_samples:
        n = a.vmap_samples
        rows += [_audit("vmap, white box", vmap_release(), GRAD_CANARY, n),
                 _audit("vmap, black box", vmap_release(white=False), INPUT_CANARY, n),
                 _audit("vmap, noise unscaled, clip 2 (broken)", vmap_release(clip=2.0, variant="noise-unscaled"),
                        GRAD_CANARY, n),
                 _audit("vmap, batch clip, opposing records (broken)", vmap_release(variant="batch-clip"), None, n),
                 _audit("vmap, correct, opposing records", vmap_release(), None, n)]
    if a.canaries:
        t0 = time.time()
        rows.append(_row(f"one run, {a.canaries} gradient canaries", one_run_audit(a.canaries), t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
