"""The compiled loops' shared parts, run as plain Python against simple references."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.dispatchers.rule_based.compiled import loop_parts as lp
from dispatchlab.engine import kernels
from dispatchlab.engine.compiled import slot_availability_ops as ops

I8 = np.int64
NO_POS = np.zeros(0, I8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=40), st.data())
def test_event_heap_pops_by_time_then_push_order(times: list[int], data: st.DataObject) -> None:
    """Entries leave by (time, entry number): the engine's (time, sequence) order, also
    when pushes and pops interleave."""
    n = len(times)
    h_time, h_id, ev_job = np.zeros(2, I8), np.zeros(2, I8), np.zeros(2, I8)
    hn, popped, live = 0, [], []
    for e, t in enumerate(times):
        h_time, h_id, ev_job = lp.ev_room(h_time, h_id, ev_job, e)
        ev_job[e] = 100 + e
        hn = ops.heap_push(h_time, h_id, NO_POS, hn, t, e)
        live.append((t, e))
        if data.draw(st.booleans()):
            first = min(live)
            assert (h_time[0], h_id[0]) == first and ev_job[h_id[0]] == 100 + first[1]
            live.remove(first)
            popped.append(first)
            hn = ops.heap_pop(h_time, h_id, NO_POS, hn)
    while hn:
        popped.append((int(h_time[0]), int(h_id[0])))
        live.remove(popped[-1])
        hn = ops.heap_pop(h_time, h_id, NO_POS, hn)
    assert not live and len(popped) == n


def _changed_heap(keys: list[int], data: st.DataObject, new_key: Any) -> None:
    """Push ``keys``, change some of them in place (``new_key(old)`` draws the new key)
    with ``heap_fix``, every id's position kept at each step; the pops come out in
    (key, id) order and leave no position behind."""
    n = len(keys)
    key, ids, pos = np.zeros(n, I8), np.zeros(n, I8), np.full(n, -1, I8)
    hn = 0
    for j, k in enumerate(keys):
        hn = ops.heap_push(key, ids, pos, hn, k, j)
    cur = dict(enumerate(keys))
    for j in data.draw(st.lists(st.integers(0, n - 1), max_size=10)):
        cur[j] = data.draw(new_key(cur[j]))
        key[pos[j]] = cur[j]
        ops.heap_fix(key, ids, pos, hn, pos[j])
        assert all(ids[pos[q]] == q for q in range(n))
    out = []
    while hn:
        out.append((int(key[0]), int(ids[0])))
        hn = ops.heap_pop(key, ids, pos, hn)
    assert out == sorted((k, j) for j, k in cur.items()) and (pos == -1).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=30), st.data())
def test_the_book_heap_tracks_positions_and_moves_keys_earlier(
        starts: list[int], data: st.DataObject) -> None:
    """The heap with positions as the book of reservations uses it: a key lowered in place
    (a reservation moved earlier)."""
    _changed_heap(starts, data, lambda old: st.integers(max(0, old - 10), old))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=30), st.data())
def test_the_heap_is_repaired_after_any_key_changes(keys: list[int],
                                                    data: st.DataObject) -> None:
    """``heap_fix`` restores the (key, id) order after a key rose or fell anywhere."""
    _changed_heap(keys, data, lambda old: st.integers(0, 30))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=30, unique=True), st.data())
def test_queue_stays_in_rank_order(ranks: list[int], data: st.DataObject) -> None:
    n = len(ranks)
    q_job, q_rank, gone = np.zeros(n, I8), np.zeros(n, I8), np.zeros(n, np.bool_)
    qn = 0
    for job, r in enumerate(ranks):
        qn = lp.q_insert(q_job, q_rank, qn, job, r)
    assert q_rank[:qn].tolist() == sorted(ranks)
    assert [ranks[j] for j in q_job[:qn]] == sorted(ranks)
    drop = data.draw(st.lists(st.integers(0, n - 1), unique=True))
    gone[drop] = True
    qn = lp.q_compact(q_job, q_rank, gone, qn)
    assert q_rank[:qn].tolist() == sorted(r for k, r in enumerate(sorted(ranks))
                                          if k not in drop)
    assert not gone.any()
    for r in range(0, 1001, 97):
        k = lp.bisect_left(q_rank, qn, r)
        assert all(x < r for x in q_rank[:k]) and all(x >= r for x in q_rank[k:qn])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 4)), min_size=1, max_size=25),
       st.integers(0, 6), st.integers(1, 12), st.integers(0, 40))
def test_easy_shadow_matches_a_direct_count(running: list[tuple[int, int]], free: int,
                                           need: int, t: int) -> None:
    """EASY's reservation: the first expected end (never before t + 1) by which enough
    units are free; the extra units are what is free then beyond the head's need."""
    n = len(running)
    units = np.array([u for _, u in running], I8)
    e_time, e_job = np.zeros(n, I8), np.zeros(n, I8)
    en = 0
    for j, (e, _) in enumerate(running):
        en = lp.ends_insert(e_time, e_job, en, e, j)
    order = sorted(range(n), key=lambda j: (running[j][0], j))
    assert e_job[:en].tolist() == order
    shadow, extra = lp.easy_shadow(e_time, e_job, en, units, free, need, t)
    times = sorted({max(running[j][0], t + 1) for j in range(n)})
    want = -1
    for tk in times:
        avail = free + sum(int(units[j]) for j in range(n) if max(running[j][0], t + 1) <= tk)
        if avail >= need:
            want = tk
            assert extra == avail - need
            break
    assert shadow == want
    en = lp.ends_remove(e_time, e_job, en, running[0][0], 0)
    assert e_job[:en].tolist() == [j for j in order if j != 0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=12), st.integers(1, 20),
       st.integers(0, 3))
