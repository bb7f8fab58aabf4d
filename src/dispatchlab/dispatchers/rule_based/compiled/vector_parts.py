"""The pieces of the compiled loop for jobs whose units ask different resource vectors
(:mod:`.vector_loop`): first-fit on the node × resource free matrix, the pooled totals,
EASY's reservation on the matrix, and the engine's power meter on per-node usage.

Each mirrors the general loop's code it replaces, operation for operation (so that every
float is the same to the last bit):

- :func:`vfirst_fit` is the engine's ``first_fit_nodes`` kernel (nodes by index, as many
  units on each as its free resources hold);
- :func:`fits_total` / :func:`take_v` / :func:`give_v` are the workspace's pooled test and
  the engine's take and release;
- :func:`vreserve` is ``NodeMachine.reserve`` (expected ends released in order until the
  head fits, what stays free beside it then the *extra* matrix);
- :func:`node_part`, :func:`start_delta` and :func:`nodes_power` are
  :class:`~dispatchlab.engine.power_meter.MachinePower`'s ``_node_w`` (the engine's running
  sum), ``start_delta`` (what a dispatcher is told a start adds: node by node up to 8
  nodes, else numpy's vector formula and pairwise sum) and ``nodes_power`` (``easy-power``'s
  machine power at a future time).

Power modes (``mode``): 0 no node table (jobs draw their own power only), 1 the node model,
2 the job power column with idle nodes counted. ``tab`` holds per node its idle, first-core,
further-core, GPU and MIC figures; ``cols`` the columns of cores, GPUs and MICs (-1: none).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.dispatchers.rule_based.compiled.power_shadow import pairwise_sum

#: A shadow time meaning "no reservation can be made now" (the machine's ``NEVER``).
NEVER = 1 << 62
#: ``NodeMachine.reserve``'s limit of steps.
MAX_STEPS = 100_000
#: Placements on more nodes than this are costed with numpy's formula (the meter's).
VECTOR_FROM = 8

# ---- placement on the free matrix ----


def vfirst_fit(free: Any, extra: Any, beside: bool, req: Any, u: int, flat_nodes: Any,
               flat_counts: Any, at: int) -> tuple[int, int]:
    """First-fit of ``u`` units asking ``req`` each on ``free`` (``beside``: on
    ``min(free, extra)``), written at ``flat_*[at:]`` without taking it; returns
    ``(entries written, units left unplaced)``."""
    n_nodes, n_res = free.shape
    k = 0
    left = u
    nd = 0
    while left > 0 and nd < n_nodes:
        fit = left
        for r in range(n_res):
            q = req[r]
            if q > 0:
                f = free[nd, r]
                if beside and extra[nd, r] < f:
                    f = extra[nd, r]
                m = f // q
                if m < fit:
                    fit = m
        if fit > 0:
            flat_nodes[at + k] = nd
            flat_counts[at + k] = fit
            k += 1
            left -= fit
        nd += 1
    return k, left


def fits_total(ft: Any, req: Any, u: int) -> bool:
    """The job's demand fits the pooled free totals (the workspace's cheap test)."""
    for r in range(ft.shape[0]):
        if u * req[r] > ft[r]:
            return False
    return True


def any_free(ft: Any) -> bool:
    """Some resource is free somewhere (``NodeMachine.any_free``)."""
    for r in range(ft.shape[0]):
        if ft[r] != 0:
            return True
    return False


def take_v(free: Any, ft: Any, req: Any, u: int, flat_nodes: Any, flat_counts: Any, p: int,
           k: int) -> None:
    """Take placement ``flat_*[p:p + k]`` of a job asking ``req`` per unit."""
    n_res = free.shape[1]
    for a in range(k):
        nd = flat_nodes[p + a]
        c = flat_counts[p + a]
        for r in range(n_res):
            free[nd, r] -= c * req[r]
    for r in range(n_res):
        ft[r] -= u * req[r]


def give_v(free: Any, ft: Any, req: Any, u: int, flat_nodes: Any, flat_counts: Any, p: int,
           k: int) -> None:
    """Give placement ``flat_*[p:p + k]`` back."""
    n_res = free.shape[1]
    for a in range(k):
        nd = flat_nodes[p + a]
        c = flat_counts[p + a]
        for r in range(n_res):
            free[nd, r] += c * req[r]
    for r in range(n_res):
        ft[r] += u * req[r]


def vplace(alloc: Any, free: Any, req: Any, u: int, flat_nodes: Any, flat_counts: Any,
           at: int) -> tuple[int, int]:
    """The run's allocator on ``free``: the ``energy-model`` allocator (:func:`vplace_energy`)
    when ``alloc`` ``(energy, capacity, node model, its columns, load weights, work
    arrays)`` says so, else first-fit; written at ``flat_*[at:]``, returns ``(entries
    written, units left unplaced)``."""
    energy, cap, atab, acols, scale, work = alloc
    if energy:
        return vplace_energy(free, req, u, cap, atab, acols, scale, flat_nodes, flat_counts,
                             at, work)
    return vfirst_fit(free, free, False, req, u, flat_nodes, flat_counts, at)


# ---- EASY's reservation on the matrix ----


def vreserve(t: int, head: int, free: Any, ft: Any, req: Any, units: Any, e_time: Any,
             e_job: Any, en: int, alloc_pos: Any, alloc_len: Any, flat_nodes: Any,
             flat_counts: Any, future: Any, pooled: Any, extra: Any, scratch_n: Any,
             scratch_c: Any, alloc: Any) -> int:
    """The head's shadow time as ``NodeMachine.reserve`` makes it: from ``t + 1`` on, the
    running jobs' expected ends release their placements in order until the pooled totals
    hold the head's demand and the allocator (``alloc``: :func:`vplace`) places it;
    ``extra`` is set to what stays free beside it then (the free matrix itself, and
    :data:`NEVER`, when it never fits). ``future``/``pooled``/``scratch_*``: work arrays."""
    n_nodes, n_res = free.shape
    for nd in range(n_nodes):
        for r in range(n_res):
            future[nd, r] = free[nd, r]
    for r in range(n_res):
        pooled[r] = ft[r]
    need = units[head]
    hreq = req[head]
    soon = t + 1
    at = soon
    i = 0
    for _ in range(MAX_STEPS):
        while i < en and (e_time[i] if e_time[i] > soon else soon) <= at:
            j = e_job[i]
            p = alloc_pos[j]
            for a in range(alloc_len[j]):
                nd = flat_nodes[p + a]
                c = flat_counts[p + a]
                for r in range(n_res):
                    future[nd, r] += c * req[j, r]
            for r in range(n_res):
                pooled[r] += units[j] * req[j, r]
            i += 1
        if fits_total(pooled, hreq, need):
            k, left = vplace(alloc, future, hreq, need, scratch_n, scratch_c, 0)
            if left == 0:
                for a in range(k):
                    nd = scratch_n[a]
                    for r in range(n_res):
                        future[nd, r] -= scratch_c[a] * hreq[r]
                for nd in range(n_nodes):
                    for r in range(n_res):
                        extra[nd, r] = future[nd, r]
                return at
        if i >= en:
            break
        nxt = e_time[i]
        at = nxt if nxt > at + 1 else at + 1
    for nd in range(n_nodes):
        for r in range(n_res):
            extra[nd, r] = free[nd, r]
    return NEVER


# ---- the engine's power meter on per-node usage ----


def _on_w(tab: Any, cols: Any, count_idle: bool, nd: int, cu: int, gu: int, mu: int) -> float:
    """``MachinePower._on_w``: an on node's W with this much in use (node model)."""
    w = tab[nd, 0] if count_idle else 0.0
    if cols[0] >= 0 and cu > 0:
        w += tab[nd, 1] + (cu - 1) * tab[nd, 2]
    if cols[1] >= 0:
        w += gu * tab[nd, 3]
    if cols[2] >= 0:
        w += mu * tab[nd, 4]
    return w


