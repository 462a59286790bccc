"""Helpers the command-line tests share: dpaudit in this process, and dpaudit in a child sent Ctrl-C.

Importable from any test as ``from _cli import ...``: ``tests/conftest.py`` puts this folder on the path.
"""

from __future__ import annotations

import signal
import subprocess
import time

from dpaudit.cli import main


def cli(capsys, *args):
    """``dpaudit ARGS`` in this process: (exit status, stdout, stderr)."""
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def one_line(err: str) -> str:
    """The one line an error leaves on stderr (asserted: one line, no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def interrupted_when_marked(cmd: list, env: dict, marker, *, timeout: float = 240) -> subprocess.CompletedProcess:
    """Run ``cmd`` and send it SIGINT once the file ``marker`` exists (the target makes it at the chosen moment).

    Fails when the command ends before the marker appears: the interrupt would then test nothing.
    """
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + timeout
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, f"{cmd[3]} ended before the marker"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
