"""The event loop of the authors' simulator (``simu.cc``'s ``simulate`` and the functions it
calls), statement by statement, on arrays, so that Numba compiles it whole
(:mod:`.authors_sim` sets it up and reads the result).

Names follow the C++: ``find_and_alloc`` is ``findAndAlloc``, ``first_fit`` ``FFit``,
``try_queue`` ``tryQueue``, ``realloc`` ``realloc``, ``update_muse`` ``updateMuse``.
Events are whole-number keys ``(time · 5 + type) · 2³¹ + machine + 1`` (the C++ orders
them by time, type name, then machine field) with the job as payload; queued jobs are
keyed by their release. Mutable scalars live in ``IS`` (integers) and ``FS`` (floats).
"""

from __future__ import annotations

import math

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.variable_capacity.authors_books import trim, try_place
from dispatchlab.dispatchers.variable_capacity.cpp_heap import heap_pop, heap_push

# event types, ranked as simu.cc's strings compare: Astart < Cend < Change < Farrival < xCut
ASTART, CEND, CHANGE, ARRIVAL, CUT = 0, 1, 2, 3, 4
MULT = 1 << 31
# job states
EXISTS, ASSIGNED, STARTED, COMPLETED, INTERRUPTED = 0, 1, 2, 3, 4
# IS slots
NE, NQ, MSPACE, COUNT_W, REALLOCS, PLACEMENTS, ABORTS, ERROR = 0, 1, 2, 3, 4, 5, 6, 7
# FS slots
WASTE, AREA, UTIL_DONE, UTIL_TOT, MAX_ST, SUM_ST, N_DONE2, N_DONE, N_START = range(9)
# ERROR values
OK, LOOPS, NEGATIVE, OVERWORK = 0, 1, 2, 3


def event_key(t: float, typ: int, mach: int) -> int:
    """The heap key of an event."""
    return (int(t) * 5 + typ) * MULT + mach + 1


def push_event(EK: IntArray, EP: IntArray, IS: IntArray, t: float, typ: int, mach: int,
               job: int) -> None:
    """Push one event."""
    IS[NE] = heap_push(EK, EP, IS[NE], event_key(t, typ, mach), job)


def assign(job: int, m: int, start: float, end: float, stretch: float, status: IntArray,
           machine: IntArray, stretch_a: FloatArray, start_t: FloatArray, rstart: FloatArray,
           end_t: FloatArray, EK: IntArray, EP: IntArray, IS: IntArray) -> None:
    """A placement: the job's fields, then its start and end events (in that order)."""
    status[job] = ASSIGNED
    machine[job] = m
    stretch_a[job] = stretch
    start_t[job] = start
    rstart[job] = start
    end_t[job] = end
    push_event(EK, EP, IS, start, ASTART, m, job)
    push_event(EK, EP, IS, end, CEND, m, job)
    IS[PLACEMENTS] += 1


def alloc_to_mach(m: int, now: float, t: float, job: int, smax: float, nodes: int,
                  BP: IntArray, BT: FloatArray, BN: IntArray, SP: IntArray, ST: FloatArray,
                  rel: FloatArray, length: FloatArray, np_: IntArray, status: IntArray,
                  machine: IntArray, stretch_a: FloatArray, start_t: FloatArray,
                  rstart: FloatArray, end_t: FloatArray, EK: IntArray, EP: IntArray,
                  IS: IntArray) -> float:
    """``allocToMach``: 0 when placed, else the stretch it would have had."""
    placed, start, stretch = try_place(BP, BT, BN, m, nodes, now, t, np_[job], rel[job],
                                       length[job], smax, SP, ST)
    if not placed:
        return stretch
    assign(job, m, start, start + t, stretch, status, machine, stretch_a, start_t, rstart,
           end_t, EK, EP, IS)
    return 0.0


