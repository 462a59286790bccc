"""The human summary of an audit report: the verdict, then one block per test, each line under the test it is about.

An audit may certify with two tests at once: the *distribution test* (the
chosen distinguisher's event, the bound a real-number mechanism is held to)
and the *floating-point test* (an event on the bits of the releases).  The
headline is the larger; each test's event, rates, ceiling and bound are shown
in that test's own block, and the rates are those of the event that gave the
block's bound (the chosen event or its complement, whichever the certified
inequality reads), so that the two rates' interval ends give the bound.
Nothing here computes a statistic: it reads the report's parts (:mod:`dpaudit.auditor.report_parts`).
"""

from __future__ import annotations

import math

from ..stats.bayes import format_confidence
from ..greybox.render import grey_box_lines
from ._score_lines import score_metric_lines

__all__ = ["summary_lines", "certified_event", "KEEP_DRAWING_HINT"]

#: How to get a tighter bound after a sequential audit stopped on its first certain violation.
KEEP_DRAWING_HINT = "--keep-drawing (keep_drawing=True)"

_INDENT = "            "


def summary_lines(r) -> list[str]:
    """The summary of report ``r`` (an :class:`~dpaudit.auditor.AuditReport`), line by line."""
    subject, cert, claimed = r.subject, r.certified, r.claimed
    lines = [
        f"target      {subject.target} ({'seeded' if subject.seeded else 'UNSEEDED: not reproducible'}; "
        f"{subject.output_kind} output)",
        f"verdict     {r.verdict.upper()}: epsilon >= {cert.epsilon_lower_bound:.4f} with "
        f"{format_confidence(cert.confidence)} confidence; claimed epsilon = {claimed.claimed_epsilon:g}"
        + (f", delta = {claimed.claimed_delta:g}" if claimed.claimed_delta else ""),
    ]
    lines += _claim_lines(r)
    blocks = _test_blocks(r)
    if len(blocks) > 1:
        first, second = blocks[0][0], blocks[1][0]
        lines.append(f"{_INDENT}from the {first} below; the {second} certifies {blocks[1][1]:.4f}")
    lines += _sample_lines(r)
    lines.append(f"meaning     {r.extras.explanation}")
    for _, _, block in blocks:
        lines += block
    lines += [f"note        {n}" for n in r.notes]
    lines += grey_box_lines(r)
    return lines


def _claim_lines(r) -> list[str]:
    c, bound = r.claimed, r.certified.epsilon_lower_bound
    if c.claim is None or not c.is_curve():
        if not r.violation or bound <= c.claimed_epsilon:  # a grey-box violation: its own block
            return []
        gap = bound - c.claimed_epsilon
        return [f"{_INDENT}the claim is exceeded by at least {gap:.4f} (a factor e^{gap:.3f} = "
                f"{math.exp(min(gap, 700.0)):.3g} in probability)"]
    cv = c.curve_violation
    if not cv:
        return [f"claim       {c.claim}: reported at delta = {c.claimed_delta:g} (the point of the curve the audit "
                "came closest to)"]
    points = cv.get("points_tested")
    head = f"claim       {c.claim}" + (f": every one of its {points} points tested at once" if points else "")
    certified = cv.get("certified_delta")
    if certified is None:  # a report written before the witness was recorded
        return [head, f"{_INDENT}exceeded at delta = {c.claimed_delta:g}"]
    factor = cv.get("delta_factor")
    times = f"{factor:.3g} times as much" if factor is not None else "where the claim allows none"
    return [head,
            f"{_INDENT}at epsilon = {c.claimed_epsilon:g} the claim allows delta = {c.claimed_delta:.4g}; the audit "
            f"certifies delta >= {certified:.4g} there, {times} (the crossing of largest factor in delta)"]


def _sample_lines(r) -> list[str]:
    s = r.sampling
    if s.sides_differ():
        return [f"samples     {s.samples_in} IN and {s.samples_out} OUT (fixed size)"]
    if s.anytime is not None:
        return [f"samples     {s.samples} per side seen in {s.rounds} looks of an anytime-valid audit "
                + (f"(budget {s.max_samples})" if s.max_samples is not None else "(until the stream ended)")
                + f"; stopped: {s.stop_text()}; the bound holds whenever it stops (e-value "
                f"{s.anytime['e_value']:.3g}, threshold {s.anytime['threshold']:.3g})"]
    if s.stopping_reason == "fixed":
        return [f"samples     {s.samples} per side (fixed size)"]
    lines = [f"samples     {s.samples} per side in {s.rounds} round{'s' * (s.rounds != 1)} of a sequential audit "
             f"(budget {s.max_samples}); stopped: {s.stop_text()}"]
    if s.stopping_reason == "violation":
        lines.append(f"{_INDENT}stopped once the violation was certain: the bound is what {s.samples} samples "
                     f"certify, not an estimate; {KEEP_DRAWING_HINT} draws on to the budget for a tighter one")
    return lines


def _sides(r) -> tuple[str, str]:
    return ("IN", "OUT") if r.sampling.samples_in is not None else ("D", "D'")


