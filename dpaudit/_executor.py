"""Where work runs: this process, loky worker processes, or a Dask cluster.

One implementation for every entry point: an audit's chunks
(:class:`~dpaudit.sampling.Sampler`) and an experiment's trials
(:mod:`dpaudit.runner.execution`) both go through it.  Results come back in
task order, and every task carries its own seed, so nothing that depends on
them can depend on the number of workers or on the backend.

numpy's samplers hold the GIL, so threads give no speed-up; processes do, and
they also keep a misbehaving target out of our process.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import signal
import sys
import weakref
from contextlib import contextmanager
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from .exceptions import ParameterValueError

__all__ = ["Backend", "Executor", "check_backend", "dask_client", "end_with_parent", "in_worker", "kill_workers", "run_ordered"]

#: Seconds to wait for a Dask scheduler to answer before giving up.
CONNECT_TIMEOUT = "10s"


class Backend(str, enum.Enum):
    """Where work runs: joblib's loky processes (or this process), or a Dask cluster."""

    LOKY = "loky"
    DASK = "dask"


def check_backend(backend: Any, scheduler: Any = None, *, name: str = "backend") -> Backend:
    """The :class:`Backend` named by ``backend``; a ``scheduler`` address implies Dask.

    >>> check_backend("loky"), check_backend("loky", "tcp://127.0.0.1:8786")
    (<Backend.LOKY: 'loky'>, <Backend.DASK: 'dask'>)
    """
    try:
        chosen = Backend(backend)
    except ValueError:
        raise ParameterValueError(f"{name} must be one of {[b.value for b in Backend]}; got {backend!r}") from None
    if scheduler is not None and not isinstance(scheduler, str):
        raise ParameterValueError(f"scheduler must be an address such as 'tcp://host:8786'; got {scheduler!r}")
    return Backend.DASK if scheduler else chosen


@contextmanager
def dask_client(scheduler: str | None = None, n_workers: int = 2) -> Iterator[Any]:
    """A Dask client: connected to ``scheduler``, or to a local cluster of ``n_workers`` processes.

    The local cluster (one thread per worker, no dashboard) is closed on exit.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - dask is an optional extra
        raise ParameterValueError(f"backend 'dask' needs dask[distributed] (pip install 'dpaudit[dask]'): "
                                  f"{exc}") from None
    cluster = None
    if scheduler:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise ParameterValueError(f"scheduler: cannot connect to {scheduler!r}: {exc}") from None
    else:
        cluster = LocalCluster(n_workers=max(2, n_workers), threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


#: ``progress=LINES``: no bar, but plain lines on stderr for a log (see :func:`_collect_with_lines`).
LINES = "lines"


def _collect(results: Iterable[Any], total: int, progress: bool | str, desc: str, unit: str) -> list:
    """The results in order, with a progress bar on stderr when asked (or lines, ``progress=LINES``)."""
    if progress == LINES and total:
        return _collect_with_lines(results, total, desc, unit)
    if not (progress and total):
        return list(results)
    from tqdm import tqdm

    from ._progress import bar_size

    with tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, **bar_size()) as bar:
        out = []
        for r in results:
            out.append(r)
            bar.update(1)
        return out


def _collect_with_lines(results: Iterable[Any], total: int, desc: str, unit: str, *, file=None) -> list:
    """The results in order, with :class:`~dpaudit._progress.LogLines` (quiet for 10 s, then a line per 30 s).

    For a log (stderr not a terminal), where a bar is a smear of carriage returns and a long fixed-size audit
    would otherwise say nothing until it ends.

    >>> import io
    >>> out = io.StringIO()
    >>> _collect_with_lines(iter([1, 2]), 2, "audit", "chunk", file=out), out.getvalue()
    ([1, 2], '')
    """
    from ._progress import LogLines

    lines = LogLines(total, desc=desc, unit=unit, file=file)
    out = []
    for r in results:
        out.append(r)
        lines.update(1)
    return out


#: Seconds between a worker's looks at whether the process that started it still runs.
PARENT_CHECK_SECONDS = 1.0

_watching: list[int] = []


def end_with_parent() -> None:
    """In a worker process: end it within :data:`PARENT_CHECK_SECONDS` of its parent's death.

    A parent killed by SIGKILL (the OOM killer, ``timeout -s KILL``, a cancelled CI job) runs no exit handler
    and no :func:`kill_workers`; without this its workers would run their tasks to the end and then wait out
    loky's idle timeout (300 s), holding the parent's stdout and stderr (a pipe to ``tee`` stays open) and the
    cores a ``--resume`` needs (docs/decisions/worker-lifetime.md).  A daemon thread, started once per
    process, polls ``os.getppid()``, which changes when the parent is gone.  Call it only in workers: in the
    main process the parent is the shell.
    """
    if _watching:
        return
    import threading
    import time

    parent = os.getppid()
    _watching.append(parent)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="dpaudit-parent-watch", daemon=True).start()


def in_worker(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a loky worker process that ends when its parent does (:func:`end_with_parent`)."""
    end_with_parent()
    return fn(*args)


def run_ordered(fn: Callable[..., Any], tasks: Sequence[tuple], *, n_jobs: int = 1, progress: bool | str = False,
                desc: str = "", unit: str = "chunk") -> list:
    """``[fn(*t) for t in tasks]``, in loky worker processes when ``n_jobs > 1``.

    >>> run_ordered(pow, [(2, 3), (3, 2)], n_jobs=1)
    [8, 9]
    """
    if n_jobs == 1 or len(tasks) <= 1:
        results = (fn(*t) for t in tasks)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator")(delayed(in_worker)(fn, *t)
                                                                                  for t in tasks)
    return _collect(results, len(tasks), progress, desc, unit)


