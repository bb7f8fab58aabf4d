"""Calls the engine skips (a dispatcher's ``wakes_on`` flags) and EASY's scan of the arrivals
alone change nothing: every run equals the run that calls the dispatcher at every point and
scans the whole queue."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.dispatchers.rule_based.selection.easy import Easy
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.events import WAKE_ON_ALL, WAKE_ON_END, WAKE_ON_SUBMIT, Events
from dispatchlab.errors import DispatchlabError
from dispatchlab.platform.power import GENERIC
from tests.conftest import jobs
from tests.engine.test_fastpath import segment_rows

DISPATCHERS = ["fifo", "sjf", "easy", "easy-sjf", "pbs-fifo-window",
               "order=fifo,select=easy,depth=2", "order=fifo,select=nonstrict", "conservative",
               "order=sjf,select=easy,estimate=real"]


class _AlwaysCalled(Policy):
    """The same policy, called at every point (no ``wakes_on`` other than ALL)."""

    def _wakes(self, waiting: int) -> int:
        return WAKE_ON_ALL


def _full_scans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Easy, "_arrivals_only", lambda *a, **k: False)


def _pair(spec: str) -> tuple[Policy, Policy]:
    lean = get_dispatcher(spec)
    assert isinstance(lean, Policy)
    ref = _AlwaysCalled(lean.ordering, lean.selection, lean.allocator, lean.estimate,
                        name=lean.name)
    return lean, ref


def digest_recorder(rec: Any) -> tuple[Any, ...]:
    """Everything a run recorded but measured times."""
    return (segment_rows(rec.segments), rec.planned.tolist(), bytes(rec.samples),
            bytes(rec.decision_at), bytes(rec.node_log), bytes(rec.power_samples),
            sorted(rec.rejected.items()), sorted(rec.failed), rec.dispatcher_stats)


def _digest(wl: Workload, plat: Platform | str, disp: Policy, **kw: Any) -> tuple[Any, ...]:
    """The run's record, or the error that stopped it (a cap too tight for a job)."""
    try:
        res = simulate(wl, plat, disp, loop="general", tables=False, **kw)
    except DispatchlabError as exc:
        return ("error", str(exc))
    assert res.recorder is not None
    return digest_recorder(res.recorder)


@st.composite
def runs(draw: st.DrawFn) -> tuple[Workload, Platform, dict[str, Any]]:
    """Small random runs with queues that fill and drain, coinciding events, sometimes a
    power cap or nodes leaving."""
    n_nodes = draw(st.integers(1, 4))
    cores = draw(st.integers(1, 4))
    plat = Platform.homogeneous(n_nodes, {"cores": cores}).with_node_model(GENERIC)
    n = draw(st.integers(1, 40))
    submit = np.cumsum(draw(st.lists(st.sampled_from([0, 0, 1, 2, 7]), min_size=n,
                                     max_size=n)))
    walltime = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    runtime = [draw(st.integers(0, w)) for w in walltime]
    units = draw(st.lists(st.integers(1, n_nodes * cores), min_size=n, max_size=n))
    wl = Workload.from_columns(submit=submit, walltime=walltime, runtime=runtime,
                               units=units, req={"cores": [1] * n})
    kw: dict[str, Any] = {}
    extra = draw(st.sampled_from(["none", "cap", "nodes"]))
    if extra == "cap":
        kw = {"power_cap": float(draw(st.integers(300, 900))), "on_infeasible": "reject"}
    elif extra == "nodes" and n_nodes > 1:
        kw = {"scenario": f"gen:random-walk:what=alive_nodes,mean={n_nodes - 1},range=1,"
                          f"step=1,period=5,until=400,seed={draw(st.integers(0, 9))}"}
    return wl, plat, kw


@settings(max_examples=80, deadline=None)
@given(runs(), st.sampled_from(DISPATCHERS))
def test_skipping_and_arrival_scans_change_nothing(
        run: tuple[Workload, Platform, dict[str, Any]], spec: str) -> None:
    wl, plat, kw = run
    lean, ref = _pair(spec)
    got = _digest(wl, plat, lean, **kw)
    with pytest.MonkeyPatch.context() as m:
        _full_scans(m)
        want = _digest(wl, plat, ref, **kw)
    assert got == want


