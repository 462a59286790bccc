"""Targets built from the clients of two local DP libraries: ``pure-ldp`` and ``multi-freq-ldpy``.

Registered as ``pure_ldp.de``, ``pure_ldp.sue``, ``pure_ldp.oue``, ``pure_ldp.ue_before_1_2``,
``multi_freq_ldpy.grr``, ``multi_freq_ldpy.sue`` and ``multi_freq_ldpy.oue`` (extras
``dpaudit[pure-ldp]`` and ``dpaudit[multi-freq-ldpy]``).  Each calls the library's own client once
per report, so an audit uses the library's code, not ours; the value is one user's, in
``0..k-1`` (pure-ldp's items ``1..k``, shifted).

Randomness: both libraries draw from global generators (pure-ldp: numpy's and Python's
``random``; multi-freq-ldpy: numba's, inside its jitted clients).  The adapters seed those from
dpaudit's ``rng`` before each chunk, so audits are reproducible; the sampling code is the
library's either way.

``pure_ldp.ue_before_1_2`` is pure-ldp's unary encoding as released before 1.2.0: the upstream fix
(commit fc622e3, "Fix perturb bug in UEClient", after Arcolezi and Gambs's audit) added the line
that clears the user's own bit before it is set with probability p, so before it the bit was 1
with probability ``p + (1 - p) q`` and the client was not epsilon-LDP.  The extra admits 1.2.0 and
later only, so this target runs the installed client with that line undone (its ``_perturb`` as
it was, on the client's own p, q and d): the library's code path with the bug put back.  Checked
against the real thing: ``pure_ldp.sue`` on pure-ldp 1.1.2 gives, seed for seed, the audit this
target gives on 1.2.0.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import math
import random
import sys
import types
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..exceptions import MissingExtraError
from ..mechanisms.base import check_size
from ..mechanisms.ldp import LDPProtocol

__all__ = ["PURE_LDP_TARGETS", "MULTI_FREQ_TARGETS"]

def _import(module: str, extra: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(f"{module} is not installed: pip install 'dpaudit[{extra}]'") from exc


def pure_ldp_oracle(subpackage: str):
    """``pure_ldp.frequency_oracles.<subpackage>``, without the package's ``__init__`` when that fails.

    pure-ldp 1.2.0's top level imports every oracle, RAPPOR's server included, which needs
    statsmodels (not among its declared dependencies).  The clients need none of that: when the
    normal import fails, ``pure_ldp`` and ``pure_ldp.frequency_oracles`` are registered as package
    stubs (their paths, no ``__init__`` run) and the one oracle is imported through them.
    """
    name = f"pure_ldp.frequency_oracles.{subpackage}"
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        for mod in [m for m in sys.modules if m == "pure_ldp" or m.startswith("pure_ldp.")]:
            del sys.modules[mod]
        spec = importlib.util.find_spec("pure_ldp")
        if spec is None or not spec.submodule_search_locations:
            raise MissingExtraError(f"the pure-ldp adapters need pure-ldp: pip install 'dpaudit[pure-ldp]' ({exc})") \
                from None
        root = list(spec.submodule_search_locations)[0]
        for pkg, path in (("pure_ldp", root), ("pure_ldp.frequency_oracles", f"{root}/frequency_oracles")):
            stub = types.ModuleType(pkg, "dpaudit stub: pure-ldp without its top-level imports")
            stub.__spec__ = importlib.machinery.ModuleSpec(pkg, None, is_package=True)
            stub.__spec__.submodule_search_locations = [path]
            stub.__path__ = [path]
            sys.modules[pkg] = stub
        return importlib.import_module(name)


@dataclass(frozen=True)
class _LibraryClient(LDPProtocol):
    """One report per call of a library's client; global generators seeded from ``rng`` per chunk."""

    extra: ClassVar[str] = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "_client", self._make_client())

    def _make_client(self) -> Any:
        return None

    def _seed(self, seed: int) -> None:
        np.random.seed(seed)
        random.seed(seed)

    def __call__(self, dataset: Any, *, size: int | None = None, rng=None) -> Any:
        size = check_size(size)
        v = self._value(dataset)
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self._seed(int(gen.integers(0, 2 ** 32 - 1)))
        n = 1 if size is None else size
        out = np.array([self._report(v) for _ in range(n)])
        return out[0] if size is None else out

    def _report(self, v: int) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class PureLdpDE(_LibraryClient):
    """pure-ldp's direct encoding client (generalized randomized response)."""

    name: ClassVar[str] = "pure_ldp.de"
    output_kind: ClassVar[str] = "discrete"
    extra: ClassVar[str] = "pure-ldp"

    def _make_client(self):
        return pure_ldp_oracle("direct_encoding").DEClient(self.epsilon, self.k)

    def _report(self, v):
        return int(self._client.privatise(v + 1))