def find_and_alloc(target: int, now: float, t: float, job: int, smax: float, max_dist: int,
                   muse: int, first_one: bool, wait: IntArray, successes: FloatArray,
                   nodes: int, BP: IntArray, BT: FloatArray, BN: IntArray, SP: IntArray,
                   ST: FloatArray, rel: FloatArray, length: FloatArray, np_: IntArray,
                   status: IntArray, machine: IntArray, stretch_a: FloatArray,
                   start_t: FloatArray, rstart: FloatArray, end_t: FloatArray,
                   EK: IntArray, EP: IntArray, IS: IntArray) -> None:
    """``findAndAlloc`` (``target < 0``: a job running at the window start)."""
    cont = target >= 0
    if not cont:
        target = 0
    first_t = 1.0 if first_one else smax
    successes[:] = -1.0
    success = alloc_to_mach(target, now, t, job, first_t, nodes, BP, BT, BN, SP, ST, rel,
                            length, np_, status, machine, stretch_a, start_t, rstart,
                            end_t, EK, EP, IS)
    chosen = target
    if success > 0:
        successes[target] = success
        for i in range(1, max_dist + 1):
            if target + i < muse:
                success = alloc_to_mach(target + i, now, t, job, first_t, nodes, BP, BT,
                                        BN, SP, ST, rel, length, np_, status, machine,
                                        stretch_a, start_t, rstart, end_t, EK, EP, IS)
                if success == 0:
                    chosen = target + i
                    break
                successes[target + i] = success
            if target - i >= 0:
                success = alloc_to_mach(target - i, now, t, job, first_t, nodes, BP, BT,
                                        BN, SP, ST, rel, length, np_, status, machine,
                                        stretch_a, start_t, rstart, end_t, EK, EP, IS)
                if success == 0:
                    chosen = target - i
                    break
                successes[target - i] = success
    if success > 0 and cont:
        mini = successes[target]
        imini = target
        for i in range(len(successes)):
            if successes[i] > 0 and successes[i] < mini:
                mini = successes[i]
                imini = i
        alloc_to_mach(imini, now, t, job, mini, nodes, BP, BT, BN, SP, ST, rel, length,
                      np_, status, machine, stretch_a, start_t, rstart, end_t, EK, EP, IS)
        chosen = imini
    wait[chosen] += 1


def compute_mspace(alive: int, nodes: int, util: IntArray, IS: IntArray) -> None:
    """``computeMSpace``: the most free cores on one alive machine."""
    best = 0
    for i in range(alive):
        if nodes - util[i] > best:
            best = nodes - util[i]
    IS[MSPACE] = best


def first_fit(shuf: IntArray, job: int, now: float, t: float, alive: int, nodes: int,
              util: IntArray, rel: FloatArray, length: FloatArray, np_: IntArray,
              status: IntArray, machine: IntArray, stretch_a: FloatArray,
              start_t: FloatArray, rstart: FloatArray, end_t: FloatArray, EK: IntArray,
              EP: IntArray, IS: IntArray) -> bool:
    """``FFit``: the first machine of ``shuf`` that is alive and has the cores, now."""
    c = np_[job]
    stretch = (now + t - rel[job]) / length[job]
    for k in range(len(shuf)):
        m = shuf[k]
        if m < alive and util[m] + c <= nodes:
            comp = nodes - util[m] == IS[MSPACE]
            util[m] += c
            assign(job, m, now, now + t, stretch, status, machine, stretch_a, start_t,
                   rstart, end_t, EK, EP, IS)
            if comp:
                compute_mspace(alive, nodes, util, IS)
            return True
    return False


def compute_util(muse: int, wait: IntArray, BP: IntArray, f32: FloatArray) -> float:
    """``computeUtil``: mean load of the first ``muse`` machines (single-precision shares,
    as the C++ computes them)."""
    util = 0.0
    for i in range(muse):
        if wait[i] > 0:
            util += 1.0
        else:
            util += f32[BP[i, 0]]
    return util / muse


def update_muse(muse: int, alive: int, safe: int, low: float, high: float, wait: IntArray,
                BP: IntArray, f32: FloatArray, IS: IntArray) -> int:
    """``updateMuse``; flags ``LOOPS`` when it would never return (it would flip between
    two sizes for ever: nothing changes inside it)."""
    went = 0
    while True:
        u = compute_util(muse, wait, BP, f32)
        if u < low and muse > safe:
            if went > 0:
                IS[ERROR] = LOOPS
                return muse
            went = -1
            muse -= 1
            if muse == safe:
                break
        elif u > high and muse < alive:
            if went < 0:
                IS[ERROR] = LOOPS
                return muse
            went = 1
            muse += 1
            if muse == alive:
                break
        else:
            break
    return muse


