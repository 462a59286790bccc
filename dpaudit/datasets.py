"""Datasets: one loader for the command line, Python and YAML configs.

A dataset is a 1-D (one value per individual) or 2-D (one row per
individual) array of finite numbers.  :func:`load_dataset` accepts an array
or nested list, a JSON array literal, or a path to a ``.json``, ``.npy`` or
``.csv`` file (a CSV may start with a header row or a byte-order mark; its
``true``/``false`` read as 1/0, as JSON's do), and raises
:class:`~dpaudit.exceptions.DatasetError` naming the dataset and the file
for anything else: ragged rows, non-numeric values, NaN or infinity.  A
dataset may be empty, the add/remove neighbour of a one-record dataset: ``[]``,
a ``.json`` file holding ``[]`` and a ``.csv`` file with no lines (or blank
ones only) are the same empty dataset.  A CSV holding a header line alone is
refused, as that one line is more often data in another format (``1;2``).

Examples
--------
>>> load_dataset([0, 1, 1], name="dataset")
array([0, 1, 1])
>>> load_dataset([float("nan"), 1.0], name="dataset")
Traceback (most recent call last):
...
dpaudit.exceptions.DatasetError: dataset: array: contains NaN or infinite values
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .exceptions import DatasetError

__all__ = ["load_dataset", "load_scores", "parse_dataset", "expand_user", "as_numpy"]


def as_numpy(value: Any) -> np.ndarray:
    """``np.asarray(value)``; where numpy refuses an array library's object that has ``detach`` (a torch tensor
    that requires grad, or one on a GPU), the same after ``value.detach()`` and ``.cpu()``, element by element in
    a list or tuple.

    Why: a training loop's natural release or score is such a tensor (``model(x)``), and numpy's refusal
    ("Can't call numpy() on Tensor that requires grad") would stop audits of correct code; the numbers are the same.
    torch is never imported. When even that fails, numpy's own exception is raised.

    >>> class Held:                       # the form of a torch tensor that requires grad
    ...     def __array__(self, dtype=None, copy=None):
    ...         raise RuntimeError("Can't call numpy() on Tensor that requires grad")
    ...     def detach(self):
    ...         return np.float32(1.5)
    >>> as_numpy(Held()), as_numpy([Held(), 2.0])
    (array(1.5, dtype=float32), array([1.5, 2. ]))

    A float type numpy has no kind for (JAX's and ml_dtypes' ``bfloat16``, ``float8_*``: dtype kind ``"V"``, no
    fields) is read as float64, which holds each such value exactly, so a JAX release in bfloat16 is a number,
    not "non-numeric". Void data that does not convert stays as it is.
    """
    arr = _as_numpy(value)
    if arr.dtype.kind == "V" and arr.dtype.fields is None:
        for widen in (lambda: arr.astype(float), lambda: np.asarray(value, dtype=float)):
            try:
                return widen()
            except Exception:
                continue
    return arr


def _as_numpy(value: Any) -> np.ndarray:
    try:
        return np.asarray(value)
    except Exception as exc:
        if isinstance(value, (list, tuple)):
            try:
                parts = [_as_numpy(v) for v in value]
            except Exception:
                raise exc from None
            return np.asarray(parts)
        detach = getattr(value, "detach", None)
        if not callable(detach):
            raise
        try:
            plain = detach()
            cpu = getattr(plain, "cpu", None)
            return np.asarray(cpu() if callable(cpu) else plain)
        except Exception:
            raise exc from None


def _validate_dataset(obj: Any, name: str, source: str | None) -> np.ndarray:
    where = name if source is None else f"{name}: {source}"
    if isinstance(obj, dict) or obj is None or isinstance(obj, (str, bytes)):
        raise DatasetError(f"{where}: expected an array of numbers, got {type(obj).__name__}")
    try:
        arr = as_numpy(obj)
    except ValueError:
        raise DatasetError(f"{where}: ragged array (rows of different lengths)") from None
    except Exception as exc:  # an object whose __array__ raises (e.g. torch's bfloat16): say what and why
        raise DatasetError(f"{where}: numpy cannot read the {type(obj).__name__} "
                           f"({type(exc).__name__}: {exc})") from None
    if arr.dtype == object:
        for value in arr.ravel():
            if isinstance(value, (list, tuple)):
                raise DatasetError(f"{where}: ragged array (rows of different lengths)")
        bad = [v for v in arr.ravel() if isinstance(v, bool) or not isinstance(v, (int, float))][:1]
        if bad:  # a list, as the bad value may be None itself ([null])
            raise DatasetError(f"{where}: non-numeric value {bad[0]!r}")
        # Integers beyond int64 (JSON's 100000000000000000000): numbers all, numpy keeps them as objects.
        try:
            arr = arr.astype(float)
        except OverflowError:
            big = next(v for v in arr.ravel() if not _fits_float(v))
            raise DatasetError(f"{where}: the integer {str(big)[:20]}... ({len(str(abs(big)))} digits) is beyond "
                               "the largest float") from None
    if arr.dtype.kind not in "biuf":
        bad = None
        for value in arr.ravel().tolist():
            try:
                float(value)
            except (TypeError, ValueError):
                bad = value
                break
        if bad is None and arr.size:  # ["1", "0"]: each reads as a number, but is text: say so
            raise DatasetError(f"{where}: values are strings, not numbers (the first is {arr.ravel()[0].item()!r}); "
                               "write them without quotes")
        raise DatasetError(f"{where}: non-numeric value {bad!r} (dtype {arr.dtype})")
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.ndim == 0:
        raise DatasetError(f"{where}: expected a 1-D or 2-D array, got a single number")
    if arr.ndim > 2:
        raise DatasetError(f"{where}: expected a 1-D or 2-D array, got {arr.ndim}-D with shape {arr.shape}")
    if arr.size == 0 and arr.ndim == 2 and arr.shape[1] == 0:
        raise DatasetError(f"{where}: records with no fields (shape {arr.shape})")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise DatasetError(f"{where}: contains NaN or infinite values")
    return arr


def _fits_float(value) -> bool:
    try:
        float(value)
        return True
    except OverflowError:
        return False


#: CSV cells read as 0/1, as a JSON file's ``false``/``true`` are: pandas writes a bool column as ``True``/``False``.
_CSV_BOOLS = {"false": 0.0, "true": 1.0}


def _csv_number(cell: str) -> float:
    """A CSV cell's number: a float literal, or ``true``/``false`` (any case) as 1/0; ValueError otherwise."""
    flag = _CSV_BOOLS.get(cell.strip().lower())
    return float(cell) if flag is None else flag


