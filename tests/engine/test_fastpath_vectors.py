"""The compiled loop of jobs asking different per-unit resource vectors (Eurora: cores,
memory, GPUs, MICs) gives exactly the general loop's run — every start, node, plan, sample
and power sample — for strict, non-strict, EASY and ``easy-power`` on a fixed machine, with
no cap, a fixed cap or a varying one, the node model or the job power column."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.dispatchers.rule_based.compiled import vector_parts as vp
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.engine.budget import JobColumnPower
from dispatchlab.engine.compiled.eligibility import slot_run
from dispatchlab.engine.compiled.vector_inputs import vector_power
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.engine.simulator import Simulator, map_requests
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.platform.power import NodePowerSpec
from dispatchlab.workload.load import load_workload
from tests.conftest import jobs, trace_available, trace_path
from tests.engine.test_fastpath import assert_same

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

INSTANCES = Path(__file__).resolve().parents[2] / "experiments" / "power_capping"
#: The selections the vector loop takes.
DISPATCHERS = ["easy", "easy-power", "fifo", "fifo-nonstrict", "order=sjf,select=easy,depth=2",
               "order=ljf,select=nonstrict,depth=3,estimate=real", "sjf"]
#: With the energy-model allocator (strict, non-strict, EASY; easy-power: EASY_ENERGY).
ENERGY = ["prb-power", "order=sjf,select=nonstrict,depth=2,alloc=energy-model",
          "order=fifo,select=strict,alloc=energy-model",
          "order=prb,select=easy,alloc=energy-model"]
#: ``easy-power`` with the energy-model allocator (not with informational rows).
EASY_ENERGY = ["order=prb,select=easy-power,alloc=energy-model",
               "order=sjf,select=easy-power,alloc=energy-model,depth=2"]


def _campaign_rows(name: str, every: int) -> list[dict[str, object]]:
    """Every ``every``-th workload of a committed power-capping campaign."""
    path = INSTANCES / f"campaign_{name}.toml"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    with path.open("rb") as fh:
        rows: list[dict[str, object]] = tomllib.load(fh)["workloads"]
    return rows[::every]


@pytest.mark.parametrize(("campaign", "platform", "every"), [
    ("eurora8_rules", "eurora-8", 23),
    ("eurora32_rules", "eurora-32", 29),
])
@pytest.mark.slow
def test_eurora_instances_under_their_caps(campaign: str, platform: str, every: int) -> None:
    """Instances of the power-capping study (Borghesi et al. 2015) at several cap levels,
    idle nodes counted, job power from the node model."""
    for row in _campaign_rows(campaign, every):
        wl = load_workload(INSTANCES / str(row["path"]), skip=row["skip"], limit=row["limit"])
        assert not (wl.req == wl.req[0]).all()  # units ask different vectors
        for disp in ("easy", "easy-power", "fifo-nonstrict", "fifo", "prb-power",
                     *EASY_ENERGY[:1]):
            assert_same(wl, platform, disp, scenario=row["scenario"])


def test_eurora_instance_with_no_cap_a_fixed_cap_and_a_cap_walk() -> None:
    rows = _campaign_rows("eurora8_rules", 1)
    wl = load_workload(INSTANCES / str(rows[0]["path"]), skip=0, limit=25)
    walk = ("gen:random-walk:what=power_cap,mean=1500,range=500,step=100,period=1800,"
            "until=200000,seed=4")
    info = Scenario([Change(60, "temperature", 21.5), Change(900, "energy_price", 0.2),
                     Change(1800, "power_cap", 1300.0)])
    for disp in [*DISPATCHERS, *ENERGY, *EASY_ENERGY]:
        assert_same(wl, "eurora-8", disp)
        assert_same(wl, "eurora-8", disp, power_cap=1500.0)
        assert_same(wl, "eurora-8", disp, scenario=walk)
        if "easy-power" not in disp:  # (informational rows: not with easy-power, general loop)
            assert_same(wl, "eurora-8", disp, scenario=info)
            assert_same(wl, "eurora-8", disp, power_cap=1500.0, scenario=Scenario(
                [Change(60, "temperature", 21.5), Change(700, "desired_utilization", 0.8)]))


@pytest.mark.skipif(not trace_available("eurora-historical/100")
                    or not trace_available("eurora-power-caps"),
                    reason="the Eurora historical batches or cap profiles are absent")
def test_historical_batches_under_the_eurora_cap_profile() -> None:
    """Real Eurora batches (submit times spread out) under a variable power-cap file."""
    batches = sorted(trace_path("eurora-historical/100").iterdir())[:3]
    for caps in ("trace:eurora-power-caps/power_caps_100",
                 "trace:eurora-power-caps/power_caps_harder"):
        for batch in batches:
            wl = load_workload(batch)
            for disp in ("easy", "easy-power", "fifo-nonstrict", "prb-power"):
                assert_same(wl, "eurora-8", disp, scenario=caps)


RESOURCES = ("cores", "mem", "gpu", "mic")


@st.composite
def vector_runs(draw: st.DrawFn) -> tuple[Workload, Platform, dict[str, object], str]:
    """2–4 resources per unit, nodes of mixed capacities (up to 12, so placements over more
    than 8 nodes are costed with the meter's vector formula), jobs asking different
    vectors; no power, the node model or the job power column; no cap, a fixed one or one
    varying with scenario rows."""
    resources = RESOURCES[:draw(st.integers(2, 4))]
    n_nodes = draw(st.integers(1, 12))
    energy = draw(st.booleans())  # the energy-model allocator: largest capacities 1, 2 or 4
    sizes = [1, 2, 4] if energy else [1, 2, 3, 4]
    capacity = np.array([[draw(st.sampled_from(sizes)) for _ in resources]
                         for _ in range(n_nodes)], dtype=np.int64)
    plat = Platform(resources=resources, capacity=capacity,
                    node_names=tuple(f"n{k}" for k in range(n_nodes)), name="random")
    n = draw(st.integers(1, 25))
    vectors = []
    for _ in range(n):
        v = [draw(st.integers(0, 2)) for _ in resources]
        if not any(v):
            v[0] = 1
        vectors.append(v)
    submit = np.cumsum(draw(st.lists(st.sampled_from([0, 0, 1, 3, 10]), min_size=n,
                                     max_size=n)))
    walltime = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    runtime = [draw(st.integers(0, w + 3)) for w in walltime]
    units = draw(st.lists(st.integers(1, 12), min_size=n, max_size=n))
    power = draw(st.lists(st.sampled_from([3.3, 17.1, 40.0]), min_size=n, max_size=n))
    wl = Workload.from_columns(submit=submit, walltime=walltime, runtime=runtime, units=units,
                               req={r: [v[k] for v in vectors] for k, r in enumerate(resources)},
                               power=power)
    kwargs: dict[str, object] = {"on_infeasible": "reject"}
    source = draw(st.sampled_from(["none", "node", "node", "column", "column-idle"]))
    if source != "none":
        spec = NodePowerSpec(idle=draw(st.sampled_from([0.0, 10.3, 95.0])),
                             core_first=draw(st.sampled_from([26.25, 95.74])),
                             core=draw(st.sampled_from([0.0, 6.3])),
                             gpu=draw(st.sampled_from([0.0, 50.1])),
                             mic=draw(st.sampled_from([0.0, 115.7])))
        if source != "column":
            plat = plat.with_node_model(spec)
        if source.startswith("column"):
            kwargs["power_model"] = JobColumnPower(wl)
        kwargs["count_idle"] = draw(st.sampled_from([True, True, False]))
        level = draw(st.floats(0.3, 1.2)) * (n_nodes * spec.idle + 60.0 * n_nodes + 40.0)
        how = draw(st.sampled_from(["fixed", "rows", "none"]))
        if how == "fixed":
            kwargs["power_cap"] = round(level, 2)
        elif how == "rows":
            times = sorted(draw(st.lists(st.integers(0, 60), min_size=1, max_size=4)))
            kwargs["scenario"] = Scenario([
                Change(t, "power_cap", round(level * draw(st.floats(0.5, 1.5)), 2))
                for t in times])
        if how == "none" and "power_model" in kwargs:
            kwargs["power_cap"] = 1e9  # (a job power source alone runs in the general loop)
    if energy and plat.power_table is not None:  # (EASY's: on different vectors only)
        pool = [d for d in ENERGY + EASY_ENERGY
                if len({tuple(v) for v in vectors}) > 1 or "easy" not in d]
        return wl, plat, kwargs, draw(st.sampled_from(pool))
    return wl, plat, kwargs, draw(st.sampled_from(DISPATCHERS))


@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=vector_runs())
def test_random_vector_runs(case: tuple[Workload, Platform, dict[str, object], str]) -> None:
    wl, plat, kwargs, disp = case
    try:
        assert_same(wl, plat, disp, **kwargs)
    except (ConfigError, DispatchlabError) as exc:  # a queue stuck under the cap
        assert "cannot run this simulation" in str(exc) or "no pending event" in str(exc)
        with pytest.raises(DispatchlabError, match="no pending event"):
            simulate(wl, plat, disp, loop="general", **kwargs)  # type: ignore[arg-type]


def test_single_vector_runs_keep_their_loops() -> None:
    """One vector per unit: strict and EASY stay in the slot loop; non-strict (which the
    slot loops do not take) runs in the vector loop, the same as the general loop."""
    wl = jobs((0, 5, 5, 2), (0, 3, 4, 3), (1, 4, 4, 1), (2, 9, 9, 2))
    plat = Platform.homogeneous(2, {"cores": 2})
    for disp, vectors in (("easy", False), ("fifo", False), ("fifo-nonstrict", True)):
        run = slot_run(Simulator(wl, plat, get_dispatcher(disp)))
        assert not isinstance(run, str) and (run.vectors is not None) == vectors
        assert_same(wl, plat, disp)


def test_what_the_vector_loop_does_not_take_runs_in_the_general_loop() -> None:
    wl = Workload.from_columns(submit=[0, 1], walltime=[5, 5], runtime=[5, 3], units=[1, 2],
                               req={"cores": [2, 1], "mem": [1, 3]})
    plat = Platform.homogeneous(2, {"cores": 2, "mem": 4})
    for disp, kwargs, why in [
        ("conservative", {}, "conservative"),
        ("prb-power", {}, "without a node power model"),
        ("order=fifo,select=easy,alloc=energy-model", {}, "without a node power model"),
        ("order=fifo,select=conservative,alloc=energy-model", {}, "not first-fit"),
        ("order=fifo,select=nonstrict,alloc=best-fit", {}, "not first-fit"),
    ]:
        assert simulate(wl, plat, disp, **kwargs).summary["loop"] == "general"  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=why):
            simulate(wl, plat, disp, loop="compiled", **kwargs)  # type: ignore[arg-type]
    assert simulate(wl, plat, "easy").summary["loop"] == "compiled"
    odd = Platform.homogeneous(2, {"cores": 3, "mem": 4}).with_node_model(NodePowerSpec())
    assert simulate(wl, odd, "prb-power").summary["loop"] == "general"
    with pytest.raises(ConfigError, match="not a power of two"):
        simulate(wl, odd, "prb-power", loop="compiled")
    # energy-model under EASY on one vector per unit: the general loop's SlotMachine
    # reserves in unit slots, not on the matrix
    one = jobs((0, 5, 5, 2), (0, 3, 4, 3), (1, 4, 4, 1), (2, 9, 9, 2))
    plat = Platform.homogeneous(2, {"cores": 2}).with_node_model(NodePowerSpec())
    easy_energy = "order=fifo,select=easy,alloc=energy-model"
    assert simulate(one, plat, easy_energy).summary["loop"] == "general"
    with pytest.raises(ConfigError, match="one resource vector per unit"):
        simulate(one, plat, easy_energy, loop="compiled")
    assert_same(one, plat, "prb-power")  # (non-strict: the same decisions on slots)


@st.composite
def metered_machines(draw: st.DrawFn) -> tuple[Platform, Workload, np.ndarray, str, bool]:
    """A node-model machine of up to 140 nodes (past numpy's pairwise blocks), part of it
    in use, and jobs asking different vectors."""
    resources = RESOURCES[:draw(st.integers(2, 4))]
    n_nodes = draw(st.integers(1, 140))
    capacity = np.array([[draw(st.integers(1, 5)) for _ in resources]] * n_nodes)
    spec = NodePowerSpec(idle=draw(st.sampled_from([10.3, 95.0])), core_first=95.74,
                         core=draw(st.sampled_from([0.1, 6.3])), gpu=50.1, mic=115.7)
    plat = Platform(resources=resources, capacity=capacity,
                    node_names=tuple(f"n{k}" for k in range(n_nodes)),
                    name="random").with_node_model(spec)
    used = np.array([[draw(st.integers(0, int(c))) for c in capacity[0]]
                     for _ in range(n_nodes)])
    req = {r: [draw(st.integers(0, 2)) + (k == 0) for _ in range(3)]
           for k, r in enumerate(resources)}
    wl = Workload.from_columns(submit=[0, 0, 0], walltime=[5] * 3, runtime=[5] * 3,
                               units=[1] * 3, req=req, power=[3.3, 17.1, 40.0])
    return plat, wl, capacity - used, draw(st.sampled_from(["node", "column"])), \
        draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(case=metered_machines(), job=st.integers(0, 2), data=st.data())
def test_the_power_figures_are_the_meters_to_the_last_bit(
        case: tuple[Platform, Workload, np.ndarray, str, bool], job: int,
        data: st.DataObject) -> None:
    """What a start adds (node by node up to 8 nodes, numpy's formula and pairwise sum
    beyond), a node's re-read figure and the node part of the machine: exactly the
    meter's, on the parts as plain Python."""
    plat, wl, free, source, count_idle = case
    req = map_requests(wl, plat)
    view = SystemView(wl, plat, req)
    view.free[:] = free
    sim = Simulator(wl, plat, get_dispatcher("easy"), power_cap=1e9, count_idle=count_idle,
                    power_model=JobColumnPower(wl) if source == "column" else None)
    pw = vector_power(sim)
    assert not isinstance(pw, str)
    jobs_model = JobColumnPower(wl) if source == "column" else None
    meter = MachinePower(view, req, plat.power_table, jobs_model, count_idle)
    cap = np.ascontiguousarray(plat.capacity, dtype=np.int64)
    cols = pw.cols
    for nd in range(plat.n_nodes):
        assert vp.node_part(pw.mode, pw.tab, cols, pw.count_idle, cap, free, nd) == \
            meter._node_w(nd)
    fit = [int(min((free[nd, r] // req[job, r] for r in range(len(req[job]))
                    if req[job, r] > 0), default=0)) for nd in range(plat.n_nodes)]
    nodes = np.array([nd for nd in range(plat.n_nodes) if fit[nd] > 0], dtype=np.int64)
    if len(nodes):
        nodes = nodes[:data.draw(st.integers(1, len(nodes)))]
        counts = np.array([data.draw(st.integers(1, fit[nd])) for nd in nodes], dtype=np.int64)
        flat_n, flat_c = nodes.astype(np.int32), counts.astype(np.int32)
        vals = np.empty(plat.n_nodes)
        got = vp.start_delta(pw.mode, pw.tab, cols, pw.count_idle, cap, free,
                             float(pw.job_w[job]), req[job], flat_n, flat_c, 0, len(nodes), vals)
        assert got == meter.start_delta(job, nodes, counts, free)
    vals = np.empty(plat.n_nodes)
    state = np.zeros(plat.n_nodes, np.int64)
    assert vp.nodes_power(pw.mode, pw.tab, cols, pw.count_idle, cap, free, vals, state,
                          pw.down_w) == meter.nodes_power(free)
