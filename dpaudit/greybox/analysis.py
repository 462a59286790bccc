"""Many traces of one pair: findings, the measured sensitivity, and the alignment's upper bound on epsilon.

:func:`analyse` runs ``traces`` traces (:func:`dpaudit.greybox.align.run_trace`) and returns a
:class:`GreyBoxResult`.  The upper bound is the coupling's privacy loss at the claimed delta
(:func:`dpaudit.greybox.coupling.pair_epsilon`), the largest over the traces.  It is a bound
(``bound == "bound"``) when every trace was aligned with the same costs: the coupling argument
(the neighbour's release is a function of the shifted draws, so by post-processing its loss is at
most theirs) then holds for the draws seen, and it holds for the mechanism when all randomness went
through the tape and the primitives sample their distributions exactly.  When the costs differ
between traces the alignment depends on the draws (data-dependent control flow, as in the sparse
vector technique): the largest is reported as ``"per-trace"``, not a bound.  When a trace could not
be aligned there is no bound (None).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from .._progress import progress_bar
from .align import one_to_one, run_trace
from .coupling import CostUnknown, cost_key, is_tight, pair_epsilon, uses_pld, worst_units
from .tape import GreyBoxError, watch_from_start

__all__ = ["GreyBoxResult", "analyse", "FINDING_KINDS", "DEFAULT_TRACES"]

FINDING_KINDS = ("control-flow", "data-dependent-noise", "sensitivity", "leak-outside-noise")
#: Traces of a grey-box audit unless ``traces`` says otherwise.
DEFAULT_TRACES = 1000
#: Distinct alignment costs evaluated at most (per-trace values, when the costs differ between traces).
MAX_COSTS = 20


@dataclass(frozen=True)
class GreyBoxResult:
    """What the traces of one pair showed; ``to_dict()`` is the JSON's ``grey_box`` object.

    ``findings``: dicts with ``kind``, ``detail`` (a sentence with the witness), ``coordinates``
    (release coordinates that witness it, or None for the whole release) and ``traces`` (how many
    traces showed it).  ``epsilon_upper_bound`` is None when no trace-independent coupling was found.
    """

    traces: int
    findings: list
    epsilon_upper_bound: float | None
    exact: bool
    bound: str | None
    claimed_delta: float
    explanation: str
    declared_sensitivity: float | None = None
    measured_sensitivity: dict = field(default_factory=dict)
    draws_per_trace: int = 0
    library_hooks: bool = False
    #: True when the bound is a closed form (pure DP, or Gaussian shifts alone), False when a PLD composed it.
    closed_form: bool = True
    #: Black-box audits of findings' witnesses (added by :func:`dpaudit.greybox.audit.audit_grey_box`).
    witness_audits: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """The JSON form: an infinite upper bound (Gaussian noise at delta 0) is null with ``"infinite": true``."""
        out = asdict(self)
        upper = out["epsilon_upper_bound"]
        out["infinite"] = upper is not None and not math.isfinite(upper)
        if out["infinite"]:
            out["epsilon_upper_bound"] = None
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "GreyBoxResult":
        d = dict(d)
        if d.pop("infinite", False):
            d["epsilon_upper_bound"] = math.inf
        return cls(**d)


def analyse(fn, dataset, neighbor, *, traces: int = DEFAULT_TRACES, delta: float = 0.0,
            sensitivity: float | None = None, seed: int | np.random.SeedSequence = 0,
            name: str = "target", progress: bool | None = False) -> GreyBoxResult:
    """Run ``traces`` traces of ``fn`` (called ``fn(data, rng=...)``) on the pair and summarise them.

    ``progress``: a bar on stderr (None: when stderr is a terminal), counted in traces.

    Examples
    --------
    >>> import numpy as np
    >>> def noisy_sum(data, rng):
    ...     return float(np.clip(np.sum(data), 0, 1)) + rng.laplace(0.0, 1.0)
    >>> r = analyse(noisy_sum, [1.0], [0.0], traces=50, sensitivity=1.0, seed=1)
    >>> round(r.epsilon_upper_bound, 9), r.exact, r.bound, r.findings
    (1.0, True, 'bound', [])
    """
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    probes: dict = {}
    found: dict = {}
    costs: dict = {}
    no_bound = ""
    all_exact, n_draws, hooked = True, 0, False
    l1 = l2 = 0.0
    why_not_exact = ""
    points: dict = {}
    watch_from_start()
    _check_closed(fn, dataset, root, name)
    bar = progress_bar(total=traces, desc="grey-box traces", enabled=progress)
    for i, child in enumerate(root.spawn(traces)):
        tr = run_trace(fn, dataset, neighbor, child, probes=probes, name=name)
        bar.update(1)
        n_draws, hooked = max(n_draws, tr.n_draws), hooked or tr.hooked
        for kind, detail, coords in tr.findings:
            _note(found, kind, detail, coords)
        l1, l2 = max(l1, tr.moved_l1), max(l2, tr.moved_l2)
        _sensitivity(found, tr, sensitivity)
        all_exact = all_exact and tr.exact
        why_not_exact = why_not_exact or tr.why_not_exact
        for key, x, y in tr.points:
            xs, ys = points.setdefault(key, ([], []))
            xs.append(x)
            ys.append(y)
        if not tr.aligned:
            no_bound = no_bound or "a trace could not be aligned (see the findings)"
            continue
        try:
            key, units = cost_key(tr.events)
        except CostUnknown as exc:
            no_bound = no_bound or f"no privacy loss distribution for {exc}"
            continue
        costs[key] = units if key not in costs else worst_units(costs[key], units)
    bar.close()
    findings = [{"kind": k, "detail": v["detail"], "coordinates": v["coordinates"], "traces": v["traces"]}
                for k in FINDING_KINDS for v in found.get(k, [])]
    if len(costs) > MAX_COSTS:  # per-trace values only: the largest shifts first, and not all of them
        ranked = sorted(costs, key=lambda k: -sum(abs(x) for u in costs[k] for x in u[1:] if isinstance(x, float)))
        costs_shown = {k: costs[k] for k in ranked[:MAX_COSTS]}
    else:
        costs_shown = costs
    eps_cache = {key: pair_epsilon(units, delta) for key, units in costs_shown.items()}
    upper = bound = None
    if no_bound:
        explanation = f"no upper bound: {no_bound}"
    elif len(costs) == 1:
        upper, bound = next(iter(eps_cache.values())), "bound"
        explanation = ("every trace was aligned with the same shifts: the upper bound holds when all randomness "
                       "went through the rng and its primitives are exact")
    else:
        upper, bound = max(eps_cache.values()), "per-trace"
        explanation = (f"the alignment's cost differs between traces ({len(costs)} different costs): the largest "
                       "per-trace value is shown, and it is not a bound (the shifts depend on the draws)")
    if bound == "bound" and not all(is_tight(units, delta) for units in costs.values()):
        all_exact = False
        why_not_exact = why_not_exact or ("a declared distribution's privacy loss is bounded, not computed exactly "
                                          "(its normaliser has no closed form, or it is composed with other noise)")
    if bound == "bound" and all_exact:
        for (_, draw, _, j, family, size), (xs, ys) in points.items():
            if not one_to_one(family, size, xs, ys):
                all_exact = False
                why_not_exact = (f"release coordinate {j} is not one-to-one in draw #{draw + 1} ({family}) across the "
                                 "traces (a fold, a wrap or a clamp): the release does not determine the draw")
                break
    exact = bool(bound == "bound" and all_exact)
    if bound == "bound" and not exact and why_not_exact:
        explanation += f"; not exact: {why_not_exact}"
    elif exact:
        explanation += "; exact: the release determines the aligned draws, so it is this pair's epsilon"
    return GreyBoxResult(
        traces=traces, findings=findings, epsilon_upper_bound=None if upper is None else float(upper), exact=exact,
        bound=bound, claimed_delta=float(delta), explanation=explanation, declared_sensitivity=sensitivity,
        measured_sensitivity={"l1_laplace": l1, "l2_gaussian": l2}, draws_per_trace=n_draws,
        library_hooks=hooked, closed_form=not any(uses_pld(k, delta) for k in costs))


def _check_closed(fn, dataset, root: np.random.SeedSequence, name: str) -> None:
    """Refuse a target whose randomness is not all in the record: two runs on the same recorded draws that
    release different values, or draws that are only seeds for another generator (numba's, a library's)."""
    from .align import call_taped
    from .coupling import close
    from .tape import Recorder

    seed = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 2**31))
    runs = []
    for _ in range(2):
        rec = Recorder(np.random.default_rng(seed))
        runs.append((call_taped(fn, dataset, rec, rec.generator, name), rec.draws))
    (a, draws), (b, _) = runs
    if a.shape != b.shape or not np.all(close(a, b)):
        raise GreyBoxError(f"target {name!r} released different values from the same recorded draws: it draws "
                           "randomness outside the rng it is handed, which cannot be recorded, so no grey-box audit")
    if draws and all(d.family == "seed" for d in draws) and not any(d.meta.get("hooked") for d in draws):
        raise GreyBoxError(f"target {name!r} draws only seeds from its rng ({draws[0].describe()}): its noise comes "
                           "from another generator, which cannot be recorded, so no grey-box audit")


def _note(found: dict, kind: str, detail: str, coords) -> None:
    """Keep the first detail of each (kind, witness); count the traces that showed it."""
    entries = found.setdefault(kind, [])
    key = None if coords is None else tuple(coords)
    for e in entries:
        if e["key"] == key:
            e["traces"] += 1
            return
    if len(entries) < 5:
        entries.append({"key": key, "detail": detail, "coordinates": None if coords is None else list(coords),
                        "traces": 1})


def _sensitivity(found: dict, tr, declared: float | None) -> None:
    tol = 1e-9
    for draw, moved, own in tr.hooked_moves:
        if moved > own * (1 + tol) + 1e-12:
            coords = _coords(tr, [(draw.index, 0)])
            _note(found, "sensitivity", f"{draw.method}: the value entering it moves by {moved:.6g} between D and "
                                        f"the neighbour; it declares sensitivity {own:g}", coords)
    if declared is None:
        return
    for norm, moved, family in (("L1", tr.moved_l1, "Laplace"), ("L2", tr.moved_l2, "Gaussian")):
        if moved > declared * (1 + tol) + 1e-12:
            coords = _coords(tr, tr.moved_elements)
            _note(found, "sensitivity", f"the {family} noise's locations move by {moved:.6g} ({norm}) between D "
                                        f"and the neighbour; the declared sensitivity is {declared:g}", coords)


def _coords(tr, elements) -> list | None:
    out = sorted({j for key in elements for j in tr.witness_of.get(key, [])})
    return out or None


def check_rng(target) -> None:
    """A grey-box audit needs the target to draw from what dpaudit hands it."""
    if not getattr(target, "accepts_rng", False):
        native = " (OpenDP draws its noise in its native library)" if str(target.name).startswith("opendp.") else ""
        raise GreyBoxError(f"grey_box: target {target.name!r} takes no rng keyword{native}, so its randomness cannot "
                           "be recorded and replayed (audit it black-box: without grey_box, or with grey_box='auto')")
