"""Differencing attack: two overlapping counts isolate one person.

The seed scenario: a table of people with public quasi-identifiers (sex, ZIP
code, age) and a secret bit ("has the disease").  For a target, the attacker
asks

* "how many {sex} in {zip} aged >= {age} have the disease?" and
* "how many {sex} in {zip} aged >= {age + 1} have the disease?",

whose difference is the target's secret whenever the target is the only
person of that sex and age in that ZIP code (which the attacker checks from
the public columns).  Against the exact server the attack always wins; against
a noisy one it guesses "1" when the difference is at least 1/2; asking the
pair ``k_repeats`` times with fresh noise and averaging shrinks the noise as
``1/sqrt(k_repeats)`` -- the composition theorem at work: ``2 k`` answers at
``epsilon`` each cost ``2 k epsilon``.

Each trial is one round of the DP distinguishing game: a fresh table, a
unique target, and the release computed on D (target's secret 1) and on D'
(target's secret 0), independent noise.  The guesses give the counts
``tp, fn`` (on D) and ``fp, tn`` (on D') for
:func:`dpaudit.stats.epsilon_lower_bound`, compared with the claimed budget of
the ``2 k`` answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit._rng import RNGLike, as_generator, as_seed_sequence, seed_entropy
from dpaudit._validation import check_confidence, check_int, check_probability
from dpaudit.attacks._result import AttackResult
from dpaudit.attacks._result import certify_counts
from dpaudit.attacks.query_mechanisms import mechanism_label, as_query_mechanism, claimed_budget
from dpaudit.exceptions import ParameterValueError

__all__ = [
    "PeopleTable",
    "DifferencingResult",
    "differencing_queries",
    "differencing_guess",
    "run_differencing",
    "differencing_composition",
]

DEFAULT_ZIPS = ("02445", "02446", "02118", "02120", "02139")


@dataclass(frozen=True, eq=False)
class PeopleTable:
    """Public quasi-identifiers and one secret bit per person.

    Examples
    --------
    >>> t = PeopleTable.random(200, rng=0)
    >>> t.n_people, sorted(set(t.sex.tolist()))
    (200, ['F', 'M'])
    >>> int(t.mask(sex="F", zip="02120", min_age=40).sum()) >= 0
    True
    """

    sex: np.ndarray
    zip: np.ndarray
    age: np.ndarray
    disease: np.ndarray

    @classmethod
    def random(
        cls,
        n_people: int,
        *,
        zips: tuple[str, ...] = DEFAULT_ZIPS,
        age_range: tuple[int, int] = (18, 90),
        disease_rate: float = 0.3,
        rng: RNGLike = None,
    ) -> "PeopleTable":
        """A synthetic table: uniform sex, ZIP and age; disease ~ Bernoulli(disease_rate)."""
        n_people = check_int(n_people, "n_people", low=1)
        disease_rate = check_probability(disease_rate, "disease_rate")
        g = as_generator(rng)
        return cls(
            sex=g.choice(np.array(["F", "M"]), size=n_people),
            zip=g.choice(np.array(zips), size=n_people),
            age=g.integers(age_range[0], age_range[1] + 1, size=n_people),
            disease=(g.random(n_people) < disease_rate).astype(np.int64),
        )

    @property
    def n_people(self) -> int:
        return int(self.age.shape[0])

    def mask(self, *, sex: str | None = None, zip: str | None = None, min_age: int | None = None) -> np.ndarray:
        """Who satisfies a public predicate (conditions left ``None`` are ignored)."""
        m = np.ones(self.n_people, dtype=bool)
        if sex is not None:
            m &= self.sex == sex
        if zip is not None:
            m &= self.zip == zip
        if min_age is not None:
            m &= self.age >= min_age
        return m

    def unique_targets(self) -> np.ndarray:
        """Indices of people alone in their (sex, ZIP, age) cell: the isolable ones."""
        keys = np.char.add(np.char.add(self.sex.astype(str), self.zip.astype(str)), self.age.astype(str))
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        return np.flatnonzero(counts[inverse] == 1)

    def with_secret(self, target: int, value: int) -> "PeopleTable":
        """A neighbouring table: the same people, the target's secret set to ``value``."""
        disease = self.disease.copy()
        disease[target] = value
        return PeopleTable(self.sex, self.zip, self.age, disease)


def differencing_queries(table: PeopleTable, target: int) -> np.ndarray:
    """The query pair isolating ``target``, as a ``(2, n)`` 0/1 matrix over the secret column.

    Row 0: people of the target's sex and ZIP aged >= the target's age; row 1:
    aged >= age + 1.  ``queries @ disease`` are the two counts "... with the
    disease"; their difference is the target's secret when the target is
    unique in its cell.

    >>> t = PeopleTable.random(300, rng=1)
    >>> i = int(t.unique_targets()[0])
    >>> q = differencing_queries(t, i)
    >>> int(q[0] @ t.disease - q[1] @ t.disease) == int(t.disease[i])
    True
    """
    sex, zip_, age = table.sex[target], table.zip[target], int(table.age[target])
    return np.vstack([
        table.mask(sex=sex, zip=zip_, min_age=age),
        table.mask(sex=sex, zip=zip_, min_age=age + 1),
    ]).astype(float)


def differencing_guess(answers: np.ndarray, *, threshold: float = 0.5) -> tuple[int, float]:
    """Average the differences of repeated answer pairs and threshold them.

    ``answers`` holds ``k`` repetitions of the pair, interleaved
    ``[q0, q1, q0, q1, ...]``.  Returns ``(guess, estimate)``.

    >>> differencing_guess(np.array([5.0, 4.0, 5.5, 4.0]))
    (1, 1.25)
    """
    pairs = np.asarray(answers, dtype=float).reshape(-1, 2)
    estimate = float(np.mean(pairs[:, 0] - pairs[:, 1]))
    return int(estimate >= threshold), estimate


