"""Workload.validate: duplicate job ids are found whatever their order."""

from __future__ import annotations

import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.workload import Workload


def _workload(ids: list[int]) -> Workload:
    n = len(ids)
    return Workload.from_columns(submit=list(range(n)), runtime=[5] * n, walltime=[10] * n,
                                 units=[1] * n, req={"cores": [1] * n}, job_id=ids)


@pytest.mark.parametrize("ids", [[1, 2, 3, 4], [4, 2, 9, 1], [7]])
def test_distinct_ids_pass(ids: list[int]) -> None:
    assert list(_workload(ids).job_id) == ids


@pytest.mark.parametrize("ids,dup", [([1, 2, 2, 3], 2), ([5, 1, 5, 2], 5), ([3, 3], 3)])
def test_duplicate_ids_are_named(ids: list[int], dup: int) -> None:
    with pytest.raises(WorkloadError, match="duplicate job id") as err:
        _workload(ids)
    assert err.value.job == dup
