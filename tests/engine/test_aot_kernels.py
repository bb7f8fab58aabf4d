"""The placement kernels compiled ahead of time: equal to their plain twins, and every
argument they were not built for (another dtype or byte order, a strided or Fortran-ordered
array) taken by the JIT instead, never read as int64 memory."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.engine import kernels
from dispatchlab.numba_loader import NUMBA

pytestmark = pytest.mark.skipif(not NUMBA, reason="Numba is disabled or missing")


def _guarded() -> tuple[Any, Any, Any]:
    from dispatchlab.engine.compiled.compiled_ops import aot_module

    module = aot_module()
    if module is None:
        pytest.skip("the engine's ahead-of-time unit could not be built here")
    return kernels._guarded(module)


def _as(a: np.ndarray, how: str) -> np.ndarray:
    """``a`` as another dtype or layout with the same values."""
    if how == "int32":
        return a.astype(np.int32)
    if how == "big-endian":
        return a.astype(">i8")
    if how == "strided":  # every other element of a twice-as-long array
        wide = np.zeros((2 * a.shape[0], *a.shape[1:]), np.int64)
        wide[::2] = a
        return wide[::2]
    if how == "fortran":
        return np.asfortranarray(a)
    return a


HOWS = ["int64", "int32", "strided", "fortran"]


@settings(max_examples=150, deadline=None)
@given(free=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3)), min_size=1, max_size=8),
       req=st.tuples(st.integers(0, 3), st.integers(0, 2)).filter(lambda r: sum(r) > 0),
       units=st.integers(1, 12), how_free=st.sampled_from(HOWS),
       how_vec=st.sampled_from(HOWS))
def test_aot_kernels_equal_the_plain_twins_for_any_argument(
        free: list[tuple[int, int]], req: tuple[int, int], units: int, how_free: str,
        how_vec: str) -> None:
    take, give, fit = _guarded()
    f = np.array(free, dtype=np.int64)
    r = np.array(req, dtype=np.int64)
    got = fit(_as(f, how_free), _as(r, how_vec), units)
    want = kernels._first_fit_py(f.copy(), r, units)
    assert [x.tolist() for x in got] == [x.tolist() for x in want]
    nodes, counts = want
    if not len(nodes):
        return
    args = (_as(nodes, how_vec), _as(counts, how_vec), _as(r, how_vec))
    for asked in (units + 1, units):  # one unit more than the placement holds, then it
        mine, ref = f.copy(), f.copy()
        status = take(mine, *args, asked)
        assert status == kernels._check_and_take_py(ref, nodes, counts, r, asked)
        assert (mine == ref).all()
    # the engine's free matrix is always native int64: give back what was taken
    give(mine, *args)
    assert (mine == f).all()


def test_non_native_byte_order_is_refused_not_misread() -> None:
    take, _, fit = _guarded()
    free = np.full((2, 1), 3, np.int64)
    big = np.array([1], ">i8")
    with pytest.raises(Exception, match=r"non-native|byteorder|byte order|nopython"):
        take(free, big, big, big, 1)
    with pytest.raises(Exception, match=r"non-native|byteorder|byte order|nopython"):
        fit(free, big, 1)
    assert (free == 3).all()


def test_the_engine_takes_the_aot_kernels_without_starting_numba() -> None:
    take, _, _ = _guarded()
    free = np.full((3, 1), 2, np.int64)
    assert take(free, np.array([1]), np.array([2]), np.array([1]), 2) == kernels.OK
    assert free[:, 0].tolist() == [2, 0, 2]
    assert take(free, np.array([1]), np.array([1]), np.array([1]), 1) == kernels.NO_ROOM