def test_first_fit_takes_what_the_engine_kernel_takes(free: list[int], u: int,
                                                     lo: int) -> None:
    node_free = np.array(free, I8)
    lo = min(lo, len(free))
    node_free[:lo] = 0  # every node below lo has no free slot
    flat_nodes, flat_counts = np.zeros(len(free), np.int32), np.zeros(len(free), np.int32)
    k, left = lp.first_fit(node_free, lo, u, flat_nodes, flat_counts, 0)
    nodes, counts = kernels._first_fit_py(node_free[:, None].copy(), np.ones(1, I8), u)
    if len(nodes) == 0:
        assert left > 0
        return
    assert left == 0 and flat_nodes[:k].tolist() == nodes.tolist()
    assert flat_counts[:k].tolist() == counts.tolist()
    before = node_free.copy()
    lo2 = lp.take(node_free, flat_nodes, flat_counts, 0, k, lo)
    assert (node_free >= 0).all() and int((before - node_free).sum()) == u
    assert (node_free[:lo2] == 0).all() and (lo2 == len(free) or node_free[lo2] > 0)
    back = lp.give_back(node_free, flat_nodes, flat_counts, 0, k, lo2)
    assert node_free.tolist() == before.tolist() and back == min(lo2, int(flat_nodes[0]))


def test_idle_wait_counts_from_the_first_idle_point() -> None:
    assert lp.idle_wait(-1, 5, False) == (-1, False)
    assert lp.idle_wait(-1, 5, True) == (5, False)
    assert lp.idle_wait(5, 5 + lp.IDLE_LIMIT, True) == (5, False)
    assert lp.idle_wait(5, 6 + lp.IDLE_LIMIT, True) == (5, True)
    assert lp.idle_wait(5, 6 + lp.IDLE_LIMIT, False) == (-1, False)


def test_gather_and_room() -> None:
    flat_nodes = np.array([3, 4, 0, 1, 2], np.int32)
    flat_counts = np.array([1, 2, 3, 1, 1], np.int32)
    offsets, nodes, counts = lp.gather(np.array([2, 0], I8), np.array([3, 2], I8), 2,
                                       flat_nodes, flat_counts)
    assert offsets.tolist() == [0, 3, 5]
    assert nodes.tolist() == [0, 1, 2, 3, 4] and counts.tolist() == [3, 1, 1, 1, 2]
    a = np.arange(3, dtype=I8)
    assert lp.room(a, 3) is a
    b = lp.room(a, 4)
    assert b.shape[0] == 6 and b[:3].tolist() == [0, 1, 2]
    rows = lp.room_rows(np.ones((2, 3), I8), 5)
    assert rows.shape == (5, 3) and rows[:2].sum() == 6
