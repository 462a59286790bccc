"""The experiment configuration: schema, validation, defaults and the sweep.

A config is YAML read with ``yaml.safe_load`` (nothing in it is evaluated as
code).  Everything is validated before any trial runs, including every point
of the sweep; an unknown key, a wrong type or an out-of-range value raises
:class:`~dpaudit.exceptions.ConfigError` naming the key path and what was
expected.  The resolved config (defaults filled in, the seed drawn and saved
when absent) is what gets written beside the results.

Schema (see ``docs/experiments.md`` for the full reference)::

    name: quickstart            # required; a plain name, no path separators
    description: ""             # free text
    seed: 12345                 # integer >= 0; drawn and saved when absent
    trials: 3                   # repetitions of every (sweep point, mechanism)
    mechanisms:                 # audit kind only
      - mechanism: laplace      # a built-in registry name ...
        params: {epsilon: 1.0}
        label: laplace          # default: the mechanism name
      - target: my_pkg.mod:f    # ... or a module:attr / file.py:attr target
        params: {}              # keyword arguments bound to the target
        epsilon: 1.0            # its claim (targets only)
        delta: 0.0
        dataset: [0, 1, 1]      # a list or a .json/.npy/.csv path
        neighbor: [0, 1, 0]
        reference: {epsilon: 0.1}   # extra columns printed in the table
    audit: {samples: null, attack: auto, ideal: false}   # exactly one of audit / kind
    kind: {name: reconstruction, params: {...}}          # read also as attack: (its old spelling)
    estimator: {name: clopper-pearson, confidence: 0.95, delta: null}   # name: gdp for audits and searches
    sweep:
      mode: grid                # grid (product) or zip (parallel lists)
      parameters:
        mechanisms.*.params.epsilon: [0.5, 1.0, 2.0]
        kind.params.noise_scale: [1, 2, 4]
    plot: {size: one-column, figures: [...], dpi: 300, title: null, point: null}
                                # point: the sweep point (from 1) drawn by roc / privacy_profile / trajectory
                                # (default: the last; the trajectory: every point)
"""

from __future__ import annotations

import copy
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import yaml

from ..exceptions import ConfigError
from .._validation import check_choice, check_int, check_mapping, check_plain, check_real, check_str
from ..params import AUDIT_OPTIONS
from ._spec import config_value
from ._spelling import SECTION, as_spelled, canonical_keys, canonical_sections
from .kinds import ExperimentKind, get_kind

__all__ = ["ExperimentConfig", "TrialSpec", "load_config", "resolve_config", "TOP_LEVEL_KEYS", "SIZES"]

TOP_LEVEL_KEYS = ("name", "description", "seed", "trials", "mechanisms", "audit", "attack", "estimator", "sweep", "plot")
MECHANISM_KEYS = ("label", "mechanism", "target", "params", "epsilon", "delta", "dataset", "neighbor", "reference")
SIZES = ("one-column", "two-column")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+-]{0,99}$")
_PATH_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.([A-Za-z0-9_.:+-]+|\*))+$")

#: The kinds whose trials run an audit, so that ``estimator.name`` chooses its certificate.
AUDITING_KINDS = ("audit", "search")


def estimator_params() -> dict:
    """The ``estimator:`` keys: the certificate (``name``, as ``--estimator``), the confidence and the delta."""
    rows = AUDIT_OPTIONS.yaml_params("estimator", "confidence", "delta",
                                     overrides={"delta": {"default": None, "nullable": True}})
    return {"name": rows["estimator"], "confidence": rows["confidence"], "delta": rows["delta"]}