def _read_csv(path: Path, where: str) -> Any:
    """The CSV's rows as numbers; errors start with ``where`` (the argument and the file).

    A plain file of numbers is read by numpy's C reader; anything else (text cells such as ``true``, quotes,
    blank fields, ragged rows, no data) by :func:`_read_csv_rows`, which says what is wrong.
    """
    arr = _read_csv_fast(path)
    if arr is None:
        arr = _read_csv_rows(path, where)
    # Whole numbers become integers; inf equals its own rint, and its cast to
    # int64 would be a silent, finite garbage value, so only finite ones.
    if arr.size and np.all(np.isfinite(arr)) and np.all(arr == np.rint(arr)):
        arr = arr.astype(np.int64)
    return arr[:, 0] if arr.ndim == 2 and arr.shape[1] == 1 else arr


def _read_csv_fast(path: Path) -> np.ndarray | None:
    """The numbers of a CSV that holds nothing else (a header row aside) as a 2-D float array, else None.

    numpy's reader, because reading row by row in Python costs ten times the time and the memory on large
    score files (docs/decisions/reading-datasets.md).  Where it fails, None: the careful reader reads the
    file again and names the problem.
    """
    import warnings

    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:
            cells = next(csv.reader([fh.readline()]), [])
        if not any(cell.strip() for cell in cells):
            return None  # a blank first line: the careful reader finds the header, if any
        header = not any(_is_csv_number(cell) for cell in cells)
        with path.open(encoding="utf-8-sig") as fh, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data": None, and the careful reader says so
            arr = np.loadtxt(fh, delimiter=",", comments=None, quotechar=None, dtype=float, ndmin=2,
                             skiprows=int(header))
    except (ValueError, OSError):  # not numbers only (or not UTF-8): the careful reader's message
        return None
    return arr if arr.size else None


def _is_csv_number(cell: str) -> bool:
    try:
        _csv_number(cell)
        return True
    except ValueError:
        return False


