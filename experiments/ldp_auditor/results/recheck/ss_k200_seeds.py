"""Seeds FIRST..LAST-1 of the k = 200, epsilon 1 subset-selection audit (the cell where seed 0 certified 1.003).

    PYTHONPATH=. python experiments/ldp_auditor/results/recheck/ss_k200_seeds.py 1 41   # ~15 min on one core

Prints: seed, seconds, bound, attack, certificate, held-out tp, fp, tpr, fpr.
"""
import sys
import time

import dpaudit
from dpaudit.mechanisms import get_mechanism

for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    t = time.time()
    d = dpaudit.audit(get_mechanism("ss", k=200, epsilon=1), epsilon=1, samples=10**6, confidence=0.99, seed=seed,
                      ideal=True, calibration_fraction=0.1).to_dict()
    print(seed, round(time.time() - t, 1), d["epsilon_lower_bound"], d["attack"], d["certificate"], d["tp"], d["fp"],
          d["tpr"], d["fpr"], flush=True)
