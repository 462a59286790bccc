"""Write a minimal witness script for every violation row of a survey, and run some of them.

    python experiments/library_survey/witness.py [ROWS.jsonl] [--out DIR] [--run PATTERN]...

For each row of ``survey.jsonl`` whose ``ideal`` or ``implementation`` verdict is a violation, writes
``DIR/<library>-<version>-<entry>.py`` (default DIR: ``witnesses/`` beside the rows' folder). The script
calls the library once on each side of the found pair, as a user would; draws releases on both through the
survey's own release function (the catalogue entry's call); prints the events that tell them apart
(:func:`dpaudit.survey.witness.show_leak`); and ends with the :func:`dpaudit.audit` call that certifies the
violation (exit 0 when it does, 1 when not). Its header quotes the library's source lines responsible, read
by ``inspect`` in the environment of that version (``witness_notes.yaml`` names the objects and lines of each
finding; code compiled into the wheel, such as OpenDP's Rust, is quoted there from the release's tag), what the docs say, and whether the later surveyed versions fixed it (from the rows).

A witness runs in the survey's cached environment of its version (created from the package index when
missing): ``--run PATTERN`` (fnmatch on the witness's file name) runs the matching ones there and prints
their output.
"""

from __future__ import annotations

import argparse
import builtins
import fnmatch
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from dpaudit.survey.catalogue import load_catalogue
from dpaudit.survey.driver import select
from dpaudit.survey.envs import dpaudit_path, environment_python

HERE = Path(__file__).resolve().parent
RELEASES = 20000  # releases per side that the witness draws to show the leak

_INSPECT = r"""
import inspect, json, sys, sysconfig
from dpaudit.adapters.library import import_dotted
out = {}
site = sysconfig.get_paths()["purelib"]
for name, patterns in json.loads(sys.stdin.read()).items():
    try:
        obj = import_dotted(name)
        obj = getattr(obj, "py_func", obj)
        lines, start = inspect.getsourcelines(obj)
        path = inspect.getsourcefile(obj)
        hits = [[start + i, line.rstrip()] for i, line in enumerate(lines) if any(p in line for p in patterns)]
        out[name] = {"file": path[len(site) + 1:] if path.startswith(site) else path, "start": start, "lines": hits}
    except Exception as exc:
        out[name] = {"error": f"{type(exc).__name__}: {exc}"}
print(json.dumps(out))
"""


def is_violation(row: dict) -> bool:
    return any((row.get(k) or {}).get("verdict") == "violation" for k in ("ideal", "implementation"))


def witness_name(row: dict) -> str:
    return re.sub(r"[^A-Za-z0-9._=,-]+", "_", f"{row['library']}-{row['version']}-{row['entry']}").strip("_")


def find_note(notes: list[dict], row: dict) -> dict | None:
    for note in notes:
        if note["library"] == row["library"] and any(fnmatch.fnmatchcase(row["entry"], p) for p in note["entries"]):
            return note
    return None