def _active(tab: Any, cols: Any, nd: int, cu: int, gu: int, mu: int) -> float:
    """``NodePowerTable.active`` for one node (W above idle; numpy's order of operations)."""
    out = 0.0
    if cols[0] >= 0:
        out += (tab[nd, 1] + (cu - 1.0) * tab[nd, 2]) if cu > 0 else 0.0
    if cols[1] >= 0:
        out += gu * tab[nd, 3]
    if cols[2] >= 0:
        out += mu * tab[nd, 4]
    return out


def _used(cap: Any, free: Any, nd: int, col: int) -> int:
    """What is in use of column ``col`` on node ``nd`` (0 when the platform has none)."""
    return cap[nd, col] - free[nd, col] if col >= 0 else 0


def _busy(cap: Any, free: Any, nd: int) -> bool:
    """Anything in use on node ``nd``."""
    for r in range(cap.shape[1]):
        if cap[nd, r] != free[nd, r]:
            return True
    return False


def node_part(mode: int, tab: Any, cols: Any, count_idle: bool, cap: Any, free: Any,
              nd: int) -> float:
    """What node ``nd`` draws with ``free`` left (``MachinePower._node_w``, node on)."""
    if mode == 0:
        return 0.0
    if mode == 1:
        return _on_w(tab, cols, count_idle, nd, _used(cap, free, nd, cols[0]),
                     _used(cap, free, nd, cols[1]), _used(cap, free, nd, cols[2]))
    return 0.0 if _busy(cap, free, nd) else tab[nd, 0]


