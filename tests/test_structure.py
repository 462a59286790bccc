"""Orchestration stays readable: no function in the audit's layers has a body over 60 lines.

The audit, the pair search and the command line are where a new certificate, claim or entry
point is wired in; a function that holds a whole pipeline becomes a patch on a patch.  The
statistics and mechanisms are not counted: a long numeric routine can be one idea.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpaudit

ROOT = Path(dpaudit.__file__).resolve().parent
#: The orchestration layers and the largest body allowed there, in lines (docstring excluded).
LAYERS = ("auditor", "pair_search.py", "pair_search_screen.py", "pair_search_steps.py", "cli.py")
MAX_BODY = 60


def body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from a function's first statement after its docstring to its last."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return 0 if not body else body[-1].end_lineno - body[0].lineno + 1


def long_functions(paths, limit: int = MAX_BODY) -> list[str]:
    out = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and body_lines(node) > limit:
                out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({body_lines(node)} lines)")
    return out


def _layer_files():
    for name in LAYERS:
        p = ROOT / name
        yield from (sorted(p.rglob("*.py")) if p.is_dir() else [p])


def test_the_count_sees_a_long_function(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    '''doc'''\n" + "    x = 1\n" * 61 + "\n\ndef g():\n    return 1\n")
    assert body_lines(ast.parse(src.read_text()).body[0]) == 61
    assert [n.name for n in ast.parse(src.read_text()).body if body_lines(n) > 60] == ["f"]


def test_no_orchestration_function_is_over_60_lines():
    assert long_functions(_layer_files()) == []
