"""Targets written the way a user would write them (a plain function of the dataset; see the README).

Used by the CLI tests through ``path/to/user_targets.py:name``.  Not a test module.
"""

import numpy as np


def laplace_vec(dataset, size=None, rng=None):
    """A correct Laplace count: sensitivity 1, scale 1, epsilon 1."""
    rng = rng or np.random.default_rng()
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)


def laplace_one(dataset, rng=None):
    """The same mechanism, one release per call (no ``size``)."""
    rng = rng or np.random.default_rng()
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0)


def laplace_unseeded(dataset, size=None):
    """Neither reproducible nor seedable: draws from its own generator."""
    return float(np.sum(dataset)) + np.random.default_rng().laplace(0.0, 1.0, size=size)


def weak_laplace(dataset, size=None, rng=None):
    """Claims epsilon 0.5 in the tests but adds scale-1 noise: true epsilon 1."""
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)


def coin(dataset, size=None, rng=None):
    """Randomized response on the first record (truth w.p. 1/2, else a fair coin): epsilon ln 3, integer output."""
    n = 1 if size is None else size
    truth = rng.random(n) < 0.5
    out = np.where(truth, int(dataset[0]), rng.integers(0, 2, n))
    return int(out[0]) if size is None else out


def histogram(dataset, size=None, rng=None):
    """A 4-bin Laplace histogram (vector output), epsilon 1 for add/remove."""
    h = np.bincount(np.asarray(dataset, dtype=int), minlength=4).astype(float)
    shape = (4,) if size is None else (size, 4)
    return h + rng.laplace(0.0, 1.0, size=shape)


def boolean_release(dataset, size=None, rng=None):
    """A bool output: reports whether a noisy count exceeds 0.5."""
    x = float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)
    return x > 0.5


def constant(dataset, size=None, rng=None):
    """Leaks nothing: any bound must be 0."""
    return np.zeros(size) if size is not None else 0.0


def raises(dataset, size=None, rng=None):
    raise RuntimeError("boom")


def returns_nan(dataset, size=None, rng=None):
    out = rng.laplace(size=size)
    out[3] = np.nan
    return out


def mutates(dataset, size=None, rng=None):
    dataset[0] = 99
    return rng.laplace(size=size)


NOT_CALLABLE = 3


def hangs(dataset, size=None, rng=None):
    import time

    time.sleep(120)
    return rng.laplace(size=size)


def returns_inf(dataset, size=None, rng=None):
    out = rng.laplace(size=size)
    out[-1] = np.inf
    return out


_calls = {"n": 0}


def changes_shape(dataset, size=None, rng=None):
    _calls["n"] += 1
    k = 1 if _calls["n"] == 1 else 2
    return rng.laplace(size=(size, k))


def returns_text(dataset, size=None, rng=None):
    return ["yes"] * size


# Gross flaws, written the way they happen (used by the sequential-audit tests and
# benchmarks/bench_sequential_audit.py).  Each comment gives the claim, the pair and the true epsilon.


def unclipped_sum(dataset, size=None, rng=None):
    """Claims epsilon 1 for records in [0, 1] (Laplace scale 1) but never clips.

    On D = [0.5, 1, 5], D' = [0.5, 1] (add/remove) the sums differ by 5: true epsilon 5.
    """
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0, size=size)


def rr_wrong_probability(dataset, size=None, rng=None, epsilon=1.0):
    """Randomized response on the first bit that claims ``epsilon`` but mixes two recipes.

    The correct rule answers truthfully with probability e^eps / (1 + e^eps), or truthfully with
    probability (e^eps - 1) / (e^eps + 1) and otherwise with a fair coin.  This one takes the first
    probability and then adds the coin: P(1 | bit 1) / P(1 | bit 0) = (1 + p) / (1 - p) with
    p = e / (1 + e), so the true epsilon is ln 6.44 = 1.86 for a claim of 1.
    """
    n = 1 if size is None else size
    p = np.exp(epsilon) / (1.0 + np.exp(epsilon))
    truth = rng.random(n) < p
    out = np.where(truth, int(dataset[0]), rng.integers(0, 2, n))
    return int(out[0]) if size is None else out


def laplace_scale_epsilon(dataset, size=None, rng=None, epsilon=0.5):
    """A count with Laplace noise of scale ``epsilon`` instead of 1 / epsilon.

    Claimed epsilon 0.5 (sensitivity 1): the noise scale is 0.5, so the true epsilon is 2.
    """
    return float(np.sum(dataset)) + rng.laplace(0.0, epsilon, size=size)


def slow_unclipped_sum(dataset, rng=None):
    """The unclipped sum above, one release per call and 1 ms per call (a slow library call)."""
    import time

    time.sleep(0.001)
    return float(np.sum(dataset)) + rng.laplace(0.0, 1.0)


#: The gross flaws: (target name, dataset, neighbour, claimed epsilon, true epsilon).
GROSS = {
    "unclipped_sum": ([0.5, 1.0, 5.0], [0.5, 1.0], 1.0, 5.0),
    "rr_wrong_probability": ([1], [0], 1.0, float(np.log((1 + np.e / (1 + np.e)) / (1 - np.e / (1 + np.e))))),
    "laplace_scale_epsilon": ([1], [0], 0.5, 2.0),
}


def unary_encoding_kept_bit(dataset, rng=None):
    """Unary encoding over a domain of 4 that keeps the true bit too often: claimed epsilon 1, true ln(5.52) = 1.71.

    Symmetric unary encoding at epsilon 1 reports each bit 1 with probability
    q = 1 / (1 + e^0.5) = 0.378 when it is 0 and p = 1 - q = 0.622 when it is
    1; this client keeps the true bit with probability 0.77 instead, the kind
    of slip a library's perturbation step makes.  One release per call, as a
    wrapped library client is.
    """
    rng = np.random.default_rng(rng)
    v = int(np.asarray(dataset).ravel()[0])
    bits = (rng.random(4) < 1.0 / (1.0 + np.exp(0.5))).astype(np.int64)
    bits[v] = rng.random() < 0.77
    return bits
