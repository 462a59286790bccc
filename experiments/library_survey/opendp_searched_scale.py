"""OpenDP 0.4.0's float Laplace at the scale ``binary_search_param`` returns, and at the scale users write.

    python experiments/library_survey/opendp_searched_scale.py

Runs itself in the survey's cached environment of OpenDP 0.4.0 (created from the package index when
missing). For sensitivity 1 and epsilon 1, ``binary_search_param`` stops within its tolerance at
1.0000000074505804; the survey's adapter uses 1.0, which OpenDP's relation accepts
(docs/decisions/opendp-legacy-scale.md). For each scale, 20,000 releases on D = [1, 1] and on D' = [1]: the
lowest-set-bit events that tell them apart, and the implementation audit (floating-point attacks on,
3,000 releases per side at most, confidence 0.99) that the survey runs on that pair.
"""

from __future__ import annotations

import os
import subprocess
import sys

REQUIREMENTS = ("opendp==0.4.0", "numpy<2")


def measure() -> None:
    import numpy as np

    import dpaudit
    from dpaudit.adapters.opendp_legacy import LegacyOpenDP
    from dpaudit.survey.witness import show_leak

    api = LegacyOpenDP.load()
    searched = api.mod.binary_search_param(lambda s: api.meas.make_base_laplace(s, D="AllDomain<f64>"),
                                           d_in=1.0, d_out=1.0)
    for scale in (searched, 1.0):
        vector = api.meas.make_base_laplace(scale, D="VectorDomain<AllDomain<f64>>")

        def release(dataset, size=None, _v=vector):
            return np.asarray(_v([float(np.sum(dataset))] * (size or 1)), dtype=float)

        print(f"scale {scale!r}")
        show_leak(release([1.0, 1.0], 20000).reshape(-1, 1), release([1.0], 20000).reshape(-1, 1), "float-lsb")
        report = dpaudit.audit(release, [1.0, 1.0], [1.0], epsilon=1.0, max_samples=3000, confidence=0.99, seed=1)
        print(f"audit: {report.verdict}; epsilon >= {report.epsilon_lower_bound:.3f}\n")


def main() -> int:
    if os.environ.get("DPAUDIT_IN_ENV") == "1":
        measure()
        return 0
    from dpaudit.survey.envs import dpaudit_path, environment_python

    python = environment_python(REQUIREMENTS, log=print)
    env = dict(os.environ, PYTHONPATH=str(dpaudit_path()), DPAUDIT_IN_ENV="1")
    return subprocess.run([python, os.path.abspath(__file__)], env=env, cwd="/").returncode


if __name__ == "__main__":
    sys.exit(main())