def target_machine(perc: float, muse: int, packed: bool) -> int:
    """``getTargetMachine``."""
    if packed:
        choices = max(1, muse // 5)
        temp = math.floor(perc * choices)
        if temp == choices:
            temp -= 1
        return int(temp * 5)
    if perc * muse == muse:
        return muse - 1
    return math.floor(perc * muse)


def check_bounds(initial: int, var_m: IntArray, safe: int, algo: bool, n_machines: int,
                 BP: IntArray) -> None:
    """The machine indices the loop reaches are below the largest alive count and, for the
    target strategies, ``safe`` (``M_use`` starts at ``(alive + safe) / 2``, grows up to the
    alive count and shrinks down to ``safe``): the books must have that many rows and the
    platform that many machines. The target strategies also need ``M_use ≥ 1`` (their
    target is ``M_use − 1`` at most): one machine alive at all times and ``safe ≥ 1``."""
    top = initial
    low = initial
    for k in range(len(var_m)):
        top = max(top, var_m[k])
        low = min(low, var_m[k])
    # first fit never uses M_use; the books need one row at least
    reach = max(top, safe if algo else 0, 1)
    if low < 0 or safe < 0:
        raise ValueError("authors' loop: a negative machine count or safe")
    if reach > BP.shape[0] or reach > n_machines:
        raise ValueError("authors' loop: machine indices reach past the books or platform")
    if algo and (low < 1 or safe < 1):
        raise ValueError("authors' loop: target strategies need M_use >= 1")


def run_loop(rel: FloatArray, length: FloatArray, np_: IntArray, inifac: FloatArray,
             perc: FloatArray, EK: IntArray, EP: IntArray, QK: IntArray, QP: IntArray,
             TK: IntArray, TP: IntArray, var_t: FloatArray, var_m: IntArray, initial: int,
             shuf: IntArray, BP: IntArray, BT: FloatArray, SP: IntArray, ST: FloatArray,
             f32: FloatArray, n_machines: int, nodes: int, safe: int, max_dist: int,
             algo: bool, packed: bool, first_one: bool, low: float, high: float,
             start: float, end: float, counted_from: float, IS: IntArray,
             FS: FloatArray) -> None:
    """``simulate`` from its main loop to the cut; results in ``IS`` and ``FS``.

    ``EK``/``EP`` hold the arrivals already (pushed in file order, as ``getAllJobs``).
    Raises ``ValueError`` before anything runs when an index the loop can reach (a machine
    up to ``max(alive counts, safe)``, ``M_use − 1`` of the target strategies) is outside
    the arrays it is given (:func:`check_bounds`)."""
    check_bounds(initial, var_m, safe, algo, n_machines, BP)
    n = len(rel)
    status = np.zeros(n, np.int64)
    machine = np.full(n, -1, np.int64)
    stretch_a = np.zeros(n, np.float64)  # uninitialised in simu.cc until a placement
    start_t = np.full(n, -1.0)
    rstart = np.full(n, -1.0)
    end_t = np.full(n, -1.0)
    fac = inifac.copy()
    BN = np.ones(BP.shape[0], np.int64)
    wait = np.zeros(BP.shape[0], np.int64)
    util = np.zeros(BP.shape[0], np.int64)
    successes = np.full(n_machines, -1.0)
    push_event(EK, EP, IS, end, CUT, -1, -1)
    alive = initial
    compute_mspace(alive, nodes, util, IS)
    muse = (alive + safe) // 2
    nv = 0
    if nv < len(var_t):
        push_event(EK, EP, IS, var_t[nv], CHANGE, var_m[nv], -1)
        nv += 1
    smax = 1.0
    last_change = start
    while IS[NE] > 0:
        key = EK[0]
        j = EP[0]
        IS[NE] = heap_pop(EK, EP, IS[NE])
        tt = key // MULT
        now = float(tt // 5)
        typ = tt % 5
        extra = key % MULT - 1
        if typ == ARRIVAL:
            FS[N_START] += 1
            t = length[j] - fac[j]
            if algo:
                if extra < start:
                    find_and_alloc(-1, now, t, j, smax, alive, muse, first_one, wait,
                                   successes, nodes, BP, BT, BN, SP, ST, rel, length, np_,
                                   status, machine, stretch_a, start_t, rstart, end_t, EK,
                                   EP, IS)
                else:
                    find_and_alloc(target_machine(perc[j], muse, packed), now, t, j, smax,
                                   max_dist, muse, first_one, wait, successes, nodes, BP,
                                   BT, BN, SP, ST, rel, length, np_, status, machine,
                                   stretch_a, start_t, rstart, end_t, EK, EP, IS)
            elif extra < start:
                if IS[MSPACE] >= np_[j]:
                    first_fit(shuf, j, now, t, alive, nodes, util, rel, length, np_, status,
                              machine, stretch_a, start_t, rstart, end_t, EK, EP, IS)
            else:
                found = False
                if IS[MSPACE] > np_[j]:
                    found = first_fit(shuf, j, now, t, alive, nodes, util, rel, length, np_,
                                      status, machine, stretch_a, start_t, rstart, end_t,
                                      EK, EP, IS)
                if not found:
                    IS[NQ] = heap_push(QK, QP, IS[NQ], int(rel[j]), j)
            if stretch_a[j] > smax:
                smax = stretch_a[j]
        elif typ == CHANGE:
            count = extra
            if count != alive:
                if last_change > counted_from:
                    FS[AREA] += (now - last_change) * alive
                elif now > counted_from:
                    FS[AREA] += (now - counted_from) * alive
                last_change = now
                if nv < len(var_t):
                    push_event(EK, EP, IS, var_t[nv], CHANGE, var_m[nv], -1)
                    nv += 1
                if alive < count:
                    alive = count
                    if algo:
                        muse = update_muse(muse, alive, safe, low, high, wait, BP, f32, IS)
                elif muse > count:
                    muse = count
                alive = count
                compute_mspace(alive, nodes, util, IS)
                smax = realloc(alive, muse, now, smax, shuf, counted_from, max_dist, algo,
                               packed, first_one, perc, wait, util, successes, nodes, BP,
                               BT, BN, SP, ST, rel, length, np_, fac, status, machine,
                               stretch_a, start_t, rstart, end_t, EK, EP, QK, QP, TK, TP,
                               IS, FS)
                if algo:
                    muse = update_muse(muse, alive, safe, low, high, wait, BP, f32, IS)
            elif nv < len(var_t):
                push_event(EK, EP, IS, var_t[nv], CHANGE, var_m[nv], -1)
                nv += 1
        elif typ == ASTART:
            if start_t[j] == now and status[j] != STARTED:
                if algo:
                    trim(BP, BT, BN, extra, now)
                    wait[extra] -= 1
                    muse = update_muse(muse, alive, safe, low, high, wait, BP, f32, IS)
                status[j] = STARTED
        elif typ == CEND:
            if end_t[j] == now and status[j] != COMPLETED:
                if algo:
                    trim(BP, BT, BN, extra, now)
                else:
                    util[extra] -= np_[j]
                    if nodes - util[extra] > IS[MSPACE]:
                        IS[MSPACE] = nodes - util[extra]
                    if util[extra] < 0:
                        IS[ERROR] = NEGATIVE
                        return
                status[j] = COMPLETED
                st = (now - rel[j]) / length[j]
                if now > counted_from:
                    FS[SUM_ST] += st
                    if st > FS[MAX_ST]:
                        FS[MAX_ST] = st
                    FS[N_DONE2] += 1
                else:
                    FS[N_DONE] += 1
                if algo:
                    muse = update_muse(muse, alive, safe, low, high, wait, BP, f32, IS)
                if rstart[j] > counted_from:
                    if not now - rstart[j] > length[j]:
                        FS[UTIL_DONE] += (length[j] - inifac[j]) * np_[j]
                elif now > counted_from:
                    FS[UTIL_DONE] += (now - counted_from) * np_[j]
                if not algo:
                    smax = try_queue(now, smax, muse, alive, shuf, max_dist, algo, packed,
                                     first_one, perc, wait, util, successes, nodes, BP, BT,
                                     BN, SP, ST, rel, length, np_, status, machine,
                                     stretch_a, start_t, rstart, end_t, EK, EP, QK, QP,
                                     TK, TP, IS)
        elif typ == CUT:
            FS[AREA] += (now - last_change) * alive
            FS[UTIL_TOT] = FS[UTIL_DONE]
            for k in range(n):
                if status[k] == STARTED:
                    if rstart[k] > counted_from:
                        FS[UTIL_TOT] += (now - rstart[k]) * np_[k]
                    else:
                        FS[UTIL_TOT] += (now - counted_from) * np_[k]
                    if now - rstart[k] > length[k]:
                        IS[ERROR] = OVERWORK
                        return
            return
        if IS[ERROR] != OK:
            return


def try_queue(now: float, smax: float, muse: int, alive: int, shuf: IntArray,
              max_dist: int, algo: bool, packed: bool, first_one: bool, perc: FloatArray,
              wait: IntArray, util: IntArray, successes: FloatArray, nodes: int,
              BP: IntArray, BT: FloatArray, BN: IntArray, SP: IntArray, ST: FloatArray,
              rel: FloatArray, length: FloatArray, np_: IntArray, status: IntArray,
              machine: IntArray, stretch_a: FloatArray, start_t: FloatArray,
              rstart: FloatArray, end_t: FloatArray, EK: IntArray, EP: IntArray,
              QK: IntArray, QP: IntArray, TK: IntArray, TP: IntArray, IS: IntArray) -> float:
    """``tryQueue``: every queued job in release order (first fit: while a machine has a
    free core; the jobs left are queued again through a second heap, as in the C++)."""
    nt = 0
    while IS[NQ] > 0 and (algo or IS[MSPACE] > 0):
        j = QP[0]
        t = length[j]
        found = False
        if algo:
            find_and_alloc(target_machine(perc[j], muse, packed), now, t, j, smax, max_dist,
                           muse, first_one, wait, successes, nodes, BP, BT, BN, SP, ST, rel,
                           length, np_, status, machine, stretch_a, start_t, rstart, end_t,
                           EK, EP, IS)
        elif IS[MSPACE] >= np_[j]:
            found = first_fit(shuf, j, now, t, alive, nodes, util, rel, length, np_, status,
                              machine, stretch_a, start_t, rstart, end_t, EK, EP, IS)
        if stretch_a[j] > smax:
            smax = stretch_a[j]
        IS[NQ] = heap_pop(QK, QP, IS[NQ])
        if not algo and not found:
            nt = heap_push(TK, TP, nt, int(rel[j]), j)
    while nt > 0:
        IS[NQ] = heap_push(QK, QP, IS[NQ], TK[0], TP[0])
        nt = heap_pop(TK, TP, nt)
    return smax


def reset_job(j: int, status: IntArray, machine: IntArray, start_t: FloatArray,
              rstart: FloatArray, end_t: FloatArray, fac: FloatArray) -> None:
    """``resetJob``."""
    status[j] = INTERRUPTED
    start_t[j] = -1.0
    rstart[j] = -1.0
    end_t[j] = -1.0
    machine[j] = -1
    fac[j] = 0.0


def realloc(alive: int, muse: int, now: float, smax: float, shuf: IntArray,
            counted_from: float, max_dist: int, algo: bool, packed: bool, first_one: bool,
            perc: FloatArray, wait: IntArray, util: IntArray, successes: FloatArray,
            nodes: int, BP: IntArray, BT: FloatArray, BN: IntArray, SP: IntArray,
            ST: FloatArray, rel: FloatArray, length: FloatArray, np_: IntArray,
            fac: FloatArray, status: IntArray, machine: IntArray, stretch_a: FloatArray,
            start_t: FloatArray, rstart: FloatArray, end_t: FloatArray, EK: IntArray,
            EP: IntArray, QK: IntArray, QP: IntArray, TK: IntArray, TP: IntArray,
            IS: IntArray, FS: FloatArray) -> float:
    """``realloc``: books emptied; jobs on machines that left are aborted (their work so
    far is waste), reservations not started are dropped, both queued again; running jobs
    are booked again from now (target strategies) or counted (first fit); then the
    queue is placed."""
    IS[REALLOCS] += 1
    BN[:] = 1
    BP[:, 0] = 0
    BT[:, 0] = 0.0
    wait[:] = 0
    util[:] = 0
    for j in range(len(rel)):
        st = status[j]
        if st != STARTED and st != ASSIGNED:
            continue
        if machine[j] >= alive:
            if st == STARTED:
                IS[COUNT_W] += 1
                IS[ABORTS] += 1
                if rstart[j] > counted_from:
                    FS[WASTE] += (now - rstart[j]) * np_[j]
                elif now > counted_from:
                    FS[WASTE] += (now - counted_from) * np_[j]
            reset_job(j, status, machine, start_t, rstart, end_t, fac)
            IS[NQ] = heap_push(QK, QP, IS[NQ], int(rel[j]), j)
        elif st == ASSIGNED:
            reset_job(j, status, machine, start_t, rstart, end_t, fac)
            IS[NQ] = heap_push(QK, QP, IS[NQ], int(rel[j]), j)
        elif algo:
            keep = rstart[j]
            mj = machine[j]
            alloc_to_mach(mj, now, end_t[j] - now, j, smax, nodes, BP, BT, BN, SP, ST, rel,
                          length, np_, status, machine, stretch_a, start_t, rstart, end_t,
                          EK, EP, IS)
            rstart[j] = keep
            wait[mj] += 1
            smax = max(smax, stretch_a[j])
        else:
            mj = machine[j]
            if mj < alive and util[mj] + np_[j] <= nodes:
                util[mj] += np_[j]
    return try_queue(now, smax, muse, alive, shuf, max_dist, algo, packed, first_one, perc,
                     wait, util, successes, nodes, BP, BT, BN, SP, ST, rel, length, np_,
                     status, machine, stretch_a, start_t, rstart, end_t, EK, EP, QK, QP, TK,
                     TP, IS)
