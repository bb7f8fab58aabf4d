"""One call from a workload to a plan: what the CLI and the hybrid pipeline use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.offline_plan.planner.instance import from_workload
from dispatchlab.dispatchers.offline_plan.planner.objective import ProfitModel
from dispatchlab.dispatchers.offline_plan.planner.plan import Plan
from dispatchlab.dispatchers.offline_plan.planner.searches import Limits, run_search
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.profit import DEFAULT_PRICES, Prices
from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Workload


def plan_jobs(
    workload: Workload,
    platform: Platform,
    table: PueTable,
    temperature: tuple[Sequence[int], Sequence[float]],
    *,
    rows: Sequence[int] | IntArray | None = None,
    search: str = "delay",
    prices: Prices = DEFAULT_PRICES,
    window: tuple[int, int] | None = None,
    duration: str = "runtime",
    step: int = 60,
    busy: Sequence[tuple[int, int, IntArray]] = (),
    limits: Limits | None = None,
    origin: int | None = None,
    watts_per_core: float | None = None,
    tariff: tuple[Sequence[int], Sequence[float]] = ((), ()),
    **options: Any,
) -> Plan:
    """Plan ``rows`` of ``workload`` (default: all) on ``platform`` with ``search``
    (``heuristic`` | ``multi`` | ``relax`` | ``delay``); ``temperature`` = (times s,
    °C) step series; ``window`` = the profit window (default: one day from the planning
    origin, itself the first submission unless given); ``tariff`` = (times s, price per
    kWh) step series replacing ``prices``' K2 over time. ``options`` go to the search
    (``ordering``, ``delay``, ``strict``, ``window_s``, ``extra_nodes``). The plan carries
    its profit and the search's statistics."""
    inst = from_workload(workload, platform, rows, duration=duration, origin=origin, step=step,
                         busy=busy, watts_per_core=watts_per_core)
    start, end = window if window is not None else (inst.origin, inst.origin + 86400)
    pm = ProfitModel(table, tuple(int(t) for t in temperature[0]),
                     tuple(float(v) for v in temperature[1]), start, end, prices,
                     price_times=tuple(int(t) for t in tariff[0]),
                     price_values=tuple(float(v) for v in tariff[1]))
    return run_search(search, inst, pm, limits or Limits(), **options).plan(inst)