def _worker_env(paths: tuple[str, ...] = ()) -> dict:
    """The environment a witness runs in: this dpaudit (a link to it, as the survey's workers) and the
    catalogue's ``path`` folders on ``PYTHONPATH``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(dpaudit_path()), *paths]))
    env.pop("PYTHONHOME", None)
    return env


def quote_sources(python: str, notes: list[dict], paths: tuple = ()) -> dict:
    """``{object: {file, start, lines: [[lineno, text]]} or {error}}`` of the notes' objects, read in ``python``'s env."""
    wanted: dict[str, list[str]] = {}
    for note in notes:
        for src in note.get("source", []):
            if "object" in src:
                wanted.setdefault(src["object"], []).extend(src["lines"])
    if not wanted:
        return {}
    done = subprocess.run([python, "-c", _INSPECT], input=json.dumps(wanted), capture_output=True, text=True,
                          env=_worker_env(paths), cwd="/")
    if done.returncode != 0:
        return {name: {"error": done.stderr.strip().splitlines()[-1:]} for name in wanted}
    return json.loads(done.stdout.strip().splitlines()[-1])


def later_versions(rows: list[dict], row: dict, order: list[str]) -> str:
    """What the rows say about the same entry in the versions after ``row``'s."""
    kind = "ideal" if row["ideal"].get("verdict") == "violation" else "implementation"
    after = [r for r in rows if r["library"] == row["library"] and r["entry"] == row["entry"]
             and r["version"] in order and order.index(r["version"]) > order.index(row["version"])]
    if not after:
        return "No later version of this entry was surveyed."
    parts = []
    for r in after:
        v = r.get(kind) or {}
        bound = v.get("epsilon_lower_bound")
        state = "still flagged" if v.get("verdict") == "violation" else "not flagged (fixed, or not found)"
        parts.append(f"{r['version']}: {state}; {kind} {v.get('verdict')} ({bound:.3g})" if bound is not None
                     else f"{r['version']}: {r.get('status')} ({r.get('error')})")
    return "Later surveyed versions: " + "; ".join(parts) + "."


def _py(value) -> str:
    """A Python literal of a JSON value, lists as tuples (as the survey's call passes them)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "(" + ", ".join(_py(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


_DATA = {"array": "np.asarray({d}, dtype=float)", "int": "np.rint({d}).astype(np.int64)", "list": "list({d})",
         "column": "np.asarray({d}, dtype=float).reshape(-1, 1)", "value": "int({d}[0])"}
_STAT = {"sum": "float(np.sum({d}))", "integer_sum": "int(np.rint(np.sum({d})))", "count": "float(len({d}))",
         "mean": "float(np.mean({d}))", "first": "int({d}[0])", "data": None, "none": ""}


def _alias(function: str) -> str:
    """The name the witness imports ``function`` under (``sum`` would shadow the builtin)."""
    name = function.rpartition(".")[2]
    return f"{name}_" if name in dir(builtins) else name


def library_import(case: dict) -> str:
    """The import line of the function a witness calls directly ("" for a dpaudit target)."""
    if "target" in case["call"]:
        return ""
    module, _, name = case["call"].get("function", case["function"]).rpartition(".")
    alias = _alias(f"{module}.{name}")
    return f"from {module} import {name}" + (f" as {alias}" if alias != name else "")


def direct_call(case: dict) -> list[str]:
    """The lines of one library call on D and on D', written as a user would (none for a dpaudit target)."""
    call = case["call"]
    if "target" in call:
        return [f"# The entry calls the library through dpaudit's target {call['target']!r}: see RELEASE below."]
    name = _alias(call.get("function", case["function"]))
    params = {k: v for k, v in case["params"].items()}
    seed = call.get("seed", "random_state")
    lines = []
    if seed == "random_state":
        params[call.get("seed_keyword", "random_state")] = "RS"
    elif seed in ("global", "numba"):
        lines += ["np.random.seed(0)", "random.seed(0)"]
    kw = ", ".join(f"{k}=np.random.RandomState(0)" if v == "RS" else f"{k}={_py(v)}" for k, v in params.items())
    pick = "" if call.get("pick") is None else f"[{call['pick']!r}]"
    for label, d in (("D ", "D"), ("D'", "D_PRIME")):
        if call.get("method"):
            stat = _STAT[call.get("statistic", "sum")]
            arg = _DATA[call.get("data", "array")].format(d=d) if stat is None else stat.format(d=d)
            expr = f"{name}({kw}).{call['method']}({arg})"
        else:
            arg = _DATA[call.get("data", "array")].format(d=d)
            expr = f"{name}({arg}{', ' if kw else ''}{kw})"
        lines.append(f"show_one({label!r}, {expr}{pick})")
    return lines


def from_float_pass(row: dict) -> bool:
    """Whether a row's implementation violation is the float pass's alone (its search's audit certified none)."""
    imp = row["implementation"]
    passed = imp.get("float_pass") or {}
    search = imp.get("search_epsilon_lower_bound")
    return passed.get("verdict") == "violation" and search is not None and search <= row["claimed_epsilon"]


