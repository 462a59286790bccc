"""Database reconstruction from published tables (Garfinkel, Abowd, Martindale 2019).

A census block's published counts, medians and means become an integer
program over the microdata; enumerating every feasible solution shows how
many tables are consistent with the publication.  One solution means the
block is reconstructed exactly.

The model (pulp is the modelling layer, HiGHS or CBC the solver).  A person
*type* is an age in ``age_range`` combined with one value of every attribute
(by default sex, race, marital status).  ``b[t, r] = 1`` says "at least
``r`` people of type ``t``" (unary, so that repeated records are allowed and
each table has exactly one encoding).  For every published group ``G``:

* count: ``sum_{t in G} y_t = count``;
* mean: ``sum_{t in G} age_t y_t = count * mean`` (within the rounding of the
  published mean, or ``sum_slack``);
* median: with ``C_G(a)`` the number of members aged ``<= a``, an odd count
  ``c = 2h + 1`` needs ``C_G(m - 1) <= h`` and ``c - C_G(m) <= h``; an even
  count ``c = 2h`` picks a lower median ``L`` and an upper median ``U`` with
  binary indicators (``C_G(L - 1) <= h - 1``, ``C_G(L) >= h``, ``C_G(U - 1) <= h``,
  ``C_G(U) >= h + 1``) and needs ``L + U = 2 m``.

Every solution found is excluded by a no-good cut and the program solved
again until it is infeasible (or ``max_solutions`` is reached).

Noise.  When the published sums and medians carry noise, an attacker can only
say the truth lies within a slack of what was published; the number of
consistent tables then grows, and the block is no longer singled out
(:func:`census_noise_demo`).
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from dpaudit._rng import RNGLike, as_generator
from dpaudit._validation import check_choice, check_int, check_real
from dpaudit.attacks._pulp import add_variable
from dpaudit.exceptions import ParameterTypeError, ParameterValueError

__all__ = [
    "GroupStatistic",
    "SLIDES_BLOCK",
    "SLIDES_MALES",
    "DEFAULT_ATTRIBUTES",
    "CensusSolutions",
    "census_solutions",
    "noisy_statistics",
    "census_noise_demo",
]

DEFAULT_ATTRIBUTES: dict[str, tuple[str, ...]] = {"sex": ("F", "M"), "race": ("B", "W"), "marital": ("S", "M")}


@dataclass(frozen=True)
class GroupStatistic:
    """One published row: a group (attribute filter) and its count, median and mean.

    ``None`` marks a suppressed value (``(D)`` in the table).  ``adults_only``
    restricts the group to ages ``>= adult_age``.  ``mean_decimals`` says how
    the mean was rounded (36.7 for 110/3 has one decimal).

    >>> GroupStatistic("male", {"sex": "M"}, 3, 30, 44)
    GroupStatistic(name='male', where={'sex': 'M'}, count=3, median=30, mean=44, mean_decimals=None, adults_only=False)
    """

    name: str
    where: Mapping[str, str]
    count: int | None
    median: float | None = None
    mean: float | None = None
    mean_decimals: int | None = None
    adults_only: bool = False

    def to_dict(self) -> dict:
        return {"name": self.name, "where": dict(self.where), "count": self.count, "median": self.median,
                "mean": self.mean, "mean_decimals": self.mean_decimals, "adults_only": self.adults_only}


SLIDES_BLOCK: tuple[GroupStatistic, ...] = (
    GroupStatistic("total population", {}, 7, 30, 38),
    GroupStatistic("female", {"sex": "F"}, 4, 30, 33.5),
    GroupStatistic("male", {"sex": "M"}, 3, 30, 44),
    GroupStatistic("black or african american", {"race": "B"}, 4, 51, 48.5),
    GroupStatistic("white", {"race": "W"}, 3, 24, 24),
    GroupStatistic("single adults", {"marital": "S"}, None, None, None, adults_only=True),
    GroupStatistic("married adults", {"marital": "M"}, 4, 51, 51, adults_only=True),
    GroupStatistic("black or african american female", {"sex": "F", "race": "B"}, 3, 36, 36.7, mean_decimals=1),
)
"""A 7-person block in the style of Garfinkel, Abowd and Martindale's (2019) worked example."""

SLIDES_MALES: tuple[GroupStatistic, ...] = (GroupStatistic("male", {}, 3, 30, 44),)
"""The male rows alone: count 3, median 30, mean 44 (30 consistent age triples for ages 1..125)."""


