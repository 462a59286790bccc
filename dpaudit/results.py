"""Results on disk: atomic writes, an append-only trial log, and reading them back.

Layout of ``DIR/<name>/``:

``config.resolved.yaml``
    the validated config with defaults and the seed (written atomically);
``trials.jsonl``
    one JSON object per finished trial, appended, flushed and fsync'ed as each
    trial finishes, in completion order; each carries ``index`` and ``sweep``;
``summary.json``
    aggregated from the trials sorted by index (written atomically), so it is
    the same for any ``--jobs``, backend or interruption;
``<figure>.pdf`` / ``<figure>.png``
    the plots, drawn from the files above alone.

A trial line that is cut short (a crash while writing) is never read as a
finished trial: only newline-terminated lines that parse as JSON count.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = [
    "CONFIG_FILE",
    "TRIALS_FILE",
    "SUMMARY_FILE",
    "atomic_write_text",
    "json_safe",
    "read_trials",
    "TrialLog",
    "Results",
    "load_results",
]

CONFIG_FILE = "config.resolved.yaml"
TRIALS_FILE = "trials.jsonl"
SUMMARY_FILE = "summary.json"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def json_safe(obj):
    """``obj`` with every infinite or NaN float (nested in dicts, lists, tuples) as None: JSON has neither, and a
    file any reader can parse is worth more than Python's ``Infinity`` token.

    >>> json_safe({"a": float("inf"), "b": [1.0, float("nan")]})
    {'a': None, 'b': [1.0, None]}
    """
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def atomic_write_text(path: "str | Path", text: "str | bytes") -> None:
    """Write ``text`` (or bytes) to ``path`` so that readers see the old file or the new one, never half.

    Writes a temporary file in the same folder, fsyncs it and ``os.replace``s it.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        binary = isinstance(text, bytes)
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp makes the file private (0600); give it the permissions any other
        # file we write gets (0666 minus the umask), like trials.jsonl and the plots.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _scan(path: Path) -> tuple[list[dict], int]:
    """Complete trial records and the byte length of the valid prefix."""
    records: list[dict] = []
    good = 0
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return records, 0
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0:
            break  # an unterminated last line: a write cut short
        line = data[pos:end]
        try:
            rec = json.loads(line)
        except ValueError:
            break
        if not isinstance(rec, dict) or not isinstance(rec.get("index"), int):
            break
        records.append(rec)
        pos = good = end + 1
    return records, good


def read_trials(path: "str | Path") -> list[dict]:
    """The finished trials in ``trials.jsonl``, sorted by index, first copy of each index kept.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "t.jsonl").write_text('{"index": 1}\\n{"index": 0}\\n{"index": 2, "trunc')
    >>> [t["index"] for t in read_trials(d / "t.jsonl")]
    [0, 1]
    """
    records, _ = _scan(Path(path))
    seen: dict[int, dict] = {}
    for rec in records:
        seen.setdefault(rec["index"], rec)
    return [seen[i] for i in sorted(seen)]


class TrialLog:
    """Append-only trial log: each record is one line, flushed and fsync'ed at once.

    Opening it cuts off an incomplete tail left by a crash, so the next record
    starts on a fresh line.
    """

    def __init__(self, path: "str | Path", *, fresh: bool):
        self.path = Path(path)
        if fresh or not self.path.exists():
            self.path.write_bytes(b"")
        else:
            _, good = _scan(self.path)
            if good != self.path.stat().st_size:
                with open(self.path, "r+b") as fh:
                    fh.truncate(good)
        self._fh = open(self.path, "a", encoding="utf-8")

    def append(self, record: dict) -> None:
        self._fh.write(json.dumps(record, sort_keys=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> "TrialLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass(frozen=True)
class Results:
    """What a finished (or partial) run left on disk."""

    directory: Path
    config: dict
    trials: list
    summary: dict | None

    def trials_at(self, point: int, mechanism=None) -> list:
        return [t for t in self.trials if t["point"] == point and t.get("mechanism") == mechanism]


def load_results(directory: "str | Path") -> Results:
    """Read a results folder (the config, the trials and the summary if present)."""
    from .exceptions import ParameterValueError

    directory = Path(directory)
    cfg_file = directory / CONFIG_FILE
    try:
        if not cfg_file.is_file():
            raise ParameterValueError(f"{directory}: not a results folder (no {CONFIG_FILE})")
        config = _read_saved(cfg_file, yaml.safe_load, (yaml.YAMLError,))
        trials = read_trials(directory / TRIALS_FILE)
        summary = None
        if (directory / SUMMARY_FILE).is_file():
            summary = _read_saved(directory / SUMMARY_FILE, json.loads, (ValueError, RecursionError))
    except (OSError, ValueError) as exc:  # a folder name the OS refuses (too long, a NUL byte), unreadable files
        if isinstance(exc, ParameterValueError):
            raise
        raise ParameterValueError(f"{str(directory)[:200]}: cannot read the results folder: "
                                  f"{getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(config, dict) or not isinstance(config.get("plot") or {}, dict):
        raise ParameterValueError(f"{cfg_file}: not a config written by dpaudit run (expected a mapping with a "
                                  "'plot' mapping); run the experiment again")
    return Results(directory, config, trials, summary)


def _read_saved(path: Path, parse, errors: tuple):
    """``parse`` of a saved file's text; a file that does not parse is an error naming it (it was edited or cut)."""
    from .exceptions import ParameterValueError

    try:
        return parse(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ParameterValueError(f"{path}: cannot read: not UTF-8 text ({exc.reason})") from None
    except errors as exc:
        problem = " ".join(str(exc).split())[:200]
        raise ParameterValueError(f"{path}: cannot read: {problem}; run the experiment again (or dpaudit run "
                                  "--resume, which keeps its finished trials)") from None
