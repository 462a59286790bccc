"""The Bayesian reading of a privacy level (Kasiviswanathan and Smith 2014; Dwork and Roth 2014, section 2.3).

An attacker who believes "the target is in / has the secret" with prior
probability ``prior`` and sees the output of an epsilon-DP mechanism can move
that belief only within a band: the posterior odds differ from the prior odds
by a factor of at most e^epsilon either way.  With epsilon = ln 3, a 50% prior
moves to at most 75% (and to no less than 25%).

With delta > 0 the band holds only outside an event of probability about delta
(no bound holds on every output), and the most an attacker can gain is
bounded instead: a guess between D and D' with equal priors is right with
probability at most (e^eps + delta) / (1 + e^eps) (the hypothesis-testing form
of Kairouz et al. 2015).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .._validation import check_delta, check_epsilon, check_probability

__all__ = ["PosteriorInterval", "posterior_interval", "format_confidence", "format_percent"]


@dataclass(frozen=True)
class PosteriorInterval:
    """Where a prior belief can move to under (epsilon, delta)-DP."""

    prior: float
    epsilon: float
    delta: float
    low: float
    high: float
    max_guess_accuracy: float

    def sentence(self) -> str:
        """One plain sentence for reports.

        >>> print(posterior_interval(math.log(3)).sentence())
        At epsilon = 1.1, an attacker who gave 50% to the target's secret before seeing the output can end with at most 75% (and no less than 25%).
        """
        txt = (f"At epsilon = {self.epsilon:.2g}, an attacker who gave {format_percent(self.prior)} to the target's secret "
               f"before seeing the output can end with at most {format_percent(self.high)} (and no less than {format_percent(self.low)})")
        if self.delta > 0:
            txt += f", except with probability about delta = {self.delta:.2g}"
        return txt + "."

    def to_dict(self) -> dict:
        return asdict(self)


def format_percent(p: float) -> str:
    """A probability as a short percentage for people.

    >>> format_percent(0.75), format_percent(0.99999)
    ('75%', '>99.99%')
    """
    if p >= 0.9999 and p < 1:
        return ">99.99%"
    s = f"{100 * p:.2f}".rstrip("0").rstrip(".")
    return s + "%"


def format_confidence(c: float) -> str:
    """A confidence level as a percentage with every digit it was given: ``{:.0%}`` would write 0.999 as
    "100%", a certainty no audit has.

    >>> format_confidence(0.95), format_confidence(0.999), format_confidence(0.999999)
    ('95%', '99.9%', '99.9999%')
    """
    return f"{100 * c:.10g}%"


def posterior_interval(epsilon, *, prior=0.5, delta=0.0) -> PosteriorInterval:
    """The interval a ``prior`` belief can move to under (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Privacy level (for instance an audit's lower bound, to say what the
        mechanism is known to allow *at least*).
    prior : float in [0, 1]
        The attacker's belief before seeing the output.
    delta : float
        See the module docstring.

    Examples
    --------
    Randomized response with p = 1/2 (epsilon = ln 3; Dwork and Roth 2014, section 3.2):

    >>> r = posterior_interval(math.log(3))
    >>> round(r.low, 6), round(r.high, 6)
    (0.25, 0.75)
    >>> round(posterior_interval(0.0, prior=0.3).high, 6)
    0.3
    """
    epsilon = check_epsilon(epsilon)
    prior = check_probability(prior, "prior")
    delta = check_delta(delta)
    # Written as 1 / (1 + odds * e^(+-eps)) and 1 - (1 - delta) / (1 + e^eps):
    # each step is a monotone floating-point operation, so the results are
    # monotone in epsilon even where they round to 1 (the direct forms
    # p e / (p e + 1 - p) and (e + delta) / (1 + e) are not, found by a
    # property test at epsilon ~ 37).
    e = math.exp(min(epsilon, 700.0))
    if prior <= 0:
        low = high = 0.0
    elif prior >= 1:
        low = high = 1.0
    else:
        odds_against = (1.0 - prior) / prior
        high = 1.0 / (1.0 + odds_against * math.exp(-min(epsilon, 700.0)))
        low = 1.0 / (1.0 + odds_against * e)
    accuracy = 1.0 - (1.0 - delta) / (1.0 + e)
    return PosteriorInterval(prior, epsilon, delta, low, high, accuracy)