@dataclass(frozen=True)
class CensusSolutions:
    """Every microdata table consistent with a publication (up to ``max_solutions``).

    Attributes
    ----------
    statistics : tuple of GroupStatistic
    n_solutions : int
        Tables found.
    complete : bool
        ``True`` when the enumeration ran to infeasibility, so ``n_solutions``
        is exact; ``False`` when it stopped at ``max_solutions``.
    solutions : tuple
        Each table is a sorted tuple of records ``(age, attr1, attr2, ...)``.
    attributes : tuple of str
        Record layout after the age.
    sum_slack, median_slack : float
    seconds : float
    """

    statistics: tuple
    n_solutions: int
    complete: bool
    solutions: tuple
    attributes: tuple
    sum_slack: float
    median_slack: float
    seconds: float
    details: dict = field(default_factory=dict)

    @property
    def unique(self) -> bool:
        """Exactly one consistent table: the block is reconstructed."""
        return self.complete and self.n_solutions == 1

    def to_dict(self) -> dict:
        return {
            "attack": "census",
            "statistics": [s.to_dict() for s in self.statistics],
            "n_solutions": self.n_solutions,
            "complete": self.complete,
            "solutions": [[list(r) for r in table] for table in self.solutions],
            "attributes": list(self.attributes),
            "sum_slack": self.sum_slack,
            "median_slack": self.median_slack,
            "seconds": self.seconds,
            "details": dict(self.details),
        }


def _check_statistics(statistics: Sequence[GroupStatistic], attributes: Mapping[str, Sequence[str]]) -> int:
    if isinstance(statistics, GroupStatistic) or not all(isinstance(s, GroupStatistic) for s in statistics):
        raise ParameterTypeError(f"statistics must be a sequence of GroupStatistic; got {statistics!r}")
    total = [s.count for s in statistics if not s.where and not s.adults_only and s.count is not None]
    if not total:
        raise ParameterValueError("statistics must include the whole population's count (a row with where={})")
    for s in statistics:
        for key, value in s.where.items():
            if key not in attributes or value not in attributes[key]:
                raise ParameterValueError(f"statistics[{s.name!r}].where: {key}={value!r} is not in attributes")
        if s.count is None and (s.median is not None or s.mean is not None):
            raise ParameterValueError(f"statistics[{s.name!r}]: a median or mean needs the count")
    return check_int(total[0], "statistics[total].count", low=1)


def census_solutions(
    statistics: Sequence[GroupStatistic] = SLIDES_BLOCK,
    *,
    attributes: Mapping[str, Sequence[str]] | None = None,
    age_range: tuple[int, int] = (1, 125),
    adult_age: int = 18,
    sum_slack: float = 0.0,
    median_slack: float = 0.0,
    max_solutions: int = 1000,
    solver: str = "highs",
    method: str = "auto",
) -> CensusSolutions:
    """Enumerate every microdata table consistent with published statistics.

    Parameters
    ----------
    statistics : sequence of GroupStatistic, default :data:`SLIDES_BLOCK`
        Must include the whole population's count (``where={}``).
    attributes : mapping, optional
        Attribute name -> possible values; default :data:`DEFAULT_ATTRIBUTES`
        (``{}`` when the statistics filter on nothing: ages only).
    age_range : (int, int), default (1, 125)
        Inclusive range of possible ages.
    adult_age : int, default 18
        Groups with ``adults_only`` count people at least this old; married
        people (``marital="M"``) must be adults.
    sum_slack, median_slack : float, default 0
        Tolerance on every group's age sum and median (noisy publications).
    max_solutions : int, default 1000
        Stop after this many tables (``complete`` is then ``False``).
    solver : {"highs", "cbc"}
        pulp's in-process HiGHS, or pulp's bundled CBC (``method="ip"``).
    method : {"auto", "ip", "enumerate"}
        ``"ip"``: the integer program with no-good cuts (any statistics);
        ``"enumerate"``: depth-first search over sorted ages, for one group
        without attributes (much faster: re-solving the IP after each cut costs
        seconds per solution).  ``"auto"`` picks ``"enumerate"`` when it applies.

    Returns
    -------
    CensusSolutions

    Examples
    --------
    The block's male rows (count 3, median 30, mean 44, ages 1..125):

    >>> r = census_solutions(SLIDES_MALES, attributes={})
    >>> r.n_solutions, r.complete
    (30, True)
    >>> r.solutions[0]
    ((1,), (30,), (101,))
    """
    if attributes is None:
        used = {k for s in statistics for k in getattr(s, "where", {})} if not isinstance(statistics, GroupStatistic) else set()
        attributes = DEFAULT_ATTRIBUTES if used else {}
    attributes = {k: tuple(v) for k, v in attributes.items()}
    n_people = _check_statistics(statistics, attributes)
    lo_age = check_int(age_range[0], "age_range[0]", low=0)
    hi_age = check_int(age_range[1], "age_range[1]", low=lo_age)
    adult_age = check_int(adult_age, "adult_age", low=0)
    sum_slack = check_real(sum_slack, "sum_slack", low=0.0)
    median_slack = check_real(median_slack, "median_slack", low=0.0)
    max_solutions = check_int(max_solutions, "max_solutions", low=1)
    check_choice(solver, "solver", ["highs", "cbc"])
    check_choice(method, "method", ["auto", "ip", "enumerate"])
    one_group = not attributes and len([s for s in statistics if s.count is not None]) == 1
    if method == "enumerate" and not one_group:
        raise ParameterValueError("method='enumerate' handles one group without attributes; use method='ip'")

    t0 = time.perf_counter()
    if method == "enumerate" or (method == "auto" and one_group):
        stat = next(s for s in statistics if s.count is not None)
        found, complete = _enumerate_one_group(stat, lo_age, hi_age, sum_slack, median_slack, max_solutions)
        return CensusSolutions(
            statistics=tuple(statistics), n_solutions=len(found), complete=complete, solutions=tuple(found),
            attributes=(), sum_slack=sum_slack, median_slack=median_slack, seconds=time.perf_counter() - t0,
            details={"age_range": [lo_age, hi_age], "method": "enumerate"},
        )
    program = _Program.of(statistics, attributes, range(lo_age, hi_age + 1), adult_age=adult_age,
                          n_people=n_people, sum_slack=sum_slack, median_slack=median_slack)
    solutions, complete = program.solutions(solver, max_solutions)
    return CensusSolutions(
        statistics=tuple(statistics), n_solutions=len(solutions), complete=complete,
        solutions=tuple(sorted(solutions)), attributes=tuple(attributes), sum_slack=sum_slack,
        median_slack=median_slack, seconds=time.perf_counter() - t0,
        details={"age_range": [lo_age, hi_age], "n_types": len(program.types), "method": "ip"},
    )


