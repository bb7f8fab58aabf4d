"""The readers' shared first check: the path names a file (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.eurora import load_eurora
from dispatchlab.workload.input_file import input_file
from dispatchlab.workload.slurm_sacct import load_sacct


def test_a_file_comes_back_as_a_path(tmp_path: Path) -> None:
    f = tmp_path / "t.swf"
    f.write_text("1 0 0 1 1 -1 -1 1 1 -1 1 1 1 1 1 1 -1 -1\n")
    assert input_file(str(f)) == f


def test_missing_and_folder(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="file not found") as err:
        input_file(tmp_path / "nope")
    assert err.value.source == str(tmp_path / "nope")
    with pytest.raises(WorkloadError, match="is a folder, not a file"):
        input_file(tmp_path)
    with pytest.raises(WorkloadError, match="is a folder; give one file"):
        input_file(tmp_path, folder_message="is a folder; give one file")


def test_readers_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="is a folder; load one batch file"):
        load_eurora(tmp_path)
    with pytest.raises(WorkloadError, match=f"{tmp_path / 'x.txt'}: file not found"):
        load_sacct(tmp_path / "x.txt")
