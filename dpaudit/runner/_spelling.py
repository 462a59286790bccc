"""The config's section names as users write them, and the names results are stored under.

An experiment that is not the audit kind is written ``kind: {name: ..., params: {...}}``: the word
``attack`` in a config means the audit's distinguisher (``audit.attack``, as ``--attack``), and most
kinds (``search``, ``scores``, ``training``) are no attack.  The section's old spelling ``attack:`` is
still read.  Results keep storing the section as ``attack`` (resolved config, sweep paths in
``summary.json``), so folders written before and after read the same; an error names the key path in
the spelling the config used.

>>> raw, spelled = canonical_sections({"name": "x", "kind": {"name": "rr_tradeoff"},
...                                    "sweep": {"parameters": {"kind.params.n": [10]}}})
>>> sorted(raw), raw["sweep"]["parameters"], spelled
(['attack', 'name', 'sweep'], {'attack.params.n': [10]}, 'kind')
"""

from __future__ import annotations

from typing import Any, Mapping

from ..exceptions import ConfigError

__all__ = ["SECTION", "STORED", "canonical_sections", "canonical_keys", "as_spelled"]

#: The section of a non-audit kind as configs write it, and as results store it.
SECTION, STORED = "kind", "attack"


def canonical_sections(raw: Any) -> tuple[Any, str]:
    """(``raw`` with a ``kind:`` section and ``kind.`` sweep paths stored as ``attack``, the spelling used)."""
    if not isinstance(raw, Mapping) or SECTION not in raw:
        return raw, STORED
    if STORED in raw:
        raise ConfigError(SECTION, f"give the {SECTION!r} section alone ({STORED!r} is its old spelling)")
    out = {(STORED if k == SECTION else k): v for k, v in raw.items()}
    sweep = out.get("sweep")
    if isinstance(sweep, Mapping) and isinstance(sweep.get("parameters"), Mapping):
        paths = {(STORED + p[len(SECTION):] if isinstance(p, str) and p.startswith(SECTION + ".") else p): v
                 for p, v in sweep["parameters"].items()}
        out["sweep"] = {**sweep, "parameters": paths}
    return out, SECTION


def as_spelled(exc: ConfigError, spelled: str) -> ConfigError:
    """``exc`` with its key path (and the paths in its text) in the spelling the config used."""
    if spelled == STORED:
        return exc
    path, problem = exc.key_path, exc.problem
    for old in (STORED + ".", "sweep.parameters." + STORED + "."):
        new = old.replace(STORED, SECTION)
        path = new + path[len(old):] if path.startswith(old) else path
    path = SECTION if path == STORED else path
    problem = problem.replace(f"{STORED}.params", f"{SECTION}.params").replace(f"{STORED}.name", f"{SECTION}.name")
    return ConfigError(path, problem)


def canonical_keys(params: Any, aliases: Mapping[str, str], path: str) -> tuple[Any, dict]:
    """(``params`` with a kind's read-only old spellings (``aliases``: old -> new) under their new names,
    ``{new: old}`` for the keys the config spelled the old way, so an error names the key it wrote)."""
    if not isinstance(params, Mapping) or not any(old in params for old in aliases):
        return params, {}
    out, spelled = dict(params), {}
    for old, new in aliases.items():
        if old in out:
            if new in out:
                raise ConfigError(f"{path}.{old}", f"the old spelling of {new}; give {new} alone")
            out[new], spelled[new] = out.pop(old), old
    return out, spelled
