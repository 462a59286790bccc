"""One held-out chunk's cost over the target's own call for the same releases, chunk by chunk.

Run: ``python benchmarks/bench_chunk_cost.py`` (both cases) or ``--case scalar|vector``;
``--chunks`` pairs of calls (default 200 scalar, 20 vector).

A small audit (2x10^6 releases per side) of ``bench_throughput.py``'s targets
chooses the scorer and thresholds as an audit does (its calibration pool is
the default 10^6 per side); then, alternating, the user's function draws chunk
i (2^18 releases) and the sampler draws, guards, scores and counts chunk i
(``_count_chunk``).  Printed: the median CPU milliseconds of each and their
ratio, the steady-state part of ``bench_throughput.py``'s ratio without the
fixed cost of the calibration.  Alternating call by call keeps the ratio
steady on a loaded machine, where whole-audit ratios drift by 10%.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dpaudit
from dpaudit import sampling
from dpaudit.sampling import DEFAULT_CHUNK_SIZE as CHUNK


def laplace_count(dataset, size=None, rng=None):
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)


def gaussian_vector(dataset, size=None, rng=None):
    return np.asarray(dataset, float)[:10] + rng.normal(0.0, 1.0, size=(size, 10))


CASES = {"scalar": (laplace_count, [1.0], [0.0]), "vector": (gaussian_vector, [1.0] + [0.0] * 9, [0.0] * 10)}


def chosen(fn, d0, d1):
    """The (target, scorers, thresholds, shape) a 2x10^6 audit counts its held-out chunks with."""
    seen = {}
    count = sampling.Sampler.count

    def spy(self, phase, n, scorers, thresholds, **kw):
        seen.update(target=self.target, scorers=tuple(scorers), shape=self.shape,
                    thresholds=tuple(np.unique(np.asarray(t, dtype=float)) for t in thresholds))
        return count(self, phase, n, scorers, thresholds, **kw)

    sampling.Sampler.count = spy
    try:
        report = dpaudit.audit(fn, d0, d1, epsilon=1.0, samples=2_000_000, seed=1, ideal=True)
    finally:
        sampling.Sampler.count = count
    return seen, report.attack


def measure(case: str, chunks: int) -> None:
    fn, d0, d1 = CASES[case]
    seen, attack = chosen(fn, d0, d1)
    job = sampling._CountJob(seen["target"], 1, None, 1, seen["scorers"], seen["thresholds"], seen["shape"])
    data = np.asarray(d0, dtype=float)

    def own(i):
        gen = np.random.default_rng(np.random.SeedSequence(1, spawn_key=(0, 1, i)))
        fn(data, size=CHUNK, rng=gen)

    def audited(i):
        sampling._count_chunk(job, data, CHUNK, (0, 1, i))

    times = {"own": [], "audit": []}
    for i in range(chunks):
        for name, f in (("own", own), ("audit", audited)):
            t = time.process_time()
            f(i)
            times[name].append(time.process_time() - t)
    a, b = (statistics.median(times[k]) * 1e3 for k in ("own", "audit"))
    print(f"{case} ({attack}, {sum(len(t) for t in seen['thresholds'])} thresholds): target {a:.2f} ms, "
          f"chunk {b:.2f} ms per {CHUNK} releases; ratio {b / a:.3f}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", choices=("scalar", "vector", "both"), default="both")
    p.add_argument("--chunks", type=int, default=None, help="pairs of calls (default 200 scalar, 20 vector)")
    args = p.parse_args()
    if args.chunks is not None and args.chunks < 1:
        p.error("--chunks: at least 1")
    for case in (("scalar", "vector") if args.case == "both" else (args.case,)):
        measure(case, args.chunks or (200 if case == "scalar" else 20))


if __name__ == "__main__":
    main()
