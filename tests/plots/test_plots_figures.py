"""Plots are redrawn from saved results alone, as vector PDF and PNG, for every figure kind."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from dpaudit.plots import FIGURES, OKABE_ITO, WIDTHS, draw_figures
from dpaudit.runner import ExperimentKind, register_kind, run_experiment
from dpaudit.runner._spec import Param
from dpaudit.runner.kinds import unregister_kind
from dpaudit.runner.kinds.audit import aggregate as audit_aggregate

QUIET = dict(echo=lambda s: None, progress=False)


def fake_audit_trial(config, mechanism, seed):
    """An audit-shaped record (no mechanism is run): enough for figures 1-3."""
    rng = np.random.default_rng(seed)
    eps = config["attack"]["params"]["epsilon"]
    fpr = np.geomspace(1e-4, 1, 30)
    tpr = np.minimum(1.0, fpr * math.exp(eps) * rng.uniform(0.5, 1.0))
    deltas = np.geomspace(1e-5, 0.5, 12)
    return {
        "epsilon_lower_bound": float(eps * rng.uniform(0.6, 0.95)),
        "claimed_epsilon": eps, "claimed_delta": 0.0, "confidence": 0.95, "samples": 10_000,
        "ceiling": 6.5, "true_epsilon": eps, "broken": False, "verdict": "no violation found",
        "roc": {"fpr": fpr.tolist(), "tpr": tpr.tolist()},
        "privacy_profile": {"delta": deltas.tolist(), "epsilon": (eps * (1 - deltas) * rng.uniform(0.7, 0.9)).tolist()},
        "true_profile": {"delta": deltas.tolist(), "epsilon": [eps] * len(deltas)},
    }


def fake_metric_trial(config, mechanism, seed):
    rng = np.random.default_rng(seed)
    p = config["attack"]["params"]
    return {"fraction_recovered": float(min(1, 0.5 + 0.5 / (1 + p["noise_scale"]) + rng.normal(0, 0.01))),
            "tpr": float(min(1, p["d"] / 5000 * p["alpha"] + rng.uniform(0, 0.05)))}


@pytest.fixture
def fake_kinds():
    register_kind(ExperimentKind("fake_audit", "test", "attack", {"epsilon": Param("real", 1.0)}, fake_audit_trial,
                                 figures=("epsilon_vs_claimed", "roc", "privacy_profile"),
                                 extra={"aggregate": audit_aggregate}), replace=True)
    register_kind(ExperimentKind("fake_attack", "test", "attack",
                                 {"n": Param("int", 100), "k": Param("int", 400), "noise_scale": Param("real", 1.0),
                                  "d": Param("int", 1000), "alpha": Param("real", 0.5), "fpr": Param("real", 0.05)},
                                 fake_metric_trial, figures=("reconstruction", "tracing")), replace=True)
    yield
    unregister_kind("fake_audit")
    unregister_kind("fake_attack")


def _run(tmp_path, cfg):
    return run_experiment(cfg, out=tmp_path, **QUIET)


def _check_files(paths):
    assert paths
    for p in paths:
        assert p.exists() and p.stat().st_size > 1000, p
    pdfs = [p for p in paths if p.suffix == ".pdf"]
    pngs = [p for p in paths if p.suffix == ".png"]
    assert len(pdfs) == len(pngs)
    for p in pdfs:
        assert p.read_bytes().startswith(b"%PDF")
    for p in pngs:
        assert p.read_bytes().startswith(b"\x89PNG")


def test_audit_figures_and_redraw_from_results_alone(tmp_path, fake_kinds):
    # 100 dpi: what is checked is that every figure is written and redrawn, not the 300-dpi raster (the
    # rr_tradeoff test below checks that); it takes a third of the time.
    cfg = {"name": "figs", "seed": 4, "trials": 3, "attack": {"name": "fake_audit"}, "plot": {"dpi": 100},
           "sweep": {"parameters": {"attack.params.epsilon": [0.5, 1.0, 2.0]}}}
    out = _run(tmp_path, cfg)
    names = sorted(p.stem for p in out.figures)
    assert names == sorted(["epsilon_vs_claimed"] * 2 + ["roc"] * 2 + ["privacy_profile"] * 2)
    _check_files(list(out.figures))
    # delete the plots, then redraw them with the kind gone: only saved files are read
    for p in out.figures:
        p.unlink()
    unregister_kind("fake_audit")
    again = draw_figures(out.directory)
    assert sorted(p.name for p in again) == sorted(p.name for p in out.figures)
    _check_files(again)


def test_attack_figures(tmp_path, fake_kinds):
    cfg = {"name": "att", "seed": 5, "trials": 3, "attack": {"name": "fake_attack"}, "plot": {"dpi": 100},
           "sweep": {"parameters": {"attack.params.noise_scale": [0.5, 2.0], "attack.params.k": [100, 400],
                                    "attack.params.d": [100, 1000, 10000], "attack.params.alpha": [0.2, 0.8]}}}
    out = _run(tmp_path, cfg)
    assert sorted({p.stem for p in out.figures}) == ["reconstruction", "tracing"]
    _check_files(list(out.figures))
    # n and the noise parameter's meaning are stated; legends sit off the data, inside the figure
    from dpaudit.plots.style import paper_style
    from dpaudit.results import load_results

    from test_plots_structure import _assert_legends_placed

    results = load_results(out.directory)
    for name in ("reconstruction", "tracing"):
        with paper_style():
            fig = FIGURES[name](results, size="one-column")
            fig.canvas.draw()
        assert "n = 100" in fig.get_suptitle(), fig.get_suptitle()
        _assert_legends_placed(fig)


def test_rr_tradeoff_figure_and_two_column_size(tmp_path):
    cfg = {"name": "rr", "seed": 6, "trials": 2, "attack": {"name": "rr_tradeoff", "params": {"repetitions": 100}},
           "sweep": {"parameters": {"attack.params.n": [10, 100, 1000, 10000], "attack.params.epsilon": [0.25, 1.0, 4.0]}},
           "plot": {"size": "two-column"}}
    out = _run(tmp_path, cfg)
    _check_files(list(out.figures))
    from PIL import Image

    with Image.open(out.directory / "rr_tradeoff.png") as im:
        assert abs(im.size[0] / 300 - WIDTHS["two-column"]) < 0.05
    draw_figures(out.directory, size="one-column")
    with Image.open(out.directory / "rr_tradeoff.png") as im:
        assert abs(im.size[0] / 300 - WIDTHS["one-column"]) < 0.05


@pytest.mark.slow  # several seconds; `make soundness` runs it, `make test` leaves it out
def test_plot_command_redraws(tmp_path):
    cfg = {"name": "rr", "seed": 6, "attack": {"name": "rr_tradeoff", "params": {"repetitions": 50, "epsilon": 1.0}},
           "sweep": {"parameters": {"attack.params.n": [10, 100]}}}
    out = run_experiment(cfg, out=tmp_path, draw=False, **QUIET)
    assert not list(out.directory.glob("*.png"))
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-m", "dpaudit.runner", "plot", str(out.directory)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _check_files([out.directory / "rr_tradeoff.pdf", out.directory / "rr_tradeoff.png"])
    missing = subprocess.run([sys.executable, "-m", "dpaudit.runner", "plot", str(tmp_path / "nope")], env=env,
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "not a results folder" in missing.stderr


def test_palette_is_okabe_ito_and_registry_is_complete():
    assert OKABE_ITO[:3] == ["#0072B2", "#D55E00", "#009E73"]
    assert set(FIGURES) == {"epsilon_vs_claimed", "roc", "privacy_profile", "reconstruction", "tracing", "rr_tradeoff",
                            "trajectory", "one_run"}


def test_sequential_audits_draw_their_trajectory_and_dpaudit_plot_redraws_it(tmp_path):
    """``audit.samples: auto``: the run draws the bound against the samples, and ``dpaudit plot`` redraws it.

    Real audits, small budget (16,000 per side): laplace runs its rounds, the unclipped sum stops at its
    first.  A fixed-size run of the same mechanisms has no trajectory, so the figure is skipped.
    """
    from dpaudit.plots.style import paper_style
    from dpaudit.results import load_results

    from test_plots_structure import _assert_legends_placed

    mechs = [{"mechanism": "laplace"}, {"mechanism": "unclipped_sum"}]
    cfg = {"name": "seq", "seed": 2, "trials": 2, "mechanisms": mechs,
           "audit": {"samples": "auto", "max_samples": 16_000}}
    out = _run(tmp_path, cfg)
    assert sorted(p.stem for p in out.figures) == ["epsilon_vs_claimed"] * 2 + ["trajectory"] * 2
    traj = [p for p in out.figures if p.stem == "trajectory"]
    _check_files(traj)
    for p in traj:
        p.unlink()
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-m", "dpaudit", "plot", str(out.directory), "--figure", "trajectory"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _check_files(traj)
    with paper_style():
        fig = FIGURES["trajectory"](load_results(out.directory), size="one-column")
        fig.canvas.draw()
    (ax,) = fig.axes
    steps = [line for line in ax.lines if line.get_drawstyle() == "steps-post"]
    assert len(steps) == 4  # one per trial
    xs = sorted({tuple(line.get_xdata()) for line in steps})
    assert xs == [(2000.0,), (2000.0, 4000.0, 8000.0, 16000.0)]  # the violation stops after one round
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "laplace (stopped: budget 2)" in labels and "unclipped_sum (stopped: violation 2)" in labels
    _assert_legends_placed(fig)

    fixed = _run(tmp_path / "fixed", dict(cfg, audit={"samples": 4000}))
    assert sorted(p.stem for p in fixed.figures) == ["epsilon_vs_claimed"] * 2


def test_a_curve_claims_trajectories_each_meet_their_own_claim(tmp_path):
    """A curve claim: each trial's trajectory is certified at its own delta, so each has its own claim line.

    The figure drew one line, the first trial's claimed epsilon: seeded, a 1-GDP release against gdp:mu=0.8
    stops as a violation in all three trials, at deltas where the claim is 0.314, 0.470 and 0.0855, and the
    third stop (0.187) sat under the one line drawn (0.314) as if its verdict were wrong.
    """
    from dpaudit.plots.style import paper_style
    from dpaudit.results import load_results

    from test_plots_structure import _assert_legends_placed

    (tmp_path / "mech.py").write_text("def release(dataset, size=None, rng=None):\n"
                                      "    return float(len(dataset)) + rng.normal(0.0, 1.0, size=size)\n")
    cfg = {"name": "seq_curve", "seed": 1, "trials": 3, "plot": {"figures": ["trajectory"]},
           "mechanisms": [{"target": str(tmp_path / "mech.py") + ":release", "label": "release", "dataset": [0],
                           "neighbor": []}],
           "audit": {"samples": "auto", "max_samples": 16_000, "ideal": True, "claim": "gdp:mu=0.8"}}
    out = _run(tmp_path / "res", cfg)
    trials = [t["result"] for t in load_results(out.directory).trials_at(0, "release")]
    assert all(t["verdict"] == "violation" for t in trials) and len({t["claimed_delta"] for t in trials}) == 3
    with paper_style():
        fig = FIGURES["trajectory"](load_results(out.directory), size="one-column")
        fig.canvas.draw()
    (ax,) = fig.axes
    dashed = {round(float(line.get_ydata()[0]), 12) for line in ax.lines
              if line.get_linestyle() not in ("-", "None") and len(line.get_ydata())}
    assert dashed == {round(t["claimed_epsilon"], 12) for t in trials}
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "release: claim gdp:mu=0.8 at each trial's \u03b4" in labels
    _assert_legends_placed(fig)


def test_one_trial_against_a_curve_names_the_curve_in_its_trajectory(tmp_path):
    """One trial of a curve claim: its claim line was labelled "claim (epsilon = 0.328852, delta = 0.0656296)".

    That is docs/training.md's YAML of one's own DP-SGD code against dpsgd:...: the point is the curve's, read at
    the delta the audit chose, and the legend named neither the curve nor that; a dpsgd: spec then stuck out of a
    one-column figure.
    """
    from dpaudit.plots.style import paper_style
    from dpaudit.results import load_results

    from test_plots_structure import _assert_legends_placed

    (tmp_path / "mech.py").write_text("def release(dataset, size=None, rng=None):\n"
                                      "    return float(len(dataset)) + rng.normal(0.0, 1.0, size=size)\n")
    spec = "dpsgd:noise=1.0,rate=0.5,steps=4"
    cfg = {"name": "seq_one", "seed": 1, "trials": 1, "plot": {"figures": ["trajectory"]},
           "mechanisms": [{"target": str(tmp_path / "mech.py") + ":release", "label": "release", "dataset": [0],
                           "neighbor": []}],
           "audit": {"samples": "auto", "max_samples": 8_000, "ideal": True, "claim": spec}}
    out = _run(tmp_path / "res", cfg)
    (trial,) = [t["result"] for t in load_results(out.directory).trials_at(0, "release")]
    for size, sep in (("one-column", "\n"), ("two-column", " ")):
        with paper_style():
            fig = FIGURES["trajectory"](load_results(out.directory), size=size)
            fig.canvas.draw()
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        assert (f"claim {spec}{sep}(\u03b5 = {trial['claimed_epsilon']:.4g} at "
                f"\u03b4 = {trial['claimed_delta']:.2g})") in labels, labels
        _assert_legends_placed(fig)
