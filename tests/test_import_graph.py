"""The modules of dpaudit import each other without cycles.

Every ``import`` counts, including those inside functions (a lazy import is
still a dependency; it only moves the failure to run time).  The implicit
import of a module's own parent package is not an edge: Python runs
``pkg/__init__.py`` before any ``pkg.mod``, and that is how packages work, not a
design choice.  An edge is drawn to the most specific dpaudit module named, so
``from . import base`` depends on ``pkg.base`` and ``from . import name`` on
``pkg`` itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpaudit

ROOT = Path(dpaudit.__file__).resolve().parent


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ["dpaudit", *path.relative_to(ROOT).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def _targets(module: str, is_package: bool, node: ast.AST, known) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return [n for n in names if n in known]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.split(".")
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{source}.{alias.name}"
        out.append(sub if sub in known else source)
    return [n for n in out if n in known]


def import_graph() -> dict[str, set[str]]:
    """``module -> {dpaudit modules it imports}``, lazy imports included."""
    known = _modules()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, (path, is_package) in known.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[module].update(t for t in _targets(module, is_package, node, known) if t != module)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_find_cycles_sees_a_cycle():
    # The checker itself must be able to fail.
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_known_edges():
    graph = import_graph()
    assert "dpaudit.mechanisms.registry" in graph["dpaudit.adapters"]
    assert "dpaudit.stats.gdp" in graph["dpaudit.stats.selection"]


def test_dpaudit_imports_have_no_cycles():
    assert find_cycles(import_graph()) == []


def test_mechanisms_do_not_import_adapters():
    graph = import_graph()
    offenders = sorted(m for m, deps in graph.items() if m.startswith("dpaudit.mechanisms")
                       and any(d.startswith("dpaudit.adapters") for d in deps))
    assert offenders == []


def _private_imports() -> list[tuple[str, str, str]]:
    """(importing module, imported module, name) for every underscore name imported from another module."""
    out = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        out.append((str(path.relative_to(ROOT)), node.module or "." * node.level, alias.name))
    return out


def test_modules_share_a_named_internal_api_not_private_names():
    """What modules share is named as such (no leading underscore); a private name stays in its module.

    A few private *modules* (``_validation``, ``_rng``...) are imported by name from their package and
    counted here too; at most 10 such imports are allowed.
    """
    found = _private_imports()
    assert len(found) <= 10, "\n".join(f"{a}: from {b} import {c}" for a, b, c in found)