def _test_blocks(r) -> list[tuple[str, float, list[str]]]:
    """(name, bound, lines) of each test, the one that gave the headline first."""
    ev, cert, at = r.events, r.certified, r.claimed.at_text()
    if r.sampling.anytime is not None:  # events re-chosen along the way: shown, not certified one by one
        return [("anytime test", cert.epsilon_lower_bound,
                 [f"anytime test  {ev.attack} [e-process]: epsilon >= {cert.epsilon_lower_bound:.4f}{at}",
                  f"  bets      {ev.tpr:.4g} and {ev.fpr:.4g} of the {r.sampling.n_test} pairs bet on fell in the "
                  "events bet on (D's side first; each event chosen from earlier releases only)"])]
    fp = r.floating_point
    own_float = bool(fp) and fp["attack"] == ev.attack  # the float attack was asked for: it is the audit's test
    name = "floating-point test" if own_float else "distribution test"
    dist = cert.distribution_bound()
    held = r.sampling.held_out_text()
    rates_note = (f"({held})" if cert.certificate != "poisson-conditional" else
                  f"({ev.tp + ev.fn} and {ev.fp + ev.tn} held-out samples, a Poisson number per side: certified by "
                  "the exact conditional test of their ratio)")
    main = [f"{name}  {ev.attack} [{cert.estimator}]"
            + (", on the bit patterns the releases can take" if own_float else "") + f": epsilon >= {dist:.4f}{at}",
            *_event_lines(ev.counts(), _sides(r), rates_note),
            f"  ceiling   {cert.ceiling:.3f} (the most {held} could certify)",
            f"  GDP       mu >= {r.extras.gdp_mu_lower_bound:.4f}"
            + (" (the bound above is this mu's epsilon at the delta: it assumes a Gaussian trade-off curve)"
               if cert.estimator == "gdp" else ""),
            *score_metric_lines(r.extras, cert.confidence)]
    blocks = [(name, dist, main)]
    if fp and not own_float:
        blocks.append(("floating-point test", fp["epsilon_lower_bound"], _float_block(r, fp)))
        blocks.sort(key=lambda b: -b[1])  # stable: the distribution test first on a tie
    if len(blocks) > 1:
        top = blocks[0]
        blocks[0] = (top[0], top[1], [top[2][0] + " (the bound above)", *top[2][1:]])
    return blocks


def _float_block(r, fp) -> list[str]:
    head = (f"floating-point test  {fp['attack']}, on the bit patterns the releases can take: "
            f"epsilon >= {fp['epsilon_lower_bound']:.4f}{r.claimed.at_text()}")
    if "fn" not in fp:  # a report written before the float test's rates were recorded
        return [head, f"  event     {fp['event']}", f"  counts    {fp['tp']} on D, {fp['fp']} on D' "
                f"(of {fp['n_test']} held-out samples per side)", f"  ceiling   {fp['ceiling']:.3f}"]
    n0, n1 = fp["tp"] + fp["fn"], fp["fp"] + fp["tn"]
    held = f"{n0} held-out samples per side" if n0 == n1 else f"{n0} and {n1} held-out samples"
    note = (f"({held})" if fp.get("certificate") != "poisson-conditional" else
            f"({held}, a Poisson number per side: certified by the exact conditional test of their ratio)")
    return [head, *_event_lines(fp, _sides(r), note), f"  ceiling   {fp['ceiling']:.3f} (the most {held} could certify)"]


def certified_event(event: str, direction: str) -> tuple[str, bool]:
    """(the event whose ratio a bound certifies, whether it is the complement of ``event``).

    ``direction`` is a report's ``"D over D', event"`` / ``"D' over D, complement"``: the bound reads
    the chosen event, or its complement, whichever the certified inequality is about.

    >>> certified_event("score >= -1.5", "D' over D, complement")
    ('score < -1.5', True)
    >>> certified_event("score >= 2", "D over D', event")
    ('score >= 2', False)
    """
    if not direction.endswith("complement"):
        return event, False
    for op, neg in ((">= ", "< "), ("< ", ">= ")):
        if event.startswith("score " + op):
            return "score " + neg + event[len("score " + op):], True
    return f"not ({event})", True


def _event_lines(c: dict, sides: tuple[str, str], note: str) -> list[str]:
    """The event that gave the bound and its rate on each side, the likelier side first (its lower end over the
    other's upper end is the ratio the bound certifies)."""
    direction = c.get("direction") or "D over D', event"
    shown, complement = certified_event(c["event"], direction)
    n0, n1 = c["tp"] + c["fn"], c["fp"] + c["tn"]
    r0 = (c["fn"] if complement else c["tp"]) / max(n0, 1)
    r1 = (c["tn"] if complement else c["fp"]) / max(n1, 1)
    i0, i1 = list(c["tpr_interval"]), list(c["fpr_interval"])
    if complement:
        i0, i1 = [1.0 - i0[1], 1.0 - i0[0]], [1.0 - i1[1], 1.0 - i1[0]]
    d_first = direction.startswith("D over")
    rows = [(sides[0], r0, i0), (sides[1], r1, i1)]
    if not d_first:
        rows.reverse()
    likelier = rows[0][0]
    chosen = f"; the complement of the event chosen, {c['event']}" if complement else ""
    rates = ", ".join(f"on {side} {rate:.5g} in [{lo:.5g}, {hi:.5g}]" for side, rate, (lo, hi) in rows)
    return [f"  event     {shown} (likelier on {likelier}{chosen})", f"  rates     {rates} {note}"]
