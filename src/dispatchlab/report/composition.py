"""The composition matrix: every dispatcher preset × the scenario kinds a machine may have.

Each cell runs one preset on its family's small home setup (the bundled KTH slice, or the
family's own generator) under one scenario — none, nodes leaving and returning, a varying
power cap, a desired-utilization profile, a pricing scenario — and records whether it ran
with the audit passing (``ok``), was refused before the first event with a message naming
the missing capability (``refused``), or failed in any other way (``error``: a defect).

``python -m dispatchlab.report.composition [--out docs/composition.md] [--family F]``
prints the matrix as a Markdown table (docs/composition.md is generated this way).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.errors import DispatchlabError
from dispatchlab.platform.platform import Platform
from dispatchlab.traces.bundled import sample_trace
from dispatchlab.workload.workload import Workload

#: The scenario columns of the matrix, in order.
SCENARIOS = ("none", "nodes-leave", "power-cap", "desired-utilization", "pricing")

#: CP and DEC presets solve with these limits in the matrix (seconds per decision):
#: the composition, not the search, is under test.
FAST_SOLVER = {"delta": 0.005, "delta_max": 0.01}


@dataclass(frozen=True)
class Home:
    """A family's small setup: a workload spec (with reader options) and a platform spec."""

    workload: str
    platform: str | Callable[[], Platform]
    limit: int | None = None
    walltime_kill: bool = True
    #: rows every cell of the family has (the offline planners price with a temperature)
    base_scenario: str | None = None


def _kth_path() -> str:
    return str(sample_trace())


def _powered(nodes: int, cores: int, name: str) -> Callable[[], Platform]:
    """``nodes`` × ``cores`` with the generic node power model (SPEC §8, Mejri et al.'s
    Table 1: with one core per node it is the ``mejri-N`` preset plus its power figures)."""
    def build() -> Platform:
        from dispatchlab.platform.files import platform_from_mapping

        doc = {"nodes": [{"count": nodes, "capacity": {"cores": cores}}],
               "power_model": "generic"}
        return platform_from_mapping(doc, source="composition matrix", name=name)
    return build


#: Family → its home setup.
HOMES: dict[str, Home] = {
    "rule-based": Home(_kth_path(), _powered(100, 1, "kth-sp2-power"), limit=200),
    "cp": Home("gen:eurora-like:jobs=30,seed=1", "eurora"),
    "dec": Home("gen:eurora-like:jobs=30,seed=1", "eurora"),
    "pa-hpc-sim": Home("gen:eurora-like:jobs=30,seed=1", "eurora"),
    "dardis": Home(_kth_path(), _powered(100, 1, "kth-sp2-power"), limit=200),
    "offline-plan": Home("gen:eurora-like:jobs=40,seed=1", "eurora",
                         base_scenario="gen:temperature:season=summer,days=40"),
    "variable-capacity": Home("gen:vc-synthetic:kind=log,jobs=150,window=86400,machines=8,"
                              "seed=1", _powered(8, 24, "vc-8x24-power")),
    "malleable": Home("gen:mejri:jobs=40,seed=1", _powered(10, 1, "mejri-10-power"),
                      walltime_kill=False),
    "slurm": Home(_kth_path(), _powered(100, 1, "kth-sp2-power"), limit=200),
}


@dataclass(frozen=True)
class Cell:
    """One preset under one scenario: ``ok``, ``refused`` or ``error``, with a message."""

    family: str
    preset: str
    scenario: str
    outcome: str
    message: str
    seconds: float


def presets_by_family() -> dict[str, list[str]]:
    """Every registered preset, grouped by family (the order of ``dispatchlab dispatchers``)."""
    from dispatchlab.dispatchers.registry import presets

    out: dict[str, list[str]] = {}
    for entry in presets().values():
        out.setdefault(entry.family, []).append(entry.name)
    return out


#: Offline planners: a job power for the generator's jobs (thesis: 7.8-11.11 W per core)
#: and short searches.
OFFLINE_OPTIONS = {"heuristic": "", "multi": ",runs=4", "relax": ",runs=4,cpdet=0.2",
                   "delay": ",runs=10"}


def dispatcher_spec(family: str, preset: str) -> str:
    """The preset, with the matrix's tiny solver limits for the CP families and the
    offline planners' job power (the home generator has no power column)."""
    if family == "cp":
        return f"cp={preset}," + ",".join(f"{k}={v}" for k, v in FAST_SOLVER.items())
    if family == "offline-plan":
        from dispatchlab.dispatchers.offline_plan.presets import PRESETS

        search = PRESETS[preset][0]
        return f"offline={search},wpc=9.5{OFFLINE_OPTIONS[search]}"
    return preset


@cache
def _home_inputs(family: str) -> tuple[Workload, Platform]:
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.workload.load import load_workload

    home = HOMES[family]
    kwargs: dict[str, Any] = {} if home.limit is None else {"limit": home.limit}
    wl = load_workload(home.workload, **kwargs)
    plat = home.platform() if callable(home.platform) else resolve_platform(home.platform)
    return wl, plat