def _person_types(attributes: Mapping[str, tuple], ages: range, adult_age: int) -> list[tuple]:
    """Every record ``(age, value of each attribute)``; married people are adults."""
    names = tuple(attributes)
    types = [(age,) + combo for age in ages for combo in itertools.product(*attributes.values())]
    if "marital" in attributes:
        types = [t for t in types if not (t[1 + names.index("marital")] == "M" and t[0] < adult_age)]
    return types


@dataclass
class _Program:
    """The integer program of a publication over person types.

    ``b[t, r] = 1`` says "at least ``r`` people of type ``t``"; ``y[t]`` is the count of type ``t`` as
    pulp terms; ``cap[t]`` the most people of type ``t`` any published count allows.
    """

    prob: Any
    types: list
    cap: list
    b: dict
    y: dict

    @classmethod
    def of(cls, statistics: Sequence[GroupStatistic], attributes: Mapping[str, tuple], ages: range, *,
           adult_age: int, n_people: int, sum_slack: float, median_slack: float) -> "_Program":
        import pulp

        names = tuple(attributes)
        types = _person_types(attributes, ages, adult_age)

        def members(stat: GroupStatistic) -> list[int]:
            return [ti for ti, t in enumerate(types)
                    if all(t[1 + names.index(k)] == v for k, v in stat.where.items())
                    and (not stat.adults_only or t[0] >= adult_age)]

        # a type cannot occur more often than the smallest published count of a group containing it
        cap = [n_people] * len(types)
        for stat in statistics:
            if stat.count is not None:
                for ti in members(stat):
                    cap[ti] = min(cap[ti], int(stat.count))
        prob = pulp.LpProblem("census", pulp.LpMinimize)
        b = {(ti, r): add_variable(prob, f"b_{ti}_{r}", 0, 1, cat="Binary") for ti in range(len(types))
             for r in range(1, cap[ti] + 1)}
        prob += pulp.LpAffineExpression([])
        for ti in range(len(types)):
            for r in range(1, cap[ti]):
                prob += b[ti, r] >= b[ti, r + 1]
        y = {ti: [(b[ti, r], 1.0) for r in range(1, cap[ti] + 1)] for ti in range(len(types))}
        program = cls(prob, types, cap, b, y)
        for gi, stat in enumerate(statistics):
            if stat.count is not None:
                program._add_group(gi, stat, members(stat), ages, sum_slack=sum_slack, median_slack=median_slack)
        return program

    def _add_group(self, gi: int, stat: GroupStatistic, group: list[int], ages: range, *,
                   sum_slack: float, median_slack: float) -> None:
        """The count, age-sum and median constraints of group ``gi``."""
        import pulp

        y, prob = self.y, self.prob
        c = check_int(stat.count, f"statistics[{stat.name!r}].count", low=0)
        prob += pulp.LpAffineExpression([vc for ti in group for vc in y[ti]]) == c, f"count_{gi}"
        if stat.mean is not None:
            total_age = pulp.LpAffineExpression([(v, coef * self.types[ti][0]) for ti in group for v, coef in y[ti]])
            tol = sum_slack + (c * 0.5 * 10.0 ** -stat.mean_decimals if stat.mean_decimals is not None else 0.0)
            target = c * float(stat.mean)
            prob += total_age >= math.ceil(target - tol - 1e-9), f"sum_lo_{gi}"
            prob += total_age <= math.floor(target + tol + 1e-9), f"sum_hi_{gi}"
        if stat.median is not None and c > 0:
            self._add_median(gi, c, group, ages, float(stat.median), median_slack)

    def solutions(self, solver: str, max_solutions: int) -> tuple[list, bool]:
        """Every table, each excluded by a no-good cut once found, until infeasible (complete) or
        ``max_solutions``."""
        import pulp

        if solver == "cbc":
            with warnings.catch_warnings():  # pulp 3.3 deprecates its bundled CBC (removed in 4.0)
                warnings.filterwarnings("ignore", message="PULP_CBC_CMD is deprecated", category=DeprecationWarning)
                backend = pulp.PULP_CBC_CMD(msg=False)
        else:
            backend = pulp.HiGHS(msg=False)
        solutions: list = []
        while len(solutions) < max_solutions:
            status = self.prob.solve(backend)
            if pulp.LpStatus[status] != "Optimal":
                return solutions, True
            counts = {ti: int(round(sum(v.varValue for v, _ in self.y[ti]))) for ti in range(len(self.types))}
            solutions.append(tuple(sorted(t for ti, t in enumerate(self.types) for _ in range(counts[ti]))))
            self._exclude(counts, len(solutions))
        return solutions, False

    def _add_median(self, gi: int, c: int, group: list[int], ages: range, median: float, slack: float) -> None:
        """Median constraints on the cumulative counts C(a) = #members aged <= a."""
        import pulp

        prob, types, y = self.prob, self.types, self.y
        ages = list(ages)
        by_age: dict[int, list] = {}
        for ti in group:
            by_age.setdefault(types[ti][0], []).extend(y[ti])
        cum = {ages[0] - 1: pulp.LpAffineExpression([])}
        for a in ages:  # C(a) = C(a - 1) + members aged a, as auxiliary variables (keeps rows short)
            cum[a] = add_variable(prob, f"C_{gi}_{a}", 0, c)
            prob += cum[a] - cum[a - 1] - pulp.LpAffineExpression(by_age.get(a, [])) == 0, f"C_def_{gi}_{a}"
        lo, hi = median - slack, median + slack
        if c % 2 == 1:
            h = (c - 1) // 2
            a_lo = math.ceil(lo - 1e-9)
            a_hi = math.floor(hi + 1e-9)
            if a_lo > ages[-1] or a_hi < ages[0] or a_lo > a_hi:
                prob += pulp.LpAffineExpression([]) >= 1, f"median_impossible_{gi}"
                return
            prob += cum[max(a_lo, ages[0]) - 1] <= h, f"median_lo_{gi}"
            prob += c - cum[min(a_hi, ages[-1])] <= h, f"median_hi_{gi}"
            return
        h = c // 2
        M = c
        lower = {a: add_variable(prob, f"L_{gi}_{a}", 0, 1, cat="Binary") for a in ages}
        upper = {a: add_variable(prob, f"U_{gi}_{a}", 0, 1, cat="Binary") for a in ages}
        prob += pulp.lpSum(lower.values()) == 1, f"L_one_{gi}"
        prob += pulp.lpSum(upper.values()) == 1, f"U_one_{gi}"
        for a in ages:
            prob += cum[a - 1] <= h - 1 + M * (1 - lower[a]), f"L_below_{gi}_{a}"
            prob += cum[a] >= h - M * (1 - lower[a]), f"L_at_{gi}_{a}"
            prob += cum[a - 1] <= h + M * (1 - upper[a]), f"U_below_{gi}_{a}"
            prob += cum[a] >= h + 1 - M * (1 - upper[a]), f"U_at_{gi}_{a}"
        both = pulp.LpAffineExpression([(lower[a], a) for a in ages] + [(upper[a], a) for a in ages])
        prob += both >= math.ceil(2 * lo - 1e-9), f"median2_lo_{gi}"
        prob += both <= math.floor(2 * hi + 1e-9), f"median2_hi_{gi}"

    def _exclude(self, counts: dict, k: int) -> None:
        """No-good cut ``k``: some type's multiplicity must change (unary: b[t, y] drops or b[t, y + 1] rises)."""
        import pulp

        cut = []
        for ti, cnt in counts.items():
            if cnt >= 1:
                cut.append((self.b[ti, cnt], -1.0))
            if cnt < self.cap[ti]:
                cut.append((self.b[ti, cnt + 1], 1.0))
        n_present = sum(1 for cnt in counts.values() if cnt >= 1)
        self.prob += pulp.LpAffineExpression(cut) >= 1 - n_present, f"nogood_{k}"