def kill_workers() -> None:
    """Kill this process's loky worker processes at once, for a process about to end by a signal.

    A process killed by a signal runs no exit handlers, so its idle loky workers would live on for loky's
    idle timeout (300 s), holding its stdout and stderr (docs/decisions/worker-lifetime.md).  Without locks
    or imports (it reads the executor joblib already made, if any), so that a signal handler may call it
    whatever the main thread was doing.
    """
    module = sys.modules.get("joblib.externals.loky.reusable_executor")
    processes = getattr(getattr(module, "_executor", None), "_processes", None) or {}
    for pid in list(processes):
        with contextlib.suppress(OSError):
            os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))


def _shared_positions(tasks: Sequence[tuple]) -> list[int]:
    """Argument positions holding one and the same non-scalar object in every task (sent once, not per task)."""
    if len(tasks) < 2:
        return []
    first = tasks[0]
    return [j for j, arg in enumerate(first)
            if not isinstance(arg, (int, float, str, bytes, bool, type(None), tuple))
            and all(t[j] is arg for t in tasks[1:])]


class _Pickled:
    """An argument cloudpickled here, so a worker need not import the module it came from.

    Dask pickles by reference when it can, and a target loaded from a file lives in
    a module only this process has; cloudpickle sends such functions by value.
    """

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data


def _pack(arg: Any) -> Any:
    if isinstance(arg, (int, float, str, bytes, bool, type(None))):
        return arg
    import cloudpickle

    return _Pickled(cloudpickle.dumps(arg))


def _unpack(arg: Any) -> Any:
    if isinstance(arg, _Pickled):
        import cloudpickle

        return cloudpickle.loads(arg.data)
    return arg


def _apply(fn: Any, *args: Any) -> Any:
    """Run one task on a worker: unpack the function and its arguments, call."""
    return _unpack(fn)(*(_unpack(a) for a in args))


class _DaskSession:
    """A Dask client opened on first use and closed with its :class:`Executor`."""

    def __init__(self, scheduler: str | None, n_workers: int):
        self.scheduler, self.n_workers = scheduler, n_workers
        self._context = None
        self.client = None

    def open(self):
        if self.client is None:
            self._context = dask_client(self.scheduler, self.n_workers)
            self.client = self._context.__enter__()
        return self.client

    def close(self) -> None:
        context, self._context, self.client = self._context, None, None
        if context is not None:
            context.__exit__(None, None, None)


class Executor:
    """Runs one audit's tasks in order: in this process, in loky workers, or on a Dask cluster.

    Parameters
    ----------
    n_jobs : int
        loky worker processes (1: this process); for Dask, the size of a local cluster.
    backend : {"loky", "dask"}
        Where tasks run.
    scheduler : str, optional
        A Dask scheduler address; without it, a local cluster started on first use.

    The Dask client is opened on first use (an audit drawn in this process
    never starts one) and closed by :meth:`close`, on leaving a ``with`` block,
    or when the executor is collected.

    Examples
    --------
    >>> with Executor(n_jobs=1) as ex:
    ...     ex.map(pow, [(2, 3), (3, 2)])
    [8, 9]
    """

    def __init__(self, n_jobs: int = 1, backend: "str | Backend" = "loky", scheduler: str | None = None):
        self.backend = check_backend(backend, scheduler)
        self.n_jobs = n_jobs
        self._dask = _DaskSession(scheduler, n_jobs) if self.backend is Backend.DASK else None
        if self._dask is not None:
            self._finalizer = weakref.finalize(self, self._dask.close)

    @property
    def distributed(self) -> bool:
        """Whether tasks leave this machine's process pool (Dask)."""
        return self._dask is not None

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple], *, local: bool = False,
            progress: bool | str = False, desc: str = "", unit: str = "chunk") -> list:
        """``[fn(*t) for t in tasks]``, results in task order whatever runs them.

        ``local=True`` runs them in this process (work whose results cost more
        to ship back than to compute).
        """
        if local or self._dask is None or not tasks:
            return run_ordered(fn, tasks, n_jobs=1 if local else self.n_jobs, progress=progress, desc=desc,
                               unit=unit)
        client = self._dask.open()
        # What every task shares (the target, the pair, the fitted scorers) is sent once.
        shared = {j: client.scatter([_pack(tasks[0][j])], broadcast=False, hash=False)[0]
                  for j in _shared_positions(tasks)}
        sent = [tuple(shared[j] if j in shared else _pack(arg) for j, arg in enumerate(t)) for t in tasks]
        packed_fn = _pack(fn)
        futures = [client.submit(_apply, packed_fn, *args, pure=False) for args in sent]
        try:
            return _collect((f.result() for f in futures), len(futures), progress, desc, unit)
        finally:
            client.cancel(futures)

    def unsendable(self, obj: Any) -> str | None:
        """Why ``obj`` cannot be sent to this executor's workers (pickled as they would pickle it and read
        back), else None.

        Nothing needs sending when tasks run in this process.  Reading back matters: a module global
        holding a ``ctypes.CDLL`` pickles but cannot be rebuilt, and a worker that fails to rebuild a task
        breaks the pool, an internal error instead of a message naming the object.
        """
        if self._dask is None and self.n_jobs == 1:
            return None
        try:
            if self._dask is not None:
                _unpack(_pack(obj))
            else:
                import pickle

                from joblib.externals.loky.backend.reduction import dumps

                pickle.loads(dumps(obj))
        except Exception as exc:  # noqa: BLE001 - whatever the pickler raises, the object stays here
            return f"{type(exc).__name__}: {exc}".splitlines()[0]
        return None

    def close(self) -> None:
        """Close the Dask client (and a local cluster) if one was opened."""
        if self._dask is not None:
            self._dask.close()

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