def scenario_for(kind: str, wl: Workload, plat: Platform) -> dict[str, Any]:
    """The ``simulate`` keyword arguments of scenario column ``kind`` on this setup: its
    changes fall at a quarter and at half of the submission span."""
    first, last = int(wl.submit.min()), int(wl.submit.max())
    t1 = first + max(1, (last - first) // 4)
    t2 = first + max(2, (last - first) // 2)
    if kind == "none":
        return {}
    if kind == "nodes-leave":
        n = plat.n_nodes
        rows = [Change(t1, "alive_nodes", float(max(1, (3 * n) // 4))),
                Change(t2, "alive_nodes", float(n))]
        return {"scenario": Scenario(rows, source="nodes leave and return")}
    if kind == "power-cap":
        return {"scenario": Scenario([Change(t1, "power_cap", _cap_watts(plat)),
                                      Change(t2, "power_cap", math.inf)],
                                     source="varying power cap")}
    if kind == "desired-utilization":
        return {"scenario": Scenario([Change(t1, "desired_utilization", 0.5, "cores"),
                                      Change(t2, "desired_utilization", 1.0, "cores")],
                                     source="desired utilization")}
    if kind == "pricing":
        days = max(1, math.ceil((last - first) / 86400) + 30)
        return {"cooling": "air", "prices": "cheap",
                "temperature": f"gen:temperature:season=summer,days={days}"}
    raise ValueError(f"unknown scenario column '{kind}'")


def _cap_watts(plat: Platform) -> float:
    """Idle power of every node plus half of what the busiest placement would add."""
    table = plat.power_table
    if table is None:
        return 1e6
    import numpy as np

    from dispatchlab.platform.node_states import ON

    nodes = np.arange(plat.n_nodes)
    idle = float(table["idle"].sum())
    peak = float(table.power(nodes, np.full(len(nodes), ON), plat.capacity).sum())
    return idle + 0.5 * (peak - idle)


def run_cell(family: str, preset: str, kind: str) -> Cell:
    """Run one cell; any exception other than a refusal is an ``error``."""
    from dispatchlab.energy.job_power import job_power_source
    from dispatchlab.simulation import simulate

    t0 = time.perf_counter()
    outcome, message = "ok", ""
    try:
        wl, plat = _home_inputs(family)
        extra = scenario_for(kind, wl, plat)
        base = HOMES[family].base_scenario
        if base is not None:
            extra["scenario"] = [base, *([extra["scenario"]] if "scenario" in extra else [])]
        source = job_power_source(None, wl, plat)
        res = simulate(wl, plat, dispatcher_spec(family, preset), seed=0, tables=False,
                       walltime_kill=HOMES[family].walltime_kill, power_model=source,
                       **extra)
        if not res.summary.get("audited"):
            outcome, message = "error", "not audited"
    except DispatchlabError as exc:
        text = str(exc)
        outcome = "refused" if "does not support" in text else "error"
        message = text
    except Exception as exc:
        outcome, message = "error", f"{type(exc).__name__}: {exc}"
    return Cell(family, preset, kind, outcome, message.splitlines()[0] if message else "",
                time.perf_counter() - t0)


def cells(families: Sequence[str] | None = None, presets: Sequence[str] | None = None,
          scenarios: Sequence[str] = SCENARIOS) -> Iterator[Cell]:
    """Every cell of the chosen families (default all), presets and scenario columns."""
    for family, names in presets_by_family().items():
        if families is not None and family not in families:
            continue
        for name in names:
            if presets is not None and name not in presets:
                continue
            for kind in scenarios:
                yield run_cell(family, name, kind)


def markdown(rows: Sequence[Cell]) -> str:
    """The matrix as a Markdown table: one row per preset, one column per scenario."""
    by_preset: dict[tuple[str, str], dict[str, Cell]] = {}
    for c in rows:
        by_preset.setdefault((c.family, c.preset), {})[c.scenario] = c
    kinds = [k for k in SCENARIOS if any(k in v for v in by_preset.values())]
    lines = ["| family | preset | " + " | ".join(kinds) + " |",
             "|---|---|" + "---|" * len(kinds)]
    notes: dict[str, int] = {}
    for (family, preset), row in by_preset.items():
        out = []
        for kind in kinds:
            cell = row.get(kind)
            if cell is None:
                out.append("")
            elif cell.outcome == "ok":
                out.append("runs")
            else:
                note = _note(cell.message)
                notes.setdefault(note, len(notes) + 1)
                out.append(f"{'refused' if cell.outcome == 'refused' else '**ERROR**'} "
                           f"[{notes[note]}]")
        lines.append(f"| {family} | `{preset}` | " + " | ".join(out) + " |")
    if notes:
        lines.append("")
        for text, number in notes.items():
            lines.append(f"{number}. {text}")
    return "\n".join(lines) + "\n"


def _note(message: str) -> str:
    """A refusal without the preset's name and the advice, shared by a family's presets."""
    text = re.sub(r"^field 'dispatcher': dispatcher '[^']*' ", "", message)
    return text.split(": choose another dispatcher")[0]


#: Columns of the capability table: field → heading.
CAPABILITY_COLUMNS = {
    "nodes_leaving": "nodes leaving",
    "fixed_power_cap": "fixed power cap",
    "varying_power_cap": "varying power cap",
    "multi_unit_jobs": "jobs of several units",
    "follows_desired_utilization": "follows a desired profile",
    "switches_power_states": "switches nodes off",
    "reshapes_malleable_jobs": "reshapes malleable jobs",
    "reads_pricing": "reads pricing inputs",
}


def capability_table() -> str:
    """Each family's declaration (``dispatchers/capabilities.py``) as a Markdown table:
    ``yes``/``no``, or how many presets when they differ."""
    from dispatchlab.dispatchers.registry import get_dispatcher
    from dispatchlab.engine.capabilities import capabilities_of

    lines = ["| family | " + " | ".join(CAPABILITY_COLUMNS.values()) + " |",
             "|---|" + "---|" * len(CAPABILITY_COLUMNS)]
    for family, names in presets_by_family().items():
        caps = [capabilities_of(get_dispatcher(n)) for n in names]
        cells = []
        for name in CAPABILITY_COLUMNS:
            yes = sum(bool(getattr(c, name)) for c in caps)
            cells.append("yes" if yes == len(caps) else "no" if not yes else
                         f"{yes} of {len(caps)} presets")
        lines.append(f"| {family} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


DOC_HEAD = """# What composes with what

Generated by `python -m dispatchlab.report.composition --out docs/composition.md`; do not
edit by hand.

Each dispatcher family declares once what it can be combined with (a `Capabilities`
record on its dispatcher class, `src/dispatchlab/engine/capabilities.py`).
`simulate`, `compare` and `run-experiment` (`--dry-run` included) compare it with what a
run asks for and refuse an unsupported combination before the first event, with one line
naming the dispatcher, its family and the missing capability:

    error: field 'dispatcher': dispatcher 'mejri-fifo' (family malleable) does not support
    a fixed power cap (--power-cap 1500 W): choose another dispatcher or drop that input

What a run may ask for: **nodes leaving** (`node_down`/`node_up`/`alive_nodes` rows,
capacity files, `gen:capacity-walk`), a **fixed power cap** (`--power-cap`), a **varying
power cap** (`power_cap` rows), **jobs of several units**. The other columns describe
behaviour and never refuse: a family that does not follow a desired-utilization profile
still runs under one (the profile is measured: `summary.profile`); one that does not
reshape malleable jobs runs them at their requested size; pricing inputs are used to
price every schedule, and only the families that read them plan with them. A custom
dispatcher that declares nothing is taken to support everything (the engine still
validates each decision).

## Capabilities by family

"""

MATRIX_HEAD = """
## The composition matrix

Every preset of every family on its family's small home setup (the bundled KTH slice,
200 jobs, on 100 one-core nodes with the generic power model; `gen:eurora-like` on
`eurora` for CP, DEC and the offline planners; `gen:vc-synthetic` for variable capacity;
`gen:mejri` on 10 servers with the Table 1 power figures for the malleable family) under
no scenario, nodes leaving (a quarter of the nodes from a quarter of the submission span,
back at half), a varying power cap (idle power plus half the busy headroom over the same
stretch), a desired-utilization profile (0.5 then 1) and a pricing scenario (air cooling,
summer temperature, cheap prices). CP presets run with tiny solver budgets
(`delta=0.005,delta_max=0.01`), the offline planners with short searches and 9.5 W per
core. *runs*: the run finished and its audit passed; *refused*: refused before the first
event with the numbered message. `tests/composition/test_matrix.py` checks every cell
(a subset in the default cells, the rest marked slow).

"""


def document(rows: Sequence[Cell]) -> str:
    """docs/composition.md: the capability table and the matrix."""
    return DOC_HEAD + capability_table() + MATRIX_HEAD + markdown(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the matrix (or write it to ``--out``); exit 1 when a cell is an error."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", help="only this family (repeatable)")
    parser.add_argument("--out", help="write the Markdown here")
    parser.add_argument("--verbose", action="store_true", help="print each cell as it runs")
    args = parser.parse_args(argv)
    rows = []
    for c in cells(args.family):
        rows.append(c)
        if args.verbose:
            print(f"{c.family:18} {c.preset:22} {c.scenario:20} {c.outcome:8} "
                  f"{c.seconds:6.2f}s {c.message[:150]}", file=sys.stderr, flush=True)
    text = document(rows) if args.out else markdown(rows)
    if args.out:
        from dispatchlab.atomic_output import atomic_output

        with atomic_output(args.out) as tmp:
            tmp.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 1 if any(c.outcome == "error" for c in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
