"""The survey catalogue: libraries, the versions to install, and the entries to audit in each.

A catalogue is YAML read with ``yaml.safe_load``; everything is validated before anything is installed or
run, and a bad key raises :class:`~dpaudit.exceptions.ConfigError` naming its path
(``libraries[0].entries[2].domain.low: expected a number, got 'x'``).  Schema (``docs/survey.md`` has the
full reference)::

    seed: 0                              # default --seed
    defaults: {confidence: 0.95, ...}    # entry keys applied to every entry (a library's own `defaults` next)
    libraries:
      - name: diffprivlib
        docs: https://...                # where the claims below were read
        path: [wrappers]                 # folders (relative to the catalogue) put on the worker's sys.path
        versions:
          - version: "0.6.6"
            requirements: ["diffprivlib==0.6.6", "scikit-learn<1.9"]
          - version: local
            python: current              # no environment: the interpreter running dpaudit
        entries:
          - id: tools.mean               # unique in the library
            function: diffprivlib.tools.mean       # the dotted name users call (reported)
            call: {data: array, seed: random_state}  # how (dpaudit.adapters.library_call), or {target: ...}
            params: {epsilon: 1.0, bounds: [0, 1]}
            epsilon: 1.0                 # the claim (default: params.epsilon; delta: params.delta or 0)
            relation: replace-one        # or a list: one row per relation
            docs: "where the claim and relation are stated"
            domain: {size: 3, low: 0, high: 1, integer: false}   # what `search` explores
            dataset: null                # or a fixed pair (then no search)
            neighbor: null
            grid: {epsilon: [0.1, 10]}   # every combination of these params is its own row
            cases: [{label: straddle, params: {bounds: [-1, 1]}, domain: {low: -1}}]
            versions: ["0.6.6"]          # the versions it applies to (default: all)
            max_samples: 20000
            confidence: 0.95
            timeout: 900                 # seconds for the row (its worker is then stopped)
            search: {screen_samples: 300, max_candidates: 10}   # the screening's size (dpaudit.search)
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exceptions import ConfigError

__all__ = ["Catalogue", "Library", "Version", "Case", "load_catalogue", "ENTRY_KEYS", "CALL_KEYS"]

TOP_KEYS = ("seed", "defaults", "libraries", "description")
LIBRARY_KEYS = ("name", "docs", "path", "versions", "entries", "defaults", "notes")
VERSION_KEYS = ("version", "requirements", "python", "notes")
ENTRY_KEYS = ("id", "function", "call", "params", "epsilon", "delta", "relation", "docs", "domain", "dataset",
              "neighbor", "grid", "cases", "versions", "max_samples", "confidence", "timeout", "notes", "label",
              "search")
SEARCH_KEYS = ("screen_samples", "max_candidates")
CALL_KEYS = ("target", "function", "data", "method", "statistic", "seed", "seed_keyword", "pick", "fresh")
DOMAIN_KEYS = ("size", "low", "high", "integer")
RELATIONS = ("replace-one", "add-remove", "linf")
DEFAULTS = {"domain": {"size": 3, "low": 0.0, "high": 1.0, "integer": False}, "relation": "replace-one",
            "max_samples": 20_000, "confidence": 0.95, "timeout": 900}
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,119}$")


@dataclass(frozen=True)
class Version:
    """One installable version: its pip requirements, or ``python: current`` (no environment)."""

    version: str
    requirements: tuple[str, ...] = ()
    current: bool = False


@dataclass(frozen=True)
class Case:
    """One row's audit: an entry with its grid point or case applied, and everything resolved."""

    library: str
    case_id: str
    entry_id: str
    function: str
    call: dict
    params: dict
    epsilon: float
    delta: float
    relation: str
    domain: dict
    dataset: Any
    neighbor: Any
    max_samples: int
    confidence: float
    timeout: float
    docs: str
    search: dict
    versions: tuple[str, ...] | None

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Library:
    name: str
    docs: str
    path: tuple[str, ...]
    versions: tuple[Version, ...]
    cases: tuple[Case, ...]

    def applies(self, case: Case, version: Version) -> bool:
        return case.versions is None or version.version in case.versions


@dataclass(frozen=True)
class Catalogue:
    path: Path
    seed: int | None
    libraries: tuple[Library, ...] = field(default=())

    @property
    def directory(self) -> Path:
        return self.path.parent


def _mapping(value: Any, where: str, allowed: tuple) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(where, f"expected a mapping, got {type(value).__name__}")
    for key in value:
        if key not in allowed:
            raise ConfigError(f"{where}.{key}" if where else str(key), f"unknown key (allowed: {', '.join(allowed)})")
    return value


def _list(value: Any, where: str) -> list:
    if not isinstance(value, list) or not value:
        raise ConfigError(where, f"expected a non-empty list, got {value!r}")
    return value


