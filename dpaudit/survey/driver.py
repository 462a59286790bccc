"""``dpaudit survey``'s engine: environments, rows dispatched to workers, results streamed, resumed.

One *row* is one case of a catalogue entry on one library version.  Its seed comes from a
``SeedSequence`` keyed by the survey seed, the library and the case (not the version, so that two
versions of the same code give the same draws; not the worker, so that ``--jobs`` and the backend change
nothing).  Rows run in worker processes of their environment's interpreter (:mod:`.worker`), started from
joblib's loky processes or Dask tasks; each finished row is appended to ``survey.jsonl`` at once (a crash
loses nothing finished), and at the end the file is rewritten in catalogue order, so the same seed gives
the same file (the ``seconds`` field aside) whatever ran it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..exceptions import ParameterValueError
from .catalogue import Catalogue, Case, Library, Version, load_catalogue
from .envs import EnvironmentFailed, dpaudit_path, environment_python, installed

__all__ = ["run_survey", "SurveyOutcome", "row_seed", "select", "ROW_FILE"]

ROW_FILE = "survey.jsonl"
META_FILE = "survey.meta.json"
#: Row statuses: audited; the worker failed (a library error, a timeout); the environment could not be made.
DONE, ERROR, NO_ENV = "done", "error", "no-environment"


@dataclass
class SurveyOutcome:
    directory: Path
    rows: list
    ran: list = field(default_factory=list)
    resumed: int = 0
    seconds: float = 0.0
    figures: list = field(default_factory=list)


def row_seed(seed: int, library: str, case_id: str) -> int:
    """The seed of one row: keyed by the survey seed, the library and the case, nothing else.

    >>> row_seed(0, "lib", "mean") == row_seed(0, "lib", "mean") != row_seed(0, "lib", "sum")
    True
    """
    key = int.from_bytes(hashlib.sha256(f"{library}\0{case_id}".encode()).digest()[:8], "big")
    return int(np.random.SeedSequence([seed, key]).generate_state(1, np.uint64)[0]) >> 1


def _parse_selector(text: str) -> tuple[str, str | None]:
    name, sep, version = text.partition("==")
    if not name.strip() or (sep and not version.strip()):
        raise ParameterValueError(f"--library: expected NAME or NAME==VERSION; got {text!r}")
    return name.strip(), version.strip() if sep else None


def select(catalogue: Catalogue, libraries: list[str] | None, entries: list[str] | None
           ) -> list[tuple[Library, Version, Case]]:
    """The (library, version, case) rows to run, in catalogue order; unknown names are bad input."""
    wanted = [_parse_selector(s) for s in libraries or []]
    names = {lib.name: lib for lib in catalogue.libraries}
    for name, version in wanted:
        if name not in names:
            raise ParameterValueError(f"--library: no library {name!r} in the catalogue (it has {sorted(names)})")
        if version is not None and version not in [v.version for v in names[name].versions]:
            raise ParameterValueError(f"--library: {name} has no version {version!r} in the catalogue "
                                      f"(it has {[v.version for v in names[name].versions]})")
    rows = []
    for lib in catalogue.libraries:
        for version in lib.versions:
            if wanted and not any(n == lib.name and v in (None, version.version) for n, v in wanted):
                continue
            for case in lib.cases:
                if lib.applies(case, version) and (not entries or case.case_id in entries or case.entry_id in entries):
                    rows.append((lib, version, case))
    if entries and not rows:
        raise ParameterValueError(f"--entry: no entry {entries[0]!r} in the selected libraries")
    return rows


def reproduce_command(catalogue: Path, library: str, version: str, case_id: str, seed: int) -> str:
    """The command that re-runs one row (its seed is keyed by the entry, so it is the same row)."""
    parts = ["dpaudit", "survey", str(catalogue), "--library", f"{library}=={version}", "--entry", case_id,
             "--seed", str(seed), "--out", "survey-reproduce"]
    return " ".join(shlex.quote(p) for p in parts)


def _key(row: dict) -> tuple:
    return row["library"], row["version"], row["entry"]


def _read_rows(path: Path) -> list[dict]:
    """The complete rows of a ``survey.jsonl`` (a line cut by a crash is dropped)."""
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return rows


def _still_valid(row: dict | None, case: Case) -> bool:
    """Whether a finished row stands for ``case`` as the catalogue now says it (rows without a digest do)."""
    return row is not None and row.get("case_hash", case_hash(case)) == case_hash(case)


def run_row(task: dict) -> dict:
    """Run one row in its environment's worker process; the row's measured part, or an error."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([task["dpaudit_path"], *task["paths"]])
    env.pop("PYTHONHOME", None)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", "1")
    env.setdefault("NUMBA_NUM_THREADS", "1")
    log = Path(task["log"])
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    with open(log, "w") as err:
        try:
            done = subprocess.run([task["python"], "-m", "dpaudit.survey.worker"], input=json.dumps(task),
                                  stdout=subprocess.PIPE, stderr=err, text=True, env=env,
                                  timeout=task["case"]["timeout"], cwd=task["catalogue_dir"])
        except subprocess.TimeoutExpired:
            return {"error": f"timeout: the row took over {task['case']['timeout']:g} s (log: {log})",
                    "seconds": round(time.perf_counter() - start, 2)}
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        tail = " | ".join(line.strip() for line in log.read_text().splitlines()[-3:])
        return {"error": f"the worker exited with status {done.returncode} without a result: {tail} (log: {log})",
                "seconds": round(time.perf_counter() - start, 2)}


