"""The worker: one row's audits, run by a library version's own interpreter.

``python -m dpaudit.survey.worker`` reads one task (JSON) on stdin and writes one JSON object on stdout,
the row's measured part.  The library's prints go to stderr (stdout is moved there, file descriptor and
all, while the library runs).  It ends on its own when the process that started it dies.

A row's audits: without a fixed pair, :func:`dpaudit.search` over the entry's domain and relation with
floating-point attacks on (the *implementation* verdict), then a fresh-seeded ``ideal=True`` audit of the
pair it found (the *mathematics* verdict); with a fixed pair, the two audits of that pair.  When a probe
(releases of its own) shows floating-point releases, the implementation verdict is also the float pass's
(:mod:`.float_pass`: the float features' events chosen for the held-out size, certified on fresh releases),
the search's audit and the pass each at half the row's failure probability, the larger bound reported.  All
seeds come from the row's own seed, so a row gives the same result whichever worker runs it.
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


def _seeds(seed: int) -> tuple[int, int, int]:
    """The implementation audit's, the ideal audit's and the float pass's seeds (spawned in that order, so the
    first two are what they are without the third)."""
    children = np.random.SeedSequence(seed).spawn(3)
    return tuple(int(c.generate_state(1, np.uint64)[0]) >> 1 for c in children)  # int first: numpy 1 has no uint64 >> int


def _probe_datasets(case: dict) -> list:
    """Datasets that decide whether the row's releases are floating point: its fixed pair, or the domain's ends."""
    if case.get("dataset") is not None:
        return [case["dataset"], case["neighbor"]]
    dom = case["domain"]
    return [[dom["low"]] * dom["size"], [dom["high"]] * dom["size"]]


def _implementation(impl: Any, passed: dict | None) -> dict:
    """The implementation verdict: the search's audit, or the float pass when its bound is larger."""
    from ..stats.verdict import verdict_of

    out = _verdict(impl, floating=True)
    out["float_pass"] = passed
    if passed is None:
        return out
    out["search_epsilon_lower_bound"] = out["epsilon_lower_bound"]
    if passed["epsilon_lower_bound"] > out["epsilon_lower_bound"]:
        out.update(epsilon_lower_bound=passed["epsilon_lower_bound"], attack=passed["attack"])
    out["verdict"] = verdict_of(out["verdict"] == "violation" or passed["verdict"] == "violation").value
    return out


def run_task(task: dict) -> dict:
    """The measured part of a row (audits, the pair, what ran), or ``{"error": ...}`` with one line."""
    import dpaudit

    from ..targets import load_target
    from .float_pass import float_pass, releases_are_float, split_confidence

    case = task["case"]
    for folder in reversed(task.get("paths", [])):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    start = time.perf_counter()
    out: dict[str, Any] = {"error": None}
    try:
        target = load_target(build_target(case, task.get("catalogue_dir")))
        seed_impl, seed_ideal, seed_float = _seeds(int(task["seed"]))
        common = dict(epsilon=case["epsilon"], delta=case["delta"], max_samples=case["max_samples"],
                      confidence=case["confidence"])
        probe_seed, pass_seed = np.random.SeedSequence(seed_float).spawn(2)
        floating = releases_are_float(target, _probe_datasets(case), probe_seed)
        impl_common = dict(common, confidence=split_confidence(case["confidence"])) if floating else common
        if case.get("dataset") is None:
            dom = case["domain"]
            impl = dpaudit.search(target, size=dom["size"], low=dom["low"], high=dom["high"],
                                  integer=dom["integer"], relation=case["relation"], seed=seed_impl,
                                  **case.get("search", {}), **impl_common)
            dataset, neighbor = impl.dataset, impl.neighbor
            out["candidates_screened"] = impl.candidates_screened
        else:
            dataset, neighbor = case["dataset"], case["neighbor"]
            impl = dpaudit.audit(target, dataset, neighbor, seed=seed_impl, **impl_common)
        passed = float_pass(target, dataset, neighbor, epsilon=case["epsilon"], delta=case["delta"],
                            confidence=impl_common["confidence"], samples=case["max_samples"],
                            seed=pass_seed) if floating else None
        ideal = dpaudit.audit(target, dataset, neighbor, seed=seed_ideal, ideal=True, **common)
        out.update(implementation=_implementation(impl, passed), ideal=_verdict(ideal, floating=False),
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
