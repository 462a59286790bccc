"""The planned looks of a sequential audit: cumulative round sizes fixed before any release is drawn.

:class:`~dpaudit.stats.sequential.SequentialBound` spends the failure probability evenly over these
rounds, so a bound read at any of them holds whatever rule decided to stop there.  Both names are
importable from :mod:`dpaudit.stats.sequential` too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import check_confidence, check_int, check_real
from ..exceptions import ParameterTypeError, ParameterValueError

__all__ = ["RoundSchedule", "round_schedule", "DEFAULT_MIN_FIRST_ROUND", "DEFAULT_GROWTH"]

#: The first round holds at least this many releases per side (unless the budget is smaller).
DEFAULT_MIN_FIRST_ROUND = 100
#: Each planned round's cumulative size is this many times the previous one.
DEFAULT_GROWTH = 2.0

@dataclass(frozen=True)
class RoundSchedule:
    """Cumulative releases per side after each planned round, fixed before drawing.

    Usually the held-out releases; a pipeline may count all its draws
    (calibration included) and pass the held-out share to
    :meth:`SequentialBound.update` as ``counted``.

    Attributes
    ----------
    sizes : tuple of int
        Strictly increasing; the last is the budget (``max_samples``).

    Examples
    --------
    >>> s = RoundSchedule((1000, 2000, 4000))
    >>> len(s), s.max_samples, round(s.round_confidence(0.95), 6)
    (3, 4000, 0.983333)
    """

    sizes: tuple

    def __post_init__(self):
        given = self.sizes
        if isinstance(given, (str, bytes)) or not hasattr(given, "__len__"):
            raise ParameterTypeError(f"sizes must be a sequence of integers; got {given!r}")
        sizes = tuple(check_int(s, "sizes", low=1) for s in given)
        if not sizes:
            raise ParameterValueError("sizes must hold at least one round; got ()")
        if any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise ParameterValueError(f"sizes must be strictly increasing; got {list(sizes)}")
        object.__setattr__(self, "sizes", sizes)

    def __len__(self) -> int:
        return len(self.sizes)

    @property
    def max_samples(self) -> int:
        """The budget: releases per side after the last round."""
        return self.sizes[-1]

    def round_confidence(self, confidence: float) -> float:
        """Confidence of each round's bound: ``1 - (1 - confidence) / len(self)``.

        Every round gets the same share of the failure probability; with it
        all rounds hold at once with probability at least ``confidence``.
        """
        confidence = check_confidence(confidence)
        return 1.0 - (1.0 - confidence) / len(self.sizes)

    def to_list(self) -> list:
        return list(self.sizes)


def round_schedule(max_samples, *, first=None, growth=DEFAULT_GROWTH) -> RoundSchedule:
    """The default plan of rounds for a budget of ``max_samples`` held-out releases per side.

    Cumulative sizes ``first, first * growth, first * growth^2, ...`` (rounded
    up) while below ``max_samples``, then ``max_samples`` itself.  By default
    ``first = max(100, ceil(max_samples / 1000))`` (never above the budget), so
    a budget of 10^6 gives 11 rounds (1000, 2000, ..., 512000, 10^6) and the
    number of rounds stays near ``log2(1000) + 1`` for any budget over 10^5:
    the failure probability is never split more than about 11 ways, while a
    grossly broken mechanism is caught in the first rounds.

    Parameters
    ----------
    max_samples : int
        Budget: held-out releases per side after the last round.
    first : int, optional
        Cumulative size of the first round.
    growth : float, default 2
        Ratio of consecutive cumulative sizes; must exceed 1.

    Returns
    -------
    RoundSchedule

    Examples
    --------
    >>> round_schedule(1_000_000).sizes
    (1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000, 512000, 1000000)
    >>> round_schedule(20_000).sizes
    (100, 200, 400, 800, 1600, 3200, 6400, 12800, 20000)
    >>> round_schedule(50).sizes
    (50,)
    """
    max_samples = check_int(max_samples, "max_samples", low=1)
    growth = check_real(growth, "growth", low=1.0, low_inclusive=False)
    if math.isinf(growth):
        raise ParameterValueError(f"growth must be finite; got {growth!r}")
    if first is None:
        first = min(max_samples, max(DEFAULT_MIN_FIRST_ROUND, -(-max_samples // 1000)))
    first = check_int(first, "first", low=1, high=max_samples)
    sizes = []
    size = first
    while size < max_samples:
        sizes.append(size)
        size = max(size + 1, math.ceil(size * growth))
    sizes.append(max_samples)
    return RoundSchedule(tuple(sizes))
