"""``simulate()``: the one call that runs a dispatcher on a workload and a platform."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.engine.compiled.select import run_engine
from dispatchlab.engine.simulator import Simulator
from dispatchlab.metrics.audit import audit
from dispatchlab.metrics.results import Results
from dispatchlab.metrics.rules_audit import audit_rules
from dispatchlab.platform.platform import Platform
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload.workload import Workload


def simulate(
    workload: Workload | str | Path,
    platform: Platform | str,
    dispatcher: Dispatcher | str = "fifo",
    *,
    seed: int = 0,
    on_infeasible: str = "error",
    progress: Callable[[int, int], None] | None = None,
    check: bool = True,
    engine: str = "auto",
    **load_options: Any,
) -> Results:
    """Simulate ``workload`` on ``platform`` under ``dispatcher`` and return the results.

    Strings are resolved: a workload path is loaded (format detected; ``load_options``
    go to the reader), a platform spec/preset/file is parsed, a dispatcher name is
    looked up in the registry. ``check`` audits the finished schedule independently of
    the engine (capacity never exceeded, every job accounted for, kills at the wall-time) and
    against the operator rules (queues, reservations, heterogeneous jobs). ``engine``:
    ``auto`` runs common rule-based setups in the compiled loop (identical results) and
    everything else in the general one; ``compiled`` / ``general`` force one.
    """
    if not isinstance(workload, Workload):
        from dispatchlab.workload.load import load_workload

        workload = load_workload(workload, **load_options)
    plat = resolve_platform(platform)
    disp = get_dispatcher(dispatcher) if isinstance(dispatcher, str) else dispatcher
    config = {
        "workload": {"source": workload.source, "jobs": workload.n_jobs,
                     **{k: v for k, v in workload.meta.items() if k != "load_report"}},
        "platform": plat.describe(),
        "dispatcher": disp.describe(),
        "seed": seed,
        "on_infeasible": on_infeasible,
    }
    rec, ran_on = run_engine(Simulator(workload, plat, disp, seed=seed,
                                       on_infeasible=on_infeasible, progress=progress), engine)
    if check:
        audit(rec)
        audit_rules(rec)
    res = Results.from_recorder(rec, config)
    res.summary["audited"] = check
    res.summary["engine"] = ran_on
    return res
