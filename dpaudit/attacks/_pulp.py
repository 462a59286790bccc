"""One way to create a pulp variable on every pulp the package supports.

pulp 3.3 deprecates the ``LpVariable(name, ...)`` constructor in favour of
``prob.add_variable(name, ...)``, which pulp 2.8 does not have; both build the
same variable.
"""

from __future__ import annotations

__all__ = ["add_variable"]


def add_variable(prob, name: str, low: float | None = None, up: float | None = None, cat: str = "Continuous"):
    """A variable of ``prob`` named ``name`` with bounds ``[low, up]`` and category ``cat``: through
    ``prob.add_variable`` where pulp has it, else through ``pulp.LpVariable``, so that neither pulp
    warns.

    >>> import pulp
    >>> v = add_variable(pulp.LpProblem("p", pulp.LpMinimize), "x", 0, 1, cat="Binary")
    >>> v.name, v.lowBound, v.upBound, v.cat
    ('x', 0, 1, 'Integer')
    """
    if hasattr(prob, "add_variable"):
        return prob.add_variable(name, low, up, cat=cat)
    import pulp

    return pulp.LpVariable(name, low, up, cat=cat)
