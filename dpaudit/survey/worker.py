"""The worker: one row's audits, run by a library version's own interpreter.

``python -m dpaudit.survey.worker`` reads one task (JSON) on stdin and writes one JSON object on stdout,
the row's measured part.  The library's prints go to stderr (stdout is moved there, file descriptor and
all, while the library runs).  It ends on its own when the process that started it dies.

A row's audits: without a fixed pair, :func:`dpaudit.search` over the entry's domain and relation with
floating-point attacks on (the *implementation* verdict), then a fresh-seeded ``ideal=True`` audit of the
pair it found (the *mathematics* verdict); with a fixed pair, the two audits of that pair.  Both seeds
come from the row's own seed, so a row gives the same result whichever worker runs it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["build_target", "run_task"]

#: The audit fields a row keeps from each verdict (timing fields left out, so rows compare across runs).
VERDICT_FIELDS = ("verdict", "epsilon_lower_bound", "samples", "stopping_reason", "attack", "ceiling")


def build_target(case: dict, catalogue_dir: str | None = None) -> Any:
    """The dpaudit target a case describes: ``call.target`` (a dpaudit target, or a factory called with the
    params), else :func:`dpaudit.adapters.library_call` of ``call.function`` (default: the entry's function)."""
    from ..adapters.library import import_dotted, library_call
    from ..mechanisms import REGISTRY
    from ..targets import load_target

    call, params = dict(case["call"]), dict(case["params"])
    if "target" in call:
        spec = call["target"]
        if spec in REGISTRY:
            return load_target(spec, **params)
        left, _, attr = spec.rpartition(":")
        if catalogue_dir and (left.endswith(".py") or "/" in left) and not os.path.isabs(left):
            spec = f"{Path(catalogue_dir) / left}:{attr}"
        factory = load_target(spec).fn if (left.endswith(".py") or "/" in left) else import_dotted(spec)
        return factory(**params) if params or isinstance(factory, type) else factory
    return library_call(call.get("function", case["function"]), params=params, data=call.get("data", "array"),
                        method=call.get("method"), statistic=call.get("statistic", "sum"),
                        seed=call.get("seed", "random_state"), seed_keyword=call.get("seed_keyword", "random_state"),
                        pick=call.get("pick"), fresh=bool(call.get("fresh", False)))


def _verdict(report: Any, *, floating: bool) -> dict:
    d = report.to_dict()
    out = {k: d.get(k) for k in VERDICT_FIELDS}
    if floating:
        fp = d.get("floating_point")
        out["floating_point"] = None if fp is None else {"attack": fp.get("attack"),
                                                         "epsilon_lower_bound": fp.get("epsilon_lower_bound")}
        out["distribution_epsilon_lower_bound"] = d.get("distribution_epsilon_lower_bound")
    return out


def _seeds(seed: int) -> tuple[int, int]:
    a, b = np.random.SeedSequence(seed).spawn(2)
    return int(a.generate_state(1, np.uint64)[0]) >> 1, int(b.generate_state(1, np.uint64)[0]) >> 1  # int first: numpy 1 has no uint64 >> int


def run_task(task: dict) -> dict:
    """The measured part of a row (audits, the pair, what ran), or ``{"error": ...}`` with one line."""
    import dpaudit

    case = task["case"]
    for folder in reversed(task.get("paths", [])):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    start = time.perf_counter()
    out: dict[str, Any] = {"error": None}
    try:
        target = build_target(case, task.get("catalogue_dir"))
        seed_impl, seed_ideal = _seeds(int(task["seed"]))
        common = dict(epsilon=case["epsilon"], delta=case["delta"], max_samples=case["max_samples"],
                      confidence=case["confidence"])
        if case.get("dataset") is None:
            dom = case["domain"]
            impl = dpaudit.search(target, size=dom["size"], low=dom["low"], high=dom["high"],
                                  integer=dom["integer"], relation=case["relation"], seed=seed_impl,
                                  **case.get("search", {}), **common)
            dataset, neighbor = impl.dataset, impl.neighbor
            out["candidates_screened"] = impl.candidates_screened
        else:
            dataset, neighbor = case["dataset"], case["neighbor"]
            impl = dpaudit.audit(target, dataset, neighbor, seed=seed_impl, **common)
        ideal = dpaudit.audit(target, dataset, neighbor, seed=seed_ideal, ideal=True, **common)
        out.update(implementation=_verdict(impl, floating=True), ideal=_verdict(ideal, floating=False),
                   dataset=_plain(dataset), neighbor=_plain(neighbor), seeded=bool(impl.seeded))
    except Exception as exc:  # noqa: BLE001 - a library that raises is a row's finding, not the survey's end
        out["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:500]
    out["seconds"] = round(time.perf_counter() - start, 2)
    return out


def _plain(value: Any) -> Any:
    return np.asarray(value).tolist()


def main() -> int:
    from .._executor import end_with_parent

    end_with_parent()
    task = json.loads(sys.stdin.read())
    result_fd = os.dup(1)
    os.dup2(2, 1)  # the library's prints (Python and C) go to stderr; the result alone to the saved stdout
    sys.stdout = sys.stderr
    import warnings

    warnings.simplefilter("ignore")
    result = run_task(task)
    with os.fdopen(result_fd, "w") as fh:
        fh.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
