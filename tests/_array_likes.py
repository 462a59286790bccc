"""Stand-ins for array libraries' objects that numpy refuses, so the tests need no torch.

Importable from any test as ``from _array_likes import ...`` (``tests/conftest.py`` puts this folder on the path).
"""

from __future__ import annotations

import numpy as np


class GradTensor:
    """The form of a torch tensor that requires grad: numpy refuses it, ``.detach().cpu()`` gives the numbers."""

    def __init__(self, value):
        self.value = np.asarray(value, dtype=np.float32)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")

    def detach(self):
        return self

    def cpu(self):
        return self.value


class Unreadable:
    """numpy refuses it and there is no detach (torch's bfloat16 is refused even detached)."""

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Got unsupported ScalarType BFloat16")
