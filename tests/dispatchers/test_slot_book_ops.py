"""Conservative backfilling's slot book: the compression that passes over reservations that
cannot move, and the rebuild in one call, against the one-at-a-time operations."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import simulate
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.dispatchers.rule_based.selection import Conservative
from dispatchlab.dispatchers.slot_availability import SlotAvailability, SlotReservations
from dispatchlab.dispatchers.slot_book_ops import (
    TABLES,
    compress_kernel,
    compress_skipping,
    rebuild_book,
    rebuild_kernel,
)
from dispatchlab.engine.compiled.compiled_ops import python_slot_availability_ops
from tests.conftest import jobs
from tests.dispatchers.test_conservative_reference import run_both

TOTAL = 10


@st.composite
def books(draw: st.DrawFn) -> tuple[SlotReservations, list[int], int]:
    """A slot availability of ``TOTAL`` slots holding running jobs and a book of
    reservations (made one by one, some given back since: holes), with the priority order
    and the time now."""
    n_jobs = draw(st.integers(1, 30))
    units = draw(st.lists(st.integers(1, TOTAL), min_size=n_jobs, max_size=n_jobs))
    avail = SlotAvailability(TOTAL, units, ops=python_slot_availability_ops())
    book = SlotReservations(avail)
    for j in range(n_jobs):
        if draw(st.booleans()):  # running until some time
            end = draw(st.integers(1, 200))
            if avail.earliest(j, end, 1) is not None:
                avail.take(j, 0, end, units[j])
            continue
        book.reserve(j, draw(st.integers(1, 120)))
    for _ in range(draw(st.integers(0, 6))):  # early ends leave holes
        t0 = draw(st.integers(0, 150))
        avail.give(-1, t0, t0 + draw(st.integers(1, 80)), draw(st.integers(1, 3)))
    order = draw(st.permutations(range(n_jobs)))
    return book, list(order), draw(st.integers(0, 5))


def snapshot(book: SlotReservations) -> tuple[list[int], ...]:
    """Everything a book and its availability hold."""
    a = book.availability
    return (a.times, a.free, list(book.start), list(book.end), list(book.key[:book.hn]),
            list(book.heap[:book.hn]), list(book.pos))


def copy(book: SlotReservations) -> SlotReservations:
    """An independent copy (plain Python lists)."""
    a = book.availability
    avail = SlotAvailability(TOTAL, list(a.units), ops=a._ops)
    avail.n, avail._times, avail._free = a.n, list(a._times), list(a._free)
    out = SlotReservations(avail)
    for name in ("start", "end", "key", "heap", "pos"):
        setattr(out, name, list(getattr(book, name)))
    out.hn = book.hn
    return out


@settings(max_examples=300, deadline=None)
@given(case=books())
def test_compression_skipping_moves_exactly_as_the_full_one(
        case: tuple[SlotReservations, list[int], int]) -> None:
    book, order, now = case
    ops = book.availability._ops
    other = copy(book)
    a, b = book.availability, other.availability
    a._room(4 * len(order) + 8)
    b._room(4 * len(order) + 8)
    moved_a, moved_b = [0] * len(order), [0] * len(order)
    best = np.zeros((TABLES, len(a._times)), dtype=np.int64)
    n_a, count_a, reached_a, searched = compress_skipping(
        a._times, a._free, a.n, order, 0, len(order), book.start, book.end, a.need, now,
        book.key, book.heap, book.pos, moved_a, best, np.zeros(TABLES, np.int64))
    n_b, count_b, reached_b = ops.avail_compress(
        b._times, b._free, b.n, order, 0, len(order), other.start, other.end, b.need, now,
        other.key, other.heap, other.pos, moved_b)
    a.n, b.n = n_a, n_b
    assert (count_a, reached_a) == (count_b, reached_b)
    assert moved_a[:count_a] == moved_b[:count_b]
    assert snapshot(book) == snapshot(other)
    assert count_a <= searched <= len(order)


@settings(max_examples=300, deadline=None)
@given(case=books())
def test_rebuild_in_one_call_is_drain_give_and_reserve(
        case: tuple[SlotReservations, list[int], int]) -> None:
    book, order, now = case
    other = copy(book)
    a, b = book.availability, other.availability
    a.advance(now)
    b.advance(now)
    a._room(4 * book.hn + 8)
    placed = [0] * len(order)
    a.n, book.hn, count = rebuild_book(
        a._times, a._free, a.n, order, len(order), book.start, book.end, a.need, now,
        book.key, book.heap, book.pos, book.hn, [0] * len(order), placed)
    # the same, one step at a time
    old = {}
    for j, start, end, held in other.drain():
        if end > now:
            b.give(j, max(start, now), end, held)
        old[j] = end - start
    want = []
    for j in order:
        if j in old and other.reserve(j, old[j]) is not None:
            want.append(j)
    assert placed[:count] == want
    assert snapshot(book) == snapshot(other)


def arrays(book: SlotReservations, room: int) -> dict[str, Any]:
    """The book's and its availability's lists as int64 arrays (``room`` breakpoints)."""
    a = book.availability
    times, free = np.zeros(room, np.int64), np.zeros(room, np.int64)
    times[:a.n], free[:a.n] = a._times[:a.n], a._free[:a.n]
    out = {name: np.array(getattr(book, name), np.int64)
           for name in ("start", "end", "key", "heap", "pos")}
    return {**out, "times": times, "free": free, "need": np.array(a.need, np.int64)}


@settings(max_examples=40, deadline=None)
@given(case=books())
def test_compiled_book_operations_match_the_plain_ones(
        case: tuple[SlotReservations, list[int], int]) -> None:
    book, order, now = case
    room = book.availability.n + 4 * len(order) + 8
    seq, count = np.array(order, np.int64), len(order)
    got = []
    for compress in (compress_skipping, compress_kernel(True)):
        x = arrays(book, room)
        moved = np.zeros(count, np.int64)
        res = compress(x["times"], x["free"], book.availability.n, seq, 0, count, x["start"],
                       x["end"], x["need"], now, x["key"], x["heap"], x["pos"], moved,
                       np.zeros((TABLES, room), np.int64), np.zeros(TABLES, np.int64))
        got.append((res, moved.tolist(), {k: v.tolist() for k, v in x.items()}))
    assert got[0] == got[1]
    got = []
    for rebuild in (rebuild_book, rebuild_kernel(True)):
        x = arrays(book, room)
        placed = np.zeros(count, np.int64)
        res = rebuild(x["times"], x["free"], book.availability.n, seq, count, x["start"],
                      x["end"], x["need"], now, x["key"], x["heap"], x["pos"], book.hn,
                      np.zeros(count, np.int64), placed)
        got.append((res, placed.tolist(), {k: v.tolist() for k, v in x.items()}))
    assert got[0] == got[1]


def blocked_queue(n: int, shorts: int) -> list[tuple[int, int, int, int]]:
    """A long job holding 9 of 10 slots, ``n`` jobs of 2 slots queued behind it, then
    ``shorts`` one-slot jobs ending well before their requested time, one after another
    on the slot left: each early end frees a hole none of the queued jobs fits."""
    rows = [(0, 100 * (n + shorts), 100 * (n + shorts), 9)]
    rows += [(k, 100, 100, 2) for k in range(1, n + 1)]
    rows += [(n + 1 + 20 * k, 5, 15, 1) for k in range(shorts)]
    return rows


def searches(rows: list[tuple[int, int, int, int]]) -> tuple[int, int]:
    """Earliest-fit searches made by compressions, and the number of compressions."""
    sel = Conservative()
    simulate(jobs(*rows), "nodes=10,cores=1", Policy("fifo", sel), check=False,
             tables=False, loop="general")
    book = sel._book
    assert isinstance(book, SlotReservations)
    return book.searched, sel.run_stats()["compressions"]


def test_compressions_pass_over_a_queue_where_nothing_can_move() -> None:
    # each of the 200 early ends would search all 1,000 queued reservations (200,000
    # searches, each walking the availability up to the reservation); none can move
    searched, compressions = searches(blocked_queue(1000, 200))
    assert compressions >= 200
    assert searched == 0


def test_blocked_queue_same_schedule_as_the_reference() -> None:
    run_both(jobs(*blocked_queue(60, 30)), "nodes=10,cores=1")
