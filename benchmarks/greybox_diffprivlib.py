"""Which of diffprivlib's mechanisms and tools a grey-box audit covers, and what it reports on one pair each.

``python benchmarks/greybox_diffprivlib.py [--traces N]``: every mechanism and tool of diffprivlib that takes a
``random_state`` (the library survey's catalogue entries, plus those the catalogue leaves out), each as a
``library_call`` target on a pair one record apart, analysed grey-box (``dpaudit.greybox.analyse``, seed 1):
refused (and why), or the upper bound, whether it is exact, and the findings.  The table goes to
docs/decisions/grey-box.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE)]

import numpy as np  # noqa: E402

from dpaudit.adapters import library_call, seeded_random_state  # noqa: E402
from dpaudit.adapters.diffprivlib import load_mechanisms  # noqa: E402
from dpaudit.greybox import GreyBoxError, analyse  # noqa: E402

TOOL_PAIR = ([0.0, 0.4, 1.0], [0.0, 0.4, 0.0])
SUM_PAIR = ([1.0, 1.0], [1.0, 0.0])


def cases():
    """(label, target, D, D', delta): tools on a replace-one pair, mechanisms on a sum moving by its sensitivity."""
    tool = {"epsilon": 1.0, "bounds": (0, 1)}
    for name in ("mean", "nanmean", "var", "nanvar", "std", "nanstd", "sum", "nansum", "median"):
        yield f"tools.{name}", library_call(f"diffprivlib.tools.{name}", params=tool), *TOOL_PAIR, 0.0
    yield "tools.quantile", library_call("diffprivlib.tools.quantile", params={**tool, "quant": 0.25}), *TOOL_PAIR, 0.0
    yield "tools.percentile", library_call("diffprivlib.tools.percentile", params={**tool, "percent": 90}), \
        *TOOL_PAIR, 0.0
    yield "tools.count_nonzero", library_call("diffprivlib.tools.count_nonzero", params={"epsilon": 1.0}), \
        *TOOL_PAIR, 0.0
    yield "tools.histogram", library_call("diffprivlib.tools.histogram", params={"epsilon": 1.0, "bins": 4,
                                                                                  "range": (0, 1)}, pick=0), \
        *TOOL_PAIR, 0.0

    def mech(cls, params, stat="sum"):
        return library_call(f"diffprivlib.mechanisms.{cls}", params=params, method="randomise", statistic=stat)

    lap = {"epsilon": 1.0, "delta": 0.0, "sensitivity": 1.0}
    bounded = {**lap, "lower": 0.0, "upper": 2.0}
    for cls, params, stat, delta in [
            ("Laplace", lap, "sum", 0.0), ("LaplaceTruncated", bounded, "sum", 0.0),
            ("LaplaceFolded", bounded, "sum", 0.0), ("LaplaceBoundedDomain", bounded, "sum", 0.0),
            ("LaplaceBoundedNoise", {"epsilon": 1.0, "delta": 0.1, "sensitivity": 1.0}, "sum", 0.1),
            ("Gaussian", {"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0}, "sum", 1e-5),
            ("GaussianAnalytic", {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0}, "sum", 1e-5),
            ("GaussianDiscrete", {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1}, "integer_sum", 1e-5),
            ("Geometric", {"epsilon": 1.0, "sensitivity": 1}, "integer_sum", 0.0),
            ("GeometricTruncated", {"epsilon": 1.0, "sensitivity": 1, "lower": 0, "upper": 2}, "integer_sum", 0.0),
            ("GeometricFolded", {"epsilon": 1.0, "sensitivity": 1, "lower": 0, "upper": 2}, "integer_sum", 0.0),
            ("Staircase", {"epsilon": 1.0, "sensitivity": 1.0}, "sum", 0.0),
            ("Snapping", {"epsilon": 1.0, "sensitivity": 1.0, "lower": 0.0, "upper": 2.0}, "sum", 0.0),
            ("Uniform", {"delta": 0.2, "sensitivity": 1.0}, "sum", 0.2)]:
        yield cls, mech(cls, params, stat), *SUM_PAIR, delta
    lib = load_mechanisms()
    for cls in ("Exponential", "PermuteAndFlip"):
        def counts(data, rng, cls=cls):  # utility: how many records equal each candidate
            utility = [float(np.sum(np.asarray(data) == k)) for k in range(3)]
            return getattr(lib, cls)(epsilon=1.0, sensitivity=1.0, utility=utility,
                                     random_state=seeded_random_state(rng)).randomise()
        yield cls, counts, *SUM_PAIR, 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=int, default=20)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    load_mechanisms()
    print("| entry | upper bound | exact | findings | seconds |\n|---|---|---|---|---|")
    for label, target, d1, d2, delta in cases():
        t0 = time.perf_counter()
        try:
            r = analyse(lambda data, rng, t=target: t(data, rng=rng), np.array(d1), np.array(d2),
                        traces=args.traces, delta=delta, seed=1)
        except GreyBoxError as exc:
            print(f"| {label} | refused: {exc} | | | |")
            continue
        upper = "none" if r.epsilon_upper_bound is None else f"{r.epsilon_upper_bound:.4f}"
        found = ", ".join(sorted({f["kind"] for f in r.findings})) or "-"
        print(f"| {label} | {upper} | {'yes' if r.exact else 'no'} | {found} | {time.perf_counter() - t0:.1f} |")


if __name__ == "__main__":
    main()
