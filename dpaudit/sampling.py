"""Drawing releases: chunks, per-chunk seeds, output guards, and streamed counting.

Everything the auditor draws goes through :class:`Sampler`.  Releases come in
chunks of ``chunk_size``; chunk ``i`` of a *stream* (a side, D or D', and a
phase, such as calibration or the held-out part of round r) draws from its own
``SeedSequence(entropy, spawn_key=(side, *phase, i))``.  A result therefore
depends on the seed and the chunk size only, never on the number of workers.

Calibration chunks are returned as arrays (their size is capped by the
auditor); held-out chunks are scored and *counted* where they are drawn, so
memory stays bounded by one chunk whatever the sample size.

Each chunk is drawn by :func:`draw_releases`, which calls the target through
its guards (:class:`~dpaudit.targets.Target`): a target that raises, returns
NaN/inf or a non-numeric value, changes shape or mutates the dataset stops
the audit with an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._executor import Executor, run_ordered
from ._rng import RNGLike, as_seed_sequence
from ._validation import check_int
from .exceptions import TargetError
from .params import AUDIT_OPTIONS
from .stats.counting import count_at_least
from .stats.estimators import HeldOutCounts

__all__ = ["DEFAULT_CALL_CHUNK", "DEFAULT_CHUNK_SIZE", "Sampler", "draw_releases", "memory_limits", "probe_releases",
           "release_bytes"]

#: Releases per chunk (one ``size=`` call of a vectorised target): the audit's and
#: :meth:`~dpaudit.targets.Target.sample`'s, one value, part of the reproducibility key with the seed.
DEFAULT_CHUNK_SIZE = AUDIT_OPTIONS["chunk_size"].default
#: Releases per unit of parallel work for targets called once per release.
DEFAULT_CALL_CHUNK = 256

SIDES = ("dataset", "neighbor")

#: Most bytes of releases in one chunk (per side and worker): 2^18 releases of 32 float64 coordinates.  Wider
#: releases get shorter chunks (:func:`memory_limits`), so memory stays bounded however wide a release is.
CHUNK_BYTES = 1 << 26
#: Most bytes of calibration releases kept per side: 10^6 releases of 67 float64 coordinates.
POOL_BYTES = 1 << 29
#: Fewest calibration releases per side, however wide a release.
MIN_POOL = 200
#: The spawn key of the releases :func:`probe_releases` draws: side 0, a phase no audit stream uses.
PROBE_KEY = (0, 8, 0)
#: Releases in the probe of a target that takes ``size=`` (one call; a target called once per release is
#: called once).  More than one: a target may assume a few releases per call, as every audit drew before.
PROBE_RELEASES = 16


def draw_releases(target, dataset: Any, n: int, *, rng: RNGLike = None, chunk_size: int | None = None,
                  n_jobs: int = 1, timeout: float | None = None) -> np.ndarray:
    """Draw ``n`` checked releases of ``target`` on ``dataset``: shape ``(n,)`` or ``(n, k)``.

    ``rng`` is the parent of one child seed per chunk (by chunk index), so the
    result does not depend on ``n_jobs``.  Chunks are ``size=`` calls for
    vectorised targets and runs of single calls otherwise; ``n_jobs`` worker
    processes share the chunks.  The result is always a new array, never one
    the target still holds.
    """
    return np.concatenate(_draw_parts(target, dataset, n, rng=rng, chunk_size=chunk_size, n_jobs=n_jobs,
                                      timeout=timeout), axis=0)


def _draw_parts(target, dataset: Any, n: int, *, rng: RNGLike = None, chunk_size: int | None = None,
                n_jobs: int = 1, timeout: float | None = None, deadline: float | None = None) -> list[np.ndarray]:
    """:func:`draw_releases` before the concatenation: the checked parts, in order."""
    n = check_int(n, "n", low=0)
    n_jobs = AUDIT_OPTIONS["n_jobs"].check(n_jobs)
    timeout = AUDIT_OPTIONS["timeout"].check(timeout)
    default_chunk = DEFAULT_CHUNK_SIZE if target.accepts_size else DEFAULT_CALL_CHUNK
    chunk = default_chunk if chunk_size is None else check_int(chunk_size, "chunk_size", low=1)
    data = np.array(dataset)  # our own copy: the caller's array can never be mutated by the target
    starts = list(range(0, n, chunk))
    seeds = as_seed_sequence(rng).spawn(len(starts)) if target.accepts_rng else [None] * len(starts)
    jobs = [(data, start, min(n, start + chunk), seed, timeout, deadline) for start, seed in zip(starts, seeds)]
    if not jobs:
        return [np.empty((0,))]
    on_dataset = _on_dataset(data)  # before the calls: a target that mutates its dataset changes what it shows
    try:
        parts = run_ordered(target.run_chunk, jobs, n_jobs=n_jobs)
    except TargetError as exc:
        raise type(exc)(f"{exc} {on_dataset}") from exc
    shape = parts[0].shape[1:]
    for job, part in zip(jobs, parts):
        if part.shape[1:] != shape:
            raise TargetError(f"target {target.name!r} changed its output shape from {shape or 'scalar'} to "
                              f"{part.shape[1:] or 'scalar'} in release {job[1]}")
    return parts


def _on_dataset(data: np.ndarray) -> str:
    """Which dataset a target failed on: a pair search chooses the datasets, so the user has not seen them."""
    if data.size <= 10:
        return f"on the dataset {data.tolist()}"
    return f"on a dataset of shape {data.shape}"


def _chunk_parts(target, data, n, entropy, key, timeout, inner_jobs, deadline=None) -> list[np.ndarray]:
    """The checked parts of chunk ``key``, drawn from its own seed (no target call starts after ``deadline``)."""
    gen = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=key))
    return _draw_parts(target, data, n, rng=gen, n_jobs=inner_jobs, timeout=timeout, deadline=deadline)


def _chunk(target, data, n, entropy, key, timeout, inner_jobs, deadline=None) -> np.ndarray:
    # Calibration releases are kept, so they are always copied out of what the target returned.
    return np.concatenate(_chunk_parts(target, data, n, entropy, key, timeout, inner_jobs, deadline), axis=0)


def _joined(chunk_list: list, target, side: int) -> np.ndarray:
    """One side's chunks as one array (no copy for a single chunk), their shapes checked against each other."""
    shapes = {tuple(c.shape[1:]) for c in chunk_list}
    if len(shapes) != 1:
        raise _shape_changed(target, side, shapes)
    return np.concatenate(chunk_list) if len(chunk_list) > 1 else chunk_list[0]


