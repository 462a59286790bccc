"""One Python environment per library version, created from the package index and cached.

An environment holds the library's requirements plus ``numpy``, ``scipy`` and ``scikit-learn`` (unpinned, so
that the resolver picks versions the library's own pins allow): all that dpaudit's auditing core imports.
dpaudit itself is not installed there: the worker runs with ``PYTHONPATH`` set to a folder holding only a
link to this dpaudit's package (:func:`dpaudit_path`), so the library's dependency pins are untouched and
the code that audits is the code that drives.

Environments live under ``~/.cache/dpaudit/envs/<hash>`` (``DPAUDIT_CACHE`` moves the cache), the hash
taken over the requirements and the interpreter's version; a ``.ready`` file marks a finished one, and a
lock file keeps two processes from creating the same one at once.  ``uv`` is used when it is on the path
(or beside this interpreter), else ``python -m venv`` and pip.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..exceptions import DPAuditError

__all__ = ["EnvironmentFailed", "cache_dir", "environment_python", "dpaudit_path", "env_key", "CORE"]

#: What dpaudit's auditing core needs in a library's environment: ``import dpaudit``, ``audit`` and ``search``
#: run with numpy and scipy alone; the classifier distinguishers (vector releases) need scikit-learn.
CORE = ("numpy", "scipy", "scikit-learn")


class EnvironmentFailed(DPAuditError):
    """A library version's environment could not be created (its message ends with the installer's last lines)."""


def cache_dir() -> Path:
    """``$DPAUDIT_CACHE`` or ``~/.cache/dpaudit``."""
    return Path(os.environ.get("DPAUDIT_CACHE") or Path.home() / ".cache" / "dpaudit")


def env_key(requirements: tuple[str, ...]) -> str:
    """The cache key of an environment: requirements (order kept: pip reads them as given) and the interpreter.

    >>> env_key(("a==1",)) == env_key(("a==1",)), env_key(("a==1",)) == env_key(("a==2",))
    (True, False)
    """
    text = json.dumps({"requirements": list(requirements) + list(CORE), "python": sys.version.split()[0]})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def dpaudit_path() -> Path:
    """A folder holding only a link named ``dpaudit`` to this process's dpaudit package (the worker's PYTHONPATH).

    A link, not the package's parent folder: an installed dpaudit's parent is a ``site-packages`` whose other
    packages would shadow the library's pins.
    """
    package = Path(__file__).resolve().parent.parent
    folder = cache_dir() / "src" / hashlib.sha256(str(package).encode()).hexdigest()[:16]
    link = folder / "dpaudit"
    if not link.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".dpaudit.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(package, target_is_directory=True)
        os.replace(tmp, link)
    return folder


def _uv() -> str | None:
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else shutil.which("uv")


@contextlib.contextmanager
def _locked(path: Path):
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: list[str], log: Path) -> None:
    with open(log, "a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        done = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        tail = " | ".join(line.strip() for line in log.read_text().splitlines()[-4:] if line.strip())
        raise EnvironmentFailed(f"`{' '.join(cmd[:3])} ...` failed (exit {done.returncode}): {tail} (log: {log})")


def environment_python(requirements: tuple[str, ...], *, log=None) -> str:
    """The ``python`` of the cached environment holding ``requirements`` (created first if missing).

    ``log`` (a callable taking a line) hears when an environment is being created and how long it took.
    Raises :class:`EnvironmentFailed` when the installer fails (no such version, no wheel for this Python).
    """
    import time

    key = env_key(requirements)
    root = cache_dir() / "envs"
    env = root / key
    python = env / "bin" / "python"
    if (env / ".ready").exists():
        return str(python)
    with _locked(root / f"{key}.lock"):
        if (env / ".ready").exists():
            return str(python)
        if env.exists():
            shutil.rmtree(env)  # a half-made one (an interrupted install)
        logfile = root / f"{key}.log"
        logfile.write_text("")
        start = time.monotonic()
        if log:
            log(f"environment: creating {env} for {' '.join(requirements)}")
        uv = _uv()
        try:
            if uv:
                _run([uv, "venv", "--quiet", "--python", sys.executable, str(env)], logfile)
                _run([uv, "pip", "install", "--quiet", "--python", str(python), *requirements, *CORE], logfile)
            else:
                _run([sys.executable, "-m", "venv", str(env)], logfile)
                _run([str(python), "-m", "pip", "install", "--quiet", *requirements, *CORE], logfile)
        except EnvironmentFailed:
            shutil.rmtree(env, ignore_errors=True)
            raise
        freeze = subprocess.run([str(python), "-c", _FREEZE], capture_output=True, text=True)
        (env / "installed.json").write_text(freeze.stdout or "{}")
        (env / "requirements.txt").write_text("\n".join(requirements) + "\n")
        (env / ".ready").write_text(f"{time.monotonic() - start:.1f}\n")
        if log:
            log(f"environment: ready in {time.monotonic() - start:.0f} s: {env}")
    return str(python)


_FREEZE = ("import json, importlib.metadata as m; "
           "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions()}, sort_keys=True))")


def installed(python: str) -> dict:
    """``{distribution: version}`` of an environment (read from its ``installed.json`` when there is one)."""
    saved = Path(python).parent.parent / "installed.json"
    if saved.exists():
        with contextlib.suppress(ValueError):
            return json.loads(saved.read_text())
    done = subprocess.run([python, "-c", _FREEZE], capture_output=True, text=True)
    try:
        return json.loads(done.stdout)
    except ValueError:
        return {}
