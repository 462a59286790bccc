"""A search says one thing per number: screenings (repeats included) and distinct pairs, each by name.

The progress line and the budget note used to print the number of screenings as "pairs screened"
(457 on a small integer domain) where the summary and ``candidates_screened`` counted distinct pairs
(8).  ``candidates_screened`` keeps its meaning (distinct pairs); ``search.screenings`` adds the other.
"""

from __future__ import annotations

import re


import dpaudit.pair_search as ps
from dpaudit.pair_search import search

#: A domain of a handful of pairs: successive halving and the local search screen some of them again.
SMALL = dict(epsilon=1.0, size=2, low=0, high=1, integer=True, relation="add-remove", samples=2000, seed=1,
             ideal=True)


def test_progress_lines_summary_and_json_name_both_counts(capsys, monkeypatch):
    monkeypatch.setattr(ps, "PROGRESS_EVERY", 0.0)
    report = search("noisy_histogram", progress=True, **SMALL)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("search: ")]
    counts = [tuple(map(int, re.match(r"search: (\d+) screenings? of (\d+) distinct pairs? in ", line).groups()))
              for line in lines]
    assert counts and all(distinct <= done for done, distinct in counts)
    out = report.to_dict()
    assert counts[-1] == (out["search"]["screenings"], out["candidates_screened"])
    assert out["search"]["screenings"] > out["candidates_screened"]  # this domain repeats pairs
    assert (f"search      {out['candidates_screened']} distinct candidate pairs screened "
            f"({out['search']['screenings']} screenings: ") in report.summary()


def test_the_budget_note_counts_screenings_of_distinct_pairs():
    report = search("noisy_histogram", budget=1e-9, **SMALL)
    note = next(n for n in report.notes if "screening budget" in n)
    assert "ran out after 1 screening of 1 distinct pair;" in note
    assert report.candidates_screened == report.screenings == 1
    assert "screenings:" not in report.summary().splitlines()[0]  # nothing repeated: one number