def reread(mode: int, tab: Any, cols: Any, count_idle: bool, cap: Any, free: Any,
           cur_w: Any, flat_nodes: Any, p: int, k: int) -> float:
    """The nodes ``flat_nodes[p:p + k]`` re-read into ``cur_w``; the change of their sum
    (``MachinePower.refresh``)."""
    delta = 0.0
    for a in range(k):
        nd = flat_nodes[p + a]
        w = node_part(mode, tab, cols, count_idle, cap, free, nd)
        delta += w - cur_w[nd]
        cur_w[nd] = w
    return delta


def start_delta(mode: int, tab: Any, cols: Any, count_idle: bool, cap: Any, free: Any,
                own_w: float, req: Any, flat_nodes: Any, flat_counts: Any, p: int, k: int,
                vals: Any) -> float:
    """What a start on ``flat_*[p:p + k]`` adds from ``free`` (``MachinePower.start_delta``,
    every node on); ``own_w``: the job's own power; ``vals``: a work array."""
    out = own_w
    if mode == 0:
        return out
    c, g, m = cols[0], cols[1], cols[2]
    rc = req[c] if c >= 0 else 0
    rg = req[g] if g >= 0 else 0
    rm = req[m] if m >= 0 else 0
    if k > VECTOR_FROM:
        n_v = 0
        for a in range(k):
            nd = flat_nodes[p + a]
            if mode == 1:
                cu, gu, mu = _used(cap, free, nd, c), _used(cap, free, nd, g), \
                    _used(cap, free, nd, m)
                n_c = flat_counts[p + a]
                vals[n_v] = (_active(tab, cols, nd, cu + n_c * rc, gu + n_c * rg, mu + n_c * rm)
                             - _active(tab, cols, nd, cu, gu, mu))
                n_v += 1
            elif not _busy(cap, free, nd):
                vals[n_v] = tab[nd, 0]
                n_v += 1
        if mode == 1:
            return out + pairwise_sum(vals, n_v)
        return out - pairwise_sum(vals, n_v)
    for a in range(k):
        nd = flat_nodes[p + a]
        if mode == 1:
            cu, gu, mu = _used(cap, free, nd, c), _used(cap, free, nd, g), \
                _used(cap, free, nd, m)
            n_c = flat_counts[p + a]
            out += (_on_w(tab, cols, count_idle, nd, cu + n_c * rc, gu + n_c * rg,
                          mu + n_c * rm)
                    - _on_w(tab, cols, count_idle, nd, cu, gu, mu))
        else:  # job power: a node's idle power goes once something runs on it
            out += 0.0 - (0.0 if _busy(cap, free, nd) else tab[nd, 0])
    return out


