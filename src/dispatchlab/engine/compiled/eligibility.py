"""Which runs the compiled loops can take: the parts it reproduces exactly, nothing else.

A dispatcher that offers a compiled plan (:mod:`~dispatchlab.engine.compiled.plan`: the
rule-based ``Policy`` with a static ordering (or a dynamic one), strict,
EASY or ``easy-power`` selection (any
depth) or conservative backfilling (a depth limit or a dynamic ordering only on a fixed machine
without a cap or scenario rows), first-fit, the requested-time or real-duration
estimate); every job's unit asking the same resource vector (the policy's ``SlotMachine``
case); no operator rules (queues with windows, reservations,
heterogeneous jobs); Numba available. Of the engine's features
(:meth:`Simulator.features`) it supports only those in :data:`SUPPORTED` — a run using any
other one (a scenario, a varying cap or another job power source, malleable jobs, …) runs
in the general loop. A fixed power cap (``power-fixed-cap``: node model or power column)
is taken, and so is a cap varying with a scenario's ``power_cap`` rows (over-cap policy
``wait``); so is a scenario of nodes leaving and coming back (``node_down`` / ``node_up``
/ ``alive_nodes`` rows, the engine's default choice of nodes: the rule-based wing's
scenario loops), also with a power cap — fixed, or varying with the same scenario's
``power_cap`` rows — drawn through the node model or the job power column; for
conservative backfilling too (its own loop for a machine that changes). Informational
rows (``temperature``, ``desired_utilization``, ``energy_price``, ``signal``:
:data:`INFO_KINDS`) change nothing a rule-based policy reads, but each is a decision
point of the engine: on a fixed machine the strict and EASY loop takes them as cap rows
that keep the cap in force (not with the ``easy-power`` selection, whose reservation takes
every cap row as a candidate time), and so does the conservative loop of a machine that
changes (conservative with neither a depth limit nor a dynamic ordering).
``easy-power`` runs wherever EASY does otherwise (its reservation in power under a cap:
the rule-based wing's ``power_shadow``).

Jobs whose units ask different resource vectors (the general loop's ``NodeMachine``), and
the non-strict selection or the ``energy-model`` allocator (strict, non-strict; EASY only on
different vectors) whatever the vectors, go to the loop of the node × resource matrix
(:func:`_vector_run`, its inputs :mod:`.vector_inputs`): strict, non-strict, EASY or
``easy-power``, with no cap, a fixed cap or one varying with the scenario's ``power_cap``
rows (informational rows as above, on a fixed machine), with nodes leaving and coming back
(the engine's default choice of nodes) too; not with conservative backfilling.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.budget import JobColumnPower
from dispatchlab.engine.compiled.plan import (
    OWN_PLACEMENT,
    CompiledPlan,
    OffersCompiledPlan,
    RunCompiled,
)
from dispatchlab.engine.compiled.slot_power import SlotPower, slot_power
from dispatchlab.engine.compiled.vector_inputs import (
    VectorInputs,
    VectorPower,
    vector_inputs,
)
from dispatchlab.engine.constraints import engine_rules_apply
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.state import SystemView
from dispatchlab.numba_loader import NUMBA
from dispatchlab.platform.platform import units_fitting

#: Engine features the compiled loop reproduces exactly (tests compare it with the general
#: loop on each); anything else in :meth:`Simulator.features` sends a run to the general loop.
SUPPORTED = frozenset({"no-walltime-kill", "oracle", "power-fixed-cap", "scenario"})
#: Scenario kinds the compiled loop takes (strict and EASY: the scenario loop), and
#: with them or alone the ``power_cap`` rows of a varying cap (:func:`varying_cap`).
SCENARIO_KINDS = frozenset({"node_down", "node_up", "alive_nodes"})
CAP_KIND = "power_cap"
#: Scenario kinds the engine only announces (``view.env``): decision points that change
#: nothing a rule-based policy reads.
INFO_KINDS = frozenset({"temperature", "desired_utilization", "energy_price", "signal"})


@dataclass(frozen=True)
class ScenarioRows:
    """A node scenario as arrays: row ``k`` at ``time[k]`` of ``kind[k]`` (0 ``node_down``,
    1 ``node_up``, 2 ``alive_nodes``) with ``value[k]`` or the nodes
    ``nodes[offsets[k]:offsets[k + 1]]``."""

    time: IntArray
    kind: IntArray
    value: IntArray
    offsets: IntArray
    nodes: IntArray


def scenario_rows(sim: Simulator, plan_chooses: bool = False) -> ScenarioRows | str:
    """The run's scenario as arrays, or why the compiled loop cannot take it
    (``plan_chooses``: the plan's loop picks the nodes of ``alive_nodes`` rows itself; a
    dispatcher whose ``engine_node_choice`` is true chooses them as the engine does)."""
    scen = sim.scenario
    assert scen is not None
    kinds = scen.kinds() - SCENARIO_KINDS - {CAP_KIND}
    if kinds:
        return f"scenario kind(s) {', '.join(sorted(kinds))} not supported"
    if (not plan_chooses and getattr(sim.dispatcher, "choose_nodes", None) is not None
            and not getattr(sim.dispatcher, "engine_node_choice", False)):
        return "the dispatcher chooses the nodes that leave"
    code = {"node_down": 0, "node_up": 1, "alive_nodes": 2}
    n_nodes = sim.platform.n_nodes
    times, kind, value, offsets, nodes = [], [], [], [0], []
    for c in scen.changes:
        if c.what == CAP_KIND:
            continue  # (the cap rows: :func:`_cap_rows`)
        if c.what == "alive_nodes":
            if not 0 <= c.value <= n_nodes or c.value != int(c.value):
                return f"alive_nodes {c.value} at {c.time} (the general loop reports it)"
        else:
            nodes.extend(sim.platform.node_set([c.target], "target").tolist())
        times.append(c.time)
        kind.append(code[c.what])
        value.append(int(c.value) if c.what == "alive_nodes" else 0)
        offsets.append(len(nodes))
    return ScenarioRows(*(np.array(x, dtype=np.int64) for x in (times, kind, value, offsets,
                                                                 nodes)))


@dataclass(frozen=True)
class SlotRun:
    """What the compiled loop needs beyond the workload: per job its rank in the queue
    ordering and duration estimate, per node its unit slots; ``runner``: the dispatcher's
    compiled loop (its plan's ``run``)."""

    rank: IntArray
    estimate: IntArray
    slots: IntArray
    easy: bool
    depth: int  # -1: no limit
    runner: RunCompiled
    easy_power: bool = False  # EASY's reservation in power too under a cap (easy-power)
    conservative: bool = False
    power: SlotPower | None = None  # a power cap
    scenario: ScenarioRows | None = None  # nodes leaving and coming back
    cap_rows: tuple[IntArray, npt.NDArray[np.float64]] | None = None  # a varying cap
    score: int = 0  # a dynamic ordering's code (0: static, the ranks hold)
    score_terms: tuple[FloatArray, FloatArray] | None = None  # its per-job terms
    power_off: int = -1  # idle nodes switched off after that many s (the plan's; -1: never)
    nonstrict: bool = False  # start every job that fits (the vector loop)
    vectors: VectorInputs | None = None  # per-job unit vectors: the vector loop's inputs


def slot_run(sim: Simulator) -> SlotRun | str:
    """The compiled run's inputs, or why the general engine must run ``sim``."""
    wl, plat, disp = sim.workload, sim.platform, sim.dispatcher
    if not NUMBA:
        return "Numba is not available or disabled (DISPATCHLAB_NO_NUMBA)"
    varying = varying_cap(sim)
    moving = nodes_move(sim)
    informed = informational(sim)
    fixed_with_rows = ((moving or informed) and _power_tabled(sim)  # a fixed cap (or none)
                       and CAP_KIND not in sim.scenario.kinds())  # type: ignore[union-attr]
    unsupported = sim.features() - SUPPORTED - (
        {"power"} if varying or fixed_with_rows else set())
    if unsupported:
        return f"engine feature(s) {', '.join(sorted(unsupported))} not supported"
    if not isinstance(disp, OffersCompiledPlan):
        return f"dispatcher '{disp.name}' offers no compiled plan"
    view = SystemView(wl, plat, sim.req)  # the engine's view: every job known
    view.jobs.known = wl.n_jobs
    plan = disp.compiled_plan(wl, view)
    if isinstance(plan, str):
        return plan
    if plan.selection == OWN_PLACEMENT:  # the plan places jobs and picks nodes itself
        from dispatchlab.engine.compiled.own_placement import own_placement_run

        return own_placement_run(sim, plan)
    conservative = plan.selection == "conservative"
    rows: ScenarioRows | None = None
    if informed and plan.selection == "easy-power":
        return "informational scenario rows are not supported with easy-power"
    if informed and moving:
        assert sim.scenario is not None
        return ("scenario kind(s) " + ", ".join(sorted(sim.scenario.kinds() & INFO_KINDS))
                + " not supported with nodes leaving")
    if "scenario" in sim.features() and (moving or not varying) and not informed:
        found = scenario_rows(sim)
        if isinstance(found, str):
            return found
        rows = found
    if engine_rules_apply(wl, plat):
        return "operator rules (queues, reservations, heterogeneous jobs) apply"
    req = sim.req
    if wl.n_jobs == 0:
        return "empty workload"
    vectors = not (req == req[0]).all() or not (req[0] > 0).any()
    if (wl.units < 1).any():
        return "a job asks no units"
    if (np.diff(wl.submit) < 0).any():
        return "submit times are not sorted"
    if vectors or plan.selection == "nonstrict" or plan.allocator != "first-fit":
        # the vector loop (a NodeMachine's run, or the non-strict / energy-model ones)
        return _vector_run(sim, plan, moving, conservative, varying or informed)
    slots = np.array(units_fitting(plat.capacity, req[0]), dtype=np.int64)
    power: SlotPower | None = None
    if {"power-fixed-cap", "power"} & sim.features():
        tabled = slot_power(sim, slots)
        if isinstance(tabled, str):
            return tabled
        power = tabled
    return SlotRun(
        rank=plan.ranks(),
        estimate=plan.estimate,
        slots=slots,
        easy=plan.selection in ("easy", "easy-power"),
        easy_power=plan.selection == "easy-power",
        depth=plan.depth,
        runner=plan.run,
        conservative=conservative,
        power=power,
        scenario=rows,
        cap_rows=_cap_rows(sim, power) if varying or informed else None,
        score=plan.score,
        score_terms=plan.score_terms() if plan.score_terms is not None else None,
        power_off=plan.power_off,
    )


def _vector_run(sim: Simulator, plan: CompiledPlan, moving: bool, conservative: bool,
                rows: bool) -> SlotRun | str:
    """The inputs of the loop for jobs asking different per-unit vectors (and of the
    non-strict selection and the ``energy-model`` allocator): strict, non-strict, EASY or
    ``easy-power``, a fixed or varying cap, nodes leaving and coming back; or why it cannot
    take ``sim``."""
    loop = ("the loop of job units asking different resource vectors (also non-strict "
            "selection, energy-model allocator)")
    if conservative:
        return f"{loop} takes no conservative backfilling: general loop"
    if plan.score != 0:
        return f"{loop} takes no dynamic ordering: general loop"
    if plan.power_off >= 0:
        return f"{loop} takes no idle-node power-off: general loop"
    if plan.allocator == "energy-model" and plan.selection in ("easy", "easy-power") and \
            (sim.req == sim.req[0]).all():
        return (f"{loop}: energy-model under EASY with one resource vector per unit (the "
                "general loop reserves in unit slots then): general loop")
    scenario: ScenarioRows | None = None
    if moving:
        found_rows = scenario_rows(sim)
        if isinstance(found_rows, str):
            return found_rows
        scenario = found_rows
    found = vector_inputs(sim, plan.allocator)
    if isinstance(found, str):
        return found
    return SlotRun(rank=plan.ranks(), estimate=plan.estimate, slots=np.zeros(0, np.int64),
                   easy=plan.selection in ("easy", "easy-power"),
                   easy_power=plan.selection == "easy-power", depth=plan.depth,
                   runner=plan.run, nonstrict=plan.selection == "nonstrict",
                   scenario=scenario,
                   cap_rows=_cap_rows(sim, found.power) if rows else None, vectors=found)


def varying_cap(sim: Simulator) -> bool:
    """A cap that varies with the scenario's ``power_cap`` rows (alone, or with nodes
    leaving and coming back), drawn through the node model or the job power column, and
    waited for (no job is stopped when it falls): the strict and EASY loops take it."""
    scen = sim.scenario
    return (scen is not None and CAP_KIND in scen.kinds()
            and scen.kinds() <= SCENARIO_KINDS | INFO_KINDS | {CAP_KIND}
            and _power_tabled(sim) and sim.on_over_cap == "wait")


def informational(sim: Simulator) -> bool:
    """The scenario has informational rows (:data:`INFO_KINDS`) and nothing but them,
    ``power_cap`` rows and node rows."""
    scen = sim.scenario
    return (scen is not None and bool(scen.kinds() & INFO_KINDS)
            and scen.kinds() <= SCENARIO_KINDS | INFO_KINDS | {CAP_KIND})


def nodes_move(sim: Simulator) -> bool:
    """The scenario has nodes leaving or coming back."""
    return sim.scenario is not None and bool(sim.scenario.kinds() & SCENARIO_KINDS)


def _power_tabled(sim: Simulator) -> bool:
    """Jobs draw power through the node model or the job power column (:mod:`.slot_power`
    tabulates them)."""
    return sim.power_model is None or type(sim.power_model) is JobColumnPower


def _cap_rows(sim: Simulator, power: SlotPower | VectorPower | None
              ) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """The scenario's cap changes (times and values) and its informational rows, each with
    the cap in force after it (the cap before any row: ``power``'s, or none)."""
    assert sim.scenario is not None
    cap = power.cap if power is not None else float("inf")
    times, values = [], []
    for c in sim.scenario.changes:
        if c.what == CAP_KIND:
            cap = c.value
        elif c.what not in INFO_KINDS:
            continue
        times.append(c.time)
        values.append(cap)
    return np.array(times, dtype=np.int64), np.array(values, dtype=np.float64)