@dataclass(frozen=True)
class PureLdpSUE(_LibraryClient):
    """pure-ldp's unary encoding client, symmetric (SUE)."""

    name: ClassVar[str] = "pure_ldp.sue"
    extra: ClassVar[str] = "pure-ldp"
    oue: ClassVar[bool] = False

    def _make_client(self):
        return pure_ldp_oracle("unary_encoding").UEClient(self.epsilon, self.k, use_oue=self.oue)

    def _report(self, v):
        return np.asarray(self._client.privatise(v + 1), dtype=np.int64)


@dataclass(frozen=True)
class PureLdpOUE(PureLdpSUE):
    """pure-ldp's unary encoding client, optimized (OUE)."""

    name: ClassVar[str] = "pure_ldp.oue"
    oue: ClassVar[bool] = True


@dataclass(frozen=True)
class PureLdpUEBefore12(PureLdpSUE):
    """BROKEN: pure-ldp's SUE client as released before 1.2.0 (its own bit not cleared before the p-coin)."""

    name: ClassVar[str] = "pure_ldp.ue_before_1_2"
    broken: ClassVar[bool] = True

    def _report(self, v):
        c = self._client  # the client's own parameters; _perturb without the 1.2.0 line oh_vec[index] = 0
        oh_vec = np.random.choice([1, 0], size=c.d, p=[c.q, 1 - c.q])
        if random.random() < c.p:
            oh_vec[v] = 1
        return oh_vec.astype(np.int64)

    def true_epsilon(self, delta: float = 0.0) -> float:
        """The buggy client's epsilon: its own bit is 1 w.p. p + (1 - p) q, every other w.p. q."""
        c = self._client
        p_own = c.p + (1 - c.p) * c.q
        return math.log(p_own / c.q) + math.log((1 - c.q) / (1 - p_own))


@dataclass(frozen=True)
class _MultiFreq(_LibraryClient):
    extra: ClassVar[str] = "multi-freq-ldpy"

    def _seed(self, seed: int) -> None:
        seed_numba(seed)

    def _make_client(self):
        return {m: _import(f"multi_freq_ldpy.pure_frequency_oracles.{m}", self.extra) for m in ("GRR", "UE")}


_SEEDER = []


def seed_numba(seed: int) -> None:
    """Seed numba's own generator, which numba-compiled code draws from instead of numpy's global one.

    Only jitted code can reach it, so the seeding function is compiled once, on first use.
    """
    if not _SEEDER:
        import numba

        @numba.njit
        def seeder(s):
            np.random.seed(s)

        _SEEDER.append(seeder)
    _SEEDER[0](seed)


@dataclass(frozen=True)
class MultiFreqGRR(_MultiFreq):
    """multi-freq-ldpy's GRR client."""

    name: ClassVar[str] = "multi_freq_ldpy.grr"
    output_kind: ClassVar[str] = "discrete"

    def _report(self, v):
        return int(self._client["GRR"].GRR_Client(v, self.k, self.epsilon))


@dataclass(frozen=True)
class MultiFreqSUE(_MultiFreq):
    """multi-freq-ldpy's unary encoding client, symmetric (SUE, basic one-time RAPPOR)."""

    name: ClassVar[str] = "multi_freq_ldpy.sue"
    optimal: ClassVar[bool] = False

    def _report(self, v):
        return np.asarray(self._client["UE"].UE_Client(v, self.k, self.epsilon, self.optimal), dtype=np.int64)


@dataclass(frozen=True)
class MultiFreqOUE(MultiFreqSUE):
    """multi-freq-ldpy's unary encoding client, optimized (OUE)."""

    name: ClassVar[str] = "multi_freq_ldpy.oue"
    optimal: ClassVar[bool] = True


PURE_LDP_TARGETS = (PureLdpDE, PureLdpSUE, PureLdpOUE, PureLdpUEBefore12)
MULTI_FREQ_TARGETS = (MultiFreqGRR, MultiFreqSUE, MultiFreqOUE)
