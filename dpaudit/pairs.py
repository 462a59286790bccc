"""Neighbouring pairs: the relations, a check of a given pair, and candidates inside a declared domain.

An audit bounds the privacy loss *on the pair it is given*, so the pair decides
what can be found: a correct mechanism audited on two datasets that are not
neighbours can look broken, and a broken one audited on a mild pair can look
private.  This module holds what :func:`dpaudit.search` and the pair check of
``dpaudit audit`` share:

* :class:`Relation`: ``replace-one`` (one record changed, same size),
  ``add-remove`` (one record added or removed) and ``linf`` (same length, every
  coordinate moves by at most 1: query answers of sensitivity 1, the setting
  of DP-Sniper and StatDP);
* :func:`compare_pair`: how two datasets differ (:class:`PairDifference`) and
  whether they are neighbours under a relation;
* :class:`Domain` and :func:`candidate_pairs`: pairs of 1-D datasets of
  ``size`` records in ``[low, high]``, from fixed patterns (StatDP's and
  DP-Sniper's, extremes and outliers of the range) and random draws, plus
  :func:`mutate_pair`, the move of the local search.

Every pair produced here is neighbouring under its domain's relation and lies
inside the domain (tested).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ._rng import RNGLike, as_generator
from ._validation import check_int, check_real
from .exceptions import ParameterTypeError, ParameterValueError
from .privacy import Neighbouring

__all__ = [
    "Relation",
    "Domain",
    "PairDifference",
    "compare_pair",
    "non_neighbour_note",
    "is_neighbouring",
    "candidate_pairs",
    "random_pair",
    "mutate_pair",
]


#: Which datasets count as neighbours: the one relation enum (:class:`dpaudit.Neighbouring`), under the
#: name the search uses.  ``Relation.parse("add/remove")`` reads the aliases.
Relation = Neighbouring


# ----------------------------------------------------------------------------- comparing a pair
_LINF_SLACK = 1e-9

def _rows(arr: np.ndarray) -> np.ndarray:
    """One row per record: a 1-D dataset becomes a column."""
    if arr.ndim == 0:
        return arr.reshape(1, 1)
    return arr.reshape(-1, 1) if arr.ndim == 1 else arr


def _removed_one(longer: np.ndarray, shorter: np.ndarray) -> int | None:
    """Index of a record of ``longer`` whose removal gives ``shorter`` (as multisets), else None."""
    a, b = _rows(longer), _rows(shorter)
    if len(a) != len(b) + 1 or a.shape[1:] != b.shape[1:]:
        return None
    # Positional first (the usual way a user writes it), then as multisets.
    same = np.all(a[:-1] == b, axis=1) if len(b) else np.zeros(0, bool)
    first = int(np.argmin(same)) if not same.all() else len(b)
    if np.array_equal(a[first + 1:], b[first:]):
        return first
    ka = sorted(map(tuple, a.tolist()))
    kb = sorted(map(tuple, b.tolist()))
    i = 0
    while i < len(kb) and ka[i] == kb[i]:
        i += 1
    if ka[i + 1:] == kb[i:]:
        extra = ka[i]
        return int(np.flatnonzero(np.all(a == np.asarray(extra, dtype=a.dtype), axis=1))[0])
    return None


@dataclass(frozen=True)
class PairDifference:
    """How ``dataset`` and ``neighbor`` differ.

    Attributes
    ----------
    n_records, n_records_neighbor : int
        Records (rows) in each.
    changed : tuple of int
        Positions whose record differs (same number of records only).
    removed : int or None
        When the sizes differ by one: the position, in the larger dataset, of
        a record whose removal gives the smaller one (``None`` if none does).
    linf : float
        Largest coordinate change (same shapes only; ``inf`` otherwise).
    """

    n_records: int
    n_records_neighbor: int
    changed: tuple
    removed: int | None
    linf: float
    first_change: tuple | None = None

    def is_neighbouring(self, relation: Any) -> bool:
        """Whether the pair is neighbouring under ``relation`` (identical datasets count)."""
        relation = Relation.parse(relation, "relation")
        same_size = self.n_records == self.n_records_neighbor
        if relation is Relation.REPLACE_ONE:
            return same_size and len(self.changed) <= 1 and math.isfinite(self.linf)
        if relation is Relation.ADD_REMOVE:
            return (same_size and not self.changed and math.isfinite(self.linf)) or self.removed is not None
        # b = a + 1 in floating point can differ from a by 1 + 1 ulp: allow rounding, nothing more.
        return same_size and self.linf <= 1.0 + _LINF_SLACK

    def describe(self) -> str:
        """One phrase for people, e.g. ``"4 records differ (positions 0, 1, 2, 3)"``."""
        if self.n_records != self.n_records_neighbor:
            if self.removed is not None:
                verb = "adding" if self.n_records_neighbor > self.n_records else "removing"
                return f"the neighbor is the dataset after {verb} one record"
            return (f"the datasets have {self.n_records} and {self.n_records_neighbor} records and do not "
                    "differ by one added or removed record")
        if not math.isfinite(self.linf):
            return "the records of the two datasets have different shapes"
        k = len(self.changed)
        if k == 0:
            return "the datasets are identical"
        where = ", ".join(str(i) for i in self.changed[:6]) + (", ..." if k > 6 else "")
        text = f"{k} record{'s differ' if k > 1 else ' differs'} (position{'s' if k > 1 else ''} {where})"
        if self.first_change is not None:
            text += f": {self.first_change[0]} -> {self.first_change[1]}"
            if k > 1:
                text += ", ..."
        return text + f"; largest coordinate change {self.linf:g}"


def compare_pair(dataset: Any, neighbor: Any) -> PairDifference:
    """Describe how two datasets differ (1-D: one value per record; 2-D: one row per record).

    Examples
    --------
    >>> d = compare_pair([1, 1, 1, 1], [0, 0, 0, 0])
    >>> d.describe()
    '4 records differ (positions 0, 1, 2, 3): 1 -> 0, ...; largest coordinate change 1'
    >>> d.is_neighbouring("replace-one"), d.is_neighbouring("linf")
    (False, True)
    >>> compare_pair([0, 1], [0, 1, 5]).is_neighbouring("add-remove")
    True
    """
    a = np.asarray(dataset)
    b = np.asarray(neighbor)
    if a.dtype == object or b.dtype == object or a.ndim > 2 or b.ndim > 2:
        raise ParameterValueError("dataset and neighbor must be 1-D or 2-D numeric arrays")
    a, b = np.atleast_1d(a), np.atleast_1d(b)
    if len(a) == len(b):
        if a.shape != b.shape:
            return PairDifference(len(a), len(b), (), None, math.inf)
        ra, rb = _rows(a).astype(float), _rows(b).astype(float)
        diff = np.any(ra != rb, axis=1)
        changed = tuple(int(i) for i in np.flatnonzero(diff))
        linf = float(np.max(np.abs(ra - rb))) if ra.size else 0.0
        first = None
        if changed:
            i = changed[0]
            first = (_show(a[i]), _show(b[i]))
        return PairDifference(len(a), len(b), changed, None, linf, first)
    removed = None
    if abs(len(a) - len(b)) == 1 and a.shape[1:] == b.shape[1:]:
        longer, shorter = (a, b) if len(a) > len(b) else (b, a)
        removed = _removed_one(longer, shorter)
    return PairDifference(len(a), len(b), (), removed, math.inf)



def non_neighbour_note(dataset: Any, neighbor: Any, relation: Any = None, front: Any = None) -> str | None:
    """Why ``dataset`` and ``neighbor`` are not neighbours, else None: the one check behind every such note.

    ``relation`` is the target's own when it has one: ``linf`` (its dataset is a vector of query answers,
    each may move by at most 1) or a record relation (one record replaced, added or removed); unknown
    (None), any of the three will do.  ``front`` (:class:`dpaudit.param_rules.Front`) names the two
    datasets its way: ``dataset``/``neighbor`` in Python, ``--dataset``/``--neighbor`` on the command line.

    >>> non_neighbour_note([0, 1, 1, 1], [0])[:60]
    'dataset and neighbor are not neighbours under any relation: '
    >>> non_neighbour_note([0, 0], [1, 1]) is None, non_neighbour_note([0, 0], [1, 1], "replace-one") is None
    (True, False)
    """
    from .param_rules import PYTHON

    rel = None if relation is None else Relation.parse(relation, "relation")
    if rel is Relation.LINF:
        allowed, under, what = (Relation.LINF,), (" under the target's relation linf (every query answer moves "
                                                  "by at most 1)"), ""
    elif rel is None:
        allowed, under = tuple(Relation), " under any relation"
        what = "neighbours differ in one record (replaced, added or removed), or in every answer by at most 1"
    else:
        allowed, under = (Relation.REPLACE_ONE, Relation.ADD_REMOVE), ""
        what = "neighbouring datasets differ in one record (replaced, added or removed)"
    diff = compare_pair(dataset, neighbor)
    if any(diff.is_neighbouring(r) for r in allowed):
        return None
    front = front or PYTHON
    return (f"{front.name('dataset')} and {front.name('neighbor')} are not neighbours{under}: {diff.describe()}; "
            + (f"{what}, so " if what else "") + "a bound on this pair may exceed epsilon without any violation")


def _show(value: Any) -> str:
    arr = np.asarray(value)
    if arr.ndim == 0:
        return f"{arr.item():g}" if arr.dtype.kind == "f" else str(arr.item())
    return "[" + ", ".join(_show(v) for v in arr) + "]"


def is_neighbouring(dataset: Any, neighbor: Any, relation: Any = "replace-one") -> bool:
    """Whether two datasets are neighbours under ``relation``.

    >>> is_neighbouring([0, 1, 1], [0, 1, 0]), is_neighbouring([0, 1, 1], [0, 0, 0])
    (True, False)
    """
    return compare_pair(dataset, neighbor).is_neighbouring(relation)


# ----------------------------------------------------------------------------- the domain
@dataclass(frozen=True)
class Domain:
    """1-D datasets of ``size`` records, each in ``[low, high]`` (integers when ``integer``).

    Under ``add-remove`` the larger dataset of a pair has ``size`` records and
    the smaller ``size - 1``.

    Examples
    --------
    >>> Domain(5, 0, 10, integer=True)
    Domain(size=5, low=0.0, high=10.0, integer=True, relation='replace-one')
    >>> Domain(5, 2, 1)
    Traceback (most recent call last):
    ...
    dpaudit.exceptions.ParameterValueError: high must be > low (2); got 1
    """

    size: int
    low: float
    high: float
    integer: bool = False
    relation: Relation = Relation.REPLACE_ONE

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", check_int(self.size, "size", low=1))
        object.__setattr__(self, "low", check_real(self.low, "low"))
        object.__setattr__(self, "high", check_real(self.high, "high"))
        if not math.isfinite(self.low) or not math.isfinite(self.high):
            raise ParameterValueError(f"low and high must be finite; got [{self.low}, {self.high}]")
        from .params import SEARCH_OPTIONS  # the rules of dpaudit.search's domain, in Python's words

        SEARCH_OPTIONS.check_rules({"low": self.low, "high": self.high}, only=("domain_order",))
        if not isinstance(self.integer, (bool, np.bool_)):
            raise ParameterTypeError(f"integer must be True or False; got {self.integer!r}")
        object.__setattr__(self, "integer", bool(self.integer))
        if self.integer:
            SEARCH_OPTIONS.check_rules({"low": self.low, "high": self.high, "integer": True}, only=("domain_integer",))
            lo, hi = math.ceil(self.low), math.floor(self.high)
            object.__setattr__(self, "low", float(lo))
            object.__setattr__(self, "high", float(hi))
        object.__setattr__(self, "relation", Relation.parse(self.relation, "relation"))
        if self.relation is Relation.ADD_REMOVE and self.size < 1:  # pragma: no cover - size >= 1 above
            raise ParameterValueError("size must be >= 1 under add-remove")

    def __repr__(self) -> str:
        return (f"Domain(size={self.size}, low={self.low!r}, high={self.high!r}, integer={self.integer}, "
                f"relation={self.relation.value!r})")

    def to_dict(self) -> dict:
        return {"size": self.size, "low": self.low, "high": self.high, "integer": self.integer,
                "relation": self.relation.value}

    def contains(self, dataset: Any) -> bool:
        """Whether ``dataset`` is a 1-D array of values in range (integers if asked) of an allowed length."""
        arr = np.asarray(dataset, dtype=float)
        sizes = (self.size, self.size - 1) if self.relation is Relation.ADD_REMOVE else (self.size,)
        if arr.ndim != 1 or len(arr) not in sizes:
            return False
        ok = bool(np.all((arr >= self.low) & (arr <= self.high)))
        return ok and (not self.integer or bool(np.all(arr == np.round(arr))))

    def clip(self, values: Any) -> np.ndarray:
        """Values forced into the domain (rounded first when integer)."""
        arr = np.asarray(values, dtype=float)
        if self.integer:
            arr = np.round(arr)
        return np.clip(arr, self.low, self.high)

    def uniform(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.integer:
            return rng.integers(int(self.low), int(self.high) + 1, size=n).astype(float)
        return rng.uniform(self.low, self.high, size=n)

    def landmarks(self) -> list[float]:
        """Values worth trying first: the ends of the range, 0 and 1 when inside, and the middle."""
        mid = self.clip((self.low + self.high) / 2.0).item()
        out = [self.low, self.high]
        for v in (0.0, 1.0, mid):
            if self.low <= v <= self.high and v not in out:
                out.append(v)
        return out

    def step_base(self) -> float:
        """A base value b with b - 1 and b + 1 inside the range when it is wide enough (StatDP's 1)."""
        if self.high - self.low >= 2:
            return float(min(max(1.0, self.low + 1.0), self.high - 1.0))
        return float(self.low)


# ----------------------------------------------------------------------------- candidates
def _pair(domain: Domain, base: Any, other: Any) -> tuple[np.ndarray, np.ndarray]:
    return domain.clip(base), domain.clip(other)


def _pattern_pairs(domain: Domain) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Fixed pairs, most promising first.  Names say where each comes from."""
    n, rel = domain.size, domain.relation
    marks = domain.landmarks()
    lo, hi = domain.low, domain.high
    if rel is Relation.LINF:
        # StatDP's patterns (Ding et al. 2018), as DP-Sniper uses them: a = (1, ..., 1)
        # against single and component-wise moves by 1, clipped to the range.
        b = domain.step_base()
        ones = np.full(n, b)
        half = n // 2
        yield "statdp:one-above", ones, np.r_[b + 1, np.full(n - 1, b)]
        yield "statdp:one-below", ones, np.r_[b - 1, np.full(n - 1, b)]
        yield "statdp:one-above-rest-below", ones, np.r_[b + 1, np.full(n - 1, b - 1)]
        yield "statdp:one-below-rest-above", ones, np.r_[b - 1, np.full(n - 1, b + 1)]
        yield "statdp:half-half", ones, np.r_[np.full(half, b + 1), np.full(n - half, b - 1)]
        yield "statdp:all-above", ones, np.full(n, b + 1)
        yield "statdp:all-below", ones, np.full(n, b - 1)
        yield "statdp:x-shape", np.r_[np.full(half, b), np.full(n - half, b - 1)], \
            np.r_[np.full(half, b - 1), np.full(n - half, b)]
        # The same shapes at the ends of the range, where clipping or saturation leaks.
        for end, step in ((lo, 1.0), (hi, -1.0)):
            base = np.full(n, end)
            yield f"edge:all-{'low' if step > 0 else 'high'}-move-one", base, np.r_[end + step, np.full(n - 1, end)]
            yield f"edge:all-{'low' if step > 0 else 'high'}-move-all", base, np.full(n, end + step)
        return
    if rel is Relation.REPLACE_ONE:
        # StatDP's single-difference patterns, then one record replaced by an end of the range
        # (outliers) on bases made of each landmark.
        b = domain.step_base()
        yield "statdp:one-above", np.full(n, b), np.r_[b + 1, np.full(n - 1, b)]
        yield "statdp:one-below", np.full(n, b), np.r_[b - 1, np.full(n - 1, b)]
        for v in marks:
            for w in marks:
                if w != v:
                    yield f"extreme:all-{v:g}-one-to-{w:g}", np.full(n, v), np.r_[w, np.full(n - 1, v)]
        if n >= 2:
            yield "extreme:mixed-low-high-flip", np.r_[lo, np.tile([hi, lo], n)[: n - 1]], \
                np.r_[hi, np.tile([hi, lo], n)[: n - 1]]
        return
    # add-remove: the larger dataset has n records; the smaller lacks its first record.
    for v in marks:
        for w in marks:
            full = np.r_[w, np.full(n - 1, v)]
            yield f"extreme:all-{v:g}-remove-{w:g}", full, full[1:]
    if n >= 2:
        mixed = np.r_[hi, np.tile([lo, hi], n)[: n - 1]]
        yield "extreme:mixed-remove-high", mixed, mixed[1:]


def random_pair(domain: Domain, rng: RNGLike = None) -> tuple[np.ndarray, np.ndarray]:
    """A random neighbouring pair inside ``domain``.

    The base dataset is uniform in the range; the changed record is uniform,
    or an end of the range with probability 1/2 (outliers are where leaks hide).

    >>> d = Domain(4, 0, 10, integer=True, relation="linf")
    >>> a, b = random_pair(d, rng=0)
    >>> d.contains(a) and d.contains(b) and is_neighbouring(a, b, "linf")
    True
    """
    rng = as_generator(rng)
    n = domain.size
    base = domain.uniform(n, rng)
    if domain.relation is Relation.LINF:
        return base, _linf_clip(domain, base, base + _linf_steps(domain, n, rng))
    value = _random_value(domain, rng)
    if domain.relation is Relation.REPLACE_ONE:
        other = base.copy()
        other[rng.integers(n)] = value
        return base, other
    full = base.copy()
    full[0] = value
    return full, full[1:]


def _linf_steps(domain: Domain, n: int, rng: np.random.Generator) -> np.ndarray:
    """Offsets in [-1, 1]: mostly -1, 0 or +1 (the worst pairs move answers by the full sensitivity)."""
    steps = rng.integers(-1, 2, size=n).astype(float)
    if not domain.integer:
        free = rng.random(n) < 0.2
        steps[free] = rng.uniform(-1, 1, size=int(free.sum()))
    return steps


def _random_value(domain: Domain, rng: np.random.Generator) -> float:
    if rng.random() < 0.5:
        return float(domain.low if rng.random() < 0.5 else domain.high)
    return float(domain.uniform(1, rng)[0])


def _linf_clip(domain: Domain, base: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``other`` kept inside the domain and within 1 of ``base`` in every coordinate."""
    return np.clip(domain.clip(other), base - 1.0, base + 1.0)


def candidate_pairs(domain: Domain, *, n_random: int = 0, rng: RNGLike = None) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Fixed pattern pairs, then ``n_random`` random ones: ``(origin, dataset, neighbor)`` triples.

    Patterns come first, most promising first: StatDP's (Ding et al., CCS 2018)
    as DP-Sniper uses them for ``linf``, and records at the ends of the range
    (extremes and outliers) for ``replace-one`` and ``add-remove``.  Duplicates
    are dropped.  Every pair is neighbouring and inside the domain.

    Examples
    --------
    >>> d = Domain(5, 0, 10, integer=True, relation="linf")
    >>> pairs = candidate_pairs(d)
    >>> pairs[0][0], pairs[0][1].tolist(), pairs[0][2].tolist()
    ('statdp:one-above', [1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 1.0, 1.0, 1.0, 1.0])
    >>> all(is_neighbouring(a, b, "linf") and d.contains(a) and d.contains(b) for _, a, b in pairs)
    True
    """
    n_random = check_int(n_random, "n_random", low=0)
    rng = as_generator(rng)
    seen: set = set()
    out = []

    def add(origin, a, b):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if domain.relation is Relation.LINF:
            b = _linf_clip(domain, a, b)
        a, b = domain.clip(a), domain.clip(b)
        key = (a.tobytes(), b.tobytes())
        if key in seen or (len(a) == len(b) and np.array_equal(a, b)):
            return
        seen.add(key)
        out.append((origin, a, b))

    for origin, a, b in _pattern_pairs(domain):
        add(origin, a, b)
    for _ in range(n_random):
        add("random", *random_pair(domain, rng))
    return out


def mutate_pair(domain: Domain, dataset: np.ndarray, neighbor: np.ndarray, rng: RNGLike = None,
                *, scale: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """A small random move of a neighbouring pair that keeps it neighbouring and inside the domain.

    One of: move the record that differs (in one dataset), move a record both
    datasets share, or jump either to an end of the range.  ``scale`` is the
    step as a fraction of the range width (a Gaussian step; integers round,
    and always move by at least 1).

    >>> d = Domain(3, 0, 5, integer=True)
    >>> a, b = mutate_pair(d, np.array([0., 0, 0]), np.array([5., 0, 0]), rng=1)
    >>> d.contains(a) and d.contains(b) and is_neighbouring(a, b, "replace-one")
    True
    """
    rng = as_generator(rng)
    scale = check_real(scale, "scale", low=0.0, low_inclusive=False)
    a = np.array(dataset, dtype=float)
    b = np.array(neighbor, dtype=float)
    width = domain.high - domain.low

    def moved(v: float) -> float:
        if rng.random() < 0.2:
            return float(domain.low if rng.random() < 0.5 else domain.high)
        step = rng.normal(0.0, scale * width)
        if domain.integer and abs(step) < 1:
            step = 1.0 if step >= 0 else -1.0
        return float(domain.clip(v + step))

    rel = domain.relation
    if rel is Relation.LINF:
        i = int(rng.integers(len(a)))
        if rng.random() < 0.5:  # move the coordinate in both datasets, keeping their offset
            off = b[i] - a[i]
            a[i] = moved(a[i])
            b[i] = a[i] + off
        else:  # change the offset in this coordinate
            step = _linf_steps(domain, 1, rng)[0]
            b[i] = a[i] + (step if step != 0 else (1.0 if rng.random() < 0.5 else -1.0))
        a, b = domain.clip(a), _linf_clip(domain, domain.clip(a), b)
        if np.array_equal(a, b):  # clipping at an end of the range can undo the move: move the other way
            b[i] = a[i] - 1.0 if a[i] - 1.0 >= domain.low else a[i] + 1.0
            b = _linf_clip(domain, a, b)
        return a, b
    if rel is Relation.REPLACE_ONE:
        diff = np.flatnonzero(a != b)
        j = int(diff[0]) if len(diff) else int(rng.integers(len(a)))
        u = rng.random()
        if u < 0.5:  # the differing record, on one side
            (a if rng.random() < 0.5 else b)[j] = moved(a[j] if rng.random() < 0.5 else b[j])
        elif len(a) > 1:  # a shared record
            others = [k for k in range(len(a)) if k != j]
            k = others[int(rng.integers(len(others)))]
            a[k] = b[k] = moved(a[k])
        else:
            b[j] = moved(b[j])
        return a, b
    # add-remove: ``a``/``b`` are (larger, smaller) or (smaller, larger); keep the order.
    swap = len(a) < len(b)
    full, part = (b, a) if swap else (a, b)
    k = _removed_one(full, part)
    k = 0 if k is None else k
    rest = np.delete(full, k)
    if rng.random() < 0.5 or len(rest) == 0:
        extra = moved(full[k])
    else:
        extra = full[k]
        i = int(rng.integers(len(rest)))
        rest[i] = moved(rest[i])
    full = np.r_[extra, rest]
    part = rest
    return (part, full) if swap else (full, part)