def _number(value: Any, where: str, *, positive: bool = False, low: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(where, f"expected a finite number, got {value!r}")
    if positive and value <= 0:
        raise ConfigError(where, f"expected a number > 0, got {value!r}")
    if low is not None and value < low:
        raise ConfigError(where, f"expected a number >= {low}, got {value!r}")
    return float(value)


def _int(value: Any, where: str, low: int = 1) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(where, f"expected an integer >= {low}, got {value!r}")
    return value


def _text(value: Any, where: str, *, pattern: re.Pattern | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(where, f"expected a non-empty string, got {value!r}")
    if pattern is not None and not pattern.match(value):
        raise ConfigError(where, f"expected letters, digits and _.:+- (at most 120), got {value!r}")
    return value


def _merge(base: dict, over: dict) -> dict:
    """``base`` updated by ``over``, mappings merged key by key (``params`` and ``domain`` of a case)."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _label(value: Any) -> str:
    return json.dumps(value, separators=(",", ":")) if not isinstance(value, str) else value


def _expand(entry: dict, where: str) -> list[tuple[str, dict]]:
    """(suffix, entry) for every grid point x case x relation of an entry."""
    grid = _mapping(entry.get("grid"), f"{where}.grid", tuple(entry.get("grid") or ()))
    for key, values in grid.items():
        _list(values, f"{where}.grid.{key}")
    points = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())] if grid else [{}]
    cases = entry.get("cases")
    if cases is not None:
        _list(cases, f"{where}.cases")
    out = []
    for point in points:
        for j, case in enumerate(cases or [None]):
            resolved = _merge(entry, {"params": point})
            suffix = [f"{k}={_label(v)}" for k, v in point.items()]
            if case is not None:
                cw = f"{where}.cases[{j}]"
                _mapping(case, cw, tuple(k for k in ENTRY_KEYS if k not in ("id", "grid", "cases")))
                resolved = _merge(resolved, case)
                suffix.append(_text(case.get("label", f"case{j}"), f"{cw}.label", pattern=_ID_RE))
            relations = resolved.get("relation")
            for relation in relations if isinstance(relations, list) else [relations]:
                one = dict(resolved, relation=relation)
                tail = suffix + ([relation] if isinstance(relations, list) else [])
                out.append((f"[{','.join(tail)}]" if tail else "", one))
    return out


def _case(library: str, entry: dict, suffix: str, where: str, version_names: set) -> Case:
    entry_id = _text(entry.get("id"), f"{where}.id", pattern=_ID_RE)
    function = _text(entry.get("function"), f"{where}.function")
    call = dict(_mapping(entry.get("call"), f"{where}.call", CALL_KEYS))
    params = _mapping(entry.get("params"), f"{where}.params", tuple(entry.get("params") or ()))
    if "target" in call:
        _text(call["target"], f"{where}.call.target")
    for key in ("data", "statistic", "seed"):
        from ..adapters.library import DATA_FORMS, SEEDING, STATISTICS

        allowed = {"data": DATA_FORMS, "statistic": STATISTICS, "seed": SEEDING}[key]
        if key in call and call[key] not in allowed:
            raise ConfigError(f"{where}.call.{key}", f"expected one of {list(allowed)}, got {call[key]!r}")
    eps = entry.get("epsilon", params.get("epsilon"))
    if eps is None:
        raise ConfigError(f"{where}.epsilon", "the claimed epsilon is missing (give epsilon, or params.epsilon)")
    epsilon = _number(eps, f"{where}.epsilon", positive=True)
    delta = _number(entry.get("delta", params.get("delta", 0.0)) or 0.0, f"{where}.delta", low=0.0)
    if delta >= 1:
        raise ConfigError(f"{where}.delta", f"expected a number in [0, 1), got {delta!r}")
    relation = entry.get("relation")
    if relation not in RELATIONS:
        raise ConfigError(f"{where}.relation", f"expected one of {list(RELATIONS)}, got {relation!r}")
    dom = _mapping(entry.get("domain"), f"{where}.domain", DOMAIN_KEYS)
    domain = {"size": _int(dom.get("size"), f"{where}.domain.size"),
              "low": _number(dom.get("low"), f"{where}.domain.low"),
              "high": _number(dom.get("high"), f"{where}.domain.high"),
              "integer": dom.get("integer")}
    if not isinstance(domain["integer"], bool):
        raise ConfigError(f"{where}.domain.integer", f"expected true or false, got {domain['integer']!r}")
    if domain["high"] <= domain["low"]:
        raise ConfigError(f"{where}.domain.high", f"must exceed domain.low ({domain['low']}); got {domain['high']}")
    dataset, neighbor = entry.get("dataset"), entry.get("neighbor")
    if (dataset is None) != (neighbor is None):
        raise ConfigError(f"{where}.{'neighbor' if neighbor is None else 'dataset'}",
                          "dataset and neighbor go together (a fixed pair), or neither (search for one)")
    for key, value in (("dataset", dataset), ("neighbor", neighbor)):
        if value is not None and not isinstance(value, list):
            raise ConfigError(f"{where}.{key}", f"expected a list of records, got {value!r}")
    versions = entry.get("versions")
    if versions is not None:
        versions = tuple(str(v) for v in _list(versions, f"{where}.versions"))
        unknown = [v for v in versions if v not in version_names]
        if unknown:
            raise ConfigError(f"{where}.versions", f"not a version of {library}: {unknown[0]!r}")
    search = dict(_mapping(entry.get("search"), f"{where}.search", SEARCH_KEYS))
    for key, value in search.items():
        search[key] = _int(value, f"{where}.search.{key}", 2 if key == "max_candidates" else 100)
    confidence = _number(entry.get("confidence"), f"{where}.confidence")
    if not 0 < confidence < 1:
        raise ConfigError(f"{where}.confidence", f"expected a number in (0, 1), got {confidence!r}")
    return Case(library=library, case_id=entry_id + suffix, entry_id=entry_id, function=function, call=call,
                params=params, epsilon=epsilon, delta=delta, relation=relation, domain=domain, dataset=dataset,
                neighbor=neighbor, max_samples=_int(entry.get("max_samples"), f"{where}.max_samples", 100),
                confidence=confidence, timeout=_number(entry.get("timeout"), f"{where}.timeout", positive=True),
                docs=str(entry.get("docs", "")), versions=versions, search=search)


def _version(raw: Any, where: str) -> Version:
    v = _mapping(raw, where, VERSION_KEYS)
    name = _text(str(v.get("version", "")) if v.get("version") is not None else None, f"{where}.version")
    python = v.get("python")
    if python is not None and python != "current":
        raise ConfigError(f"{where}.python", f"only 'current' (the interpreter running dpaudit) is supported; "
                                             f"got {python!r}")
    reqs = v.get("requirements")
    if python == "current":
        if reqs:
            raise ConfigError(f"{where}.requirements", "a 'python: current' version installs nothing")
        return Version(name, (), True)
    reqs = _list(reqs, f"{where}.requirements")
    for j, r in enumerate(reqs):
        _text(r, f"{where}.requirements[{j}]")
        if r.strip().startswith("-"):
            raise ConfigError(f"{where}.requirements[{j}]", f"expected a requirement, not a pip option: {r!r}")
    return Version(name, tuple(reqs), False)


def load_catalogue(path: str | Path) -> Catalogue:
    """Read and validate a catalogue; every entry expanded to its cases (one row per case and version)."""
    import yaml  # here: the workers import this package inside library environments, which have no PyYAML

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError("", f"{path}: cannot read the catalogue: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError("", f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    top = _mapping(raw, "", TOP_KEYS)
    seed = top.get("seed")
    if seed is not None:
        seed = _int(seed, "seed", low=0)
    defaults = _merge(DEFAULTS, _mapping(top.get("defaults"), "defaults", ENTRY_KEYS))
    libraries, names = [], set()
    for i, lib_raw in enumerate(_list(top.get("libraries"), "libraries")):
        where = f"libraries[{i}]"
        lib = _mapping(lib_raw, where, LIBRARY_KEYS)
        name = _text(lib.get("name"), f"{where}.name", pattern=_ID_RE)
        if name in names:
            raise ConfigError(f"{where}.name", f"library {name!r} is listed twice")
        names.add(name)
        versions = [_version(v, f"{where}.versions[{j}]") for j, v in enumerate(_list(lib.get("versions"),
                                                                                      f"{where}.versions"))]
        seen = [v.version for v in versions]
        if len(set(seen)) != len(seen):
            raise ConfigError(f"{where}.versions", f"a version is listed twice: {seen}")
        paths = lib.get("path") or []
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise ConfigError(f"{where}.path", f"expected a list of folders, got {paths!r}")
        lib_defaults = _merge(defaults, _mapping(lib.get("defaults"), f"{where}.defaults", ENTRY_KEYS))
        cases, ids = [], set()
        for j, entry_raw in enumerate(_list(lib.get("entries"), f"{where}.entries")):
            ew = f"{where}.entries[{j}]"
            entry = _merge(lib_defaults, _mapping(entry_raw, ew, ENTRY_KEYS))
            for suffix, one in _expand(entry, ew):
                case = _case(name, one, suffix, ew, set(seen))
                if case.case_id in ids:
                    raise ConfigError(f"{ew}.id", f"entry {case.case_id!r} is listed twice in {name}")
                ids.add(case.case_id)
                cases.append(case)
        libraries.append(Library(name, str(lib.get("docs", "")), tuple(paths), tuple(versions), tuple(cases)))
    return Catalogue(path.resolve(), seed, tuple(libraries))
