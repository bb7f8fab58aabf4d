"""``dispatchlab simulate -d vc=NAME,semantics=authors``: the authors' variable-capacity
simulator's rules on an authors' job file and variation file (not a command of its own:
``simulate`` hands such specs here)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from dispatchlab.dispatchers.variable_capacity.authors import AuthorsVC, simulate_authors
from dispatchlab.errors import ConfigError
from dispatchlab.provenance import versions

console = Console()
#: the authors' machine (master.py: 152 machines of 24 cores)
DEFAULT_PLATFORM = (152, 24)


def machine_size(platform: str | None) -> tuple[int, int]:
    """Machines and cores per machine of ``-p`` (default: the authors' 152 × 24)."""
    if platform is None:
        return DEFAULT_PLATFORM
    from dispatchlab.platform.resolve import resolve_platform

    plat = resolve_platform(platform)
    cores = plat.capacity[:, plat.resources.index("cores")]
    if len(set(cores.tolist())) != 1:
        raise ConfigError("the authors' semantics needs machines of one size",
                          field="--platform")
    return plat.n_nodes, int(cores[0])


def refuse_engine_options(given: dict[str, bool]) -> None:
    """The authors' simulation has no power cap, power model, cooling or pricing, aborts
    and requeues as simu.cc does, reads its variation file from the window start and its
    job file whole: an engine or reader option given (``True`` in ``given``, by flag) is
    refused before the run rather than ignored."""
    flags = [flag for flag, used in given.items() if used]
    if flags:
        raise ConfigError(f"vc=…,semantics=authors runs the authors' simulator on their "
                          "files, which has no power cap, power or cooling model, engine "
                          f"options or reader options (it reads the job file whole): drop "
                          f"{', '.join(flags)}",
                          field=flags[0])


def run_authors(disp: AuthorsVC, workload: str, platform: str | None,
                scenario: list[str] | None, window_start: int | None, window: int | None,
                metrics_window: str | None, seed: int, as_json: bool) -> None:
    """Run and print (a table, or one JSON object with the set-up and versions)."""
    if not scenario or len(scenario) != 1:
        raise ConfigError("vc=…,semantics=authors needs one --scenario: the authors' "
                          "variation file (absolute times)", field="--scenario")
    if window_start is None or window is None or window <= 0 or window_start < 0:
        raise ConfigError("vc=…,semantics=authors needs --window-start ≥ 0 and --window > 0 "
                          "(the authors' start and window)", field="--window")
    metrics_from = None
    if metrics_window is not None:
        lo, _, hi = metrics_window.partition(",")
        try:
            a, b = int(lo), int(hi)
        except ValueError:
            raise ConfigError(f"expected START,T, got '{metrics_window}'",
                              field="--metrics-window") from None
        if b != window or not 0 <= a < b:
            raise ConfigError("with the authors' semantics the metrics run to the window's "
                              f"end: need 0 ≤ START < T = --window ({window})",
                              field="--metrics-window")
        metrics_from = window_start + a
    machines, cores = machine_size(platform)
    setup = disp.setup(window_start, window, machines, cores, metrics_from, seed)
    res = simulate_authors(workload, scenario[0], setup, disp.quantiles)
    if as_json:
        out: dict[str, Any] = {"dispatcher": disp.describe(), "setup": vars(setup),
                               **res.as_dict(), "versions": versions()}
        print(json.dumps(out, default=_plain, allow_nan=True))
        return
    counted = window_start if metrics_from is None else metrics_from
    table = Table(title=escape(f"{disp.name} on {workload}"), show_header=True)
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows = [
        (f"goodput over [{counted:,}, {window_start + window:,}) s", f"{res.goodput:.4f}"),
        ("aborted volume (share of alive core-time)", f"{res.aborted_share:.4f}"),
        ("alive core-time / work done", f"{res.area:,.0f} / {res.util_total:,.0f} core-s"),
        ("aborted work / aborts", f"{res.waste:,.0f} core-s / {res.aborts:,}"),
        ("stretch max / mean (completed)", f"{res.max_stretch:.1f} / {res.mean_stretch:.2f}"),
        ("completed share", f"{res.completed_share:.4f}"),
        ("machines × cores", f"{machines} × {cores}"),
        ("simu.cc's line (from the area on)", res.line()),
    ]
    for k, v in rows:
        table.add_row(k, v)
    console.print(table)
    if res.error:
        console.print(f"[yellow]warning:[/] simu.cc writes no result here: {escape(res.error)}")


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return str(value)