def nodes_power(mode: int, tab: Any, cols: Any, count_idle: bool, cap: Any, free: Any,
                vals: Any, state: Any, down_w: Any) -> float:
    """The node part of the IT power with ``free`` left (``MachinePower.nodes_power``, the
    nodes in ``state``: an on node by its usage, a down one draws ``down_w``; per node, then
    numpy's pairwise sum); ``vals``: a work array."""
    n_nodes = free.shape[0]
    if mode == 0:
        return 0.0
    for nd in range(n_nodes):
        if state[nd] != 0:  # (not on: its state's figure)
            vals[nd] = down_w[nd]
        elif mode == 1:
            a = _active(tab, cols, nd, _used(cap, free, nd, cols[0]),
                        _used(cap, free, nd, cols[1]), _used(cap, free, nd, cols[2]))
            vals[nd] = tab[nd, 0] + a if count_idle else a
        else:
            vals[nd] = 0.0 if _busy(cap, free, nd) else tab[nd, 0]
    return pairwise_sum(vals, n_nodes)


# ---- the energy-model allocator (prb-power's) ----


def vplace_energy(free: Any, req: Any, u: int, cap: Any, atab: Any, acols: Any, scale: Any,
                  flat_nodes: Any, flat_counts: Any, at: int, work: Any) -> tuple[int, int]:
    """``MarginalPowerFirst.place``: the nodes with room for a unit ranked by the marginal
    power of one more unit (the platform's node model, rounded to 9 decimals), then by load
    (free capacity normalized per resource: ``scale``), then by index, filled in that order
    with as many units as each holds; written at ``flat_*[at:]`` by node index. Returns
    ``(entries written, units left unplaced)``. ``work``: ``(nodes, fit, key, load)``
    arrays of one entry per node."""
    n_nodes, n_res = free.shape
    cand, fitv, key, load = work
    nc = 0
    total = 0
    for nd in range(n_nodes):
        fit = -1
        for r in range(n_res):
            q = req[r]
            if q > 0:
                m = free[nd, r] // q
                if fit < 0 or m < fit:
                    fit = m
        if fit > 0:
            cand[nc] = nd
            fitv[nc] = fit
            total += fit
            nc += 1
    if total < u:
        return 0, u
    for c in range(nc):
        nd = cand[c]
        s = 0.0
        for r in range(n_res):
            s += free[nd, r] * scale[r]
        load[c] = s
        cu, gu, mu = _used(cap, free, nd, acols[0]), _used(cap, free, nd, acols[1]), \
            _used(cap, free, nd, acols[2])
        rc = req[acols[0]] if acols[0] >= 0 else 0
        rg = req[acols[1]] if acols[1] >= 0 else 0
        rm = req[acols[2]] if acols[2] >= 0 else 0
        extra = (_active(atab, acols, nd, cu + rc, gu + rg, mu + rm)
                 - _active(atab, acols, nd, cu, gu, mu))
        key[c] = np.rint(extra * 1e9) / 1e9
    # insertion sort of the candidates by (key, load, index): np.lexsort, stable
    for c in range(1, nc):
        nd, f, k, ld = cand[c], fitv[c], key[c], load[c]
        b = c
        while b > 0 and (key[b - 1] > k or (key[b - 1] == k and load[b - 1] > ld)):
            cand[b], fitv[b], key[b], load[b] = cand[b - 1], fitv[b - 1], key[b - 1], load[b - 1]
            b -= 1
        cand[b], fitv[b], key[b], load[b] = nd, f, k, ld
    # fill in rank order, then write the chosen nodes by index
    left = u
    n_put = 0
    while left > 0:
        take = fitv[n_put] if fitv[n_put] < left else left
        fitv[n_put] = take
        left -= take
        n_put += 1
    for c in range(1, n_put):  # by node index
        nd, f = cand[c], fitv[c]
        b = c
        while b > 0 and cand[b - 1] > nd:
            cand[b], fitv[b] = cand[b - 1], fitv[b - 1]
            b -= 1
        cand[b], fitv[b] = nd, f
    for c in range(n_put):
        flat_nodes[at + c] = cand[c]
        flat_counts[at + c] = fitv[c]
    return n_put, 0
