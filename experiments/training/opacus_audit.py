"""Audit your own Opacus DP-SGD with dpaudit: black box, white box, one run, and membership scores.

Not part of ``make test``: torch and opacus are not dependencies of dpaudit (nor of its ``all`` extra).
Install them in a venv of their own, torch first so that pip keeps the CPU build you chose:

    python3.11 -m venv /tmp/venv_torch
    /tmp/venv_torch/bin/pip install torch        # a CPU build is enough (checked: torch 2.13.0+cpu)
    /tmp/venv_torch/bin/pip install opacus       # checked: opacus 1.6.0; `pip list` should still show your torch
    /tmp/venv_torch/bin/pip install -e .         # dpaudit, from the repository root
    /tmp/venv_torch/bin/python experiments/training/opacus_audit.py --samples 5000 --out results/opacus

Logistic regression on 200 synthetic records, Opacus DP-SGD at noise 2.385, Poisson rate 0.5, 4 steps, clip 1
(the accountant's epsilon is 2 at delta 1e-5). Each audit claims the accountant's whole curve
(``dpsgd:noise=2.385,rate=0.5,steps=4``) and uses ``ideal=True`` (the algorithm, not float32's bits).

Three things the wrapping must get right, or the audit (rightly) reports a violation of the code as written:

* The sampling rate and the expected batch size are public constants. ``PrivacyEngine.make_private`` derives
  both from the loader's length (rate ``1 / len(loader)``, batch ``int(len(dataset) * rate)``): with 200
  records and ``batch_size=100`` the neighbour with 201 has rate 1/3 and batch 67, noise 1.5 times as large,
  and the white-box audit certified epsilon 1.41 where the curve allows 0.17 (delta 0.105). So build the
  three Opacus objects yourself: ``GradSampleModule``, ``DPOptimizer(expected_batch_size=...)`` and
  ``DPDataLoader(sample_rate=...)``.
* Torch's random state comes from dpaudit's ``rng``: ``torch.manual_seed(int(rng.integers(2**63)))``.
* The canary: an input canary is a record (an outlier in a feature no other record uses); a gradient canary
  is a record marked by label -1 whose per-sample gradient (``p.grad_sample``) is set to ``C e_j`` after
  ``loss.backward()`` and before ``optimizer.step()`` clips and noises it, so Poisson sampling includes it
  like any record.

A target may return torch tensors (dpaudit reads a tensor that requires grad by ``.detach()``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from opacus import GradSampleModule
from opacus.data_loader import DPDataLoader
from opacus.optimizers import DPOptimizer
from torch.utils.data import DataLoader, TensorDataset

import dpaudit

SIGMA, Q, STEPS, CLIP, LR = 2.385, 0.5, 4, 1.0, 0.5
N, D = 200, 6                         # feature D-1 is zero in every record: the canary's own parameter
J = D - 1
BATCH = int(Q * N)                    # the public expected batch size: never len(dataset) * Q
CLAIM = f"dpsgd:noise={SIGMA},rate={Q},steps={STEPS}"
INPUT_CANARY = np.r_[np.zeros(D - 1), 10.0, 1.0]    # an outlier along feature J, label 1
GRAD_CANARY = np.r_[np.zeros(D - 1), 1.0, -1.0]     # label -1: its per-sample gradient becomes C e_J


def make_data(seed=0, n=N, d=D):
    """``n`` records: ``d`` features (the last zero) and a 0/1 label."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=(n, 5)), np.zeros((n, d - 5))])
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(float)
    return np.column_stack([X, y])


def train(dataset, seed, *, clip=CLIP, noise_multiplier=SIGMA, shuffle=False):
    """One Opacus DP-SGD run on ``dataset`` (rows: features, then the label); the final weights and the
    per-step changes of every weight, shape (STEPS, d).

    A row with label -1 is a gradient canary: its per-sample gradient is set to ``clip`` times its (unit)
    feature vector before Opacus clips and noises the batch. ``shuffle``: fixed-size batches of a permutation
    instead of Poisson sampling (a known-broken variant, accounted as Poisson all the same).
    """
    warnings.filterwarnings("ignore", module="opacus")      # secure-RNG advice, once per run
    warnings.filterwarnings("ignore", message="Full backward hook is firing")    # torch, on every backward()
    torch.manual_seed(seed)
    data = torch.as_tensor(dataset, dtype=torch.float32)
    X, y = data[:, :-1], data[:, -1]
    model = torch.nn.Linear(X.shape[1], 1, bias=False)
    torch.nn.init.zeros_(model.weight)
    model = GradSampleModule(model)
    opt = DPOptimizer(torch.optim.SGD(model.parameters(), lr=LR), noise_multiplier=noise_multiplier,
                      max_grad_norm=clip, expected_batch_size=BATCH)
    records = TensorDataset(X, y)
    loader = (DataLoader(records, batch_size=BATCH, shuffle=True) if shuffle
              else DPDataLoader(records, sample_rate=Q))
    steps = []
    while len(steps) < STEPS:
        for xb, yb in loader:
            if len(steps) == STEPS:
                break
            before = model._module.weight.detach().clone()
            opt.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(xb).squeeze(-1), yb.clamp(min=0))
            loss.backward()
            canary = yb < 0
            if canary.any():                                    # gradient canaries: C e_j, before clipping
                model._module.weight.grad_sample[canary] = clip * xb[canary][:, None, :]
            opt.step()
            steps.append(model._module.weight.detach()[0] - before[0])
    return model._module.weight.detach()[0], torch.stack(steps)


