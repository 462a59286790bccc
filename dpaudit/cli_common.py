"""What every ``dpaudit`` command shares: the one-line errors, the exit statuses, ``--json`` on stdout alone.

Exit status: 0 no violation found, 1 violation found, 2 bad input or usage
(one line on stderr starting ``dpaudit: error:``, naming the argument), 3 an
internal error.  A library error that broke a rule between options
(:mod:`dpaudit.param_rules`) is said again in the command's own words: its
flags, not its Python keywords (:func:`error_line`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

__all__ = ["EXIT_OK", "EXIT_VIOLATION", "EXIT_USAGE", "EXIT_INTERNAL", "UsageError", "Parser", "FORMATTER", "emit",
           "pending_notes", "nothing_certified", "load_target_arg", "parse_param", "target_relation", "error_line",
           "one_line", "stdout_to_stderr", "second_interrupt_aborts", "run"]

EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """Bad command-line usage; becomes one line and exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse that reports errors in one line (exit 2) instead of usage + message."""

    def error(self, message):
        command = self.prog.removeprefix("dpaudit").strip()
        raise UsageError(f"{command}: {message}" if command else message)


FORMATTER = argparse.RawDescriptionHelpFormatter


def emit(report, args) -> int:
    """Print a report (the summary for people; with ``--json`` one object for stdout) and return the exit status.

    With ``--json`` the object is queued on ``args.json_out``: :func:`run` writes it to the real stdout once the
    command is over (while it runs, file descriptor 1 points at stderr).
    """
    if args.json:
        print(report.summary(), file=sys.stderr)
        from .results import json_safe

        args.json_out.append(json.dumps(json_safe(report.to_dict()), allow_nan=False) + "\n")
    else:
        print(report.summary())
    return EXIT_VIOLATION if report.violation else EXIT_OK


def pending_notes(args) -> list[str]:
    """The ``note:`` lines warnings queued during the command and not yet printed (then none are queued)."""
    notes = getattr(args, "notes", None) or []
    out = list(notes)
    notes.clear()
    return out


def nothing_certified(args, what: str = "audit") -> str:
    """The one line of an audit (``what``: the search's "final audit") interrupted before it certified anything."""
    if args.samples is not None:
        return (f"interrupted before the fixed-size {what} finished, so nothing is certified (a fixed-size bound "
                f"holds only at its planned --samples; a sequential {what}, without --samples, reports the rounds "
                "it finished)")
    first = "the first round" if what == "audit" else f"the {what}'s first round"
    return f"interrupted before {first} finished, so nothing is certified"


def load_target_arg(name: str, params: dict):
    """``load_target(name, **params)``; a bad ``--param`` value is reported as ``argument --param KEY: ...``."""
    from .exceptions import ParameterTypeError, ParameterValueError
    from .targets import load_target

    try:
        return load_target(name, **params)
    except (ParameterTypeError, ParameterValueError) as exc:
        text = str(exc)
        key = next((k for k in params if text.startswith(f"{k} ")), None)
        if key is not None:
            raise UsageError(f"argument --param {key}: {text[len(key) + 1:]}") from None
        if any(repr(k) in text for k in params):  # e.g. a parameter the mechanism does not have
            raise UsageError(f"argument --param: {text}") from None
        raise


def parse_param(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as JSON (numbers, lists, true/false), else as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"argument --param: expected KEY=VALUE; got {text!r}")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value


def target_relation(target):
    """The relation a target's pairs must respect: its declared input domain's, else its claim's, else None."""
    fn = getattr(target, "fn", target)
    domain = getattr(fn, "input_domain", None)
    if callable(domain):
        try:
            rel = domain().get("relation")
        except Exception:  # noqa: BLE001 - a domain we cannot read is a domain we do not use
            rel = None
        if rel:
            return rel
    claim = getattr(fn, "claim", None)
    return getattr(getattr(claim, "neighbouring", None), "value", None)


def error_line(exc: BaseException, args) -> str:
    """The one line of an error: a broken rule between options in the command's flags, else the error's text.

    The library raises a broken rule in Python's words (``claim: give either claim or epsilon/delta``);
    ``args.options`` (the command's option table) names the flags (``argument --claim: give either --claim
    or --epsilon/--delta``), so a rule has one wording, said in each front end's names.
    """
    rule, table = getattr(exc, "rule", None), getattr(args, "options", None)
    if rule is not None and table is not None:
        return rule.render(exc.given, table.front("cli"))
    return one_line(exc)


def one_line(exc: BaseException) -> str:
    """The error's text on one line (its type's name when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__


@contextlib.contextmanager
def stdout_to_stderr():
    """While the block runs, file descriptor 1 and ``sys.stdout`` point at stderr; both are restored on exit.

    The redirection is at the file-descriptor level (``os.dup2``), so C-level writes and worker processes
    started inside the block (which inherit fd 1) cannot put a byte on the real stdout: with ``--json`` it
    holds only the JSON object.
    """
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no fd 1 at all: nothing can reach a stdout that is not there
        saved = None
    try:
        if saved is not None:
            os.dup2(sys.stderr.fileno() if _has_fd(sys.stderr) else 2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        for stream in (sys.stdout, sys.__stdout__, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _has_fd(stream) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):  # e.g. pytest's capsys stream
        return False
    return True


@contextlib.contextmanager
def second_interrupt_aborts():
    """While the block runs, a first Ctrl-C raises ``KeyboardInterrupt`` as usual and a second one aborts at once.

    After the first, a command winds up (an audit reports its finished rounds, worker processes are
    stopped); a second, in the block or after it while the process exits (joining threads and worker
    pools), says one line, kills the loky worker processes (no exit handler would stop them) and ends the
    process by SIGINT, so that a calling shell sees it killed by the signal.  A SIGINT that was ignored when
    dpaudit started (a job started with ``&`` in a script) stays ignored, and outside the main thread nothing
    changes.
    """
    import signal
    import threading

    from ._executor import kill_workers

    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    inside = [True]

    def abort(signum, frame):
        said = b", without a report" if inside[0] else b""  # after the block the command has said its piece
        os.write(2, b"dpaudit: interrupted again: stopped at once" + said + b"\n")
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        kill_workers()  # no exit handler stops them after a signal: idle, they would hold stdout for 300 s
        os.kill(os.getpid(), signal.SIGINT)

    def first(signum, frame):
        signal.signal(signal.SIGINT, abort)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, first)
    try:
        yield
    finally:
        inside[0] = False
        # After a first Ctrl-C the second still aborts while the process winds up (joining fitting threads and
        # worker pools at exit), where Python's own handler printed a traceback.
        if signal.getsignal(signal.SIGINT) is not abort:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def run(args) -> int:
    """Run the command; with ``--json`` its output for people goes to stderr and only the JSON to stdout."""
    with second_interrupt_aborts():
        return _run_command(args)


def _run_command(args) -> int:
    if not getattr(args, "json", False):
        return int(args.func(args) or 0)
    args.json_out = []
    with stdout_to_stderr():
        status = int(args.func(args) or 0)
    sys.stdout.write("".join(args.json_out))
    sys.stdout.flush()
    return status