def _shape_changed(target, side: int, shapes) -> TargetError:
    return TargetError(f"target {target.name!r} changed its output shape between calls on the {SIDES[side]}: "
                       f"{sorted(shapes)}")


def _fill(tasks: list, k: int, n: int, target, *, progress, desc: str) -> list[np.ndarray]:
    """The releases of ``tasks`` (``k`` chunks per side, ``n`` releases) drawn in this process, each chunk
    copied once, into its side's array, before the next call: what the target returned may be a buffer it
    reuses.  The array takes the type ``np.concatenate`` of the chunks would (:func:`_joined`'s result)."""
    out: list = [None, None]

    def call(index: int) -> None:
        side, start = index // k, (index % k) * tasks[0][2]
        for x in _chunk_parts(*tasks[index]):  # a chunk drawn in parts: each part copied once, in place
            if out[side] is not None and out[side].shape[1:] != x.shape[1:]:
                raise _shape_changed(target, side, {out[side].shape[1:], x.shape[1:]})
            if out[side] is None:
                out[side] = np.empty((n,) + x.shape[1:], dtype=x.dtype)
            elif np.result_type(out[side], x) != out[side].dtype:
                out[side] = out[side].astype(np.result_type(out[side], x))
            out[side][start:start + len(x)] = x
            start += len(x)

    run_ordered(call, [(i,) for i in range(len(tasks))], progress=progress, desc=desc)
    return out