def _header(row: dict, note: dict | None, sources: dict, later: str, env_key: str) -> str:
    imp, ideal = row["implementation"], row["ideal"]
    fp = imp.get("floating_point") or {}
    out = [f"Witness: {row['library']} {row['version']}, {row['function']} (survey entry {row['entry']}).", "",
           f"Claim: ({row['claimed_epsilon']:g}, {row['claimed_delta']:g})-DP under {row['relation']}; "
           f"parameters {json.dumps(row['parameters'])}.",
           f"Pair found: D = {row['dataset']}, D' = {row['neighbor']}.",
           f"Survey verdicts: ideal {ideal['verdict']} (epsilon >= {ideal['epsilon_lower_bound']:.3f}); "
           f"implementation {imp['verdict']} (epsilon >= {imp['epsilon_lower_bound']:.3f}, attack "
           f"{fp.get('attack') or imp.get('attack')}"
           f"{'; float pass: ' + imp['float_pass']['event'] if from_float_pass(row) else ''}).",
           f"Reproduce the row: {row['reproduce']}", ""]
    if note is None:
        out += ["Source lines responsible: not identified (no entry in witness_notes.yaml for this finding)."]
    else:
        out += [f"Kind: {note['kind']}. Cause: {note['cause']}", f"True epsilon: {note['true_epsilon']}", "",
                f"Source lines responsible ({row['library']} {row['version']}, as installed):"]
        if not note.get("source"):
            out.append("  none that inspect can read (compiled code): the cause above quotes them.")
        for src in note.get("source", []):
            if "object" not in src:  # compiled code: the lines as the note quotes them from the release's tag
                out.append(f"  {src['file']} ({src['repository']} at {src['tag']}: compiled into the installed wheel):")
                out += [f"    {n}: {text.strip()}" for n, text in src["quote"]]
                continue
            got = sources.get(src["object"], {"error": "not inspected"})
            if "error" in got:
                out.append(f"  {src['object']}: could not be read ({got['error']})")
                continue
            out.append(f"  {got['file']} ({src['object']}, from line {got['start']}):")
            out += [f"    {n}: {text.strip()}" for n, text in got["lines"]]
        out += ["", f"Docs: {note['docs']}"]
    out += [later, "", f"Runs in the survey's environment of this version (~/.cache/dpaudit/envs/{env_key}):",
            f"    python experiments/library_survey/witness.py --run '{witness_name(row)}.py'"]
    return "\n".join(textwrap.fill(line, 112, subsequent_indent="    ") if len(line) > 112 and not
                     line.startswith("    ") else line for line in out)