def _row(lib: Library, version: Version, case: Case, seed: int, given: str, measured: dict,
         status: str, versions: dict) -> dict:
    """One row of ``survey.jsonl``; ``given`` is the catalogue path as the user wrote it (for ``reproduce``)."""
    null = {"verdict": None, "epsilon_lower_bound": None}
    return {
        "library": lib.name, "version": version.version, "entry": case.case_id, "function": case.function,
        "claimed_epsilon": case.epsilon, "claimed_delta": case.delta, "relation": case.relation,
        "ideal": measured.get("ideal", null), "implementation": measured.get("implementation", null),
        "dataset": measured.get("dataset", case.dataset), "neighbor": measured.get("neighbor", case.neighbor),
        "parameters": case.params, "domain": None if case.dataset is not None else case.domain,
        "reproduce": reproduce_command(given, lib.name, version.version, case.case_id, seed),
        "seed": row_seed(seed, lib.name, case.case_id), "seeded": measured.get("seeded"),
        "status": status, "error": measured.get("error"), "docs": case.docs,
        "installed": versions, "candidates_screened": measured.get("candidates_screened"),
        "seconds": measured.get("seconds"), "case_hash": case_hash(case),
    }


def case_hash(case: Case) -> str:
    """A digest of everything the catalogue says about a row's case: ``--resume`` re-runs a row whose entry changed."""
    text = json.dumps(case.to_dict(), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _dispatch(tasks: list[dict], n_jobs: int, backend: str, scheduler: str | None):
    """Yield ``(task index, result)`` as rows finish, on loky processes, Dask, or in this process."""
    if backend == "dask" or scheduler:
        from distributed import as_completed

        from .._executor import dask_client

        with dask_client(scheduler, n_jobs) as client:
            futures = {client.submit(run_row, t, pure=False): i for i, t in enumerate(tasks)}
            for fut in as_completed(futures):
                yield futures[fut], fut.result()
        return
    if n_jobs == 1 or len(tasks) <= 1:
        for i, t in enumerate(tasks):
            yield i, run_row(t)
        return
    from joblib import Parallel, delayed

    yield from Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")(
        delayed(_indexed)(i, t) for i, t in enumerate(tasks))


def _indexed(i: int, task: dict) -> tuple[int, dict]:
    from .._executor import end_with_parent

    end_with_parent()
    return i, run_row(task)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _describe(row: dict) -> str:
    if row["status"] != DONE:
        return f"{row['status']}: {row['error']}"
    i, m = row["ideal"], row["implementation"]
    return (f"ideal {i['verdict']} ({i['epsilon_lower_bound']:.3g}), implementation {m['verdict']} "
            f"({m['epsilon_lower_bound']:.3g}), claimed {row['claimed_epsilon']:g}")


