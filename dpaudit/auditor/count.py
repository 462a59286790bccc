"""Held-out counting: fresh releases drawn chunk by chunk and only counted at the chosen events.

Memory stays bounded by one chunk.  A test whose certificate reads
Poisson-sized held-out sets is also counted on Poisson-sized prefixes, their
sizes drawn from the seed before any release.
"""

from __future__ import annotations

import numpy as np

from ..stats.bounds import poisson_held_out_mean

__all__ = ["count_held_out", "poisson_sizes"]


def poisson_sizes(entropy: int, test_phase: tuple, n_test: int) -> tuple[int, int]:
    """The Poisson-sized held-out sets of one round: (N0, N1), drawn from the seed before any release."""
    # Spawn keys of chunks start with the side (0 or 1); 7 keeps this stream apart.
    gen = np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(7, *test_phase)))
    n0, n1 = gen.poisson(poisson_held_out_mean(n_test), size=2)
    return int(n0), int(n1)


def count_held_out(sampler, tests, *, n_test, test_phase, entropy, previous=None, previous_poisson=None):
    """Held-out counts of every event of ``tests`` (added to ``previous`` counts of the same events).

    When a test's certificate (or its second event's) reads Poisson-sized held-out sets, its events are
    also counted on Poisson-sized prefixes of the held-out releases (the second
    item, else None); sums of independent Poisson counts are Poisson, so those
    add up over rounds too.
    """
    scorers = [t.scorer for t in tests]
    thresholds = [[e.threshold for e in t.events()] for t in tests]
    extra = 0
    if any(c is not None and c.poisson_sized for t in tests for c in (t.certificate, t.alt_certificate)):
        sizes = poisson_sizes(entropy, test_phase, n_test)
        extra = max(0, max(sizes) - n_test)  # a Poisson size above n_test (probability ~3e-5) draws more
        counts, pcounts = sampler.count(test_phase, n_test, scorers, thresholds, prefix=sizes)
        if previous_poisson is not None:
            pcounts = [a + b for a, b in zip(previous_poisson, pcounts)]
    else:
        counts, pcounts = sampler.count(test_phase, n_test, scorers, thresholds), None
    if previous is not None:
        counts = [a + b for a, b in zip(previous, counts)]
    return tuple(counts), (None if pcounts is None else tuple(pcounts)), extra
