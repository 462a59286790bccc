"""A grey-box audit: the traces' findings and upper bound beside a certified black-box lower bound.

:func:`audit_grey_box` is what ``dpaudit.audit(..., grey_box=True)`` runs:

1. the grey-box analysis of the pair (:func:`dpaudit.greybox.analysis.analyse`);
2. the black-box audit of the pair, and one black-box audit of each finding's *witness* (the release
   coordinates that show it, when they are not the whole release), the confidence shared among them
   (Bonferroni), so that every lower bound reported holds at once at the stated confidence;
3. the verdict: a violation when a certified lower bound exceeds the claim (``violation_source``
   ``"black-box"``), or when the upper bound is exact and exceeds it (``"grey-box"``).  A finding
   alone never makes a violation.

With ``fallback`` (``grey_box="auto"``), a target whose randomness cannot be recorded gets the black-box audit
alone, ``grey_box`` None and a note naming the reason, where the strict form stops with that reason.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._rng import as_seed_sequence, seed_entropy
from ..exceptions import ParameterValueError
from ..params import AUDIT_OPTIONS
from ..stats.verdict import verdict_of
from .analysis import analyse, check_rng
from .tape import GreyBoxError

__all__ = ["audit_grey_box", "MAX_WITNESS_AUDITS", "Projection"]

#: Black-box audits of witnesses at most (each takes a share of the failure probability).
MAX_WITNESS_AUDITS = 2
#: An exact upper bound from a closed form exceeds the claim when above it by more than this (relative):
#: float rounding of the shifts; a bound composed by dp-accounting's PLD carries its discretisation (1e-4).
CLOSED_FORM_TOLERANCE = 1e-6
PLD_TOLERANCE = 2e-3


class Projection:
    """The target's release restricted to some coordinates: a witness audited black-box.

    Post-processing, so a lower bound certified on it is one on the whole release.
    """

    def __init__(self, fn, coordinates, name: str):
        self.fn, self.coordinates, self.name = fn, list(coordinates), name

    def __call__(self, dataset, *, rng=None):
        out = np.atleast_1d(np.asarray(self.fn(dataset, rng=rng), dtype=float))
        picked = out[self.coordinates]
        return picked[0] if len(self.coordinates) == 1 else picked


class VectorisedProjection(Projection):
    def __call__(self, dataset, *, size=None, rng=None):
        if size is None:
            return super().__call__(dataset, rng=rng)
        out = np.asarray(self.fn(dataset, size=size, rng=rng), dtype=float).reshape(size, -1)
        picked = out[:, self.coordinates]
        return picked[:, 0] if len(self.coordinates) == 1 else picked


def audit_grey_box(run_audit, target, dataset=None, neighbor=None, *, resolve_pair, traces=1000, sensitivity=None,
                   fallback=False, **options):
    """``run_audit(target, dataset, neighbor, **options)`` (:func:`dpaudit.audit`) with the grey-box analysis.

    ``resolve_pair(target, dataset, neighbor)`` loads the pair (the audit's own rule: a built-in's stress pair
    when both are omitted).  Returns the black-box report (the one certifying most, when a witness was audited
    too) with ``grey_box`` (the analysis, as a dict) and ``violation_source`` filled in.  ``fallback``: a
    :class:`~dpaudit.greybox.GreyBoxError` (randomness that cannot be recorded) gives
    ``run_audit(target, dataset, neighbor, **options)`` with a note instead of the error.
    """
    from ..targets import load_target

    traces, sensitivity = AUDIT_OPTIONS.check({"traces": traces, "sensitivity": sensitivity}, "traces",
                                              "sensitivity")
    if options.get("claim") is not None:
        raise ParameterValueError("grey_box: the grey-box upper bound is computed at a point (epsilon, delta); give "
                                  "epsilon and delta rather than a claim curve")
    if options.get("epsilon") is None:
        raise ParameterValueError("epsilon is required (the claimed budget)")
    epsilon, delta, confidence = AUDIT_OPTIONS.check(options, "epsilon", "delta", "confidence")
    tgt = load_target(target)
    seed = options.get("seed")
    seed = seed_entropy(as_seed_sequence(seed)) if seed is None else seed
    declared = sensitivity if sensitivity is not None else _builtin_sensitivity(tgt)
    try:
        check_rng(tgt)
        d1, d2 = resolve_pair(tgt, dataset, neighbor)
        result = analyse(_call_with_rng(tgt), d1, d2, traces=traces, delta=delta, sensitivity=declared,
                         seed=np.random.SeedSequence([int(seed), 46]), name=str(tgt.name),
                         progress=None if options.get("progress") is None else options.get("progress") is True)
    except GreyBoxError as exc:
        if not fallback:
            raise
        report = run_audit(tgt, dataset, neighbor, **options)
        return report.with_values(notes=[*report.notes, f"grey-box: not possible, so this audit is black-box only "
                                                        f"(grey_box='auto'): {exc}"])
    size = np.atleast_1d(np.asarray(tgt(d1, rng=np.random.default_rng(0)), dtype=float)).size
    witnesses = _witnesses(result.findings, size)
    share = (1 - confidence) / (1 + len(witnesses))
    options = {**options, "seed": seed}
    main = run_audit(tgt, d1, d2, **{**options, "confidence": 1 - share})
    audits = []
    for k, (coords, kinds) in enumerate(witnesses):
        cls = VectorisedProjection if tgt.accepts_size else Projection
        proj = cls(tgt.fn, coords, f"{tgt.name}[{','.join(map(str, coords))}]")
        rep = run_audit(proj, d1, d2, **{**options, "seed": int(seed) + 1 + k, "confidence": 1 - share})
        audits.append((coords, kinds, rep))
    return _merge(main, audits, result, epsilon=epsilon, confidence=confidence, share=share)


def _call_with_rng(tgt):
    fn = tgt.fn

    def call(data, rng):
        return fn(data, rng=rng)

    return call


def _builtin_sensitivity(tgt) -> float | None:
    """A built-in mechanism's declared sensitivity (its ``sensitivity`` field), when it has one."""
    from ..mechanisms.base import BuiltinMechanism

    value = getattr(tgt.fn, "sensitivity", None)
    if isinstance(tgt.fn, BuiltinMechanism) and isinstance(value, (int, float)) and value > 0:
        return float(value)
    return None


