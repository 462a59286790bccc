"""Floating point, as ratios: ``python benchmarks/bench_float.py``.

1. Scoring cost of each float attack (fitted on 10^4 releases per side) per
   chunk of 2^18 releases, over the cost of drawing that chunk with numpy's
   own float sampler (``rng.laplace``, the kind of target the family is for),
   for scalar releases and for 10-coordinate vectors.  Target: well below 1.
2. Draw cost of the float-safe samplers and built-ins over numpy's float
   sampler of the same law (what exactness costs).

Each figure is the best of ``--repeat`` runs; absolute times depend on the machine's load, ratios less so.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpaudit.auditor.distinguishers import FLOAT_ATTACKS, make_distinguisher
from dpaudit.mechanisms import AnalyticGaussianMechanism, LaplaceMechanism, NoisyHistogram
from dpaudit.mechanisms.float_safe import discrete_gaussian, discrete_laplace


def best(fn, repeat: int) -> float:
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunk", type=int, default=1 << 18)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.chunk

    print(f"1. float attack scoring / numpy draw, per chunk of {n} releases")
    for width in (1, 10):
        shape = (n,) if width == 1 else (n, width)
        draw = best(lambda: rng.laplace(1.0, 1.0, shape), args.repeat)
        fit_shape = (10_000,) if width == 1 else (10_000, width)
        x0, x1 = rng.laplace(1.0, 1.0, fit_shape), rng.laplace(2.0, 1.0, fit_shape)
        x = rng.laplace(1.0, 1.0, shape)
        for name in FLOAT_ATTACKS:
            d = make_distinguisher(name).fit(x0, x1)
            t = best(lambda: d.score(x), args.repeat)
            print(f"   {name:18s} width {width:2d}: {t / draw:5.2f}  ({t * 1e3:.1f} ms vs {draw * 1e3:.1f} ms)")

    print(f"2. float-safe draw / numpy float draw of the same law, {n} releases")
    rows = [
        ("discrete_laplace(1024)", lambda: discrete_laplace(1024, size=n, rng=rng), lambda: rng.laplace(0, 1024, n)),
        ("discrete_gaussian(1240^2)", lambda: discrete_gaussian(1240 ** 2, size=n, rng=rng),
         lambda: rng.normal(0, 1240, n)),
        ("laplace built-in", lambda: LaplaceMechanism()([0.0], size=n, rng=rng), lambda: rng.laplace(0, 1, n)),
        ("gaussian_analytic built-in", lambda: AnalyticGaussianMechanism()([0.0], size=n, rng=rng),
         lambda: rng.normal(0, 3.73, n)),
        ("noisy_histogram(4) built-in", lambda: NoisyHistogram()([0, 1], size=n // 4, rng=rng),
         lambda: rng.laplace(0, 1, (n // 4, 4))),
    ]
    for label, safe, ref in rows:
        a, b = best(safe, args.repeat), best(ref, args.repeat)
        print(f"   {label:28s}: {a / b:5.2f}  ({a * 1e3:.1f} ms vs {b * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
