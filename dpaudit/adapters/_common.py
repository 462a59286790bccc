"""What the diffprivlib and OpenDP adapters share (imports neither library)."""

from __future__ import annotations

from importlib import metadata
from typing import Any

import numpy as np

from ..mechanisms.base import as_1d_array, set_epsilon
from ..claims import PointClaim

__all__: list[str] = []


def installed_version(distribution: str) -> str:
    """The installed version of ``distribution`` as its metadata states it, or ``"(version unknown)"``.

    Reads the metadata only (the package is not imported), so it also names a version whose import fails.
    """
    try:
        return metadata.version(distribution)
    except (metadata.PackageNotFoundError, ValueError):
        return "(version unknown)"


class RandomizedResponseBits:
    """Mixin for randomized response on every respondent's bit, releasing the count of 1 answers.

    Gives the adapter's ``_validate`` (epsilon > 0 is the only parameter), the
    replace-one claim, the one-bit neighbouring pair and ``_bits(dataset)``;
    each library turns the bits into its own values in ``_prepare``.  Put it
    before the adapter base class so that these replace the abstract ones.
    """

    epsilon: float
    name: str

    def _validate(self) -> None:
        set_epsilon(self)

    @property
    def claim(self) -> PointClaim:
        return PointClaim(self.epsilon, 0.0, neighbouring="replace-one")

    def neighbouring_pair(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([1]), np.array([0])

    def _bits(self, dataset: Any) -> np.ndarray:
        """The respondents' bits (nonzero is 1) of a 1-D dataset."""
        return as_1d_array(dataset, self.name, "bits") != 0
