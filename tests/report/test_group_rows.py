"""The per-class / per-queue rows shared by the terminal table and the HTML report."""

from __future__ import annotations

import pandas as pd

from dispatchlab.report.tables import group_rows, group_table


def _breakdown() -> pd.DataFrame:
    rows = [("easy", "class", "short", 10, 60.0, 90.0, 1.5),
            ("easy", "class", "long", 3, 7200.0, 9000.0, 2.0),
            ("fifo", "class", "short", 10, 120.0, 200.0, 3.25),
            ("fifo", "class", "long", 3, float("nan"), float("nan"), float("nan"))]
    return pd.DataFrame(rows, columns=["dispatcher", "kind", "group", "jobs", "mean_wait",
                                       "p90_wait", "mean_bounded_slowdown"])


def test_one_row_per_dispatcher_each_group_in_order() -> None:
    table = group_table(_breakdown(), "class", ["fifo", "easy"])
    rows = group_rows(table, ("jobs", "mean_bounded_slowdown"))
    assert [r[0] for r in rows] == ["fifo", "easy"]
    assert rows[0][1:] == ["10", "3.25", "3", "–"]
    assert rows[1][1:] == ["10", "1.50", "3", "2"]


def test_durations_in_their_unit() -> None:
    table = group_table(_breakdown(), "class", ["easy"])
    (row,) = group_rows(table, ("mean_wait",))
    assert row == ["easy", "60 s", "2.0 h"]