def _witnesses(findings: list, size: int) -> list:
    """Distinct witness coordinate sets (not the whole release, which the main audit covers), with their kinds."""
    out: dict = {}
    for f in findings:
        coords = f.get("coordinates")
        if not coords or len(coords) >= size:
            continue
        out.setdefault(tuple(coords), []).append(f["kind"])
    return [(list(c), kinds) for c, kinds in list(out.items())[:MAX_WITNESS_AUDITS]]


def _merge(main, audits, result, *, epsilon, confidence, share):
    best = max([main] + [a[2] for a in audits], key=lambda r: r.epsilon_lower_bound)
    black = any(r.violation for r in [main] + [a[2] for a in audits])
    upper = result.epsilon_upper_bound
    tolerance = CLOSED_FORM_TOLERANCE if result.closed_form else PLD_TOLERANCE
    grey = bool(result.exact and upper is not None and upper > epsilon * (1 + tolerance) + 1e-12)
    witness = [{"coordinates": coords, "kinds": kinds, "epsilon_lower_bound": rep.epsilon_lower_bound,
                "verdict": rep.verdict, "samples": rep.samples} for coords, kinds, rep in audits]
    grey_box = replace(result, witness_audits=witness).to_dict()
    notes = list(best.notes)
    if audits:
        notes.append(f"grey-box: the pair's audit and {len(audits)} witness audit{'s' * (len(audits) > 1)} each "
                     f"certify at confidence {1 - share:.6g}, so all their bounds hold together at {confidence:g}")
    if best is not main:
        notes.append(f"the lower bound comes from the black-box audit of the witness {best.target} (release "
                     "coordinates a finding pointed at); a bound on part of the release bounds the whole")
    verdict = verdict_of(bool(black or grey))
    # A certified lower bound above the claim is the evidence that assumes least (the grey-box value assumes every
    # draw was recorded and the primitives are exact): it names the source when both hold, as the verdict rule says.
    source = "black-box" if black else ("grey-box" if grey else None)
    return best.with_values(verdict=verdict, confidence=confidence, grey_box=grey_box, violation_source=source,
                            target=main.target, notes=notes)
