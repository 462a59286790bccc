"""``dpaudit.adapters.smartnoise_sql``: one query answers a batch of releases, one group per copy of the dataset.

SmartNoise SQL is not installed in dpaudit's own environment (the survey installs it in one of its own), so a
stand-in ``snsql`` records the tables and queries it is given and answers each group with its own sum (and a
stand-in ``pandas`` makes the table a dict of columns).
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from dpaudit.adapters.smartnoise_sql import aggregate
from dpaudit.exceptions import TargetError


@pytest.fixture
def fake_snsql(monkeypatch):
    seen = {"tables": [], "queries": [], "drop": 0}

    class Reader:
        def __init__(self, table):
            self.table = table

        def execute(self, query):
            seen["queries"].append(query)
            sums = np.bincount(self.table["g"], weights=self.table["x"])
            rows = [[g, float(v)] for g, v in enumerate(sums)][seen["drop"]:]
            return [["g", "v"], *rows]

    def from_df(table, privacy, metadata):
        seen["tables"].append(table)
        seen["metadata"], seen["privacy"] = metadata, privacy
        return Reader(table)

    module = types.SimpleNamespace(from_df=from_df, Privacy=lambda epsilon, delta: (epsilon, delta))
    monkeypatch.setitem(sys.modules, "snsql", module)
    monkeypatch.setitem(sys.modules, "pandas", types.SimpleNamespace(DataFrame=dict))
    return seen


def test_releases_come_in_batches_of_groups(fake_snsql):
    target = aggregate("SUM(x)", epsilon=0.5, lower=-1.0, upper=2.0, batch=4)
    out = target([1.0, 0.5], size=10)
    assert out.shape == (10,) and np.all(out == 1.5)
    assert [len(t["x"]) for t in fake_snsql["tables"]] == [8, 8, 4]  # batches of 4, 4 and 2 copies of two records
    assert fake_snsql["queries"][0] == "SELECT g, SUM(x) AS v FROM T.T GROUP BY g"
    column = fake_snsql["metadata"][""]["T"]["T"]
    assert column["row_privacy"] and not column["censor_dims"] and (column["x"]["lower"], column["x"]["upper"]) == (-1, 2)
    assert fake_snsql["privacy"] == (0.5, 0.0)
    assert target([3.0]) == 3.0


def test_a_missing_group_or_an_empty_table_is_an_error(fake_snsql):
    target = aggregate("SUM(x)", epsilon=1.0, batch=3)
    with pytest.raises(TargetError, match="empty table"):
        target([], size=2)
    fake_snsql["drop"] = 1
    with pytest.raises(TargetError, match="2 groups answered of 3"):
        target([1.0], size=3)
