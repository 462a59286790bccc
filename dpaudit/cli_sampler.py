"""``dpaudit sampler``: argument parsing, reading the batches file, printing; the tests are in
:mod:`dpaudit.training.sampler`.

:mod:`dpaudit.cli` calls :func:`add_sampler_parser` on its subparsers; nothing heavy is imported
until the command runs.  Exit status as for ``dpaudit audit``: 0 no violation found, 1 violation,
2 bad input (one line naming the argument).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["add_sampler_parser", "cmd_sampler", "load_batches"]

SAMPLER_EXAMPLE = """\
examples:
  dpaudit sampler batches.jsonl 60000 --rate 0.004
  dpaudit sampler mask.npy 1000 --rate 0.01 --json
  dpaudit sampler batches.jsonl 1000 --claim dpsgd:noise=1.1,rate=0.01,steps=1500 --delta 1e-5

BATCHES is .jsonl (one JSON array of record indices per line, one line per step), .json (a list of
such arrays) or .npy (a boolean mask of shape (steps, N), or an integer array of shape (steps, B) whose
rows are batches, -1 padding shorter ones).  The batches are tested against Poisson sampling (each
record in each step independently with probability Q): the overall rate, the batch sizes, the most and
least sampled records and how regular the per-record counts are, at --confidence for the whole report.
Exit status: 0 when no violation is found, 1 on a violation, 2 bad input.
"""


class _Rows:
    """The rows of an integer ``.npy`` array as batches, ``-1`` padding dropped."""

    def __init__(self, arr):
        self.arr = arr

    def __iter__(self):
        for row in self.arr:
            yield row[row != -1]


def load_batches(path: str, *, name: str = "BATCHES"):
    """The batches of a ``.jsonl``, ``.json`` or ``.npy`` file, as :func:`~dpaudit.training.audit_sampler` reads them."""
    import numpy as np

    from .exceptions import DatasetError

    p = Path(path).expanduser()
    suffix = p.suffix.lower()
    label = f"{name} ({path})"
    if suffix not in (".jsonl", ".json", ".npy"):
        raise DatasetError(f"{label}: expected a .jsonl, .json or .npy file; got {suffix or 'no extension'!r}")
    try:
        if suffix == ".npy":
            arr = np.load(p, allow_pickle=False)
        else:
            text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise DatasetError(f"{label}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:  # an object array (pickle) or a damaged file
        raise DatasetError(f"{label}: not a plain .npy array ({exc})") from None
    if suffix == ".npy":
        if arr.ndim != 2 or not (arr.dtype == bool or np.issubdtype(arr.dtype, np.integer)):
            raise DatasetError(f"{label}: expected a 2-D boolean mask (steps, N) or integer rows of indices; got "
                               f"shape {arr.shape}, dtype {arr.dtype}")
        return arr if arr.dtype == bool else _Rows(arr)
    try:
        rows = ([json.loads(line) for line in text.splitlines() if line.strip()] if suffix == ".jsonl"
                else json.loads(text))
    except ValueError as exc:
        raise DatasetError(f"{label}: not valid JSON ({exc})") from None
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise DatasetError(f"{label}: expected one JSON array of record indices per step")
    return rows


def add_sampler_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``sampler`` on an argparse subparsers object."""
    s = subparsers.add_parser("sampler", help="check recorded batches against the Poisson sampling DP-SGD accountants "
                                              "assume",
                              description="Test the batches a training loop drew against Poisson sampling at rate Q "
                                          "(each record in each step independently with probability Q).",
                              epilog=SAMPLER_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("batches", metavar="BATCHES", help="the batches: .jsonl, .json or .npy (see below)")
    s.add_argument("n_records", metavar="N", help="the number of records (indices are 0 to N-1)")
    s.add_argument("--rate", metavar="Q", default=None, help="the sampling rate the accountant assumes")
    s.add_argument("--batch-size", metavar="B", default=None, help="the expected batch size instead (rate B / N)")
    s.add_argument("--claim", metavar="SPEC", default=None,
                   help="dpsgd:noise=SIGMA,rate=Q,steps=T: also the accountant's epsilon at the measured rate")
    s.add_argument("--delta", metavar="D", default="1e-5", help="the delta the claim's epsilon is read at (1e-5)")
    s.add_argument("--confidence", metavar="C", default="0.95", help="for the whole report (default 0.95)")
    s.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    s.set_defaults(func=cmd_sampler)
    return s


def _number(text, flag: str, *, integer: bool = False):
    from ._validation import number_text
    from .exceptions import ParameterValueError

    if text is None:
        return None
    try:
        value = number_text(text)
    except (ValueError, TypeError):
        raise ParameterValueError(f"argument {flag}: expected a number; got {text!r}") from None
    if integer:
        if value != int(value):
            raise ParameterValueError(f"argument {flag}: expected an integer; got {text!r}")
        return int(value)
    return value


#: The Python parameter a message starts with -> the command-line argument to name instead.
_FLAGS = {"rate": "--rate", "batch_size": "--batch-size", "confidence": "--confidence", "delta": "--delta",
          "n_records": "N", "batches": "BATCHES", "claim": "--claim"}


def _as_flags(fn, *args, **kw):
    """Call ``fn``; a bad value's one-line message names the command-line argument, not the Python parameter."""
    from .exceptions import ParameterTypeError, ParameterValueError

    try:
        return fn(*args, **kw)
    except (ParameterValueError, ParameterTypeError) as exc:
        text = str(exc)
        for name, flag in _FLAGS.items():
            if text.startswith((name + " ", name + ":")):
                text = text[len(name):].lstrip(":").lstrip()
                raise type(exc)(f"argument {flag}: {text}") from None
        raise


def cmd_sampler(args) -> int:
    from .results import json_safe
    from .training.sampler import audit_sampler

    from .exceptions import ParameterValueError

    if args.rate is None and args.batch_size is None and args.claim is None:
        raise ParameterValueError("argument --rate: required (or --batch-size B, or --claim dpsgd:noise=...,rate=...,"
                                  "steps=...)")
    n = _number(args.n_records, "N", integer=True)
    kw = {"rate": _number(args.rate, "--rate"), "batch_size": _number(args.batch_size, "--batch-size"),
          "confidence": _number(args.confidence, "--confidence"), "delta": _number(args.delta, "--delta")}
    if args.claim is not None:
        kw["claim"] = args.claim
    batches = load_batches(args.batches)
    report = _as_flags(audit_sampler, batches, n, **kw)
    if args.json:
        print(report.summary(), file=sys.stderr)
        args.json_out.append(json.dumps(json_safe(report.to_dict()), allow_nan=False) + "\n")
    else:
        print(report.summary())
    return 1 if report.violation else 0
