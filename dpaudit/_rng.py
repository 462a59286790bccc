"""Randomness as an argument (SciPy SPEC 7).

Every function that draws takes a keyword-only ``rng``: a
:class:`numpy.random.Generator`, a seed, a :class:`numpy.random.SeedSequence`
or ``None``.  It is normalised once with :func:`as_generator`.  Work that is
split (trials, chunks) gets one child :class:`~numpy.random.SeedSequence` per
*unit of work*, never per worker, so results do not depend on ``n_jobs``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RNGLike", "as_generator", "as_seed_sequence", "spawn_generators", "seed_entropy"]

RNGLike = np.random.Generator | np.random.SeedSequence | int | None


def as_generator(rng: "RNGLike") -> np.random.Generator:
    """Normalise ``rng`` to a Generator.

    >>> g = as_generator(1); g is as_generator(g)
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if rng is None or (isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    from .exceptions import ParameterTypeError

    raise ParameterTypeError(f"rng must be a numpy Generator, SeedSequence, an int seed or None; got {rng!r}")


def as_seed_sequence(seed: "RNGLike") -> np.random.SeedSequence:
    """A SeedSequence from a seed; ``None`` draws fresh entropy (saved by the caller).

    A Generator is turned into a SeedSequence by drawing 128 bits from it.
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, np.random.Generator):
        return np.random.SeedSequence(int(seed.integers(0, 2**63)) << 64 | int(seed.integers(0, 2**63)))
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)):
        if seed is not None and seed < 0:
            from .exceptions import ParameterValueError

            raise ParameterValueError(f"seed must be a non-negative integer; got {seed!r}")
        return np.random.SeedSequence(seed)
    from .exceptions import ParameterTypeError

    raise ParameterTypeError(f"seed must be a non-negative integer or None; got {seed!r}")


def seed_entropy(seq: np.random.SeedSequence) -> int:
    """The integer that recreates ``seq`` (saved in reports even when the user gave no seed)."""
    ent = seq.entropy
    return int(ent) if not isinstance(ent, (list, tuple)) else int(ent[0])


def spawn_generators(seed: "RNGLike", n: int) -> list[np.random.Generator]:
    """``n`` independent Generators, one per unit of work.

    >>> a = [g.random() for g in spawn_generators(5, 3)]
    >>> b = [g.random() for g in spawn_generators(5, 3)]
    >>> a == b
    True
    """
    return [np.random.default_rng(s) for s in as_seed_sequence(seed).spawn(n)]