def run_survey(catalogue: str | Path, *, out: str | Path = "survey", libraries: list[str] | None = None,
               entries: list[str] | None = None, seed: int | None = None, n_jobs: int = 1, backend: str = "loky",
               scheduler: str | None = None, resume: bool = False, draw: bool = True) -> SurveyOutcome:
    """Survey the catalogue's libraries (or those ``libraries`` names) into ``out``; see the module docstring.

    Raises :class:`~dpaudit.exceptions.ConfigError` (a bad catalogue, naming the key path) or
    :class:`~dpaudit.exceptions.ParameterValueError` (a bad selection) before anything runs.
    """
    start = time.monotonic()
    cat = load_catalogue(catalogue)
    if n_jobs < 1:
        raise ParameterValueError(f"--jobs must be >= 1; got {n_jobs}")
    if backend not in ("loky", "dask"):
        raise ParameterValueError(f"--backend must be loky or dask; got {backend!r}")
    seed = seed if seed is not None else (cat.seed if cat.seed is not None else 0)
    chosen = select(cat, libraries, entries)
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    rows_path = directory / ROW_FILE
    todo = _rows_to_run(directory, chosen, {"catalogue": str(cat.path), "seed": seed}, resume=resume)
    _say(f"survey: {len(chosen)} rows over {len({(lib.name, v.version) for lib, v, _ in chosen})} library versions; "
         f"{len(chosen) - len(todo)} already done, {len(todo)} to run")
    pythons, failures, versions = _environments(todo)
    src = str(dpaudit_path())
    tasks, meta_rows, finished = [], [], []
    with open(rows_path, "a") as fh:
        def record(row: dict) -> None:
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            finished.append(row)

        for lib, version, case in todo:
            key = (lib.name, version.version)
            s = row_seed(seed, lib.name, case.case_id)
            if key in failures:
                record(_row(lib, version, case, seed, str(catalogue), {"error": failures[key]}, NO_ENV, {}))
                continue
            paths = [str((cat.directory / p).resolve()) for p in lib.path]
            log = directory / "logs" / f"{lib.name}-{version.version}-{hashlib.sha1(case.case_id.encode()).hexdigest()[:10]}.log"
            tasks.append({"case": case.to_dict(), "seed": s, "paths": paths, "catalogue_dir": str(cat.directory),
                          "python": pythons[key], "dpaudit_path": src, "log": str(log.resolve())})
            meta_rows.append((lib, version, case))
        t0 = time.monotonic()
        for n, (i, measured) in enumerate(_dispatch(tasks, n_jobs, backend, scheduler), 1):
            lib, version, case = meta_rows[i]
            status = ERROR if measured.get("error") else DONE
            row = _row(lib, version, case, seed, str(catalogue), measured, status,
                       versions.get((lib.name, version.version), {}))
            record(row)
            elapsed = time.monotonic() - t0
            left = elapsed / n * (len(tasks) - n)
            _say(f"survey: {n}/{len(tasks)} {lib.name} {version.version} {case.case_id}: {_describe(row)} "
                 f"[{measured.get('seconds', 0):.0f} s; {elapsed:.0f} s elapsed, about {left:.0f} s left]")
    all_rows = _in_catalogue_order(rows_path, chosen)
    outcome = SurveyOutcome(directory, all_rows, ran=finished, resumed=len(chosen) - len(todo),
                            seconds=time.monotonic() - start)
    from .report import write_summary

    outcome.figures = write_summary(directory, all_rows, seconds=outcome.seconds, draw=draw)
    return outcome


def _rows_to_run(directory: Path, chosen: list, meta: dict, *, resume: bool) -> list:
    """The chosen rows to run, after writing ``meta`` and keeping in the row file only the finished rows
    that are still valid (all of them gone unless ``resume``)."""
    rows_path, meta_path = directory / ROW_FILE, directory / META_FILE
    seed = meta["seed"]
    old: dict = {}
    if resume and rows_path.exists():
        saved = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        if saved.get("seed") not in (None, seed):
            raise ParameterValueError(f"--resume: {directory} was surveyed with seed {saved['seed']}, not {seed}")
        old = {_key(r): r for r in _read_rows(rows_path) if r.get("status") != NO_ENV}
    meta_path.write_text(json.dumps(meta) + "\n")
    todo = [(lib, v, c) for lib, v, c in chosen if not _still_valid(old.get((lib.name, v.version, c.case_id)), c)]
    for lib, v, c in todo:
        old.pop((lib.name, v.version, c.case_id), None)
    rows_path.write_text("".join(json.dumps(r) + "\n" for r in old.values()))
    return todo


def _environments(todo: list) -> tuple[dict, dict, dict]:
    """``(python, failure, installed versions)`` per ``(library, version)`` of the rows to run: the
    interpreter of its environment (built when missing), or why it could not be built."""
    pythons, failures, versions = {}, {}, {}
    for lib, version, _ in todo:
        key = (lib.name, version.version)
        if key in pythons or key in failures:
            continue
        try:
            pythons[key] = sys.executable if version.current else environment_python(version.requirements, log=_say)
            versions[key] = {} if version.current else installed(pythons[key])
        except EnvironmentFailed as exc:
            failures[key] = str(exc)
            _say(f"survey: {lib.name} {version.version}: no environment: {exc}")
    return pythons, failures, versions


def _in_catalogue_order(rows_path: Path, chosen: list) -> list[dict]:
    """Rewrite the row file in catalogue order, so it does not depend on which worker finished first."""
    order = {(lib.name, v.version, c.case_id): j for j, (lib, v, c) in enumerate(chosen)}
    all_rows = sorted(_read_rows(rows_path), key=lambda r: order.get(_key(r), len(order)))
    tmp = rows_path.with_suffix(".jsonl.tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in all_rows))
    os.replace(tmp, rows_path)
    return all_rows
