"""Witness: diffprivlib 0.6.3, diffprivlib.tools.histogram (survey entry tools.histogram[replace-one]).

Claim: (1, 0)-DP under replace-one; parameters {"epsilon": 1.0, "bins": 4, "range": [0, 1]}.
Pair found: D = [0.5, 0.5, 0.5], D' = [0.0, 0.5, 0.5].
Survey verdicts: ideal violation (epsilon >= 1.617); implementation violation (epsilon >= 1.762, attack sign-
    sum).
Reproduce the row: dpaudit survey experiments/library_survey/catalogue.yaml --library diffprivlib==0.6.3 --entry
    'tools.histogram[replace-one]' --seed 2026 --out survey-reproduce

Kind: relation. Cause: Geometric noise of sensitivity 1 per bin: replacing a record moves two bins, so the
    calibration is add-remove's (clean there in the survey).
True epsilon: 2 epsilon under replace-one (two bins); epsilon under add-remove

Source lines responsible (diffprivlib 0.6.3, as installed):
  diffprivlib/tools/histograms.py (diffprivlib.tools.histograms.histogram, from line 57):
    143: dp_mech = GeometricTruncated(epsilon=epsilon, sensitivity=1, lower=0, upper=maxsize, random_state=random_state)
    148: dp_hist[i] = dp_mech.randomise(int(hist[i]))

Docs: The docs state no neighbouring relation.
Later surveyed versions: 0.6.6: still flagged; ideal violation (1.62).

Runs in the survey's environment of this version (~/.cache/dpaudit/envs/9f0d9f5ec87c2229):
    python experiments/library_survey/witness.py --run 'diffprivlib-0.6.3-tools.histogram_replace-one.py'
"""

import random  # noqa: F401 - seeds the library's global generators where it draws from them
import sys

import numpy as np

from dpaudit.survey.witness import certify, draw, show_leak, show_one
from dpaudit.survey.worker import build_target
from diffprivlib.tools import histogram

D = [0.5, 0.5, 0.5]
D_PRIME = [0.0, 0.5, 0.5]


# 1. The library called once on each side, as a user would.
show_one('D ', histogram(np.asarray(D, dtype=float), epsilon=1.0, bins=4, range=(0, 1), random_state=np.random.RandomState(0))[0])
show_one("D'", histogram(np.asarray(D_PRIME, dtype=float), epsilon=1.0, bins=4, range=(0, 1), random_state=np.random.RandomState(0))[0])

# 2. The survey's release function (the same call, its randomness seeded from rng), many times per side.
RELEASE = build_target({'function': 'diffprivlib.tools.histogram', 'call': {'seed': 'random_state', 'pick': 0}, 'params': {'epsilon': 1.0, 'bins': 4, 'range': [0, 1]}})
rng = np.random.default_rng(288137523)
x0, x1 = draw(RELEASE, D, 20000, rng), draw(RELEASE, D_PRIME, 20000, rng)
show_leak(x0, x1, None)

# 3. The audit that certifies it (ideal: floating-point attacks off).
sys.exit(certify(RELEASE, D, D_PRIME, epsilon=1.0, delta=0.0, max_samples=3000,
                 confidence=0.99, seed=288137523, ideal=True))
