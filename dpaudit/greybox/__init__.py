"""Grey-box audits: record the target's randomness on D, replay it coupled on D', bracket the pair's epsilon.

* :mod:`~dpaudit.greybox.tape`: the recording/replaying generator handed to the target as ``rng``;
* :mod:`~dpaudit.greybox.hooks`: library primitives (diffprivlib's mechanisms) taped at mechanism level;
* :mod:`~dpaudit.greybox.coupling`: how a neighbour's draw is coupled, and what it costs (dp-accounting);
* :mod:`~dpaudit.greybox.align`: one trace, its alignment and findings;
* :mod:`~dpaudit.greybox.analysis`: many traces, the upper bound;
* :mod:`~dpaudit.greybox.audit`: the grey-box audit beside the black-box one, and the verdict.
"""

from .analysis import DEFAULT_TRACES, FINDING_KINDS, GreyBoxResult, analyse
from .tape import GreyBoxError, TapedGenerator

__all__ = ["analyse", "GreyBoxResult", "GreyBoxError", "TapedGenerator", "FINDING_KINDS", "DEFAULT_TRACES"]
