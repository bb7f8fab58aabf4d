"""The store loading the studies' ``analyse.py`` scripts share (issue 26): every store under
a folder as one table, and a campaign's written results table read back."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from dispatchlab.errors import ConfigError
from dispatchlab.experiments import RunStore, runs_table, write_tables
from dispatchlab.experiments.collect import read_results, stores_table


def test_every_store_in_name_order(tmp_path: Path, reference: Path) -> None:
    for name in ("b", "a"):
        shutil.copytree(reference, tmp_path / name)
    (tmp_path / "empty" / "runs").mkdir(parents=True)
    (tmp_path / "not-a-store").mkdir()
    one = runs_table(RunStore(reference).records())
    both = stores_table(tmp_path)
    assert len(one) > 0
    expected = pd.concat([one, one], ignore_index=True)
    pd.testing.assert_frame_equal(both, expected)


def test_no_finished_run_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty" / "runs").mkdir(parents=True)
    with pytest.raises(ConfigError, match="no finished run in any store"):
        stores_table(tmp_path)


@pytest.mark.parametrize("formats", [("parquet", "csv"), ("csv",)])
def test_read_results_prefers_parquet(tmp_path: Path, reference: Path,
                                      formats: tuple[str, ...]) -> None:
    records = list(RunStore(reference).records())
    write_tables(tmp_path, records, formats=formats)
    table = read_results(tmp_path)
    assert list(table["run"]) == list(runs_table(records)["run"])
    assert (tmp_path / "results.parquet").exists() == ("parquet" in formats)