def _read_csv_rows(path: Path, where: str) -> np.ndarray:
    """The CSV's rows as numbers, read row by row (any cell ``float`` reads, ``true``/``false``) with messages
    naming the row; errors start with ``where``."""
    # utf-8-sig: a spreadsheet's "CSV UTF-8" starts with a byte-order mark, which would make the first value
    # non-numeric, so read as a header and silently dropped.
    with path.open(newline="", encoding="utf-8-sig") as fh:
        rows = [row for row in csv.reader(fh) if row and any(cell.strip() for cell in row)]
    if not rows:
        return np.empty((0, 1))  # no record: the empty dataset, as the JSON array [] is
    # A header: no number in it, or pandas' to_csv header of an unnamed index (",0" above "0,1.5"): its empty
    # first cell is no value of a record, and reading it as one named '' in row 1, not the index column.
    # Its other cells are column names: pandas' default 0, 1, 2, ... or names; a data row missing its first value
    # stays an error.
    names = [c.strip() for c in rows[0][1:]]
    pandas_index = (len(rows[0]) > 1 and not rows[0][0].strip() and len(rows) > 1 and _is_csv_number(rows[1][0])
                    and (names == [str(i) for i in range(len(names))] or not any(_is_csv_number(c) for c in names)))
    if pandas_index or not any(_is_csv_number(c) for c in rows[0]):
        header, rows = rows[0], rows[1:]  # a header row
        if not rows:
            line = ",".join(header)
            raise DatasetError(f"{where}: no numeric values: its only line, {line!r}, is read as a "
                               "header; give one value (or record) per line, fields separated by commas")
    width = len(rows[0]) if rows else 0
    out = []
    for lineno, row in enumerate(rows, start=1):
        if len(row) != width:
            raise DatasetError(f"{where}: ragged CSV: row {lineno} has {len(row)} fields, expected {width}")
        try:
            out.append([_csv_number(c) for c in row])
        except ValueError:
            bad = next(c for c in row if not _is_csv_number(c))
            raise DatasetError(f"{where}: non-numeric value {bad!r} in row {lineno}") from None
    return np.array(out, dtype=float).reshape(len(out), width)


def expand_user(text: str) -> Path:
    """``~`` expansion that never raises: ``~user`` for an unknown user stays as written."""
    try:
        return Path(text).expanduser()
    except RuntimeError:  # "Could not determine home directory" for '~name'
        return Path(text)


def file_label_text(text: str) -> str:
    """A file argument as a message shows it: stripped; beyond 200 characters its first 97 and last 100 (the
    file's own name) around ``...``."""
    text = text.strip()
    return text if len(text) <= 200 else text[:97] + "..." + text[-100:]


def file_label(name: str, text: str) -> str:
    """``NAME (FILE)``, the name the command line gives a loaded argument (``IN (in.npy)``).

    :func:`parse_dataset` given such a name for that very file does not repeat the file in its messages.

    >>> file_label("IN", "in.npy")
    'IN (in.npy)'
    """
    return f"{name} ({file_label_text(text)})"


