"""Why a run ended with jobs still queued on an idle machine: the queued jobs sorted by
cause, each cause with its count and one example job, for the engine's error."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.platform.platform import units_fitting

if TYPE_CHECKING:
    from dispatchlab.engine.simulator import Simulator


def stuck_cause(sim: Simulator) -> str:
    """``; `` and the causes: no node alive; jobs needing more units than the alive nodes
    hold; jobs their queue's rules keep from starting now; the power cap against what the
    machine draws; else the jobs that fit now and that the dispatcher starts none of."""
    view = sim.view
    if not view.alive.any():
        return ("; no node is alive: the scenario took every node away and brings none "
                "back")
    queued = sorted(view.queue)
    units = view.jobs.units
    alive_cap = view.capacity[view.alive]
    n_alive = int(view.alive.sum())
    too_big: list[int] = []
    held: list[int] = []
    fit: list[int] = []
    rules = view.rules
    for j in queued:
        if int(units_fitting(alive_cap, sim.req_of(j)).sum()) < int(units[j]):
            too_big.append(j)
        elif rules is not None and not rules.eligible(j, view.now):
            held.append(j)
        else:
            fit.append(j)
    causes: list[str] = []
    if too_big:
        j = too_big[0]
        host = int(units_fitting(alive_cap, sim.req_of(j)).sum())
        causes.append(f"{len(too_big)} need more than the {n_alive} alive nodes hold "
                      f"(e.g. job {sim.jid(j)}: {int(units[j])} units of "
                      f"{sim.req_of(j).tolist()}, the alive nodes host {host})")
    if held and rules is not None:
        j = held[0]
        why = rules.violation(j, view.now, np.empty(0, np.int64)) or "its queue's rules"
        causes.append(f"{len(held)} may not start now under their queue's rules (e.g. job "
                      f"{sim.jid(j)}: {why})")
    if fit:
        j = fit[0]
        power = power_hint(sim)
        causes.append(f"{len(fit)} fit the alive nodes" + (
            f" but not the power budget (e.g. job {sim.jid(j)}){power}" if power else
            f", yet the dispatcher started none of them (e.g. job {sim.jid(j)})"))
    return "; " + "; ".join(causes)


def power_hint(sim: Simulator) -> str:
    """Why a capped machine may be stuck: the cap against what it draws idle ("" without a
    power budget)."""
    b = sim.view.budget
    if b is None:
        return ""
    idle = sim.count_idle and sim.platform.power_table is not None
    return (f"; the power cap of {b.cap:.6g} W leaves {b.cap - b.used:.6g} W over what "
            f"the machine draws now ({b.used:.6g} W"
            + (", idle nodes included), maybe too little for these jobs: raise the cap, "
               "switch idle nodes off, or do not count idle power" if idle else
               "), maybe too little for these jobs: raise the cap"))