@dataclass(frozen=True)
class TrialSpec:
    """One unit of work: a (sweep point, mechanism, repetition) and its seed.

    Its seed is child ``index`` of the experiment's SeedSequence, so it does not
    depend on which worker runs it or in what order.
    """

    index: int
    point: int
    mechanism: str | None
    repetition: int
    sweep: dict

    def to_dict(self) -> dict:
        return {"index": self.index, "point": self.point, "mechanism": self.mechanism,
                "repetition": self.repetition, "sweep": dict(self.sweep)}


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment: the resolved config, its kind, its sweep points and trials."""

    resolved: dict
    kind: ExperimentKind
    points: tuple
    point_configs: tuple
    seed_given: bool

    @property
    def name(self) -> str:
        return self.resolved["name"]

    @property
    def seed(self) -> int:
        return self.resolved["seed"]

    @property
    def mechanism_labels(self) -> list:
        if not self.kind.uses_mechanisms:
            return [None]
        return [m["label"] for m in self.resolved["mechanisms"]]

    @property
    def trials(self) -> list[TrialSpec]:
        labels = self.mechanism_labels
        reps = self.resolved["trials"]
        out = []
        for p, point in enumerate(self.points):
            for label in labels:
                for r in range(reps):
                    out.append(TrialSpec(len(out), p, label, r, dict(point)))
        return out

    def seed_sequence(self, index: int) -> np.random.SeedSequence:
        """Child ``index`` of the experiment seed: what ``SeedSequence(seed).spawn(N)[index]`` gives."""
        return np.random.SeedSequence(self.seed, spawn_key=(index,))

    def task(self, trial: TrialSpec) -> dict:
        """Everything a worker needs for one trial (plain data, picklable)."""
        cfg = self.point_configs[trial.point]
        mech = None
        if trial.mechanism is not None:
            mech = next(m for m in cfg["mechanisms"] if m["label"] == trial.mechanism)
        return {"kind": self.kind.name, "config": cfg, "mechanism": mech, "trial": trial.to_dict(),
                "seed": self.seed}


def load_config(source: "str | Path | Mapping", *, seed: int | None = None) -> ExperimentConfig:
    """Read and validate a config from a YAML file (or an already-parsed mapping).

    Parameters
    ----------
    source : str, Path or mapping
        The YAML file, or its parsed content.
    seed : int, optional
        Used when the config has no ``seed`` (``--resume`` passes the saved one).

    Examples
    --------
    >>> cfg = load_config({"name": "rr", "seed": 1, "kind": {"name": "rr_tradeoff", "params": {"epsilon": 1.0}}})
    >>> cfg.resolved["trials"], cfg.resolved["attack"]["params"]["n"]      # stored under its old name
    (1, 1000)
    >>> load_config({"name": "../x", "attack": {"name": "rr_tradeoff"}})
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ConfigError: name: expected a plain name (letters, digits, '_', '-', '.'; no path separators), got '../x'
    """
    base_dir = None
    if isinstance(source, Mapping):
        raw = source
    else:
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            raise ConfigError(str(path), f"cannot read the config: {getattr(exc, 'strerror', None) or exc}") from None
        try:
            raw = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            where = getattr(exc, "problem_mark", None)
            loc = f" (line {where.line + 1}, column {where.column + 1})" if where else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ConfigError(str(path), f"not valid YAML{loc}: {problem}") from None
        base_dir = path.resolve().parent
    return resolve_config(raw, base_dir=base_dir, seed=seed)


def resolve_config(raw: Any, *, base_dir: Path | None = None, seed: int | None = None) -> ExperimentConfig:
    """Validate a parsed config, fill defaults and expand the sweep (see :func:`load_config`).

    A ``kind:`` section is stored as ``attack`` (:mod:`dpaudit.runner._spelling`); errors name the key
    path as the config spells it.
    """
    spelled = "attack"
    try:
        raw = config_value(check_mapping, raw if raw is not None else {}, "", allowed=(*TOP_LEVEL_KEYS, SECTION))
        raw, spelled = canonical_sections(raw)
        return _resolve_config(raw, base_dir, seed)
    except ConfigError as exc:
        raise as_spelled(exc, spelled) from None


def _resolve_config(raw: dict, base_dir: Path | None, seed: int | None) -> ExperimentConfig:
    seed_given = raw.get("seed") is not None
    resolved, kind = _resolve_body(raw, base_dir)
    if resolved["seed"] is None:
        resolved["seed"] = int(seed) if seed is not None else int(np.random.SeedSequence().entropy)
    points = _expand_sweep(resolved)
    if (resolved["plot"].get("point") or 0) > len(points):
        raise ConfigError("plot.point", f"expected a sweep point from 1 to {len(points)}, got {resolved['plot']['point']}")
    point_configs = []
    for j, point in enumerate(points):
        body = copy.deepcopy(resolved)
        body.pop("sweep")
        for path, value in point.items():
            _set_path(body, path, value)
        try:
            cfg, _ = _resolve_body(body, base_dir, sweep_point=True)
            _check_point(cfg, kind, base_dir)
        except ConfigError as exc:
            if not point:  # no sweep: the key path alone says where
                raise
            values = ", ".join(f"{k}={v!r}" for k, v in point.items())
            raise ConfigError(exc.key_path, f"{exc.problem} (at sweep point {j}: {values})") from None
        point_configs.append(cfg)
    return ExperimentConfig(resolved, kind, tuple(points), tuple(point_configs), seed_given)


def _resolve_body(raw: dict, base_dir: Path | None, sweep_point: bool = False) -> tuple[dict, ExperimentKind]:
    out: dict = {}
    # name: it becomes a folder under --out, so it must not be able to escape it.
    name = raw.get("name")
    if name is None:
        raise ConfigError("name", "required key is missing")
    if not isinstance(name, str) or not _NAME_RE.match(name) or name in (".", "..") or ".." in name:
        raise ConfigError("name", f"expected a plain name (letters, digits, '_', '-', '.'; no path separators), got {name!r}")
    out["name"] = name
    desc = raw.get("description", "")
    if not isinstance(desc, str):
        raise ConfigError("description", f"expected a string, got {desc!r}")
    out["description"] = desc
    seed = raw.get("seed")
    out["seed"] = None if seed is None else config_value(check_int, seed, "seed", low=0)
    out["trials"] = config_value(check_int, raw.get("trials", 1), "trials", low=1, high=100_000)

    has_audit, has_attack = raw.get("audit") is not None or "audit" in raw, "attack" in raw
    if has_audit and has_attack:
        raise ConfigError("attack", "give either an 'audit' section (a mechanism audit) or an 'attack' section "
                                    "(name, params: the other experiment kinds), not both")
    if not has_audit and not has_attack:
        raise ConfigError("audit", "required: an 'audit' section (a mechanism audit: samples, attack, ...; it may "
                                   "be empty) or an 'attack' section (name, params: the other experiment kinds)")
    if has_audit:
        kind = get_kind("audit", "audit")
        section = config_value(check_mapping, raw["audit"] if raw["audit"] is not None else {}, "audit", allowed=list(kind.param_spec()))
        out["audit"] = {k: p.resolve(section, k, "audit") for k, p in kind.param_spec().items()}
        AUDIT_OPTIONS.check_rules(section, AUDIT_OPTIONS.front("yaml", "audit"), only=("ideal_float",))
    else:
        section = config_value(check_mapping, raw["attack"], "attack", allowed=["name", "params"])
        if "name" not in section:
            raise ConfigError("attack.name", "required key is missing")
        kind = get_kind(section["name"], "attack.name")
        if kind.section != "attack":
            raise ConfigError("attack.name", f"{kind.name!r} is configured by an 'audit' section")
        spec = kind.param_spec()
        params, old = canonical_keys(section.get("params") or {}, kind.extra.get("aliases", {}), "attack.params")
        params = config_value(check_mapping, params, "attack.params", allowed=list(spec))
        out["attack"] = {"name": kind.name, "params": {
            k: p.check(params[k], f"attack.params.{old[k]}") if k in old else p.resolve(params, k, "attack.params")
            for k, p in spec.items()}}

    spec = estimator_params()
    est = config_value(check_mapping, raw.get("estimator") or {}, "estimator", allowed=list(spec))
    out["estimator"] = {k: p.resolve(est, k, "estimator") for k, p in spec.items()}
    if out["estimator"]["name"] != spec["name"].default and kind.name not in AUDITING_KINDS:
        raise ConfigError("estimator.name", f"only {' and '.join(AUDITING_KINDS)} experiments certify with an "
                                            f"estimator; {kind.name!r} has none to choose")

    if kind.uses_mechanisms:
        out["mechanisms"] = _resolve_mechanisms(raw.get("mechanisms"), base_dir)
        if sweep_point:  # the whole config may leave a target's epsilon to a swept audit.claim
            _require_target_claims(out)
    elif raw.get("mechanisms") is not None:
        raise ConfigError("mechanisms", f"only used by the audit kind, not by {kind.name!r}")

    if not sweep_point:
        out["sweep"] = _resolve_sweep(raw.get("sweep"), kind.extra.get("aliases", {}))
        out["plot"] = _resolve_plot(raw.get("plot"), kind)
    else:
        out["plot"] = raw.get("plot")
    _files_beside_config(out, base_dir)
    return _ordered(out), kind


#: The file-naming parameters of the attack kinds that read saved scores.
SCORE_FILES = {"scores": ("in_scores", "out_scores"), "one_run": ("scores", "included")}


def _files_beside_config(out: dict, base_dir: Path | None) -> None:
    """Relative files named by a ``profile:`` claim or a score audit's parameters, read beside the config when
    the file is there (as ``dataset:`` paths and ``file.py`` targets are), else where dpaudit runs, as before.

    A config run from another directory found its targets and datasets but not its claimed profile or its
    scores; configs written for the working directory keep working.
    """
    if base_dir is None:
        return
    attack = out.get("attack") or {}
    for section in (out.get("audit"), attack.get("params")):
        if not isinstance(section, dict):
            continue
        claim = section.get("claim")
        kind, sep, body = claim.partition(":") if isinstance(claim, str) else ("", "", "")
        if sep and kind.strip().lower() == "profile" and body.strip():
            section["claim"] = f"{kind}:{_beside(body.strip(), base_dir)}"
    params = attack.get("params") or {}
    for key in SCORE_FILES.get(attack.get("name"), ()):
        if isinstance(params.get(key), str):
            params[key] = _beside(params[key], base_dir)


def _beside(name: str, base_dir: Path) -> str:
    """``name`` beside the config when it is a relative file that is there, else ``name`` unchanged."""
    from ..datasets import expand_user

    path = expand_user(name)
    return str(base_dir / path) if not path.is_absolute() and (base_dir / path).is_file() else name


def _ordered(out: dict) -> dict:
    return {k: out[k] for k in TOP_LEVEL_KEYS if k in out}


def _resolve_mechanisms(value: Any, base_dir: Path | None) -> list:
    if value is None:
        raise ConfigError("mechanisms", "required for an audit: a list of mechanisms")
    if not isinstance(value, list) or not value:
        raise ConfigError("mechanisms", f"expected a non-empty list, got {value!r}")
    out, labels = [], set()
    for i, entry in enumerate(value):
        path = f"mechanisms[{i}]"
        if isinstance(entry, str):
            entry = {"mechanism": entry}
        entry = config_value(check_mapping, entry, path, allowed=MECHANISM_KEYS)
        has_m, has_t = entry.get("mechanism") is not None, entry.get("target") is not None
        if has_m == has_t:
            raise ConfigError(path, "expected exactly one of 'mechanism' (a built-in name) or 'target' (module:attr)")
        res: dict = {}
        if has_m:
            res["mechanism"] = config_value(check_str, entry["mechanism"], f"{path}.mechanism")
            for key in ("epsilon", "delta"):
                if entry.get(key) is not None:
                    raise ConfigError(f"{path}.{key}", "only for 'target' entries; a built-in mechanism states its own claim (set its params)")
        else:
            target = config_value(check_str, entry["target"], f"{path}.target")
            if ":" not in target:
                raise ConfigError(f"{path}.target", f"expected 'package.module:attribute' or 'file.py:attribute', got {target!r}")
            res["target"] = _resolve_target_path(target, base_dir)
        label = entry.get("label", res.get("mechanism") or entry.get("target"))
        if not isinstance(label, str) or not _LABEL_RE.match(label):
            raise ConfigError(f"{path}.label", f"expected a short label (letters, digits, '_-.:+'), got {label!r}")
        if label in labels:
            raise ConfigError(f"{path}.label", f"duplicate label {label!r}; give each mechanism a distinct label")
        labels.add(label)
        res["label"] = label
        params = config_value(check_mapping, entry.get("params") or {}, f"{path}.params")
        res["params"] = {k: config_value(check_plain, v, f"{path}.params.{k}") for k, v in params.items()}
        if has_m:
            res["dataset"] = res["neighbor"] = None
            AUDIT_OPTIONS.check_rules(entry, AUDIT_OPTIONS.front("yaml", path), only=("pair",))
        else:
            # Optional here: ``audit.claim`` (a curve for every mechanism) replaces it; _require_target_claims
            # checks each sweep point once the claim is known.
            eps = entry.get("epsilon")
            res["epsilon"] = None if eps is None else config_value(check_real, eps, f"{path}.epsilon", low=0,
                                                                   finite=True)
            res["delta"] = config_value(check_real, entry.get("delta", 0.0), f"{path}.delta", low=0, high=1, high_inclusive=False)
            for key in ("dataset", "neighbor"):
                if entry.get(key) is None:
                    raise ConfigError(f"{path}.{key}", "required for a target")
        for key in ("dataset", "neighbor"):
            v = entry.get(key)
            if v is None:
                res[key] = None
            elif isinstance(v, str):
                p = Path(v)
                res[key] = str(p if p.is_absolute() or base_dir is None else (base_dir / p))
            else:
                res[key] = config_value(check_plain, v, f"{path}.{key}")
        ref = entry.get("reference")
        res["reference"] = None if ref is None else config_value(check_plain, config_value(check_mapping, ref, f"{path}.reference"), f"{path}.reference")
        out.append(res)
    return out


def _require_target_claims(out: dict) -> None:
    """A ConfigError when a target has no claim: its own ``epsilon``, or ``audit.claim`` for every mechanism."""
    if out.get("audit", {}).get("claim") is not None:
        return
    for i, m in enumerate(out["mechanisms"]):
        if m.get("target") is not None and m.get("epsilon") is None:
            raise ConfigError(f"mechanisms[{i}].epsilon", "required for a target: its claimed epsilon, a number >= "
                                                          "0, or audit.claim, a curve for every mechanism (e.g. "
                                                          "dpsgd:noise=1,rate=0.1,steps=10)")


def _resolve_target_path(target: str, base_dir: Path | None) -> str:
    """A relative ``file.py:attr`` target is read beside the config file, like ``dataset:`` paths.

    A ``package.module:attr`` target is left alone (it is imported by name).
    """
    left, _, attr = target.rpartition(":")
    is_file = left.endswith(".py") or "/" in left or "\\" in left
    if not is_file or base_dir is None:
        return target
    file = Path(left).expanduser()
    if file.is_absolute():
        return target
    return f"{base_dir / file}:{attr}"


def _resolve_sweep(value: Any, aliases: Mapping[str, str] | None = None) -> dict:
    sweep = config_value(check_mapping, value or {}, "sweep", allowed=["mode", "parameters"])
    mode = config_value(check_choice, sweep.get("mode", "grid"), "sweep.mode", choices=("grid", "zip"))
    params = config_value(check_mapping, sweep.get("parameters") or {}, "sweep.parameters")
    params = {f"attack.params.{(aliases or {}).get(p[len('attack.params.'):], p[len('attack.params.'):])}"
              if p.startswith("attack.params.") else p: v for p, v in params.items()}
    out = {}
    for path, values in params.items():
        key = f"sweep.parameters.{path}"
        if not _PATH_RE.match(path):
            raise ConfigError(key, "expected a dotted parameter path such as kind.params.noise_scale")
        root = path.split(".")[0]
        if root not in ("audit", "attack", "estimator", "mechanisms"):
            raise ConfigError(key, "expected a path under audit, kind.params, estimator or mechanisms")
        if path == "attack.name":
            raise ConfigError(key, "one experiment has one kind; sweep its parameters instead")
        if not isinstance(values, list) or not values:
            raise ConfigError(key, f"expected a non-empty list of values, got {values!r}")
        out[path] = [config_value(check_plain, v, f"{key}[{i}]") for i, v in enumerate(values)]
    if mode == "zip" and len({len(v) for v in out.values()}) > 1:
        lengths = {k: len(v) for k, v in out.items()}
        raise ConfigError("sweep.parameters", f"expected lists of equal length for mode zip, got {lengths}")
    return {"mode": mode, "parameters": out}


def _resolve_plot(value: Any, kind: ExperimentKind) -> dict:
    from ..plots import FIGURES

    plot = config_value(check_mapping, value or {}, "plot", allowed=["size", "figures", "dpi", "title", "point"])
    size = config_value(check_choice, plot.get("size", "one-column"), "plot.size", choices=SIZES)
    figures = plot.get("figures", list(kind.figures))
    if not isinstance(figures, list):
        raise ConfigError("plot.figures", f"expected a list of figure names, got {figures!r}")
    for i, f in enumerate(figures):
        config_value(check_choice, f, f"plot.figures[{i}]", choices=sorted(FIGURES))
    dpi = config_value(check_int, plot.get("dpi", 300), "plot.dpi", low=50, high=1200)
    title = plot.get("title")
    if title is not None and not isinstance(title, str):
        raise ConfigError("plot.title", f"expected a string, got {title!r}")
    point = plot.get("point")
    point = None if point is None else config_value(check_int, point, "plot.point", low=1)
    return {"size": size, "figures": list(figures), "dpi": dpi, "title": title, "point": point}


def _expand_sweep(resolved: dict) -> list[dict]:
    params = resolved["sweep"]["parameters"]
    if not params:
        return [{}]
    keys = list(params)
    if resolved["sweep"]["mode"] == "zip":
        combos = zip(*(params[k] for k in keys))
    else:
        combos = itertools.product(*(params[k] for k in keys))
    return [dict(zip(keys, c)) for c in combos]


def _set_path(cfg: dict, path: str, value: Any) -> None:
    key = f"sweep.parameters.{path}"
    tokens = path.split(".")
    if tokens[0] == "mechanisms":
        mechs = cfg.get("mechanisms")
        if not mechs or len(tokens) < 3:
            raise ConfigError(key, "expected mechanisms.<label or * or index>.params.<name> (audit kind only)")
        sel, rest = tokens[1], tokens[2:]
        if sel == "*":
            chosen = mechs
        elif sel.isdigit() and int(sel) < len(mechs):
            chosen = [mechs[int(sel)]]
        else:
            chosen = [m for m in mechs if m["label"] == sel]
            if not chosen:
                raise ConfigError(key, f"no mechanism labelled {sel!r}; labels are {[m['label'] for m in mechs]}")
        for m in chosen:
            if rest[0] == "params" and len(rest) == 2:
                m.setdefault("params", {})[rest[1]] = value
            elif len(rest) == 1 and rest[0] in ("epsilon", "delta", "dataset", "neighbor") and m.get("target"):
                m[rest[0]] = value
            else:
                raise ConfigError(key, "expected mechanisms.<sel>.params.<name> (or epsilon/delta/dataset/neighbor of a target)")
        return
    node = cfg
    for i, tok in enumerate(tokens[:-1]):
        if not isinstance(node, dict) or tok not in node or not isinstance(node[tok], dict):
            raise ConfigError(key, f"no such parameter: {'.'.join(tokens[: i + 1])!r} is not a section of this config")
        node = node[tok]
    if tokens[-1] not in node:
        raise ConfigError(key, f"no such parameter {tokens[-1]!r}; expected one of {sorted(node)}")
    node[tokens[-1]] = value


def _check_point(cfg: dict, kind: ExperimentKind, base_dir: Path | None) -> None:
    check = kind.extra.get("check")
    if check is not None:
        check(cfg["attack"]["params"])
    check_config = kind.extra.get("check_config")
    if check_config is not None:
        check_config(cfg, base_dir)
    if kind.uses_mechanisms:
        from .kinds.audit import build_mechanism

        for i, m in enumerate(cfg["mechanisms"]):
            build_mechanism(m, f"mechanisms[{i}]")


def dump_yaml(config: dict) -> str:
    """The resolved config as YAML (block style, key order kept)."""
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=None, width=100)