@dataclass(frozen=True)
class _CountJob:
    """What every held-out chunk of one :meth:`Sampler.count_events` shares: the target, the seed, the scorers and
    their thresholds (and the extra thresholds counted on the first chunks only); a chunk adds its dataset, size,
    spawn key, Poisson cut and whether it counts the extra thresholds (:func:`_count_chunk`)."""

    target: Any
    entropy: int
    timeout: float | None
    inner_jobs: int
    scorers: tuple
    thresholds: tuple
    shape: tuple | None
    deadline: float | None = None
    #: Per scorer, thresholds counted only in chunks that ask for them (or None): see :meth:`Sampler.count_events`.
    extra: tuple | None = None
    #: Per scorer, (both threshold sets as one sorted array, where each of the two sits in it): a chunk that
    #: counts both sorts or scans its scores once.  Derived from ``thresholds`` and ``extra``.
    merged: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        merged = () if self.extra is None else tuple(
            (both, np.searchsorted(both, t), np.searchsorted(both, e))
            for t, e, both in ((t, e, np.union1d(t, e)) for t, e in zip(self.thresholds, self.extra)))
        object.__setattr__(self, "merged", merged)


def _count_chunk(job: _CountJob, data, n: int, key: tuple, cut: int | None = None, with_extra: bool = False):
    """Draw chunk ``key`` of ``n`` releases on ``data`` and count each scorer's scores >= its thresholds.

    Returns ``(counts, prefix, extra)``: the counts; those of the first ``cut`` releases when a Poisson-sized
    prefix ends in this chunk (else None); with ``with_extra``, the counts at the job's extra thresholds (else None).
    """
    # Held-out releases are scored and dropped at once, so a vectorised target's single part is not copied.
    parts = _chunk_parts(job.target, data, n, job.entropy, key, job.timeout, job.inner_jobs, job.deadline)
    x = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)
    if tuple(x.shape[1:]) != tuple(job.shape):
        raise TargetError(f"target {job.target.name!r} changed its output shape from {tuple(job.shape)} to "
                          f"{tuple(x.shape[1:])} on the {SIDES[key[0]]}")
    # A scorer that counts its level sets directly (a step function of one coordinate) is not scored.
    wanted = [job.merged[i][0] if with_extra else t for i, t in enumerate(job.thresholds)]
    direct = [_direct(scorer, x, t) for scorer, t in zip(job.scorers, wanted)]
    scores = [None if d is not None else scorer.score(x) for scorer, d in zip(job.scorers, direct)]
    # The chunk that holds the end of a Poisson-sized prefix also counts that prefix (before any sort).
    prefix = None if cut is None else [count_at_least(np.asarray(sc)[:cut], t) if sc is not None
                                       else _direct(scorer, x[:cut], t)
                                       for sc, scorer, t in zip(scores, job.scorers, job.thresholds)]
    full, extra = [], [] if with_extra else None
    for i, sc in enumerate(scores):
        if sc is None:
            counts = direct[i]
        else:
            # A score array may be sorted in place unless a later one shares its memory: the releases are
            # dropped after counting, and a scorer that returns the releases themselves needs no copy.
            overwrite = not any(o is not None and np.may_share_memory(sc, o) for o in scores[i + 1:])
            counts = count_at_least(sc, wanted[i], overwrite=overwrite)
        if not with_extra:
            full.append(counts)
            continue
        _, at_main, at_extra = job.merged[i]
        full.append(counts[at_main])
        extra.append(counts[at_extra])
    return full, prefix, extra


def _direct(scorer, x, thresholds):
    """The scorer's own counts of rows scoring >= each threshold (``count_at_least``), or None when it has none."""
    count = getattr(scorer, "count_at_least", None)
    return None if count is None else count(x, thresholds)


