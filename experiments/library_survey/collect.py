"""Gather per-library survey folders into one: ``results/survey.jsonl``, ``results/summary.md``, the figure.

    python experiments/library_survey/collect.py OUT_DIR SURVEY_DIR...

Each SURVEY_DIR is the ``--out`` of one ``dpaudit survey`` run (one per library, so that they can run side by
side); rows are concatenated in catalogue order and the ``reproduce`` commands name the catalogue by its path
in the repository.  Nothing is re-run: the summary and the figure are drawn from the rows alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dpaudit.survey import load_catalogue
from dpaudit.survey.report import write_summary

HERE = Path(__file__).resolve().parent
CATALOGUE = HERE / "catalogue.yaml"
IN_REPO = "experiments/library_survey/catalogue.yaml"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out, dirs = Path(argv[0]), [Path(d) for d in argv[1:]]
    rows = []
    for d in dirs:
        for line in (d / "survey.jsonl").read_text().splitlines():
            row = json.loads(line)
            head, _, tail = row["reproduce"].partition(" --library ")
            row["reproduce"] = f"dpaudit survey {IN_REPO} --library {tail}"
            rows.append(row)
    cat = load_catalogue(CATALOGUE)
    order = {}
    for lib in cat.libraries:
        for v in lib.versions:
            for c in lib.cases:
                if lib.applies(c, v):
                    order[(lib.name, v.version, c.case_id)] = len(order)
    # A row the catalogue no longer lists (an entry later restricted to the versions that have it) is left out.
    rows = [r for r in rows if (r["library"], r["version"], r["entry"]) in order]
    rows.sort(key=lambda r: order[(r["library"], r["version"], r["entry"])])
    out.mkdir(parents=True, exist_ok=True)
    (out / "survey.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    seconds = sum(r.get("seconds") or 0 for r in rows)
    for path in write_summary(out, rows, seconds=None):
        print(path)
    print(f"{len(rows)} rows; the rows' own wall time adds up to {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