def _enumerate_one_group(stat: GroupStatistic, lo_age: int, hi_age: int, sum_slack: float,
                         median_slack: float, max_solutions: int) -> tuple[list, bool]:
    """Sorted age tuples of one group (no attributes), by depth-first search with sum pruning."""
    c = int(stat.count)
    if stat.mean is not None:
        tol = sum_slack + (c * 0.5 * 10.0 ** -stat.mean_decimals if stat.mean_decimals is not None else 0.0)
        s_lo, s_hi = math.ceil(c * stat.mean - tol - 1e-9), math.floor(c * stat.mean + tol + 1e-9)
    else:
        s_lo, s_hi = -math.inf, math.inf
    m_lo = -math.inf if stat.median is None else stat.median - median_slack
    m_hi = math.inf if stat.median is None else stat.median + median_slack
    h = c // 2
    out: list = []

    def median_ok(prefix: list) -> bool:
        if c % 2 == 1:
            return m_lo - 1e-9 <= prefix[h] <= m_hi + 1e-9
        return 2 * m_lo - 1e-9 <= prefix[h - 1] + prefix[h] <= 2 * m_hi + 1e-9

    def walk(prefix: list, total: int) -> bool:
        k = c - len(prefix)
        if k == 0:
            if s_lo <= total <= s_hi:
                out.append(tuple((a,) for a in prefix))
                return len(out) < max_solutions
            return True
        start = prefix[-1] if prefix else lo_age
        for a in range(start, hi_age + 1):
            if total + k * a > s_hi:  # every later age is at least a
                break
            if total + a + (k - 1) * hi_age < s_lo:
                continue
            prefix.append(a)
            ok = len(prefix) != h + 1 or median_ok(prefix)
            if ok and not walk(prefix, total + a):
                prefix.pop()
                return False
            prefix.pop()
        return True

    complete = walk([], 0)
    return out, complete


