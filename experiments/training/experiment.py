"""The DP-SGD lab's experiment: certified epsilon per threat model against the accountant, and every broken
variant's verdict, with the figure of the first (used by ``experiments/training/run.py``).

Results are plain dicts (JSON); :func:`plot_curve` only reads them.  The ``one_run`` entries hold a one-run
audit of the same configuration (:func:`dpaudit.training.lab.one_run_audit`: 1,000 gradient canaries, one
training run, white box), or ``None`` where none was run.
"""

from __future__ import annotations

import time

from dpaudit import audit
from dpaudit.stats.verdict import verdict_of
from dpaudit.training.accounting import accountant_epsilon
from dpaudit.training.config import DPSGDConfig, Variant
from dpaudit.training.lab import (
    CURVE_THREATS,
    DELTA,
    VARIANT_THREATS,
    curve_config,
    one_run_audit,
    profile_ratio,
    sampler_check,
)

__all__ = ["plot_curve", "run_curve", "run_variants", "variant_config", "variant_table"]


def run_curve(epsilons=(1, 2, 4, 8), *, samples: int = 1_000_000, seed: int = 0, progress=None, log=print) -> list:
    """Audit the correct DP-SGD claiming each epsilon (delta 1e-5) under each threat model of :data:`CURVE_THREATS`."""
    rows = []
    for i, eps in enumerate(epsilons):
        config = curve_config(eps)
        for j, (name, make) in enumerate(CURVE_THREATS.items()):
            rel = make(config)
            t0 = time.perf_counter()
            rep = audit(rel, *rel.neighbouring_pair(), epsilon=float(eps), delta=DELTA, samples=samples,
                        seed=seed + 100 * i + j, ideal=True, progress=progress)
            best = profile_ratio(rep, config)
            row = {"claimed_epsilon": float(eps), "threat": name, "config": config.to_dict(),
                   "epsilon_lower_bound": rep.epsilon_lower_bound, "verdict": rep.verdict,
                   "strongest": best, "privacy_profile": rep.privacy_profile, "samples": samples,
                   "seconds": round(time.perf_counter() - t0, 2), "one_run": None}
            if name == "white-box gradient canary":  # the same code audited in one run, beside the many-run bound
                row["one_run_detail"] = one_run_audit(config, seed=seed + 100 * i)
                row["one_run"] = row["one_run_detail"]["epsilon_lower_bound"]
            rows.append(row)
            log(f"eps {eps:g}  {name:28s} certified {rep.epsilon_lower_bound:.3f} at delta 1e-5; "
                f"best {best['certified']:.3f}/{best['accountant']:.3f} = {best['ratio']:.2f} at delta "
                f"{best['delta']:g}  ({row['seconds']:.0f} s)")
    return rows


def variant_config(variant: str, *, epsilon: float = 2.0) -> DPSGDConfig:
    """The table's configuration: the eps-2 curve point with clip norm 2 (at C = 1 unscaled noise is the correct arithmetic)."""
    return curve_config(epsilon, clip_norm=2.0).replace(variant=variant)


def run_variants(*, samples: int = 200_000, seed: int = 0, progress=None, log=print) -> list:
    """Audit every :class:`Variant` under every threat model of :data:`VARIANT_THREATS` against its own claim."""
    rows = []
    for i, v in enumerate(Variant):
        config = variant_config(v.value)
        claim = accountant_epsilon(config, DELTA)
        audits = {}
        for j, (name, make) in enumerate(VARIANT_THREATS.items()):
            rel = make(config)
            rep = audit(rel, *rel.neighbouring_pair(), epsilon=claim, delta=DELTA, samples=samples,
                        seed=seed + 100 * i + j, ideal=True, progress=progress)
            audits[name] = {"epsilon_lower_bound": rep.epsilon_lower_bound, "verdict": rep.verdict,
                            "attack": rep.attack}
        flagged = [k for k, a in audits.items() if a["verdict"] == "violation"]
        sampler = sampler_check(config, seed=seed + 100 * i)
        if sampler["verdict"] == "violation":
            flagged.append("sampler check")
        one = one_run_audit(config, seed=seed + 100 * i)
        rows.append({"variant": v.value, "claimed_epsilon": claim, "config": config.to_dict(), "audits": audits,
                     "flagged_by": flagged, "verdict": verdict_of(bool(flagged)),
                     "samples": samples, "one_run": one["epsilon_lower_bound"], "one_run_detail": one,
                     "sampler": sampler})
        log(f"{v.value:15s} claim {claim:.3f}: " + ", ".join(f"{k} {a['epsilon_lower_bound']:.2f}"
                                                            f"{'*' if a['verdict'] == 'violation' else ''}"
                                                            for k, a in audits.items()))
    return rows


