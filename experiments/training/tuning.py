"""The privacy cost of hyperparameter selection: train K learning rates with DP-SGD, release the best run.

    PYTHONPATH=. python experiments/training/tuning.py --out results/tuning

Papernot and Steinke (2022): the epsilon of the winning run is not the cost of choosing it.  Here
the whole procedure is one target: on a dataset it trains K runs of the lab's DP-SGD (logistic
regression, noise calibrated to epsilon 2 at delta 1e-5 for one run, q = 0.5, T = 4), one per
learning rate, scores each on a validation set, and releases the best run; the auditor sees only
that run's final model (black box: its score on a gradient canary, the canary's parameter in units
of C).  It is audited against two claims:

* the per-run claim, the accountant's curve of one run (``dpsgd:noise=SIGMA,rate=Q,steps=T``): what
  a report of "the winning run's epsilon" promises;
* the bound for the whole procedure with a fixed K: the K runs are K-fold composed and the choice
  is post-processing of them, so the accountant's curve of K x T steps
  (``dpsgd:noise=SIGMA,rate=Q,steps=K*T``) holds, whatever the selection reads.  (For a random K,
  Papernot and Steinke's theorems give bounds that grow only logarithmically in the expected K;
  this experiment uses a fixed K and the composition bound.)

The K learning rates are spread over [0.3, 0.7]; the validation score is the log-likelihood of a
validation set.  Two validation sets: one the canary cannot touch (200 held-out ordinary records,
feature 0 zero as in the training data: the choice is then independent of the canary's parameter,
and the release is one run's), and one that also holds 200 copies of a record aligned with the
canary (the selection reads the canary: the worst case a bound for the procedure must cover, as
when validation data come from the same private pool or an adversary plants them).  Writes
tuning.json and figure.png/pdf under --out; ``--replot`` redraws the figure from tuning.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import dpaudit
from dpaudit._rng import as_generator
from dpaudit.claims import DPSGDClaim
from dpaudit.training import GradientCanary, audit_dataset, train_runs
from dpaudit.training.lab import curve_config
from dpaudit.training.models import logits

EPSILON, DELTA = 2.0, 1e-5                     #: the per-run claim (noise calibrated to it)
#: K learning rates spread evenly over this range (one run each; K = 1 trains at its middle)
LEARNING_RATE_RANGE = (0.3, 0.7)
#: The records aligned with the canary in the validation set that reads it: copies, and their feature value
TWIN_COPIES, TWIN_VALUE = 200, 4.0
KS = (1, 2, 4, 8, 16)
REPORT_DELTA = 0.05                            #: the delta of the figure's left panel


class BestOfK:
    """The tuning procedure as a target: K DP-SGD runs (one per learning rate), release the best.

    ``release(dataset, size=n, rng=...)`` returns the released run's canary score (the canary's
    parameter, minus, in units of C: higher means "trained on the canary") for n procedures.
    ``twin`` adds to the validation set a record aligned with the canary, so the choice reads it.
    """

    def __init__(self, k: int, *, twin: bool, config=None, canary=None):
        self.k, self.twin = k, twin
        self.canary = GradientCanary(0) if canary is None else canary
        self.config = config if config is not None else curve_config(EPSILON)
        self.base = audit_dataset()
        val = audit_dataset(200, rng=1)            # ordinary held-out records: feature 0 is 0 there too
        if twin:  # minus the canary's direction, label 1: the log-likelihood grows with the canary's score
            val = np.vstack([val, np.tile([-TWIN_VALUE, 0.0, 0.0, 1.0], (TWIN_COPIES, 1))])
        self.validation = val

    def neighbouring_pair(self):
        return np.vstack([self.base, self.canary.row(self.base.shape[1] - 1)]), self.base.copy()

    def _val_loglik(self, params, config) -> np.ndarray:
        z = logits(config.model, params, self.validation[:, :-1], config.hidden)       # (R, n_val)
        y = self.validation[:, -1]
        return -(np.logaddexp(0.0, -z) * y + np.logaddexp(0.0, z) * (1 - y)).sum(axis=1)

    def __call__(self, dataset, *, size=None, rng=None):
        n = 1 if size is None else int(size)
        rng = as_generator(rng)
        best_val = np.full(n, -np.inf)
        released = np.zeros(n)
        for lr in learning_rates(self.k):
            cfg = self.config.replace(learning_rate=lr)
            params = train_runs(dataset, cfg, runs=n, rng=rng).params
            score = -params[:, self.canary.index] * (cfg.batch_size / (cfg.learning_rate * cfg.clip_norm))
            val = self._val_loglik(params, cfg)
            better = val > best_val
            best_val = np.where(better, val, best_val)
            released = np.where(better, score, released)
        return released if size is not None else float(released[0])


def learning_rates(k: int) -> np.ndarray:
    """The K learning rates tried: evenly spread over :data:`LEARNING_RATE_RANGE` (its middle for K = 1)."""
    lo, hi = LEARNING_RATE_RANGE
    return np.array([(lo + hi) / 2]) if k == 1 else np.linspace(lo, hi, k)


def claims(k: int, config) -> dict:
    run = DPSGDClaim(config.noise_multiplier, config.sampling_rate, config.steps)
    composed = DPSGDClaim(config.noise_multiplier, config.sampling_rate, config.steps * k)
    return {"per_run": run, "composed": composed}


def audit_one(k: int, twin: bool, *, samples: int, seed: int) -> dict:
    target = BestOfK(k, twin=twin)
    c = claims(k, target.config)
    t0 = time.perf_counter()
    rep = dpaudit.audit(target, *target.neighbouring_pair(), claim=c["per_run"], samples=samples, seed=seed,
                        ideal=True)
    prof = rep.privacy_profile
    deltas = [float(d) for d in prof["delta"] if d > 0]
    certified = [float(e) for d, e in zip(prof["delta"], prof["epsilon"]) if d > 0]
    return {"k": k, "twin": twin, "samples": samples, "seconds": round(time.perf_counter() - t0, 1),
            "verdict_per_run": rep.verdict, "delta": deltas, "certified": certified,
            "per_run": [float(c["per_run"].epsilon(d)) for d in deltas],
            "composed": [float(c["composed"].epsilon(d)) for d in deltas],
            "composed_exceeded": any(e > float(c["composed"].epsilon(d)) for d, e in zip(deltas, certified)),
            "claim_per_run": c["per_run"].spec, "claim_composed": c["composed"].spec}


def at_delta(row: dict, key: str, delta: float = REPORT_DELTA) -> float:
    return row[key][row["delta"].index(delta)]


def plot(rows, stem):
    from dpaudit.plots.style import legend_below, new_figure, paper_style, save_figure, series_style

    with paper_style():
        fig, (ax, bx) = new_figure("two-column", panels=2, aspect=0.8)
        ks = sorted({r["k"] for r in rows})
        twin = [r for r in rows if r["twin"]]
        plain = [r for r in rows if not r["twin"]]
        ax.plot(ks, [at_delta(r, "composed") for r in twin], color="0.2", lw=1.1, ls="--",
                label="bound for the procedure: K-fold composition (K x T steps)")
        ax.plot(ks, [at_delta(r, "per_run") for r in twin], color="0.5", lw=1.1,
                label="per-run claim (one run's accountant)")
        for i, (sel, name) in enumerate([(twin, "certified, validation reads the canary"),
                                         (plain, "certified, validation the canary cannot touch")]):
            ax.plot([r["k"] for r in sel], [at_delta(r, "certified") for r in sel], label=name, **series_style(i))
        ax.set_xscale("log", base=2)
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set_xlabel("K learning rates tried (the best run released)")
        ax.set_ylabel(rf"$\varepsilon$ at $\delta = {REPORT_DELTA:g}$ (certified: 95%)")
        ax.set_title(rf"(a) cost of choosing, at $\delta = {REPORT_DELTA:g}$", loc="left")
        k_show = max(ks)
        for i, r in enumerate([r for r in twin if r["k"] == k_show] + [r for r in plain if r["k"] == k_show]):
            st = series_style(i)
            bx.plot(r["delta"], r["certified"], **st)
        r = [r for r in twin if r["k"] == k_show][0]
        bx.plot(r["delta"], r["per_run"], color="0.5", lw=1.1)
        bx.plot(r["delta"], r["composed"], color="0.2", lw=1.1, ls="--")
        bx.set_xscale("log")
        bx.set_xlabel(r"$\delta$")
        bx.set_ylabel(r"$\varepsilon(\delta)$")
        bx.set_title(f"(b) privacy profile, K = {k_show} ({r['samples']:,} procedures per side)", loc="left")
        legend_below(fig, ncol=2)
        return save_figure(fig, stem)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/tuning")
    ap.add_argument("--samples", type=float, default=5e4, help="procedures per side in each audit")
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--replot", action="store_true", help="only redraw the figure from --out's tuning.json")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.replot:
        print(plot(json.loads((out / "tuning.json").read_text()), out / "figure")[1])
        return
    t0 = time.perf_counter()
    rows = []
    for i, k in enumerate(int(x) for x in a.ks.split(",")):
        for twin in (True, False):
            row = audit_one(k, twin, samples=int(a.samples), seed=a.seed + 10 * i + twin)
            rows.append(row)
            print(f"K {k:2d} {'twin   ' if twin else 'no twin'}: certified {at_delta(row, 'certified'):.3f} at delta "
                  f"{REPORT_DELTA:g}; per-run claim {at_delta(row, 'per_run'):.3f}, K-fold {at_delta(row, 'composed'):.3f}"
                  f"; verdict vs per-run: {row['verdict_per_run']}; exceeds K-fold: {row['composed_exceeded']} "
                  f"({row['seconds']:.0f} s)", file=sys.stderr, flush=True)
    (out / "tuning.json").write_text(json.dumps(rows, indent=1))
    paths = plot(rows, out / "figure")
    print(f"done in {time.perf_counter() - t0:.0f} s; figure: {paths[1]}", file=sys.stderr)


if __name__ == "__main__":
    main()
