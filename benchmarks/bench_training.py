"""Training runs per second: the built-in DP-SGD against a plain numpy loop doing the same arithmetic.

    PYTHONPATH=. python benchmarks/bench_training.py

Both train R logistic-regression runs at once (20 records, 3 features, T
steps, Poisson rate 0.5); the plain loop is the arithmetic alone, written out
without validation, variants or blocks.  Printed: runs per second of each and
their ratio (aim: the built-in within 1.5x).
"""

from __future__ import annotations

import time

import numpy as np

from dpaudit.training import DPSGDConfig, audit_dataset, train_runs

RUNS, REPEATS = 100_000, 3


def plain(data, cfg, runs, rng):
    x, y = data[:, :-1], data[:, -1]
    xa = np.concatenate([x, np.ones((len(x), 1))], axis=1)
    xnorm = np.linalg.norm(xa, axis=1)
    theta = np.zeros((runs, xa.shape[1]))
    for _ in range(cfg.steps):
        mask = rng.random((runs, len(x))) < cfg.sampling_rate
        err = 1.0 / (1.0 + np.exp(-(theta @ xa.T))) - y
        coef = mask * err * np.minimum(1.0, cfg.clip_norm / np.maximum(np.abs(err) * xnorm, 1e-300))
        noisy = coef @ xa + cfg.noise_multiplier * cfg.clip_norm * rng.standard_normal(theta.shape)
        theta = theta - (cfg.learning_rate / cfg.batch_size) * noisy
    return theta


def best_time(fn):
    times = []
    for r in range(REPEATS):
        t = time.perf_counter()
        fn(r)
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    data = audit_dataset()
    cfg = DPSGDConfig(noise_multiplier=1.0, sampling_rate=0.5, steps=4)
    built_in = best_time(lambda r: train_runs(data, cfg, runs=RUNS, rng=r))
    loop = best_time(lambda r: plain(data, cfg, RUNS, np.random.default_rng(r)))
    print(f"built-in DP-SGD : {RUNS / built_in:12,.0f} runs/s")
    print(f"plain numpy loop: {RUNS / loop:12,.0f} runs/s")
    print(f"ratio (built-in time / plain time): {built_in / loop:.2f}x (aim <= 1.5x)")


if __name__ == "__main__":
    main()
