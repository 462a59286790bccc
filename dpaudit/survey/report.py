"""``summary.md`` and the survey figure, from the rows alone (``survey.jsonl``).

The figure has one panel per library: a row per entry, two columns per version (``ideal``: floating-point
attacks off; ``impl.``: on).  A cell is red when that audit certified a violation, green when it did not,
grey when the row did not run (its error is in ``summary.md``), blank when the entry does not apply to
that version; it is labelled with the certified lower bound.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from ..stats.verdict import Verdict

__all__ = ["write_summary", "draw_figure", "SUMMARY_FILE", "FIGURE_NAME"]

SUMMARY_FILE = "summary.md"
FIGURE_NAME = "survey"


def _cell(result: dict | None) -> str:
    if not result or result.get("verdict") is None:
        return "-"
    mark = "**violation**" if result["verdict"] == "violation" else "ok"
    return f"{mark} {result['epsilon_lower_bound']:.2f}"


def _grouped(rows: list[dict]) -> "OrderedDict[str, dict]":
    libs: OrderedDict = OrderedDict()
    for r in rows:
        lib = libs.setdefault(r["library"], {"versions": [], "entries": OrderedDict()})
        if r["version"] not in lib["versions"]:
            lib["versions"].append(r["version"])
        lib["entries"].setdefault(r["entry"], {})[r["version"]] = r
    return libs


def write_summary(directory: str | Path, rows: list[dict], *, seconds: float | None = None, draw: bool = True
                  ) -> list[Path]:
    """Write ``directory/summary.md`` (and the figure as PNG and PDF when ``draw``); the figure paths."""
    directory = Path(directory)
    libs = _grouped(rows)
    done = [r for r in rows if r.get("status") == "done"]
    lines = ["# Survey", ""]
    lines.append(f"{len(rows)} rows ({len(done)} audited, {len(rows) - len(done)} did not run) over "
                 f"{len(libs)} libraries and {len({(r['library'], r['version']) for r in rows})} library versions"
                 + (f"; this run took {seconds:.0f} s." if seconds is not None else "."))
    lines += ["", "Each cell: the verdict and the certified epsilon lower bound, `ideal` with floating-point attacks "
              "off (the mathematics), `implementation` with them on (the code as it runs).", ""]
    for name, lib in libs.items():
        lines += [f"## {name}", ""]
        head = ["entry", "function", "claim", "relation"]
        for v in lib["versions"]:
            head += [f"{v} ideal", f"{v} implementation"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for entry, by_version in lib["entries"].items():
            any_row = next(iter(by_version.values()))
            claim = f"{any_row['claimed_epsilon']:g}" + (f", {any_row['claimed_delta']:g}"
                                                          if any_row["claimed_delta"] else "")
            cells = [f"`{entry}`", f"`{any_row['function']}`", claim, any_row["relation"]]
            for v in lib["versions"]:
                r = by_version.get(v)
                if r is None:
                    cells += ["", ""]
                elif r.get("status") != "done":
                    cells += [r.get("status", "error"), r.get("status", "error")]
                else:
                    cells += [_cell(r["ideal"]), _cell(r["implementation"])]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    found = [r for r in done if "violation" in (r["ideal"]["verdict"], r["implementation"]["verdict"])]
    lines += ["## Violations", ""]
    if not found:
        lines += ["None certified.", ""]
    for r in found:
        which = [k for k in ("ideal", "implementation") if r[k]["verdict"] == "violation"]
        fp = r["implementation"].get("floating_point")
        how = f"; floating point: `{fp['attack']}` certifies {fp['epsilon_lower_bound']:.3g}" if fp else ""
        fpass = r["implementation"].get("float_pass")
        if fpass and fpass.get("verdict") == "violation":
            on_d, on_other = fpass["counts"]["D"], fpass["counts"]["D'"]
            how += (f"; float pass: `{fpass['attack']}`, {fpass['event']}: held out {on_d} on D and {on_other} on D', "
                    f"certifies {fpass['epsilon_lower_bound']:.3g}")
        lines += [f"- **{r['library']} {r['version']} `{r['entry']}`** (`{r['function']}`): "
                  f"{' and '.join(which)} epsilon >= "
                  f"{max(r[k]['epsilon_lower_bound'] for k in which):.3g} against the claimed "
                  f"{r['claimed_epsilon']:g} ({r['relation']}){how}. Pair: `{r['dataset']}` vs `{r['neighbor']}`. "
                  f"Reproduce: `{r['reproduce']}`"]
    failed = [r for r in rows if r.get("status") != "done"]
    lines += ["", "## Did not run", ""]
    lines += [f"- {r['library']} {r['version']} `{r['entry']}`: {r['status']}: {r['error']}" for r in failed] or ["None."]
    (directory / SUMMARY_FILE).write_text("\n".join(lines) + "\n")
    return draw_figure(directory, rows) if draw and rows else []


def draw_figure(directory: str | Path, rows: list[dict]) -> list[Path]:
    """The libraries x entries figure (PNG and PDF) under ``directory``; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    libs = _grouped(rows)
    heights = [len(lib["entries"]) + 1.5 for lib in libs.values()]
    width_cols = max(2 * len(lib["versions"]) for lib in libs.values())
    fig, axes = plt.subplots(len(libs), 1, figsize=(3.2 + 0.9 * width_cols, 0.6 + 0.19 * sum(heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    colours = {Verdict.VIOLATION: "#d62728", Verdict.NO_VIOLATION: "#b7e1b0", None: "#bdbdbd"}
    for ax, (name, lib) in zip(axes[:, 0], libs.items()):
        entries = list(lib["entries"])
        ncol = 2 * len(lib["versions"])
        for y, entry in enumerate(entries):
            for j, v in enumerate(lib["versions"]):
                r = lib["entries"][entry].get(v)
                for k, key in enumerate(("ideal", "implementation")):
                    x = 2 * j + k
                    if r is None:
                        continue
                    res = r.get(key) or {}
                    verdict = res.get("verdict") if r.get("status") == "done" else None
                    ax.add_patch(Rectangle((x, y), 1, 1, facecolor=colours.get(verdict, "#bdbdbd"),
                                           edgecolor="white", linewidth=0.8))
                    if verdict is not None:
                        ax.text(x + 0.5, y + 0.5, f"{res['epsilon_lower_bound']:.2f}", ha="center", va="center",
                                fontsize=5.5, color="white" if verdict == "violation" else "black")
        ax.set_xlim(0, width_cols)
        ax.set_ylim(len(entries), 0)
        ax.set_yticks([y + 0.5 for y in range(len(entries))])
        ax.set_yticklabels([e if len(e) <= 48 else e[:45] + "..." for e in entries], fontsize=5.5)
        ax.set_xticks([x + 0.5 for x in range(ncol)])
        ax.set_xticklabels([f"{v}\n{k}" for v in lib["versions"] for k in ("ideal", "impl.")], fontsize=6)
        ax.xaxis.tick_top()
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        ax.set_title(name, fontsize=8, loc="left", pad=14)
    handles = [Rectangle((0, 0), 1, 1, facecolor=c) for c in ("#d62728", "#b7e1b0", "#bdbdbd")]
    fig.legend(handles, ["violation certified", str(Verdict.NO_VIOLATION), "did not run"], loc="lower center",
               ncol=3, fontsize=6, frameon=False)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    paths = []
    for ext in ("png", "pdf"):
        path = Path(directory) / f"{FIGURE_NAME}.{ext}"
        fig.savefig(path, dpi=200)
        paths.append(path)
    plt.close(fig)
    return paths
