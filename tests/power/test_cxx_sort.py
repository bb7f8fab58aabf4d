"""The port of libstdc++'s std::sort used by the PA-HPC-SIM cross-check orders ties as
g++'s std::sort does (reference outputs produced by g++ 12.2 on this machine)."""

from __future__ import annotations

from dispatchlab.dispatchers.pa_hpc_sim.cxx_sort import cxx_sort


def test_all_equal_keys_give_std_sorts_permutation() -> None:
    v = list(range(64))
    cxx_sort(v, lambda a, b: False)
    assert v == [48, *range(33, 48), 32, *range(49, 64), 16, *range(1, 16), 0,
                 *range(17, 32)]


def test_ties_come_out_in_std_sorts_order() -> None:
    w = list(range(40))
    cxx_sort(w, lambda a, b: (a * 7) % 5 < (b * 7) % 5)
    assert w == [10, 20, 25, 15, 30, 35, 5, 0, 33, 8, 28, 13, 3, 38, 23, 18, 31, 1, 36, 26,
                 21, 6, 16, 11, 39, 19, 4, 34, 9, 29, 14, 24, 12, 27, 32, 7, 17, 37, 2, 22]


def test_sorts_like_sorted_on_distinct_keys_and_small_inputs() -> None:
    import random

    rng = random.Random(5)
    for n in (0, 1, 2, 15, 16, 17, 100, 1000):
        a = [rng.random() for _ in range(n)]
        b = list(a)
        cxx_sort(b, lambda x, y: x < y)
        assert b == sorted(a)
