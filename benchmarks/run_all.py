"""Run every benchmark in this folder, one after the other: ``make bench``.

Each script prints its own table of ratios; this only runs them in turn and
says which failed.  The LP benchmark caps slow solver paths itself.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ["bench_audit.py", "bench_memory.py", "bench_estimators.py", "bench_mechanisms.py",
         "bench_tracing.py", "bench_reconstruction.py", "bench_sequential.py", "bench_sequential_audit.py",
         "bench_search.py", "bench_pipeline.py", "bench_float.py", "bench_attack_power.py",
         "bench_certificate.py", "bench_one_run_fdp.py", "bench_claims.py", "bench_anytime.py",
         "bench_chunk_cost.py", "bench_throughput.py"]


def main() -> int:
    failed = []
    for name in ORDER:
        print(f"\n== {name} ==", flush=True)
        if subprocess.run([sys.executable, str(HERE / name)]).returncode != 0:
            failed.append(name)
    print("\nall benchmarks ran" if not failed else f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