@dataclass(frozen=True, repr=False)
class DifferencingResult(AttackResult):
    """Outcome of :func:`run_differencing`.

    Attributes
    ----------
    n_people, k_repeats, trials : int
        Inputs; each trial asks the query pair ``k_repeats`` times on D and on D'.
    mechanism : str
        Name of the query mechanism.
    n_answers : int
        Answers in one release (``2 * k_repeats``), the unit the claim composes over.
    accuracy : float
        Fraction of correct guesses over the ``2 * trials`` runs.
    rmse : float
        Root mean squared error of the averaged difference (shrinks as ``1/sqrt(k)``).
    bound, claimed, verdict, seed, details
        As in :class:`~dpaudit.attacks._result.AttackResult`: the bound from the
        guesses of all ``2 * trials`` runs; the claim of one release of ``n_answers``.
    """

    attack = "differencing"

    n_people: int
    k_repeats: int
    trials: int
    mechanism: str
    n_answers: int
    accuracy: float
    rmse: float


def run_differencing(
    *,
    n_people: int = 1000,
    k_repeats: int = 1,
    mechanism: Any = "laplace",
    noise_scale: float | None = None,
    epsilon: float | None = None,
    trials: int = 500,
    disease_rate: float = 0.3,
    confidence: float = 0.95,
    rng: RNGLike = None,
) -> DifferencingResult:
    """Run the differencing attack on ``trials`` fresh tables and bound epsilon.

    Parameters
    ----------
    n_people : int, default 1000
        Rows of each synthetic table.
    k_repeats : int, default 1
        How often the query pair is asked (fresh noise each time); the
        release has ``2 * k_repeats`` answers.
    mechanism : str or callable, default "laplace"
        A name from :data:`~dpaudit.attacks.query_mechanisms.QUERY_MECHANISMS`
        or a third-party callable (see :func:`~dpaudit.attacks.query_mechanisms.as_query_mechanism`).
    noise_scale, epsilon : float, optional
        Noise parameters of a named mechanism (``epsilon``: per answer, Laplace).
    trials : int, default 500
        Distinguishing games; each runs the attack on D and on D'.
    disease_rate : float, default 0.3
        Prevalence of the secret bit among the other people.
    confidence : float, default 0.95
        Probability that the reported bound is valid.
    rng : Generator, SeedSequence, int or None
        Randomness; one child seed per trial.

    Returns
    -------
    DifferencingResult

    Examples
    --------
    >>> r = run_differencing(n_people=300, mechanism="exact", trials=50, rng=0)
    >>> r.accuracy, r.verdict
    (1.0, 'no claim')
    >>> r = run_differencing(n_people=300, k_repeats=4, epsilon=0.5, trials=200, rng=0)
    >>> r.claimed.point_epsilon, r.epsilon_lower_bound <= r.claimed.point_epsilon
    (4.0, True)
    """
    n_people = check_int(n_people, "n_people", low=2)
    k_repeats = check_int(k_repeats, "k_repeats", low=1)
    trials = check_int(trials, "trials", low=1)
    confidence = check_confidence(confidence)
    mech = as_query_mechanism(mechanism, noise_scale=noise_scale, epsilon=epsilon, name="mechanism")
    seq = as_seed_sequence(rng)
    n_answers = 2 * k_repeats
    claimed = claimed_budget(mech, n_answers)

    tp = fn = fp = tn = 0
    sq_err = 0.0
    for child in seq.spawn(trials):
        g = np.random.default_rng(child)
        table = PeopleTable.random(n_people, disease_rate=disease_rate, rng=g)
        targets = table.unique_targets()
        while targets.size == 0:  # pragma: no cover - only for tiny tables
            table = PeopleTable.random(n_people, disease_rate=disease_rate, rng=g)
            targets = table.unique_targets()
        target = int(g.choice(targets))
        queries = np.repeat(differencing_queries(table, target)[None], k_repeats, axis=0).reshape(n_answers, -1)
        for secret in (1, 0):
            answers = mech(queries, table.with_secret(target, secret).disease, rng=g)
            guess, estimate = differencing_guess(answers)
            sq_err += (estimate - secret) ** 2
            if secret == 1:
                tp += guess
                fn += 1 - guess
            else:
                fp += guess
                tn += 1 - guess

    bound, verdict = certify_counts(
        tp, fn, fp, tn, claimed, confidence=confidence,
        details={"attack": "differencing", "threshold": 0.5, "k_repeats": k_repeats},
    )
    return DifferencingResult(
        n_people=n_people,
        k_repeats=k_repeats,
        trials=trials,
        mechanism=mechanism_label(mech),
        n_answers=n_answers,
        accuracy=(tp + tn) / (2 * trials),
        rmse=float(np.sqrt(sq_err / (2 * trials))),
        bound=bound,
        claimed=claimed,
        verdict=verdict,
        seed=seed_entropy(seq),
    )


def differencing_composition(*, k_values=(1, 4, 16, 64), **params) -> tuple[DifferencingResult, ...]:
    """Run :func:`run_differencing` for several ``k_repeats`` (same seed for each).

    Shows composition at work: the claimed budget grows as ``2 k epsilon``
    and so does the measured bound, while the averaged error shrinks.

    >>> rs = differencing_composition(k_values=(1, 16), n_people=200, epsilon=0.5, trials=100, rng=3)
    >>> [r.claimed.point_epsilon for r in rs], rs[0].rmse > rs[1].rmse
    ([1.0, 16.0], True)
    """
    if not k_values:
        raise ParameterValueError("k_values must not be empty")
    return tuple(run_differencing(k_repeats=k, **params) for k in k_values)
