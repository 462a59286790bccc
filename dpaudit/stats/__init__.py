"""The statistics core: counts and scores in, epsilon lower bounds with stated confidence out."""

from .bayes import PosteriorInterval, posterior_interval
from .bounds import EpsilonBound, ceiling, epsilon_bounds_array, epsilon_lower_bound, log_ratio_bound
from .clopper_pearson import clopper_pearson_interval, cp_lower, cp_upper
from .certificate import (
    CERTIFICATES,
    Certificate,
    CertificateResult,
    ClopperPearson,
    EventCounts,
    GaussianDP,
    IntervalCertificate,
    PoissonConditional,
    certificate_for,
    register_certificate,
)
from .curves import CurveCertificate, CurveTest, certified_curve, curve_test
from .one_run import guess_counts, guess_grid, one_run_ceiling, one_run_epsilon_bound, one_run_p_value
from .estimators import (
    ESTIMATORS,
    ClopperPearsonEstimator,
    Estimator,
    GaussianDPEstimator,
    HeldOutCounts,
    make_estimator,
)
from .gdp import gaussian_delta, gaussian_epsilon, mu_from_rates
from .profile import DEFAULT_DELTAS, GDPBound, PrivacyProfile, empirical_roc, gdp_mu_lower_bound, privacy_profile
from .sequential import (
    STOPPING_REASONS,
    RoundBound,
    RoundSchedule,
    SequentialBound,
    reachable_bound,
    round_schedule,
)
from .verdict import StoppingReason, Verdict, any_violation, verdict_of
from .selection import ThresholdEvent, bound_from_scores, select_threshold, split_scores, threshold_candidates

__all__ = [
    "Verdict",
    "StoppingReason",
    "verdict_of",
    "any_violation",
    "PosteriorInterval",
    "posterior_interval",
    "EpsilonBound",
    "ceiling",
    "epsilon_bounds_array",
    "epsilon_lower_bound",
    "log_ratio_bound",
    "clopper_pearson_interval",
    "cp_lower",
    "cp_upper",
    "CurveCertificate",
    "Certificate",
    "CertificateResult",
    "CERTIFICATES",
    "ClopperPearson",
    "EventCounts",
    "GaussianDP",
    "IntervalCertificate",
    "PoissonConditional",
    "certificate_for",
    "register_certificate",
    "one_run_p_value",
    "one_run_epsilon_bound",
    "one_run_ceiling",
    "guess_counts",
    "guess_grid",
    "CurveTest",
    "certified_curve",
    "curve_test",
    "ESTIMATORS",
    "Estimator",
    "ClopperPearsonEstimator",
    "GaussianDPEstimator",
    "HeldOutCounts",
    "make_estimator",
    "mu_from_rates",
    "DEFAULT_DELTAS",
    "GDPBound",
    "PrivacyProfile",
    "empirical_roc",
    "gaussian_delta",
    "gaussian_epsilon",
    "gdp_mu_lower_bound",
    "privacy_profile",
    "STOPPING_REASONS",
    "RoundBound",
    "RoundSchedule",
    "SequentialBound",
    "reachable_bound",
    "round_schedule",
    "ThresholdEvent",
    "bound_from_scores",
    "select_threshold",
    "split_scores",
    "threshold_candidates",
]
