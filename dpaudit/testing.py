"""Audits inside a DP library's own test suite: :func:`assert_dp`.

Statistical privacy tests are often flaky: they draw fresh noise on every run
and compare an estimate with a threshold, so a correct mechanism fails now and
then and a broken one passes now and then.  :func:`assert_dp` is a certified
audit with a fixed seed instead: the same code gives the same verdict on every
run and every machine, and a correct mechanism fails only if the seed happens
to be one of the rare unlucky ones, with a probability stated below.
"""

from __future__ import annotations

from typing import Any

__all__ = ["assert_dp", "DEFAULT_SEED", "DEFAULT_CONFIDENCE"]

#: The seed used when none is given: a fixed number, so a test is reproducible.
DEFAULT_SEED = 20_181_001

#: Confidence of the audit behind :func:`assert_dp`: a correct mechanism fails with probability <= 1e-3.
DEFAULT_CONFIDENCE = 0.999


def assert_dp(
    target: Any,
    dataset: Any = None,
    neighbor: Any = None,
    *,
    epsilon: float | None = None,
    delta: float = 0.0,
    claim: Any = None,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    samples: int | None = None,
    **audit_options: Any,
):
    """Audit ``target`` on ``(dataset, neighbor)`` and fail when a violation of the claim is certified.

    Parameters
    ----------
    target : callable or str
        The mechanism, as for :func:`dpaudit.audit`: any callable
        ``f(dataset)`` (faster with a ``size`` keyword, reproducible with an
        ``rng`` keyword), a ``"module:attr"`` or ``"file.py:attr"`` string, or
        a built-in name.
    dataset, neighbor : array_like or str
        The neighbouring pair the test is about.
    epsilon, delta : float
        The claimed budget (omit them when ``claim`` is given).
    claim : str, Claim or dp_accounting DpEvent, optional
        A claimed curve (``"gdp:mu=1"``, ``"dpsgd:noise=1,rate=0.01,steps=100"``,
        ...; see :mod:`dpaudit.claims`): the assertion fails when some certified
        (epsilon, delta) lies above it, and the false-alarm probability below
        holds for the whole curve at once.
    seed : int
        Fixed by default (:data:`DEFAULT_SEED`), so the test gives the same
        answer on every run; change it only on purpose.
    confidence : float
        Confidence of the audit's lower bound (default 0.999).
    samples : int, optional
        Releases per side; ``None`` uses :func:`dpaudit.audit`'s default.
        More samples find smaller violations; they never raise the false-alarm
        probability.
    **audit_options
        Passed to :func:`dpaudit.audit` unchanged: ``ideal=True`` to test the
        mathematics only (no floating-point attacks), ``attack``, ``n_jobs``,
        ``grey_box=True`` (also fail when the grey-box analysis finds the
        pair's exact epsilon above the claim; see :mod:`dpaudit.greybox`;
        ``"auto"``: the black-box test alone, with a note, for a target whose
        randomness cannot be recorded),
        ``stopping="anytime"`` (a look after every 10 releases per side: a gross
        violation fails the test after tens of releases, which matters when each
        release is a library call or a training run; the false-alarm probability
        below holds the same, by Ville's inequality, and no float attack runs), ...

    Returns
    -------
    AuditReport
        The report, when no violation is certified (so a test can also check
        ``report.ceiling`` to see how much the audit could have found).

    Raises
    ------
    AssertionError
        When the audit certifies ``epsilon_lower_bound > epsilon``; the message
        holds the report's summary.

    Notes
    -----
    False-alarm probability.  If ``target`` satisfies the claim on this pair,
    the audit's bound exceeds ``epsilon`` with probability at most
    ``1 - confidence`` over the seed, whatever the mechanism (the bound is a
    Clopper-Pearson bound on held-out counts).  With the defaults a correct
    mechanism fails this assertion with probability at most **1e-3**; since the
    seed is fixed, a given test either always passes or always fails.

    Passing is not a proof of privacy: the audit found no violation with the
    samples it drew.  ``report.ceiling`` says what it could have certified at
    best.

    Floating point.  By default the audit also reads the bits of the releases:
    ``loc + rng.laplace(...)`` in numpy takes bit patterns that depend on
    ``loc`` (Mironov 2012), so a textbook float implementation fails even when
    its calibration is right.  Pass ``ideal=True`` to test the calibration and
    the sensitivity only; keep the default to test what the code releases.

    Examples
    --------
    A Laplace count calibrated for epsilon 1 passes as mathematics; claiming a
    budget four times smaller fails; its numpy float sampler fails as code:

    >>> import numpy as np
    >>> from dpaudit.testing import assert_dp
    >>> def noisy_count(dataset, size=None, rng=None):
    ...     return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)
    >>> report = assert_dp(noisy_count, [0, 1, 1], [0, 1], epsilon=1.0, samples=100_000, ideal=True)
    >>> report.verdict
    'no violation found'
    >>> assert_dp(noisy_count, [0, 1, 1], [0, 1], epsilon=0.25, samples=100_000, ideal=True)
    Traceback (most recent call last):
    ...
    AssertionError: noisy_count violates its claim epsilon=0.25: epsilon >= 0.9...
    >>> assert_dp(noisy_count, [0, 1, 1], [0, 1], epsilon=1.0, samples=100_000)
    Traceback (most recent call last):
    ...
    AssertionError: noisy_count violates its claim epsilon=1: epsilon >= ...

    A whole curve: Gaussian noise of scale 1 on a count is 1-GDP, not 0.5-GDP:

    >>> def gaussian_count(dataset, size=None, rng=None):
    ...     return float(np.sum(dataset)) + rng.normal(0.0, 1.0, size=size)
    >>> assert_dp(gaussian_count, [0, 1], [0], claim="gdp:mu=1", samples=100_000, ideal=True).verdict
    'no violation found'
    >>> assert_dp(gaussian_count, [0, 1], [0], claim="gdp:mu=0.5", samples=100_000, ideal=True)
    Traceback (most recent call last):
    ...
    AssertionError: gaussian_count violates its claim gdp:mu=0.5 (at delta=...
    """
    __tracebackhide__ = True  # pytest shows the test's line and the message, not this function's source
    from .auditor import audit
    from .stats.bayes import format_confidence

    _check_audit_options(audit_options, audit)
    given = {"claim": claim} if claim is not None else {"epsilon": epsilon, "delta": delta}
    if claim is not None and (epsilon is not None or delta):
        given.update(epsilon=epsilon, delta=delta)  # audit() names the conflict
    report = audit(target, dataset, neighbor, seed=seed, confidence=confidence, samples=samples, **given,
                   **audit_options)
    if report.violation:
        name = getattr(target, "__name__", None) or str(report.target)
        if report.claim is None:
            said = f"epsilon={epsilon:g}" + (f", delta={delta:g}" if delta else "")
        else:
            said = f"{report.claim} (at delta={report.claimed_delta:.3g}: epsilon={report.claimed_epsilon:.4g})"
        replay = "" if report.seeded else "; the target takes no rng, so a rerun draws other noise"
        found = (f"epsilon >= {report.epsilon_lower_bound:.4f} with {format_confidence(report.confidence)} "
                 "confidence" if report.violation_source != "grey-box" else
                 f"its exact epsilon on this pair is {_exact_value(report.grey_box)} (grey-box)")
        raise AssertionError(f"{name} violates its claim {said}: {found} (seed {report.seed}{replay})\n"
                             f"{report.summary()}")
    return report


def _exact_value(grey_box: dict) -> str:
    return "inf" if grey_box.get("infinite") else f"{grey_box['epsilon_upper_bound']:.4f}"


def _check_audit_options(options: dict, audit: Any) -> None:
    """A misspelt option names ``assert_dp``, the function the test called, not the ``audit`` behind it."""
    import inspect

    params = inspect.signature(audit).parameters
    if any(q.kind is q.VAR_KEYWORD for q in params.values()):
        return
    known = set(params)
    unknown = sorted(set(options) - known)
    if unknown:
        from ._validation import did_you_mean

        raise TypeError(f"assert_dp() got an unexpected keyword argument {unknown[0]!r}"
                        f"{did_you_mean(unknown[0], sorted(known))}")