def probe_releases(target, data, entropy: int, *, timeout: float | None = None) -> np.ndarray:
    """A few checked releases of ``target`` on ``data`` (one call), from their own seed (:data:`PROBE_KEY`):
    the width of a release, before any size is chosen.

    Every other stream of the audit is drawn as it would be without this call, so the reports stay the
    same; only a target that ignores its ``rng`` (global state) sees one call more.
    """
    n = PROBE_RELEASES if getattr(target, "accepts_size", False) else 1
    return _chunk(target, data, n, entropy, PROBE_KEY, timeout, 1)


def release_bytes(probe: np.ndarray) -> int:
    """Bytes of one release as the distinguishers hold it: 8 per coordinate (float64), more for a wider dtype.

    The limits are on what the audit keeps and fits, not on what the target returned: the distinguishers
    fit on float64, so narrow dtypes are counted at 8 bytes a coordinate (docs/decisions/wide-releases.md).

    >>> release_bytes(np.zeros((16, 100), dtype=bool)), release_bytes(np.zeros((1, 3), "c16"))
    (800, 48)
    """
    row = np.asarray(probe)[0]
    return max(1, row.size * max(8, row.itemsize))


def memory_limits(row_bytes: int, chunk_size: int, calibration_cap: int) -> tuple[int, int]:
    """(releases per chunk, calibration releases kept per side) for releases of ``row_bytes`` bytes.

    ``chunk_size`` and ``calibration_cap`` as given, shortened so that a chunk holds at most
    :data:`CHUNK_BYTES` and the calibration pool at most :data:`POOL_BYTES` (but :data:`MIN_POOL` releases).
    Releases of up to 32 float64 coordinates keep the defaults, so their reports do not change.

    >>> memory_limits(8, 1 << 18, 10**6), memory_limits(80_000, 1 << 18, 10**6)
    ((262144, 1000000), (838, 6710))
    """
    chunk = min(chunk_size, max(1, CHUNK_BYTES // row_bytes))
    return chunk, min(calibration_cap, max(MIN_POOL, POOL_BYTES // row_bytes))


class Sampler:
    """Draws the releases of one audit: a target, the pair, the seed and how to parallelise.

    Parameters
    ----------
    target : Target
        The guarded target.
    pair : (array, array)
        The datasets D and D'.
    entropy : int
        The audit's seed.
    chunk_size : int
        Releases per chunk; part of the reproducibility key with the seed.
    n_jobs : int
        Worker processes.  Vectorised targets share chunks among workers;
        targets called once per release are parallelised inside each chunk.
    in_process : bool
        Draw calibration chunks in this process (built-ins: their arrays cost
        more to ship back from a worker than to draw).
    executor : Executor, optional
        Where chunks run (default: ``n_jobs`` loky processes).  On Dask every
        chunk is one task, so per-release targets are spread over the cluster
        too; the chunks and their seeds are the same, so are the results.
    shape : tuple, optional
        The releases' shape, when known before drawing (the audit's probe);
        every draw is checked against it.
    """

    def __init__(self, target, pair, *, entropy: int, chunk_size: int, n_jobs: int = 1,
                 timeout: float | None = None, progress: bool | str = False, in_process: bool = False,
                 executor: Executor | None = None, deadline: float | None = None, shape: tuple | None = None):
        self.target = target
        #: A ``time.time()`` after which no target call starts (a sequential audit's time budget).
        self.deadline = deadline
        self.pair = pair
        self.entropy = entropy
        self.chunk_size = chunk_size
        self.timeout = timeout
        self.progress = progress
        #: What the progress bar or line says before its step ("round 3 of 10: "), set by a sequential audit.
        self.stage = ""
        self.executor = executor if executor is not None else Executor(n_jobs)
        if n_jobs > 1 or self.executor.distributed:
            n_jobs = self._stay_local_unless_sendable(target, n_jobs)
        vectorised = bool(getattr(target, "vectorised", False)) or self.executor.distributed
        self.outer_jobs, self.inner_jobs = (n_jobs, 1) if vectorised else (1, n_jobs)
        # Work stays in this process when there is no one to share it with.
        self.serial = not self.executor.distributed and self.outer_jobs == 1
        self.in_process = in_process
        #: The releases' shape: every draw must have it (from a probe, else from the first draw).
        self.shape: tuple | None = None if shape is None else tuple(shape)

    def _stay_local_unless_sendable(self, target, n_jobs: int) -> int:
        """``n_jobs``, or 1 (and an executor of this process) when the target cannot be pickled for the workers.

        Results never depend on the number of workers, so drawing here gives the same report, only slower;
        a :class:`~dpaudit.exceptions.SerialFallbackWarning` says why.
        """
        why = self.executor.unsendable(target)
        if why is None:
            return n_jobs
        import warnings

        from .exceptions import SerialFallbackWarning

        self.executor.close()
        self.executor = Executor(1)
        warnings.warn(f"target {target.name!r} cannot be sent to worker processes ({why}); drawing in this "
                      "process with one job (the results are the same)", SerialFallbackWarning, stacklevel=2)
        return 1

    def close(self) -> None:
        """Release the executor's workers (a Dask client and local cluster, if one was started)."""
        self.executor.close()

    def _chunks(self, n: int) -> list[tuple[int, int]]:
        return [(i, min(self.chunk_size, n - start)) for i, start in enumerate(range(0, n, self.chunk_size))]

    def draw(self, phase: tuple, n: int, *, desc: str = "calibration") -> tuple[np.ndarray, np.ndarray]:
        """``n`` releases per side for ``phase``, as arrays (D first), with their shape checked."""
        chunks = self._chunks(n)
        tasks = [(self.target, self.pair[side], m, self.entropy, (side, *phase, i), self.timeout, self.inner_jobs,
                  self.deadline) for side in (0, 1) for i, m in chunks]
        if self.in_process or self.serial:
            out = _fill(tasks, len(chunks), n, self.target, progress=self.progress, desc=self.stage + desc)
        else:
            parts = self.executor.map(_chunk, tasks, progress=self.progress, desc=self.stage + desc)
            out = [_joined(parts[side * len(chunks):(side + 1) * len(chunks)], self.target, side) for side in (0, 1)]
        shape = out[0].shape[1:]
        if out[1].shape[1:] != shape:
            raise TargetError(f"target {self.target.name!r} returns shape {shape} on the dataset but "
                              f"{out[1].shape[1:]} on the neighbor; releases must have one fixed shape")
        if len(shape) > 1:
            raise TargetError(f"target {self.target.name!r} must return a scalar or a 1-D array; got shape {shape}")
        if self.shape is not None and tuple(shape) != tuple(self.shape):
            raise TargetError(f"target {self.target.name!r} changed its output shape from {tuple(self.shape)} "
                              f"to {tuple(shape)}")
        self.shape = tuple(shape)
        return out[0], out[1]

    def count(self, phase: tuple, n: int, scorers, thresholds, *, prefix=None,
              desc: str = "audit") -> list[HeldOutCounts] | tuple[list[HeldOutCounts], list[HeldOutCounts]]:
        """Draw ``n`` releases per side for ``phase`` and count each scorer's scores >= its thresholds.

        Only counts leave the workers: memory is one chunk per worker.
        Returns one :class:`HeldOutCounts` per scorer.

        ``prefix=(N0, N1)`` also counts the first ``N0`` releases on D and
        ``N1`` on D' (Poisson-sized held-out sets,
        :func:`~dpaudit.stats.bounds.poisson_epsilon_bound`), drawing beyond
        ``n`` when a prefix is longer; the result is then ``(counts of the
        n, counts of the prefixes)``.  The first ``n`` releases are the same
        either way.
        """
        got = self.count_events(phase, n, scorers, thresholds, prefix=prefix, desc=desc)
        return got.counts if prefix is None else (got.counts, got.prefix)

    def count_events(self, phase: tuple, n: int, scorers, thresholds, *, prefix=None, extra=None,
                     extra_limit: int = 0, desc: str = "audit") -> "Counted":
        """:meth:`count`, and optionally ``extra`` thresholds (one list per scorer) counted on the chunks that
        start below ``extra_limit`` only, each side's first ``Counted.n_extra`` releases.

        Why: the events a report only describes (a privacy profile, a ROC) need dozens of thresholds, which
        cost a sort of every chunk's scores; the certified events need a few comparison passes.
        """
        thresholds = [np.unique(np.asarray(t, dtype=float)) for t in thresholds]
        extra = None if extra is None else [np.unique(np.asarray(t, dtype=float)) for t in extra]
        base = self._chunks(n)
        plan = []  # (side, chunk key index, size, start)
        for side in (0, 1):
            total = n if prefix is None else max(n, int(prefix[side]))
            start = 0
            for i, m in base:
                plan.append((side, i, m, start))
                start += m
            # Releases beyond n, for a Poisson prefix longer than n: further chunks of the same stream.
            for j, (_, m) in enumerate(self._chunks(total - n)):
                plan.append((side, len(base) + j, m, start))
                start += m

        def cut(side, m, start):
            if prefix is None:
                return None
            c = int(prefix[side]) - start
            return c if 0 < c < m else None

        def counts_extra(i, start):
            return extra is not None and i < len(base) and start < extra_limit

        job = _CountJob(self.target, self.entropy, self.timeout, self.inner_jobs, tuple(scorers), tuple(thresholds),
                        self.shape, self.deadline, None if extra is None else tuple(extra))
        tasks = [(job, self.pair[side], m, (side, *phase, i), cut(side, m, start), counts_extra(i, start))
                 for side, i, m, start in plan]
        parts = self.executor.map(_count_chunk, tasks, local=self.serial,
                                  progress=self.progress, desc=self.stage + desc)
        full, pre = _zeros(thresholds), _zeros(thresholds)
        ext = _zeros(extra or [])
        n_extra = 0
        for (side, i, m, start), (whole, head, more) in zip(plan, parts):
            if i < len(base):
                _add(full[side], whole)
            if more is not None:
                _add(ext[side], more)
                n_extra += m if side == 0 else 0
            if prefix is not None:
                if start + m <= int(prefix[side]):
                    _add(pre[side], whole)
                elif head is not None:
                    _add(pre[side], head)
        out = [HeldOutCounts(t, full[0][j], full[1][j], n, n) for j, t in enumerate(thresholds)]
        pres = None
        if prefix is not None:
            n0, n1 = int(prefix[0]), int(prefix[1])
            pres = [HeldOutCounts(t, pre[0][j], pre[1][j], n0, n1) for j, t in enumerate(thresholds)]
        extras = None if extra is None else [HeldOutCounts(t, ext[0][j], ext[1][j], n_extra, n_extra)
                                             for j, t in enumerate(extra)]
        return Counted(out, pres, extras)


@dataclass(frozen=True)
class Counted:
    """What :meth:`Sampler.count_events` counted: per scorer, the counts of all ``n`` releases per side, of the
    Poisson-sized prefixes (or None), and at the extra thresholds on each side's first releases (or None)."""

    counts: list
    prefix: list | None = None
    extra: list | None = None


def _zeros(thresholds) -> list[list[np.ndarray]]:
    """Zero counts per side, one int64 array per threshold list."""
    return [[np.zeros(len(t), dtype=np.int64) for t in thresholds] for _ in (0, 1)]


def _add(into: list[np.ndarray], counts) -> None:
    for total, c in zip(into, counts):
        total += c
