"""Peak memory of a large audit (issue 7): ``python benchmarks/bench_memory.py``.

Runs ``dpaudit audit laplace --samples 10**7`` (10^7 releases per side of a
vectorised scalar target) in a child process and prints its peak resident
memory next to the 1 GiB target, and next to the 160 MB that merely holding
the 2 x 10^7 float64 releases would take (the audit streams the held-out half).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys

BIN = os.path.join(os.path.dirname(sys.executable), "dpaudit")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--samples", type=int, default=10**7)
    ap.add_argument("--target", default="laplace")
    args = ap.parse_args()
    cmd = [BIN, "audit", args.target, "--dataset", "[1]", "--neighbor", "[0]", "--epsilon", "1",
           "--samples", str(args.samples), "--seed", "1", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stderr)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # Linux reports KiB
    raw_mib = 2 * args.samples * 8 / 2**20
    print(f"audit of {args.target} at {args.samples:.0e} samples per side: peak RSS {peak_mib:.0f} MiB "
          f"(target < 1024 MiB; all releases as float64 would be {raw_mib:.0f} MiB)")
    print("PASS" if peak_mib < 1024 else "FAIL")


if __name__ == "__main__":
    main()