def noisy_statistics(
    statistics: Sequence[GroupStatistic], *, noise_scale: float, rng: RNGLike = None
) -> tuple[GroupStatistic, ...]:
    """Publish with noise: Laplace(``noise_scale``) on each age sum and median, rounded.

    Counts stay exact (the 2020 Census kept block totals invariant); the mean
    is republished as noisy sum / count.

    >>> s = noisy_statistics(SLIDES_MALES, noise_scale=2.0, rng=0)
    >>> s[0].count
    3
    """
    noise_scale = check_real(noise_scale, "noise_scale", low=0.0)
    g = as_generator(rng)
    out = []
    for s in statistics:
        median, mean = s.median, s.mean
        if s.median is not None:
            median = float(np.rint(s.median + g.laplace(0.0, noise_scale))) if noise_scale else s.median
        if s.mean is not None and s.count:
            total = s.mean * s.count + (g.laplace(0.0, noise_scale) if noise_scale else 0.0)
            mean = float(np.rint(total)) / s.count
        out.append(GroupStatistic(s.name, dict(s.where), s.count, median, mean, None, s.adults_only))
    return tuple(out)


def census_noise_demo(
    statistics: Sequence[GroupStatistic] = SLIDES_MALES,
    *,
    slacks: Sequence[float] = (0, 1, 2, 4),
    max_solutions: int = 10_000,
    **kwargs: Any,
) -> tuple[CensusSolutions, ...]:
    """Consistent tables when sums and medians are only known within ``slack``.

    With noise of scale ``s`` on the published sums and medians, an attacker
    must allow a slack of a few ``s``; the count of consistent tables grows
    from the exact publication's.

    >>> [r.n_solutions for r in census_noise_demo(slacks=(0, 2), attributes={})]
    [30, 750]
    """
    return tuple(
        census_solutions(statistics, sum_slack=s, median_slack=s, max_solutions=max_solutions, **kwargs)
        for s in slacks
    )
