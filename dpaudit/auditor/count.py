"""Held-out counting: fresh releases drawn chunk by chunk and only counted at the chosen events.

Memory stays bounded by one chunk.  A test whose certificate reads
Poisson-sized held-out sets is also counted on Poisson-sized prefixes, their
sizes drawn from the seed before any release.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats.bounds import poisson_held_out_mean

__all__ = ["DESCRIBED_HELD_OUT", "HeldOut", "count_held_out", "poisson_sizes"]

#: Held-out releases per side (per round) on which the described events are counted: 2^24, so 64 chunks of the
#: default size.  The certified events are counted on every release (docs/decisions/scoring-cost.md).
DESCRIBED_HELD_OUT = 1 << 24


def poisson_sizes(entropy: int, test_phase: tuple, n_test: int) -> tuple[int, int]:
    """The Poisson-sized held-out sets of one round: (N0, N1), drawn from the seed before any release."""
    # Spawn keys of chunks start with the side (0 or 1); 7 keeps this stream apart.
    gen = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(7, *test_phase)))
    n0, n1 = gen.poisson(poisson_held_out_mean(n_test), size=2)
    return int(n0), int(n1)


def count_held_out(sampler, tests, *, n_test, test_phase, entropy, previous=None) -> HeldOut:
    """Held-out counts of every event of ``tests``, added to those of the ``previous`` round (its ``counts``,
    ``poisson_counts`` and ``described_counts``) when it counted the same events.

    The certified events are counted on all ``n_test`` releases per side; the
    events the report only describes (profile, ROC, GDP) on each side's first
    :data:`DESCRIBED_HELD_OUT` (whole chunks), which is all of them in every
    audit up to that size.  When a test's certificate (or its second event's) reads
    Poisson-sized held-out sets, its certified events are also counted on Poisson-sized
    prefixes of the held-out releases; sums of independent Poisson counts are
    Poisson, so those add up over rounds too.
    """
    scorers = [t.scorer for t in tests]
    certified = [[e.threshold for e in t.certified_events()] for t in tests]
    described = [[e.threshold for e in t.described_events()] for t in tests]
    poisson = any(c is not None and c.poisson_sized for t in tests for c in (t.certificate, *t.alt_certificates))
    sizes = poisson_sizes(entropy, test_phase, n_test) if poisson else None
    # A Poisson size above n_test (probability ~3e-5) draws more.
    extra = 0 if sizes is None else max(0, max(sizes) - n_test)
    got = sampler.count_events(test_phase, n_test, scorers, certified, prefix=sizes, extra=described,
                               extra_limit=DESCRIBED_HELD_OUT)
    before = (None, None, None) if previous is None else (
        previous.counts, previous.poisson_counts, previous.described_counts)
    return HeldOut(counts=_added(before[0], got.counts), poisson=_added(before[1], got.prefix),
                   described=_added(before[2], got.extra), drawn_beyond=extra)


@dataclass(frozen=True)
class HeldOut:
    """One round's held-out counts, per test: of the certified events, of the same on the Poisson-sized sets (or
    None), of the described events on the first releases; and the releases drawn beyond ``n_test`` per side."""

    counts: tuple
    poisson: tuple | None
    described: tuple
    drawn_beyond: int = 0


def _added(previous, counts):
    if counts is None:
        return None
    return tuple(counts) if previous is None else tuple(a + b for a, b in zip(previous, counts))