def variant_table(rows) -> str:
    """A markdown table: one row per variant, the bound under each threat model (* = violation)."""
    names = list(rows[0]["audits"])
    out = ["| variant | claimed eps | " + " | ".join(names) + " | sampler check | verdict | one-run |",
           "|---" * (len(names) + 5) + "|"]
    for r in rows:
        cells = [f"{r['audits'][n]['epsilon_lower_bound']:.2f}{' *' if r['audits'][n]['verdict'] == 'violation' else ''}"
                 for n in names]
        one = "-" if r.get("one_run") is None else f"{r['one_run']:.2f}"
        check = r.get("sampler")  # absent from results saved before the check existed
        cells.append("-" if check is None else "flagged *" if check["verdict"] == "violation" else "passes")
        out.append(f"| {r['variant']} | {r['claimed_epsilon']:.2f} | " + " | ".join(cells) + f" | {r['verdict']} | {one} |")
    return "\n".join(out)


def plot_curve(rows, stem):
    """Certified epsilon (delta 1e-5) per threat model against the claim, and the best certified/accountant ratio."""
    from dpaudit.plots.style import (
        legend_below,
        new_figure,
        paper_style,
        save_figure,
        series_style,
    )

    with paper_style():
        fig, (ax, bx) = new_figure("two-column", panels=2, aspect=0.8)
        claims = sorted({r["claimed_epsilon"] for r in rows})
        ax.plot(claims, claims, color="0.4", linewidth=1.0, label="accountant (PLD)")
        threats = list(dict.fromkeys(r["threat"] for r in rows))
        for i, name in enumerate(threats):
            sel = [r for r in rows if r["threat"] == name]
            st = series_style(i)
            ax.plot([r["claimed_epsilon"] for r in sel], [r["epsilon_lower_bound"] for r in sel], label=name, **st)
            bx.plot([r["claimed_epsilon"] for r in sel], [r["strongest"]["ratio"] for r in sel], **st)
        one = [r for r in rows if r.get("one_run") is not None]
        st = series_style(len(threats))
        ax.plot([r["claimed_epsilon"] for r in one], [r["one_run"] for r in one], markerfacecolor="none",
                label="one run, 1,000 gradient canaries (white box)", **st)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xticks(claims, [f"{c:g}" for c in claims])
        ticks = [0.25, 0.5, *claims]
        ax.set_yticks(ticks, [f"{c:g}" for c in ticks])
        ax.set_xlabel(r"claimed $\varepsilon$ at $\delta = 10^{-5}$")
        ax.set_ylabel(r"certified $\varepsilon$ at $\delta = 10^{-5}$ (95%)")
        ax.set_title("(a) certified against claimed", loc="left")
        bx.axhline(1.0, color="0.4", linewidth=1.0)
        bx.axhline(0.8, color="0.6", linewidth=0.8, linestyle=":")
        bx.set_xscale("log", base=2)
        bx.set_xticks(claims, [f"{c:g}" for c in claims])
        bx.set_ylim(0, 1.05)
        bx.set_xlabel(r"claimed $\varepsilon$ at $\delta = 10^{-5}$")
        bx.set_ylabel(r"certified / accountant $\varepsilon$")
        bx.set_title(r"(b) at the $\delta$ where the ratio is largest", loc="left")
        legend_below(fig, ncol=4)
        return save_figure(fig, stem)
