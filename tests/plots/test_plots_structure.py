"""What a reviewer checks by eye, checked on the drawn figures' artists.

Every figure is built from a hand-written results folder (no mechanism runs),
then inspected: no colour+marker pair means two things, legends sit inside the
figure and off every axes, an (epsilon, delta) claim is a point, the sweep
point shown is named, and ``AuditReport.plot`` returns a Figure with the
panels the report supports.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml
from matplotlib.colors import to_hex
from matplotlib.lines import Line2D

from dpaudit.plots import FIGURES, plot_report
from dpaudit.plots.elements import cp_interval, dp_frontier, roc_points
from dpaudit.plots.style import paper_style, series_style
from dpaudit.results import load_results


def _audit_result(eps, delta, rng, *, n_test=50_000):
    fpr = np.geomspace(1.0 / n_test, 1, 40)
    tpr = np.minimum(1.0, fpr * math.exp(eps) * 0.9)
    deltas = [0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1]
    return {
        "epsilon_lower_bound": eps * 0.9, "claimed_epsilon": eps, "claimed_delta": delta, "confidence": 0.95,
        "samples": 2 * n_test, "n_test": n_test, "ceiling": 9.0, "true_epsilon": eps, "broken": False,
        "verdict": "no violation found", "tp": int(0.5 * n_test), "fp": int(0.2 * n_test),
        "direction": "D over D', event",
        "roc": {"fpr": fpr.tolist(), "tpr": tpr.tolist()},
        "privacy_profile": {"delta": deltas, "epsilon": [eps * rng.uniform(0.7, 0.9)] * len(deltas),
                            "confidence": 0.95},
        "true_profile": {"delta": deltas, "epsilon": [eps * 1.1] + [eps] * (len(deltas) - 1)},
    }


def _write_results(tmp_path, *, mechanisms, claims, trials=2, references=None, figures=None):
    """A results folder as the runner leaves it: config, trials and summary."""
    rng = np.random.default_rng(0)
    mechs = [{"label": m, "mechanism": m, "params": {}, "reference": (references or {}).get(m)} for m in mechanisms]
    sweep_paths = [f"mechanisms.{m}.params.epsilon" for m in mechanisms] if len(claims) > 1 else []
    cfg = {"name": "t", "mechanisms": mechs, "plot": {"figures": figures or [], "point": None},
           "sweep": {"mode": "zip", "parameters": {p: [c[0] for c in claims] for p in sweep_paths}}}
    records, groups, index = [], [], 0
    for p, (eps, delta) in enumerate(claims):
        sweep = {path: eps for path in sweep_paths}
        for m in mechanisms:
            res = [_audit_result(eps, delta, rng) for _ in range(trials)]
            for r in res:
                records.append({"index": index, "point": p, "mechanism": m, "sweep": sweep, "result": r})
                index += 1
            lbs = [r["epsilon_lower_bound"] * rng.uniform(0.9, 1.0) for r in res]
            groups.append({"point": p, "sweep": sweep, "mechanism": m, "n_trials": trials, "claimed_epsilon": eps,
                           "claimed_delta": delta, "true_epsilon": eps, "broken": False, "ceiling": 9.0,
                           "samples": 100_000, "confidence": 0.95, "epsilon_lower_bound_median": float(np.median(lbs)),
                           "epsilon_lower_bound_min": min(lbs), "epsilon_lower_bound_max": max(lbs),
                           "verdict": "no violation found"})
    (tmp_path / "config.resolved.yaml").write_text(yaml.safe_dump(cfg))
    (tmp_path / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "summary.json").write_text(json.dumps({"groups": groups, "sweep": {"parameters": sweep_paths}}))
    return load_results(tmp_path)


def _draw(name, results, size="one-column"):
    with paper_style():
        fig = FIGURES[name](results, size=size)
        fig.canvas.draw()
    return fig


def _style_pairs(fig):
    """(colour, marker) -> set of labels, over the labelled marker artists of every legend."""
    pairs: dict = {}
    for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            if isinstance(handle, Line2D) and handle.get_marker() not in (None, "None", "", " "):
                key = (to_hex(handle.get_color()), handle.get_marker())
                pairs.setdefault(key, set()).add(text.get_text())
    return pairs


def _assert_legends_placed(fig):
    renderer = fig.canvas.get_renderer()
    fig_box = fig.bbox
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert legends
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert box.x0 >= fig_box.x0 - 1 and box.x1 <= fig_box.x1 + 1, (box, fig_box)
        assert box.y0 >= fig_box.y0 - 1 and box.y1 <= fig_box.y1 + 1, (box, fig_box)
        for ax in fig.axes:
            # off the data and off the tick labels (the legend over the y tick labels)
            assert not box.overlaps(ax.get_window_extent(renderer)), "legend covers an axes"
            for label in _drawn_tick_labels(ax, renderer):
                assert not box.overlaps(label.get_window_extent(renderer)), label.get_text()


def _drawn_tick_labels(ax, renderer):
    """The tick labels matplotlib draws: visible, not empty, and centred on a tick inside the axes.

    The axis also keeps labels for ticks beyond its limits (matplotlib 3.10 put a log axis's 10^-9 under
    the axes), which are never drawn and so cannot be covered.
    """
    frame = ax.get_window_extent(renderer)
    out = []
    for labels, lo, hi, centre in ((ax.get_yticklabels(), frame.y0, frame.y1, lambda b: (b.y0 + b.y1) / 2),
                                   (ax.get_xticklabels(), frame.x0, frame.x1, lambda b: (b.x0 + b.x1) / 2)):
        for label in labels:
            if label.get_visible() and label.get_text() and lo - 1 <= centre(label.get_window_extent(renderer)) <= hi + 1:
                out.append(label)
    return out


def test_series_styles_never_repeat_a_colour_marker_pair():
    pairs = {(series_style(i)["color"], series_style(i)["marker"]) for i in range(56)}
    assert len(pairs) == 56


@pytest.mark.parametrize("size", ["one-column", "two-column"])
def test_one_claim_gives_a_per_mechanism_chart_with_published_markers(tmp_path, size):
    names = [f"mech_{i:02d}" for i in range(20)]  # the twenty-row DP-Sniper table
    refs = {m: {"paper": "row", "dp_sniper": 0.05 + 0.01 * i} for i, m in enumerate(names)}
    refs["mech_03"]["true_eps"] = "<= 0.5"
    results = _write_results(tmp_path, mechanisms=names, claims=[(0.1, 0.0)], trials=1, references=refs)
    fig = _draw("epsilon_vs_claimed", results, size)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == names  # one row per mechanism, config order
    pairs = _style_pairs(fig)
    assert all(len(labels) == 1 for labels in pairs.values()), pairs
    labels = {lab for ls in pairs.values() for lab in ls}
    assert "DP-Sniper (published)" in labels
    published = [line for line in ax.lines if line.get_marker() == "X" and len(line.get_xdata()) == 1]
    assert len(published) == 20
    _assert_legends_placed(fig)


def test_bounds_spanning_decades_use_a_log_axis(tmp_path):
    _write_results(tmp_path, mechanisms=["a", "b"], claims=[(0.1, 0.0)], trials=1)
    summary = json.loads((tmp_path / "summary.json").read_text())
    summary["groups"][1].update(epsilon_lower_bound_median=8.0, epsilon_lower_bound_min=8.0,
                                epsilon_lower_bound_max=8.0, verdict="violation")
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    fig = _draw("epsilon_vs_claimed", load_results(tmp_path))
    assert fig.axes[0].get_xscale() == "log"


def test_a_claimed_epsilon_of_zero_beside_large_ones_is_drawn_on_a_linear_axis(tmp_path):
    # A curve claim's reported point can have claimed epsilon 0 (gdp:mu=0.1 at its total-variation end) beside
    # a large one: choosing a log axis for that spread took log(0) ("math domain error") and no figure was drawn.
    results = _write_results(tmp_path, mechanisms=["laplace", "gaussian"], claims=[(0.0, 0.04), (7.0, 0.002)])
    fig = _draw("epsilon_vs_claimed", results)
    assert fig.axes[0].get_xscale() == "linear"
    _assert_legends_placed(fig)


def test_several_claims_keep_stable_unique_styles(tmp_path):
    results = _write_results(tmp_path, mechanisms=["laplace", "gaussian", "rr", "bug"],
                             claims=[(0.5, 0.0), (1.0, 0.0), (2.0, 0.0)])
    figs = {name: _draw(name, results) for name in ("epsilon_vs_claimed", "roc", "privacy_profile")}
    for name, fig in figs.items():
        pairs = _style_pairs(fig)
        assert all(len(labels) == 1 for labels in pairs.values()), (name, pairs)
        _assert_legends_placed(fig)
    # a mechanism has one colour in every figure
    colour_of = {}
    for name, fig in figs.items():
        for (colour, _), labels in _style_pairs(fig).items():
            for label in labels:
                if label in ("laplace", "gaussian", "rr", "bug"):
                    assert colour_of.setdefault(label, colour) == colour, (name, label)
    assert len(colour_of) == 4


def test_roc_and_profile_name_the_sweep_point_shown(tmp_path):
    results = _write_results(tmp_path, mechanisms=["laplace"], claims=[(0.5, 0.0), (2.0, 0.0)])
    for name in ("roc", "privacy_profile"):
        fig = _draw(name, results)
        title = fig.axes[0].get_title(loc="left").replace("\n", " ")
        assert "sweep point 2 of 2" in title and "epsilon = 2" in title and "--point" in title, title


def test_point_chooses_the_sweep_point_drawn_and_a_bad_one_is_refused(tmp_path, capsys):
    from dpaudit.cli import main
    from dpaudit.exceptions import ParameterValueError

    results = _write_results(tmp_path, mechanisms=["laplace"], claims=[(0.5, 0.0), (2.0, 0.0)])
    for name in ("roc", "privacy_profile"):
        with paper_style():
            fig = FIGURES[name](results, size="one-column", point=1)
        title = fig.axes[0].get_title(loc="left").replace("\n", " ")
        assert "sweep point 1 of 2" in title and "epsilon = 0.5" in title, title
    # the ROC drawn is point 1's: its frontier is the claim epsilon = 0.5's
    with paper_style():
        roc = FIGURES["roc"](results, size="one-column", point=1)
    labels = [t.get_text() for leg in roc.legends for t in leg.get_texts()]
    assert any("\u03b5 = 0.5" in t for t in labels) and not any("\u03b5 = 2" in t for t in labels), labels
    with pytest.raises(ParameterValueError, match=r"^--point must be a sweep point from 1 to 2; got 3$"):
        FIGURES["roc"](results, size="one-column", point=3)
    assert main(["plot", str(tmp_path), "--figure", "roc", "--point", "2"]) == 0
    assert (tmp_path / "roc.png").is_file()
    capsys.readouterr()
    for bad in ("0", "3"):
        assert main(["plot", str(tmp_path), "--figure", "roc", "--point", bad]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "--point must be a sweep point from 1 to 2" in err, err


def test_an_epsilon_delta_claim_is_a_point_and_a_pure_claim_a_line(tmp_path):
    results = _write_results(tmp_path, mechanisms=["gaussian", "laplace"], claims=[(1.0, 1e-5)])
    (tmp_path / "x").mkdir()
    pure = _write_results(tmp_path / "x", mechanisms=["laplace"], claims=[(1.0, 0.0)])
    fig = _draw("privacy_profile", results)
    ax = fig.axes[0]
    stars = [ln for ln in ax.lines if ln.get_marker() == "*" and len(ln.get_xdata()) == 1]
    assert any(ln.get_xdata()[0] == pytest.approx(1e-5) and ln.get_ydata()[0] == pytest.approx(1.0) for ln in stars)
    # no flat line at the claimed epsilon across the deltas for an (epsilon, delta) claim
    flat = [ln for ln in ax.lines if len(ln.get_ydata()) == 2 and np.allclose(ln.get_ydata(), 1.0)]
    assert not flat
    fig = _draw("privacy_profile", pure)
    flat = [ln for ln in fig.axes[0].lines if len(ln.get_ydata()) == 2 and np.allclose(ln.get_ydata(), 1.0)]
    assert len(flat) == 1


@pytest.mark.parametrize("size", ["one-column", "two-column"])
def test_a_curve_claims_line_names_its_delta_and_its_claim(tmp_path, size):
    # The docs' YAML curve claim (docs/claims.md: gaussian against gdp:mu=0.05) drew its claim as "claimed
    # epsilon = 0.00635801": the curve's epsilon at the delta the audit chose, with neither the delta nor the claim.
    _write_results(tmp_path, mechanisms=["gaussian"], claims=[(0.5608629578, 0.0287955887)], trials=1)
    cfg = yaml.safe_load((tmp_path / "config.resolved.yaml").read_text())
    cfg["audit"] = {"claim": "dpsgd:noise=2.38539450839,rate=0.5,steps=4"}
    (tmp_path / "config.resolved.yaml").write_text(yaml.safe_dump(cfg))
    fig = _draw("epsilon_vs_claimed", load_results(tmp_path), size)
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    sep = "\n" if size == "one-column" else " "  # one column: the spec on a line of its own
    assert f"claimed \u03b5 = 0.5609 at \u03b4 = 0.029{sep}(dpsgd:noise=2.385,rate=0.5,steps=4)" in labels, labels
    _assert_legends_placed(fig)
    # A point claim keeps its plain label.
    (tmp_path / "p").mkdir()
    fig = _draw("epsilon_vs_claimed", _write_results(tmp_path / "p", mechanisms=["laplace"], claims=[(1.0, 0.0)]), size)
    assert "claimed \u03b5 = 1" in [t.get_text() for leg in fig.legends for t in leg.get_texts()]


def test_roc_band_covers_fpr_uncertainty():
    """A point resting on 4 false positives: its box reaches left of 4/n, to the exact CP lower limit."""
    n = 250_000
    pts = roc_points([4 / n], [40 / n], n)
    lo, hi = cp_interval(4, n)
    assert pts["x_lo"][0] == pytest.approx(float(lo)) and pts["x_lo"][0] < 4 / n / 2.5
    assert pts["x_hi"][0] == pytest.approx(float(hi))
    # scipy-free check of the lower limit: P(Bin(n, lo) >= 4) = 0.025
    from scipy.stats import binom

    assert binom.sf(3, n, pts["x_lo"][0]) == pytest.approx(0.025, rel=1e-6)


def test_frontier_has_both_inequalities():
    # pure eps = 1: TPR <= e FPR near 0, and 1 - TPR >= (1 - FPR) / e near 1
    assert dp_frontier(1e-3, 1.0) == pytest.approx(math.e * 1e-3)
    assert dp_frontier(0.9, 1.0) == pytest.approx(1 - 0.1 / math.e)


def test_report_plot_panels_and_trajectory():
    import dpaudit
    from matplotlib.figure import Figure

    from dpaudit.mechanisms import get_mechanism

    mech = get_mechanism("laplace", epsilon=1.0)
    report = dpaudit.audit(mech, *mech.neighbouring_pair(), epsilon=1.0, samples=20_000, seed=3)
    fig = report.plot()
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    fig.canvas.draw()
    _assert_legends_placed(fig)
    d = report.to_dict()
    d["trajectory"] = {"samples": [1000, 4000, 10_000], "epsilon_lower_bound": [0.2, 0.6, 0.9]}
    d["rounds"], d["stopping_reason"] = 3, "budget"
    fig = plot_report(d, size="one-column")
    assert len(fig.axes) == 3
    traj = fig.axes[2]
    assert any(np.allclose(ln.get_xdata(), [1000, 4000, 10_000]) for ln in traj.lines)
    assert any(np.allclose(ln.get_ydata(), 1.0) for ln in traj.lines)  # the claim line
    d["trajectory"] = {"samples": [10_000], "epsilon_lower_bound": [0.9]}  # one point: no panel
    assert len(plot_report(d).axes) == 2


def test_report_plot_never_shows(monkeypatch):
    import matplotlib.pyplot as plt

    def boom(*a, **k):  # pragma: no cover - failing is the point
        raise AssertionError("plt.show() called")

    monkeypatch.setattr(plt, "show", boom)
    d = json.loads(json.dumps(_audit_result(1.0, 0.0, np.random.default_rng(1))))
    d.update(target="t", epsilon_lower_bound=0.9)
    assert plot_report(d).axes


def test_every_audit_figure_states_its_sample_size(tmp_path):
    # A reviewer reads n off the figure: samples per side (the bound, the profile), held-out ones (the ROC).
    results = _write_results(tmp_path, mechanisms=["laplace", "gaussian"], claims=[(0.5, 0.0), (1.0, 0.0)])
    expected = {"epsilon_vs_claimed": "100,000 samples per side", "privacy_profile": "100,000 samples per side",
                "roc": "50,000 held-out samples per side"}
    for name, text in expected.items():
        titles = " ".join(leg.get_title().get_text() for leg in _draw(name, results).legends).replace("\n", " ")
        assert text in titles, (name, titles)


def test_pure_claims_equal_to_six_decimals_are_one_grey_line(tmp_path):
    # randomized response's p is written to 8 digits, so its claim is 2.0000000x, not 2: still one claim
    _write_results(tmp_path, mechanisms=["laplace", "rr"], claims=[(2.0, 0.0)])
    records = [json.loads(line) for line in (tmp_path / "trials.jsonl").read_text().splitlines()]
    for r in records:
        if r["mechanism"] == "rr":
            r["result"]["claimed_epsilon"] = 2.00000003
    (tmp_path / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    fig = _draw("privacy_profile", load_results(tmp_path))
    flat = [ln for ln in fig.axes[0].lines if len(ln.get_ydata()) == 2 and np.allclose(ln.get_ydata(), 2.0)]
    assert len(flat) == 1 and to_hex(flat[0].get_color()) == to_hex("0.35")
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert any(lab.startswith("claim \u03b5 = 2 (pure") for lab in labels), labels


def test_reconstruction_noise_spanning_a_decade_is_on_a_log_axis(tmp_path):
    scales = [0.5, 1.0, 2.5, 5.0, 10.0]
    cfg = {"name": "r", "attack": {"name": "reconstruction", "params": {"n": 100, "noise": "laplace", "k": 200}},
           "sweep": {"mode": "grid", "parameters": {"attack.params.noise_scale": scales}}}
    metric = {"mean": 0.8, "ci_low": 0.7, "ci_high": 0.9}
    groups = [{"point": i, "sweep": {"attack.params.noise_scale": s}, "mechanism": None, "n_trials": 3,
               "metrics": {"fraction_recovered": metric}} for i, s in enumerate(scales)]
    (tmp_path / "config.resolved.yaml").write_text(yaml.safe_dump(cfg))
    (tmp_path / "trials.jsonl").write_text("")
    (tmp_path / "summary.json").write_text(json.dumps({"groups": groups, "confidence": 0.95,
                                                       "sweep": {"parameters": ["attack.params.noise_scale"]}}))
    fig = _draw("reconstruction", load_results(tmp_path))
    ax_noise = fig.axes[0]
    assert ax_noise.get_xscale() == "log"
    assert [t.get_text() for t in ax_noise.get_xticklabels()] == ["0.05", "0.1", "0.25", "0.5", "1"]
    assert "n = 100 secret bits" in fig.get_suptitle() and "Laplace noise of scale b" in fig.get_suptitle()
    _assert_legends_placed(fig)