def black_box(dataset, rng=None):
    """The release an outsider sees: the final model's logit on the input canary (a 0-d tensor)."""
    weights, _ = train(dataset, int(rng.integers(2**63)))
    return weights @ torch.as_tensor(INPUT_CANARY[:-1], dtype=torch.float32)


def white_box(dataset, rng=None):
    """Every iterate: the STEPS changes of the canary's weight J (a gradient canary moves it by -LR C / BATCH)."""
    return train(dataset, int(rng.integers(2**63)))[1][:, J]


def white_box_noise_unscaled(dataset, rng=None):
    """Known-broken: clip 2 and the noise's standard deviation passed as the multiplier (sigma / C)."""
    return train(dataset, int(rng.integers(2**63)), clip=2.0, noise_multiplier=SIGMA / 2.0)[1][:, J]


def white_box_shuffled(dataset, rng=None):
    """Known-broken in general (Chua et al. 2024), hardly visible with this dataset and canary."""
    return train(dataset, int(rng.integers(2**63)), shuffle=True)[1][:, J]


def _loss_one(theta, x, y):
    return torch.nn.functional.binary_cross_entropy_with_logits(theta @ x, y)


def vmap_train(dataset, runs, gen, *, clip=CLIP, variant="correct"):
    """The same DP-SGD without Opacus, ``runs`` runs at once (a leading runs axis): per-example gradients by
    ``torch.func.vmap(torch.func.grad(loss))``; the (runs, STEPS) changes of weight J and the final weights.

    ``variant``: ``"batch-clip"`` clips the batch's summed gradient instead of each example's;
    ``"noise-unscaled"`` adds N(0, sigma^2) instead of N(0, (sigma C)^2) (known-broken, ``docs/training.md``).
    """
    from torch.func import grad, vmap

    per_example = vmap(vmap(grad(_loss_one), in_dims=(None, 0, 0)), in_dims=(0, None, None))
    data = torch.as_tensor(dataset, dtype=torch.float32)
    X, y = data[:, :-1], data[:, -1]
    canary = y < 0
    theta, steps = torch.zeros(runs, X.shape[1]), []
    for _ in range(STEPS):
        g = per_example(theta, X, y.clamp(min=0))                       # (runs, records, d)
        g[:, canary] = clip * X[canary]                                 # gradient canaries: C e_j
        g = g * (torch.rand(runs, len(X), generator=gen) < Q)[..., None]  # Poisson sampling
        if variant == "batch-clip":
            total = g.sum(1)
            total = total * torch.clamp(clip / total.norm(dim=1, keepdim=True).clamp(min=1e-12), max=1.0)
        else:
            total = (g * torch.clamp(clip / g.norm(dim=2, keepdim=True).clamp(min=1e-12), max=1.0)).sum(1)
        std = SIGMA if variant == "noise-unscaled" else SIGMA * clip
        step = -LR * (total + std * torch.randn(total.shape, generator=gen)) / BATCH
        theta = theta + step
        steps.append(step[:, J])
    return torch.stack(steps, 1), theta


def vmap_release(variant="correct", clip=CLIP, white=True):
    """A ``size=`` target over :func:`vmap_train`: n training runs per call, returned as a torch tensor."""
    def release(dataset, size=None, rng=None):
        gen = torch.Generator().manual_seed(int(rng.integers(2**63)))
        steps, theta = vmap_train(dataset, 1 if size is None else size, gen, clip=clip, variant=variant)
        out = steps if white else theta @ torch.as_tensor(INPUT_CANARY[:-1], dtype=torch.float32)
        return out if size is not None else out[0]
    return release