def render(row: dict, case: dict, note: dict | None, sources: dict, later: str, env_key: str) -> str:
    """The text of one witness script."""
    imp = row["implementation"]
    ideal = row["ideal"]["verdict"] == "violation"
    attack = None if ideal else ((imp.get("floating_point") or {}).get("attack") or imp.get("attack"))
    by_pass = not ideal and from_float_pass(row)
    if by_pass:
        attack = imp["float_pass"]["attack"]
    slim = {"function": case["function"], "call": case["call"], "params": case["params"]}
    calls = direct_call(case)
    helpers = "certify, draw, show_leak" + (", show_one" if any("show_one(" in c for c in calls) else "")
    body = [
        f'"""{_header(row, note, sources, later, env_key)}\n"""', "",
        "import random  # noqa: F401 - seeds the library's global generators where it draws from them",
        "import sys", "", "import numpy as np", "",
        f"from dpaudit.survey.witness import {helpers}",
        "from dpaudit.survey.worker import build_target",
        *([library_import(case)] if library_import(case) else []), "",
        f"D = {json.dumps(row['dataset'])}", f"D_PRIME = {json.dumps(row['neighbor'])}", "", "",
        "# 1. The library called once on each side, as a user would.", *calls, "",
        "# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.",
        f"RELEASE = build_target({slim!r})",
        f"rng = np.random.default_rng({row['seed'] % 2 ** 32})",
        f"x0, x1 = draw(RELEASE, D, {RELEASES}, rng), draw(RELEASE, D_PRIME, {RELEASES}, rng)",
        f"show_leak(x0, x1, {attack!r})", "",
        f"# 3. The audit that certifies it ({'ideal: floating-point attacks off' if ideal else 'the code as it runs'}"
        f"{'; the survey float pass' if by_pass else ''}).",
        f"sys.exit(certify(RELEASE, D, D_PRIME, epsilon={row['claimed_epsilon']!r}, "
        f"delta={row['claimed_delta']!r}, max_samples={case['max_samples']},",
        f"                 confidence={case['confidence']}, seed={row['seed'] % 2 ** 32}, ideal={ideal}"
        f"{', float_pass=True' if by_pass else ''}))", ""]
    return "\n".join(body)


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("rows", nargs="?", default=str(HERE / "results" / "survey.jsonl"), help="a survey.jsonl")
    p.add_argument("--catalogue", default=str(HERE / "catalogue.yaml"))
    p.add_argument("--notes", default=str(HERE / "witness_notes.yaml"))
    p.add_argument("--out", default=None, help="where the witnesses go (default: witnesses/ beside the rows' folder)")
    p.add_argument("--run", action="append", default=[], metavar="PATTERN", help="run the matching witnesses")
    return p.parse_args(argv)


def generate(rows: list[dict], catalogue: str, notes: list[dict], out: Path) -> list[tuple[Path, str, tuple]]:
    """Write one witness per violation row; ``[(script, python of its environment, sys.path folders)]``."""
    from dpaudit.survey.envs import env_key

    cat = load_catalogue(catalogue)
    order = {lib.name: [v.version for v in lib.versions] for lib in cat.libraries}
    out.mkdir(parents=True, exist_ok=True)
    written, quoted = [], {}
    for row in (r for r in rows if is_violation(r)):
        chosen = select(cat, [f"{row['library']}=={row['version']}"], [row["entry"]])
        lib, version, case = next(c for c in chosen if c[2].case_id == row["entry"])
        python = sys.executable if version.current else environment_python(version.requirements, log=print)
        note = find_note(notes, row)
        paths = tuple(str((cat.directory / p).resolve()) for p in lib.path)
        key = (lib.name, version.version)
        if key not in quoted:  # one interpreter start per environment, for all of its library's notes
            quoted[key] = quote_sources(python, [n for n in notes if n["library"] == lib.name], paths)
        later = later_versions(rows, row, order.get(lib.name, []))
        script = out / f"{witness_name(row)}.py"
        script.write_text(render(row, case.to_dict(), note, quoted[key], later, env_key(version.requirements)))
        written.append((script, python, paths))
    return written


def run(script: Path, python: str, paths: tuple = ()) -> int:
    """Run one witness in its environment, its output printed; its exit status."""
    print(f"$ {python} {script}", flush=True)
    done = subprocess.run([python, str(script)], env=_worker_env(paths), cwd=str(script.parent))
    print(f"exit {done.returncode}\n", flush=True)
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    rows_path = Path(args.rows)
    rows = [json.loads(line) for line in rows_path.read_text().splitlines() if line.strip()]
    notes = yaml.safe_load(Path(args.notes).read_text())["findings"]
    out = Path(args.out) if args.out else rows_path.parent.parent / "witnesses"
    written = generate(rows, args.catalogue, notes, out)
    print(f"witness: {len(written)} scripts in {out} ({sum(find_note(notes, r) is None for r in rows if is_violation(r))}"
          f" without source notes)")
    failed = 0
    for script, python, paths in written:
        if any(fnmatch.fnmatch(script.name, p) for p in args.run):
            failed += run(script, python, paths) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
