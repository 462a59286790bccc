"""The grey-box block of an audit's human summary: the bracket, the findings, the witness audits.

Self-contained: :meth:`dpaudit.auditor.report.AuditReport.summary` calls :func:`grey_box_lines` once and
appends what it returns (nothing for a black-box audit).
"""

from __future__ import annotations

__all__ = ["grey_box_lines", "bracket_text"]


def bracket_text(lower: float, upper, exact: bool, bound) -> str:
    """``"0.99 <= epsilon <= 1.00 on this pair"`` (``=`` when exact; no upper side without a bound)."""
    if upper is None:
        return f"{lower:.4g} <= epsilon on this pair (no grey-box upper bound)"
    up = "inf" if upper == float("inf") else f"{float(upper):.4g}"
    if exact:
        return f"{lower:.4g} <= epsilon = {up} on this pair (exact)"
    if bound == "per-trace":
        return f"{lower:.4g} <= epsilon on this pair; the alignment's largest per-trace cost is {up} (not a bound)"
    return f"{lower:.4g} <= epsilon <= {up} on this pair"


def grey_box_lines(report) -> list[str]:
    """Summary lines for ``report.grey_box`` (a dict), or [] when the audit was black-box only."""
    gb = getattr(report, "grey_box", None)
    if not gb:
        return []
    upper = float("inf") if gb.get("infinite") else gb.get("epsilon_upper_bound")
    # The coupling reads the mathematics (exact primitives): its bracket's lower side is the distribution's bound;
    # a floating-point leak above it is the implementation's, shown beside it, not inside the bracket.
    dist = getattr(report, "distribution_epsilon_lower_bound", None)
    lower = report.epsilon_lower_bound if dist is None else dist
    lines = [f"grey-box    {bracket_text(lower, upper, gb.get('exact'), gb.get('bound'))}"
             f" at delta = {gb.get('claimed_delta', 0):g}; {gb.get('traces')} traces"]
    if lower < report.epsilon_lower_bound:
        lines.append(f"            the floating-point test certifies {report.epsilon_lower_bound:.4g}: a leak of the "
                     "implementation, outside the mathematics the coupling reads")
    if report.violation and report.violation_source:
        lines.append(f"            violation from the {report.violation_source} "
                     + ("exact value" if report.violation_source == "grey-box" else "certified lower bound"))
    lines.append(f"            {gb.get('explanation', '')}")
    for f in gb.get("findings", []):
        lines.append(f"finding     {f['kind']}: {f['detail']} ({f['traces']} of {gb.get('traces')} traces)")
    for w in gb.get("witness_audits", []):
        lines.append(f"witness     coordinates {w['coordinates']} ({', '.join(w['kinds'])}): black-box epsilon >= "
                     f"{w['epsilon_lower_bound']:.4g} ({w['verdict']})")
    return lines
