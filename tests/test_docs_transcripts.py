"""Every command transcript in README.md and docs/*.md prints what the text says it prints.

A *transcript* is a fenced code block with lines that start ``$ dpaudit ``: each such line is a
command, and the lines after it (up to the next command or the end of the block) are its output as
quoted.  Every transcript of every doc is found here; none is listed by hand, so a new one is checked
the day it is written.  The rules a transcript follows:

- each quoted output line is printed by the command (stderr, then stdout, as a terminal shows them
  with ``--json``), in the order quoted; the command may print more lines than are quoted;
- ``...`` on a line of its own stands for any printed lines, and inside a line for any text;
- numbers are compared as printed, digit for digit, so the command must be seeded (``--seed``) when
  it draws anything; only durations (a number followed by `` s``, JSON's ``elapsed_seconds``) are not
  compared;
- the command runs in a fresh folder holding the doc's Python files (blocks whose first line is
  ``# name.py``, like the README's ``mymech.py``) and a link to ``configs/`` (for ``configs/data/...``);
- a block right after the line ``<!-- slow -->`` runs in the slow suite (``make soundness``) only.

Prose numbers tied to a command are written as such a transcript (an elided one, ``...`` around the
line that holds the number) so that they are checked too.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
PY_FILE = re.compile(r"^```python\n(# ([\w./-]+\.py)\n.*?)^```", re.S | re.M)
SLOW_MARK = "<!-- slow -->"
#: Commands whose output depends on a drawn seed unless one is given.
DRAWING = {"audit", "search", "scores", "one-run", "run"}
DURATION = re.compile(r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)? s\b")
ELAPSED = re.compile(r'"elapsed_seconds": [-+\d.e]+')


@dataclass(frozen=True)
class Transcript:
    doc: str
    line: int
    command: str
    quoted: tuple
    slow: bool

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def transcripts() -> list[Transcript]:
    found = []
    for path in _docs():
        text = path.read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            lines = block.group(1).splitlines()
            if not any(ln.startswith("$ dpaudit ") for ln in lines):
                continue
            before = text[:block.start()].rstrip().splitlines()
            slow = bool(before) and before[-1].strip() == SLOW_MARK
            first = text[:block.start()].count("\n") + 2  # the block's first line, 1-based
            current = None
            for i, ln in enumerate(lines):
                if ln.startswith("$ "):
                    if current:
                        found.append(Transcript(**current))
                    current = dict(doc=str(path.relative_to(ROOT)), line=first + i, command=ln[2:], quoted=(),
                                   slow=slow)
                elif current is not None:
                    current["quoted"] += (ln,)
            if current:
                found.append(Transcript(**current))
    return found


def _mask(line: str) -> str:
    return ELAPSED.sub('"elapsed_seconds": <t>', DURATION.sub("<t> s", line.rstrip()))


def _pattern(line: str) -> re.Pattern:
    return re.compile("^" + ".*".join(re.escape(part) for part in _mask(line).split("...")) + "$")


def missing_lines(quoted, printed) -> list[str]:
    """The quoted lines not printed in the order quoted (``...`` lines skip any number of printed lines).

    >>> missing_lines(["a 1", "...", "c ... 3"], ["a 1", "b", "c x 3"])
    []
    >>> missing_lines(["a 2"], ["a 1"])
    ['a 2']
    """
    printed = [_mask(p) for p in printed]
    at, missing = 0, []
    for q in quoted:
        if q.strip() == "...":
            continue
        pat = _pattern(q)
        for j in range(at, len(printed)):
            if pat.match(printed[j]):
                at = j + 1
                break
        else:
            missing.append(q)
    return missing


def _python_files(doc: str) -> dict[str, str]:
    return {m.group(2): m.group(1) for m in PY_FILE.finditer((ROOT / doc).read_text(encoding="utf-8"))}


ALL = transcripts()


def test_the_docs_have_transcripts():
    # The README's first audit, its own mechanism's (three more with --ideal), a curve claim; docs/pairs.md's warning.
    assert len(ALL) >= 6 and any(t.doc.startswith("docs/") for t in ALL)
    assert all(t.quoted for t in ALL), [t.id for t in ALL if not t.quoted]


@pytest.mark.parametrize("t", [pytest.param(t, id=t.id, marks=[pytest.mark.slow] if t.slow else [])
                               for t in ALL])
def test_transcript_prints_what_the_doc_quotes(t, tmp_path, monkeypatch, capsys):
    from dpaudit.cli import main

    argv = shlex.split(t.command, comments=True)[1:]
    if argv[0] in DRAWING and any(re.search(r"\d", _mask(q)) for q in t.quoted):
        assert "--seed" in argv, f"{t.id}: a transcript whose output shows numbers needs --seed: {t.command}"
    for name, code in _python_files(t.doc).items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    monkeypatch.chdir(tmp_path)
    status = main(argv)
    printed = capsys.readouterr()
    lines = printed.err.splitlines() + printed.out.splitlines()
    assert status in (0, 1, 2), (t.id, status, printed.err[-2000:])
    assert missing_lines(t.quoted, lines) == [], f"{t.id}: {t.command}\nprinted:\n" + "\n".join(lines)
