"""The part every result of an attack on released statistics shares: bound, claim, verdict, seed.

:class:`~dpaudit.attacks.differencing.DifferencingResult`,
:class:`~dpaudit.attacks.reconstruction.ReconstructionResult` and
:class:`~dpaudit.attacks.tracing.TracingResult` derive from :class:`AttackResult`
and declare only their own figures.  The shared fields are keyword-only, so
that each subclass keeps its own fields first, in its constructor and its repr.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, fields, replace
from typing import ClassVar

from dpaudit.claims import PointClaim
from dpaudit.stats import EpsilonBound, epsilon_lower_bound
from dpaudit.stats.bayes import format_confidence
from dpaudit.stats.certificate import ClopperPearson, EventCounts
from dpaudit.stats.verdict import verdict_of

__all__ = ["AttackResult", "certify_counts"]


def certify_counts(tp: int, fn: int, fp: int, tn: int, claimed: PointClaim | None, *, confidence: float,
                   details: dict | None = None) -> tuple[EpsilonBound, str]:
    """(the bound, the verdict) of an attack's confusion counts: certified by Clopper-Pearson against ``claimed``.

    The verdict is the certificate's (:mod:`dpaudit.stats.certificate`), as every audit's; without a claim the
    bound is at delta 0 and the verdict "no claim".

    >>> b, v = certify_counts(900, 100, 100, 900, PointClaim(1.0), confidence=0.95)
    >>> round(b.epsilon_lower_bound, 2), v
    (1.99, 'violation')
    """
    if claimed is None:
        return epsilon_lower_bound(tp, fn, fp, tn, delta=0.0, confidence=confidence, details=details), verdict_of(None)
    result = ClopperPearson().certify(EventCounts(tp, fn, fp, tn), claimed, confidence=confidence)
    return replace(result.bound, details=dict(details or {})), verdict_of(result.violation)


@dataclass(frozen=True, repr=False)
class AttackResult:
    """Base of the attack results: what the run certified and what the release claimed.

    Attributes
    ----------
    bound : EpsilonBound
        The empirical epsilon lower bound that the attack's true and false positives certify.
    claimed : PointClaim or None
        What the release promises (``None`` when its mechanism makes no claim).
    verdict : str
        ``"violation"`` (bound above the claim), ``"no violation found"`` or ``"no claim"``.
    seed : int
        The seed entropy: passing it as ``rng`` repeats the run.
    details : dict
        Free-form extras, copied into :meth:`to_dict`.
    """

    attack: ClassVar[str] = ""  # the "attack" entry of to_dict(); set by each subclass

    _: KW_ONLY
    bound: EpsilonBound
    claimed: PointClaim | None
    verdict: str
    seed: int
    details: dict = field(default_factory=dict)

    @property
    def epsilon_lower_bound(self) -> float:
        return self.bound.epsilon_lower_bound

    def summary(self) -> str:
        """A few lines for people: the verdict and bound with its confidence, the claim, the counts behind it."""
        b, claimed = self.bound, self.claimed
        claim = ("no claim" if claimed is None else f"claimed epsilon = {claimed.point_epsilon:g}"
                 + (f", delta = {claimed.point_delta:g}" if claimed.point_delta else ""))
        return "\n".join([
            f"attack      {self.attack}",
            f"verdict     {str(self.verdict).upper()}: epsilon >= {b.epsilon_lower_bound:.4f} with "
            f"{format_confidence(b.confidence)} confidence; {claim}",
            f"counts      {b.tp} of {b.tp + b.fn} runs on D and {b.fp} of {b.fp + b.tn} on D' guessed D "
            f"(ceiling {b.ceiling:.3f}, the most these counts could certify)",
            f"seed        {self.seed}",
        ])

    def _own_fields(self) -> list[str]:
        return [f.name for f in fields(self) if not f.kw_only]

    def __repr__(self) -> str:
        shown = [f.name for f in fields(self) if f.repr]
        names = [n for n in shown if n in self._own_fields()] + [n for n in shown if n not in self._own_fields()]
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"

    def to_dict(self) -> dict:
        """A JSON-ready dict: the attack's name, its own fields (tuples as lists), then bound and claim (also nested)."""
        out: dict = {"attack": self.attack}
        for name in self._own_fields():
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        claimed = self.claimed
        # The nested claim is the point's three numbers (not PointClaim.to_dict's spec and kind): the attacks' JSON.
        point = None if claimed is None else {"epsilon": claimed.point_epsilon, "delta": claimed.point_delta,
                                              "neighbouring": claimed.neighbouring.value}
        out.update(
            epsilon_lower_bound=self.epsilon_lower_bound,
            claimed_epsilon=None if point is None else point["epsilon"],
            claimed_delta=None if point is None else point["delta"],
            verdict=self.verdict,
            seed=self.seed,
            bound=self.bound.to_dict(),
            claimed=point,
            details=dict(self.details),
        )
        return out
