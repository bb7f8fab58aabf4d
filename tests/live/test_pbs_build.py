"""A failed OpenPBS build says why, and the PBS tests quote it when they skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.live import pbs_build


def test_a_failed_build_leaves_its_reason_for_the_skips(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPATCHLAB_PBS_CACHE", str(tmp_path / "cache"))
    bad = tmp_path / pbs_build.TARBALL_NAME
    bad.write_text("not a tarball")
    assert pbs_build.unavailable_reason() is not None and not pbs_build.is_built()
    with pytest.raises(pbs_build.PbsBuildError):
        pbs_build.build(bad)
    reason = pbs_build.unavailable_reason()
    assert reason is not None and reason.startswith("OpenPBS build failed:")
    assert "not a gzip file" in reason and "\n" not in reason