def test_strict_fifo_skips_arrivals_behind_a_waiting_head() -> None:
    # job 0 fills the machine; 1 waits (head); 2 and 3 arrive behind it: no call at 2 or 3
    wl = jobs((0, 10, 10, 2), (1, 5, 5, 2), (2, 1, 1, 1), (3, 1, 1, 1))
    lean, ref = _pair("fifo")
    a = simulate(wl, "nodes=1,cores=2", lean, loop="general").recorder
    b = simulate(wl, "nodes=1,cores=2", ref, loop="general").recorder
    assert a is not None and b is not None
    assert list(a.decision_at) == list(b.decision_at) == [0, 1, 2, 3, 10, 15, 16]
    cpu = np.frombuffer(a.decision_cpu, np.float64)
    assert (cpu[2:4] == 0).all() and (cpu[[0, 1, 4, 5]] > 0).all()  # 2, 3: not called
    assert cpu[6] == 0  # 16: the last jobs end, the queue is empty: arrivals only wake it
    assert bytes(a.samples) == bytes(b.samples)
    assert digest_recorder(a) == digest_recorder(b)


def test_wake_flags() -> None:
    ev = Events(0)
    assert not ev.wakes(WAKE_ON_ALL)  # nothing happened
    ev.submitted.append(1)
    assert ev.wakes(WAKE_ON_SUBMIT) and not ev.wakes(WAKE_ON_END)
    ev.finished.append(0)
    assert ev.wakes(WAKE_ON_END)
    other = Events(0)
    other.nodes.append(0)
    assert other.wakes(0)  # any other kind of event always wakes
    other = Events(0)
    other.woken = True
    assert other.wakes(0)


def test_skipped_events_reach_the_next_call() -> None:
    """The events of skipped points are handed to the next call, merged."""
    seen: list[tuple[int, list[int], list[int]]] = []

    class Watching(Policy):
        def decide(self, view: Any, events: Events) -> Any:
            seen.append((view.now, list(events.submitted), list(events.finished)))
            return super().decide(view, events)

    wl = jobs((0, 10, 10, 2), (1, 5, 5, 2), (2, 1, 1, 1), (3, 1, 1, 1))
    simulate(wl, "nodes=1,cores=2", Watching("fifo", "strict"), loop="general")
    assert seen[:3] == [(0, [0], []), (1, [1], []), (10, [2, 3], [0])]


class _OwnFifo:
    """A user's strict FIFO on one-slot nodes (no base class) that sets its ``wakes_on``
    flags in ``reset`` and after each call, or never (``flags=False``)."""

    name = "own-fifo"

    def __init__(self, units: list[int], flags: bool):
        self.units, self.flags, self.calls = units, flags, 0

    def reset(self, view: Any, rng: np.random.Generator) -> None:
        self.free = list(range(view.platform.n_nodes))
        self.held: dict[int, list[int]] = {}
        self.queue: list[int] = []
        if self.flags:
            self.wakes_on = WAKE_ON_SUBMIT

    def decide(self, view: Any, events: Events) -> list[Start]:
        self.calls += 1
        for j in events.finished:
            self.free = sorted(self.free + self.held.pop(j))
        self.queue += events.submitted
        out = []
        while self.queue and self.units[self.queue[0]] <= len(self.free):
            j = self.queue.pop(0)
            nodes, self.free = self.free[:self.units[j]], self.free[self.units[j]:]
            self.held[j] = nodes
            out.append(Start(j, np.array(nodes, np.int64), np.ones(len(nodes), np.int64)))
        if self.flags:
            self.wakes_on = WAKE_ON_END if self.queue else WAKE_ON_SUBMIT
        return out

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def run_stats(self) -> dict[str, Any]:
        return {}


def test_flags_set_in_reset_or_decide_are_read() -> None:
    """A dispatcher without the attribute before ``reset`` still has its calls skipped (the
    engine reads ``wakes_on`` after every call), and the run is the one called at every
    point."""
    wl = jobs((0, 10, 10, 2), (1, 5, 5, 2), (2, 1, 1, 1), (3, 1, 1, 1), (30, 2, 2, 1))
    units = wl.units.tolist()
    lean, ref = _OwnFifo(units, True), _OwnFifo(units, False)
    a = simulate(wl, "nodes=2,cores=1", lean, loop="general").recorder
    b = simulate(wl, "nodes=2,cores=1", ref, loop="general").recorder
    assert a is not None and b is not None
    assert digest_recorder(a)[:-1] == digest_recorder(b)[:-1]
    assert list(a.decision_at) == list(b.decision_at)
    assert ref.calls == len(b.decision_at) and lean.calls < ref.calls
    cpu = np.frombuffer(a.decision_cpu, np.float64)
    assert (cpu == 0).sum() == ref.calls - lean.calls