def opposing_pair():
    """An auditor's dataset for batch clipping (Nasr et al. 2021): 60 gradient records of -0.1 C and 140 zero
    rows (no gradient), and with them a gradient canary of 100 C, which flips the clipped batch sum from -C to C."""
    rows = np.zeros((N, D + 1))
    rows[:60, J], rows[:60, -1] = -0.1, -1.0
    return np.vstack([rows, np.r_[np.zeros(D - 1), 100.0, -1.0]]), rows


def one_run_audit(canaries=1000, seed=0, white=True):
    """One training run with ``canaries`` canaries, each in its own unused feature and included with
    probability 1/2 (Steinke, Nasr and Jagielski 2023), against the accountant's curve."""
    d = 5 + canaries
    data = make_data(n=N, d=d)
    rows = np.zeros((canaries, d + 1))
    rows[np.arange(canaries), 5 + np.arange(canaries)] = 1.0 if white else 10.0
    rows[:, -1] = -1.0 if white else 1.0                     # gradient canaries, or outliers labelled 1

    def train_once(data, rng):
        return train(data, int(rng.integers(2**63)))[0]      # the final weights, a 1-D tensor

    def score(weights, row):                                 # gradient canaries push their weight down
        j = int(np.argmax(row[:-1]))
        return -weights[j] if white else weights[j]

    return dpaudit.one_run(train_once, data, rows, score, claim=CLAIM, seed=seed)


def membership_scores(n, seed=0):
    """``n`` black-box scores with the input canary IN and ``n`` with it OUT, for ``dpaudit scores IN OUT``."""
    data = make_data()
    rng = np.random.default_rng(seed)
    with_canary = np.vstack([data, INPUT_CANARY])
    scores_in = np.array([float(black_box(with_canary, rng=rng)) for _ in range(n)])
    scores_out = np.array([float(black_box(data, rng=rng)) for _ in range(n)])
    return scores_in, scores_out


def _audit(name, target, canary, samples, n_jobs):
    """One many-run audit against the accountant's curve; ``canary`` None: the opposing pair."""
    with_canary, data = opposing_pair() if canary is None else (np.vstack([make_data(), canary]), make_data())
    t0 = time.time()
    report = dpaudit.audit(target, with_canary, data, claim=CLAIM, samples=samples, seed=0, ideal=True,
                           n_jobs=n_jobs)
    row = {"audit": name, "verdict": report.verdict, "epsilon_lower_bound": report.epsilon_lower_bound,
           "claimed_epsilon": report.claimed_epsilon, "at_delta": report.claimed_delta,
           "seconds": round(time.time() - t0, 1)}
    print(json.dumps(row), flush=True)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=5000, help="training runs per side of each many-run audit")
    ap.add_argument("--vmap-samples", type=int, default=30000,
                    help="training runs per side of each audit of the plain-torch loop (0: none)")
    ap.add_argument("--scores", type=int, default=2000, help="black-box runs per side for `dpaudit scores`")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--out", default="results/opacus")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = [_audit("black box, input canary", black_box, INPUT_CANARY, a.samples, a.n_jobs),
            _audit("white box, gradient canary", white_box, GRAD_CANARY, a.samples, a.n_jobs),
            _audit("white box, noise unscaled (broken)", white_box_noise_unscaled, GRAD_CANARY, a.samples, a.n_jobs)]
    if a.vmap_samples:
        n = a.vmap_samples
        rows += [_audit("vmap, white box", vmap_release(), GRAD_CANARY, n, 1),
                 _audit("vmap, black box", vmap_release(white=False), INPUT_CANARY, n, 1),
                 _audit("vmap, noise unscaled, clip 2 (broken)", vmap_release("noise-unscaled", clip=2.0),
                        GRAD_CANARY, n, 1),
                 _audit("vmap, batch clip, opposing records (broken)", vmap_release("batch-clip"), None, n, 1),
                 _audit("vmap, correct, opposing records", vmap_release(), None, n, 1)]
    for white in (True, False):
        t0 = time.time()
        r = one_run_audit(white=white)
        rows.append({"audit": f"one run, 1000 {'gradient' if white else 'input'} canaries", "verdict": r.verdict,
                     "epsilon_lower_bound": r.epsilon_lower_bound, "claimed_epsilon": r.claimed_epsilon,
                     "at_delta": r.claimed_delta, "seconds": round(time.time() - t0, 1)})
        print(json.dumps(rows[-1]), flush=True)
    scores_in, scores_out = membership_scores(a.scores)
    np.save(out / "in.npy", scores_in)
    np.save(out / "out.npy", scores_out)
    (out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print(f"then: dpaudit scores {out / 'in.npy'} {out / 'out.npy'} --claim {CLAIM}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
