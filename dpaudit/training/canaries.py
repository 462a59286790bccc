"""Canaries: records an auditor plants to measure what training reveals about them.

*Input canaries* are ordinary records chosen to stand out: an outlier
(a feature value no real record has) or a mislabelled copy of a real
record.  *Gradient canaries* (Dirac canaries; Nasr et al. 2021, 2023) skip the
model: their gradient is a fixed vector ``magnitude * C * e_j`` whatever the
parameters, the worst case DP-SGD's analysis allows when ``e_j`` is a
parameter the rest of the data never moves.

Every canary is a data row (:meth:`row`), so "the dataset with the canary"
and "without it" are ordinary neighbouring datasets under add/remove.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._rng import as_generator
from .._validation import check_int, check_real
from ..exceptions import ParameterValueError
from .dpsgd import GRADIENT_LABEL

__all__ = [
    "GradientCanary",
    "InputCanary",
    "audit_dataset",
    "mislabelled_canary",
    "opposing_records",
    "outlier_canary",
]


@dataclass(frozen=True)
class GradientCanary:
    """A record whose gradient is ``magnitude * C * e_index`` regardless of the model.

    Examples
    --------
    >>> GradientCanary(index=0).row(n_features=3).tolist()
    [0.0, 1.0, 0.0, -1.0]
    """

    index: int = 0
    magnitude: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "index", check_int(self.index, "index", low=0))
        object.__setattr__(self, "magnitude", check_real(self.magnitude, "magnitude", finite=True))

    def row(self, n_features: int) -> np.ndarray:
        """The data row that carries this canary (label -1 marks a gradient record)."""
        if n_features < 2:
            raise ParameterValueError(f"n_features must be >= 2 to carry a gradient canary; got {n_features}")
        out = np.zeros(n_features + 1)
        out[0], out[1], out[-1] = self.index, self.magnitude, GRADIENT_LABEL
        return out

    def to_dict(self) -> dict:
        return {"kind": "gradient", "index": self.index, "magnitude": self.magnitude}


@dataclass(frozen=True)
class InputCanary:
    """An ordinary record ``(features, label)`` planted by the auditor.

    Examples
    --------
    >>> InputCanary((5.0, 0.0), 1).row(n_features=2).tolist()
    [5.0, 0.0, 1.0]
    """

    features: tuple
    label: int

    def __post_init__(self):
        feats = tuple(float(check_real(v, "features", finite=True)) for v in self.features)
        object.__setattr__(self, "features", feats)
        if self.label not in (0, 1):
            raise ParameterValueError(f"label must be 0 or 1; got {self.label!r}")
        object.__setattr__(self, "label", int(self.label))

    def row(self, n_features: int | None = None) -> np.ndarray:
        if n_features is not None and n_features != len(self.features):
            raise ParameterValueError(f"the canary has {len(self.features)} features, the data {n_features}")
        return np.array([*self.features, float(self.label)])

    def to_dict(self) -> dict:
        return {"kind": "input", "features": list(self.features), "label": self.label}


def outlier_canary(n_features: int, *, index: int = 0, value: float = 10.0, label: int = 1) -> InputCanary:
    """An outlier: ``value`` in feature ``index`` (one no real record uses), zeros elsewhere.

    >>> outlier_canary(3).row().tolist()
    [10.0, 0.0, 0.0, 1.0]
    """
    n_features = check_int(n_features, "n_features", low=1)
    feats = np.zeros(n_features)
    feats[check_int(index, "index", low=0, high=n_features - 1)] = check_real(value, "value", finite=True)
    return InputCanary(tuple(feats), label)


def mislabelled_canary(data, row: int = 0) -> InputCanary:
    """A copy of record ``row`` of ``data`` with its label flipped.

    >>> mislabelled_canary([[0.0, 2.0, 1.0]]).row().tolist()
    [0.0, 2.0, 0.0]
    """
    data = np.asarray(data, dtype=float)
    r = data[check_int(row, "row", low=0, high=len(data) - 1)]
    if r[-1] not in (0.0, 1.0):
        raise ParameterValueError(f"row {row} is not an input record (label {r[-1]:g})")
    return InputCanary(tuple(r[:-1]), int(1 - r[-1]))


def audit_dataset(n_records: int = 20, n_features: int = 3, *, rng=0) -> np.ndarray:
    """Rows for audits: Gaussian features with feature 0 always zero, labels from a noisy linear rule.

    Feature 0 is the one the canaries use: no real record moves its weight,
    so a canary's effect on it is its own (the white-box worst case).

    >>> d = audit_dataset(5, 3); d.shape, bool((d[:, 0] == 0).all())
    ((5, 4), True)
    """
    n_records = check_int(n_records, "n_records", low=0)
    n_features = check_int(n_features, "n_features", low=2)
    g = as_generator(rng)
    x = g.normal(size=(n_records, n_features))
    x[:, 0] = 0.0
    y = (x[:, 1] + 0.5 * g.normal(size=n_records) > 0).astype(float)
    return np.column_stack([x, y])


def opposing_records(index: int, *, count: int, magnitude: float, n_features: int) -> np.ndarray:
    """``count`` gradient records pulling parameter ``index`` the other way (``-magnitude * C`` each).

    An adversary's dataset for the batch-clipping bug: when their sum exceeds
    C, the clipped batch sum sits at ``-C e_j`` without the canary and jumps to
    ``+C e_j`` with a large one, a change of 2C where per-example clipping
    allows C.

    >>> opposing_records(0, count=2, magnitude=0.1, n_features=2).tolist()
    [[0.0, -0.1, -1.0], [0.0, -0.1, -1.0]]
    """
    row = GradientCanary(index, -abs(magnitude)).row(n_features)
    return np.tile(row, (check_int(count, "count", low=0), 1))
