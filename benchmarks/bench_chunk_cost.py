"""One held-out chunk's cost over the target's own call for the same releases, chunk by chunk.

Run: ``python benchmarks/bench_chunk_cost.py`` (both cases) or ``--case scalar|vector``;
``--chunks`` pairs of calls (default 200 scalar, 20 vector).

A small audit (2x10^6 releases per side) of ``bench_throughput.py``'s targets
chooses the scorer and thresholds as an audit does (its calibration pool is
the default 10^6 per side); then, alternating, the user's function draws chunk
i (2^18 releases) and the sampler draws, guards, scores and counts chunk i
(``_count_chunk``), once at the certified events only (every chunk past each
side's first 2^24 releases) and once at the described events too (the
first chunks).  Printed: the median CPU milliseconds of each and their
ratios, the steady-state part of ``bench_throughput.py``'s ratio without the
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
    """The (target, scorers, thresholds, extra thresholds, shape) a 2x10^6 audit counts its held-out chunks with."""
    seen = {}
    count = sampling.Sampler.count_events

    def spy(self, phase, n, scorers, thresholds, **kw):
        seen.update(target=self.target, scorers=tuple(scorers), shape=self.shape,
                    thresholds=tuple(np.unique(np.asarray(t, dtype=float)) for t in thresholds),
                    extra=tuple(np.unique(np.asarray(t, dtype=float)) for t in kw["extra"]))
        return count(self, phase, n, scorers, thresholds, **kw)

    sampling.Sampler.count_events = spy
    try:
        report = dpaudit.audit(fn, d0, d1, epsilon=1.0, samples=2_000_000, seed=1, ideal=True)
    finally:
        sampling.Sampler.count_events = count
    return seen, report.attack


def measure(case: str, chunks: int) -> None:
    fn, d0, d1 = CASES[case]
    seen, attack = chosen(fn, d0, d1)
    job = sampling._CountJob(seen["target"], 1, None, 1, seen["scorers"], seen["thresholds"], seen["shape"],
                             extra=seen["extra"])
    data = np.asarray(d0, dtype=float)

    def own(i):
        gen = np.random.default_rng(np.random.SeedSequence(1, spawn_key=(0, 1, i)))
        fn(data, size=CHUNK, rng=gen)

    times = {"own": [], "certified": [], "described": []}
    for i in range(chunks):
        for name, f in (("own", own), ("certified", lambda i: sampling._count_chunk(job, data, CHUNK, (0, 1, i))),
                        ("own", own),
                        ("described", lambda i: sampling._count_chunk(job, data, CHUNK, (0, 1, i), with_extra=True))):
            t = time.process_time()
            f(i)
            times[name].append(time.process_time() - t)
    a, b, c = (statistics.median(times[k]) * 1e3 for k in ("own", "certified", "described"))
    n_cert, n_desc = (sum(len(t) for t in seen[k]) for k in ("thresholds", "extra"))
    print(f"{case} ({attack}): target {a:.2f} ms per {CHUNK} releases; a chunk counted at the {n_cert} certified "
          f"thresholds {b:.2f} ms (ratio {b / a:.3f}); one of the first chunks, also at the {n_desc} described "
          f"thresholds, {c:.2f} ms (ratio {c / a:.3f})", flush=True)


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
