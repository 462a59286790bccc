"""The settings of one audit, checked once: a frozen value every stage reads instead of long keyword lists."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from .._executor import Executor
from ..params import all_cores
from ..sampling import Sampler
from ..stats.certificate import Certificate
from ..stats.curves import CurveCertificate

__all__ = ["AuditContext", "make_sampler"]


@dataclass(frozen=True)
class AuditContext:
    """What an audit was asked, after its checks: the target and pair, the claim and the certificate, the budget.

    ``claim_spec`` is the claim as given (echoed in the report; None when the
    claim came as ``epsilon``/``delta``); ``cert`` the claim's curve, which
    ranks events; ``certificate`` the certificate whose result decides the
    verdict.  ``chunk_size`` and ``calibration_cap`` are after the memory limits
    of the target's releases.
    """

    target: Any
    pair: tuple
    claim: Any
    claim_spec: str | None
    cert: CurveCertificate
    certificate: Certificate
    confidence: float
    entropy: int
    attack: str
    ideal: bool
    t_start: float
    samples: int | None
    max_samples: int | None
    time_budget: float | None
    calibration_fraction: float
    calibration_cap: int
    chunk_size: int
    n_jobs: int
    backend: str
    scheduler: str | None
    timeout: float | None
    in_process: bool
    stop_when_converged: bool = True
    keep_drawing: bool = False
    on_round: Callable | None = None

    @property
    def vectorised(self) -> bool:
        """Whether the target draws many releases per call (``size``)."""
        return bool(getattr(self.target, "vectorised", False))

    @property
    def deadline(self) -> float | None:
        """The wall-clock time (``time.time()``, which worker processes share) at which the time budget ends."""
        if self.time_budget is None:
            return None
        return time.time() + self.time_budget - (time.perf_counter() - self.t_start)


def make_sampler(ctx: AuditContext, shape: tuple, *, progress=False) -> Sampler:
    """The audit's :class:`~dpaudit.sampling.Sampler` of releases of shape ``shape``."""
    n_jobs = all_cores(ctx.n_jobs)
    return Sampler(ctx.target, ctx.pair, entropy=ctx.entropy, chunk_size=ctx.chunk_size, n_jobs=n_jobs,
                   timeout=ctx.timeout, progress=progress, in_process=ctx.in_process,
                   executor=Executor(n_jobs, ctx.backend, ctx.scheduler), deadline=ctx.deadline, shape=shape)
