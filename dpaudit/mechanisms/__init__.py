"""Mechanisms to audit: correct ones (the auditor must never cry wolf) and known-broken ones (it must catch them).

Every built-in is a frozen dataclass and a :class:`Mechanism`:
``m(dataset, *, size=None, rng=None)`` releases once, or ``size`` times stacked on
axis 0, fully vectorised.  Each carries its :class:`~dpaudit.claims.PointClaim`
(``.claim``), proposes the neighbouring pair that stresses it most
(``.neighbouring_pair()``), knows its true epsilon where known
(``.true_epsilon(delta)``; never an underestimate), says whether it is
``broken`` and gives the auditor an ``output_kind`` hint.

Examples
--------
>>> from dpaudit.mechanisms import get_mechanism
>>> m = get_mechanism("randomized_response", p=0.5)
>>> d, d2 = m.neighbouring_pair()
>>> m(d, size=5, rng=0).shape
(5,)
>>> [name for name, _, broken in list_mechanisms() if broken][:2]
['svt_lyu_alg3', 'svt_lyu_alg4']
"""

from .additive import GeometricMechanism, LaplaceMechanism, UnclippedSum
from .base import OUTPUT_KINDS, BuiltinMechanism, Mechanism, counting_queries, record_values
from .dpsgd import SubsampledGaussianSteps
from .floating_point import FloatLaplaceMironov
from .gaussian import AnalyticGaussianMechanism, GaussianMechanism, analytic_gaussian_sigma, gaussian_delta, gaussian_epsilon
from .histogram import HistogramReplaceOneBug, HistogramScaleBug, NoisyHistogram
from .noisy_max import NoisyMaxValueExponential, NoisyMaxValueLaplace
from .numerical_svt import NumericalSVT
from .parallel import LaplaceParallel, SVT34Parallel
from .prefix_sum import PrefixSum
from .randomized_response import RandomizedResponse, rr_debias, rr_epsilon
from .rappor import OneTimeRappor, Rappor
from .registry import REGISTRY, get_mechanism, list_mechanisms, register
from .selection import ExponentialMechanism, ReportNoisyMaxExponential, ReportNoisyMaxLaplace, ReportNoisyMaxWithValue
from .sparse_vector import SparseVector, SVTLyuAlg2, SVTLyuAlg3, SVTLyuAlg4, SVTLyuAlg5, SVTLyuAlg6
from .truncated_geometric import TruncatedGeometric
from .wrappers import Composed, PostProcessed, Subsampled, compose, postprocess, subsample

__all__ = [
    "Mechanism",
    "BuiltinMechanism",
    "OUTPUT_KINDS",
    "REGISTRY",
    "register",
    "get_mechanism",
    "list_mechanisms",
    "record_values",
    "counting_queries",
    "RandomizedResponse",
    "rr_debias",
    "rr_epsilon",
    "LaplaceMechanism",
    "GeometricMechanism",
    "GaussianMechanism",
    "AnalyticGaussianMechanism",
    "gaussian_delta",
    "gaussian_epsilon",
    "analytic_gaussian_sigma",
    "ExponentialMechanism",
    "ReportNoisyMaxLaplace",
    "ReportNoisyMaxExponential",
    "NoisyHistogram",
    "SparseVector",
    "SVTLyuAlg3",
    "SVTLyuAlg4",
    "SVTLyuAlg5",
    "SVTLyuAlg6",
    "ReportNoisyMaxWithValue",
    "HistogramReplaceOneBug",
    "UnclippedSum",
    "FloatLaplaceMironov",
    "SVTLyuAlg2",
    "NumericalSVT",
    "LaplaceParallel",
    "SVT34Parallel",
    "PrefixSum",
    "TruncatedGeometric",
    "Rappor",
    "OneTimeRappor",
    "NoisyMaxValueLaplace",
    "NoisyMaxValueExponential",
    "HistogramScaleBug",
    "Composed",
    "Subsampled",
    "PostProcessed",
    "compose",
    "subsample",
    "postprocess",
    "SubsampledGaussianSteps",
]