def align_empty(dataset: np.ndarray, neighbor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pair, with an empty dataset written ``[]`` given the other's record shape: ``(0, k)`` beside records of
    k fields.  ``[]`` and ``[[1, 2]]`` are an add/remove pair of 2-field records, not a 1-D and a 2-D dataset.

    >>> [a.shape for a in align_empty(np.array([]), np.array([[1, 2]]))]
    [(0, 2), (1, 2)]
    """
    def fit(empty, other):
        if empty.shape == (0,) and other.ndim == 2:
            return empty.reshape(0, other.shape[1]).astype(other.dtype)
        return empty

    return fit(dataset, neighbor), fit(neighbor, dataset)


def load_dataset(value: Any, *, name: str = "dataset", base_dir: str | os.PathLike | None = None) -> np.ndarray:
    """The one dataset loader: arrays, JSON literals and files, checked the same way everywhere.

    ``base_dir`` resolves relative file paths (a YAML config's own folder).
    """
    if base_dir is not None and isinstance(value, (str, os.PathLike)):
        text = os.fspath(value).strip()
        if text and text[0] not in "[{" and not Path(text).expanduser().is_absolute():
            value = str(Path(base_dir) / text)
    return parse_dataset(value, name=name)


def load_scores(value: Any, *, name: str = "scores", min_count: int = 1) -> np.ndarray:
    """1-D float scores from an array, a JSON literal or a .json/.npy/.csv file (one column; a header is skipped).

    The dataset loader's checks and messages, plus: one score per row, every score finite.

    >>> load_scores("[0.5, 1, 2]").tolist()
    [0.5, 1.0, 2.0]
    >>> load_scores("[[1, 2], [3, 4]]", name="IN")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.DatasetError: IN: expected one score per row (a 1-D array or one column), got shape (2, 2)
    """
    arr = load_dataset(value, name=name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        # pandas' to_csv writes the index first: 0, 1, 2, ... beside the scores
        index = (arr.ndim == 2 and arr.shape[1] == 2 and len(arr) > 1
                 and np.array_equal(arr[:, 0], np.arange(len(arr))))
        hint = ("; its first column counts 0, 1, 2, ...: an index, as pandas' to_csv writes one (save with "
                "index=False)" if index else "")
        raise DatasetError(f"{name}: expected one score per row (a 1-D array or one column), got shape "
                           f"{arr.shape}{hint}")
    arr = arr.astype(float)
    bad = np.flatnonzero(~np.isfinite(arr))
    if len(bad):
        raise DatasetError(f"{name}: score {int(bad[0])} is {arr[bad[0]]!r}; every score must be a finite number")
    if len(arr) < min_count:
        raise DatasetError(f"{name}: {len(arr)} scores; at least {min_count} are needed")
    return arr


def parse_dataset(text_or_path: Any, name: str = "--dataset") -> np.ndarray:
    """Read a dataset from a JSON array literal or a ``.json``, ``.npy`` or ``.csv`` file.

    Errors are :class:`~dpaudit.exceptions.DatasetError` naming ``name`` and the file, once: a ``name`` that
    already ends in the file as :func:`file_label` writes it (``IN (in.npy)``) is not followed by it again.
    A CSV has one row per individual (an optional header row is skipped); a
    single column gives a 1-D dataset.

    Examples
    --------
    >>> parse_dataset("[0, 1, 1]")
    array([0, 1, 1])
    >>> parse_dataset("[[1, 2], [3]]", name="--neighbor")
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.DatasetError: --neighbor: JSON literal: ragged array (rows of different lengths)
    """
    if not isinstance(text_or_path, (str, bytes, os.PathLike)):
        if isinstance(text_or_path, (np.ndarray, list, tuple, range)) or hasattr(text_or_path, "__array__"):
            return _validate_dataset(text_or_path, name, "array")
    if isinstance(text_or_path, os.PathLike):
        text_or_path = os.fspath(text_or_path)
    if not isinstance(text_or_path, str):
        # From Python, a generator or a set gets a hint, not the command line's "expected a JSON array".
        hint = "; pass a list, e.g. list(...)" if hasattr(text_or_path, "__iter__") else ""
        raise DatasetError(f"{name}: expected an array, a list, a JSON array or a file path, got "
                           f"{type(text_or_path).__name__}{hint}")
    text = text_or_path.strip()
    if not text:
        raise DatasetError(f"{name}: empty argument (expected a JSON array or a .json/.npy/.csv file)")
    if text[0] in "[{":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{name}: invalid JSON array literal: {exc}") from None
        except RecursionError:
            raise DatasetError(f"{name}: invalid JSON array literal: nested too deeply") from None
        return _validate_dataset(obj, name, "JSON literal")
    path = expand_user(text)
    # The command line's names already show the file, 'IN (in.npy)': the message names it once.
    named = name.endswith(f"({file_label_text(text)})")
    shown = "" if named else f" {text!r}"
    try:
        exists, is_file = path.exists(), path.is_file()
    except (OSError, ValueError) as exc:  # e.g. a name too long for the file system, a NUL byte
        what = "it" if named else repr(text[:80])
        raise DatasetError(f"{name}: cannot use {what} as a file name: {getattr(exc, 'strerror', None) or exc}"
                           ) from None
    if not exists:
        raise DatasetError(f"{name}: file not found{':' if shown else ''}{shown} (expected a JSON array or a "
                           ".json/.npy/.csv file)")
    if not is_file:
        raise DatasetError(f"{name}: not a file{':' if shown else ''}{shown}")
    suffix = path.suffix.lower()
    source = None if named else repr(text)
    where = name if named else f"{name}: {source}"
    try:
        if suffix == ".json":
            with path.open(encoding="utf-8-sig") as fh:  # a byte-order mark is no reason to refuse a file
                content = fh.read()
            if not content.strip():  # no JSON value at all; an empty dataset is a JSON array with nothing in it
                raise DatasetError(f"{where}: cannot read: the file is empty (an empty dataset is written [])")
            obj = json.loads(content)
        elif suffix == ".npy":
            obj = np.load(path, allow_pickle=False)
        elif suffix == ".csv":
            obj = _read_csv(path, where)
        else:
            raise DatasetError(f"{where}: unsupported file type {suffix or '(none)'!r}; use .json, .npy or .csv")
    except DatasetError:
        raise
    except EOFError:  # np.load on an empty file: no header at all
        raise DatasetError(f"{where}: cannot read: the file is empty") from None
    except (ValueError, OSError, RecursionError) as exc:
        raise DatasetError(f"{where}: cannot read: {exc}") from None
    return _validate_dataset(obj, name, source)
