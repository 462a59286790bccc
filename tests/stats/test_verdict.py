"""The verdict words: one spelling, plain strings in JSON, and the whole package reads them from one module."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import dpaudit
from dpaudit.stats.verdict import StoppingReason, Verdict, any_violation, verdict_of

PACKAGE = Path(dpaudit.__file__).resolve().parent


def test_the_enums_are_their_strings_in_json_and_comparisons():
    assert json.dumps({"v": Verdict.NO_VIOLATION, "s": StoppingReason.BUDGET}) == \
        '{"v": "no violation found", "s": "budget"}'
    assert Verdict.VIOLATION == "violation" and f"{Verdict.NO_CLAIM}" == "no claim"
    assert repr(Verdict.VIOLATION) == "'violation'" and repr((StoppingReason.FIXED,)) == "('fixed',)"


def test_verdict_of_and_any_violation():
    assert verdict_of(True) is Verdict.VIOLATION and verdict_of(False) is Verdict.NO_VIOLATION
    assert verdict_of(None) is Verdict.NO_CLAIM
    assert any_violation(["no violation found", "violation"]) is Verdict.VIOLATION
    assert any_violation([False, None, "no violation found"]) is Verdict.NO_VIOLATION
    assert any_violation([True]) is Verdict.VIOLATION and any_violation([]) is Verdict.NO_VIOLATION


def test_the_verdict_literal_is_spelled_in_one_module():
    """A string constant equal to the verdict, outside docstrings, appears only in stats/verdict.py."""
    where = set()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value == "no violation found" and id(node) not in docstrings:
                where.add(path.relative_to(PACKAGE).as_posix())
    assert where == {"stats/verdict.py"}
