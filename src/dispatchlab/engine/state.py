"""The system state a dispatcher reads: queue, running jobs, free resources, node states.

The engine owns it and mutates it only while applying validated decisions and events;
dispatchers must treat every attribute as read-only. It shows what a real scheduler sees —
jobs submitted so far with their requests and requested times, running jobs with their
requested ends, usable capacity now, announced scenario values — and nothing else: actual
run times and future submissions are reachable only through :attr:`SystemView.oracle`,
which the engine fills only for a dispatcher that declares ``oracle = True`` (the ``real``
duration estimate, offline planners); results then say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Queue, Workload

if TYPE_CHECKING:
    from dispatchlab.engine.constraints import Constraints
    from dispatchlab.engine.scenario import Scenario




@dataclass(slots=True)
class Running:
    """A running job: when its current run started, where, and its requested end.

    ``requested_end`` is ``start + walltime`` — what the user asked for, not when the job
    will really end (that is the engine's secret). A reconfiguration keeps ``start``.
    """

    start: int
    nodes: IntArray
    counts: IntArray
    requested_end: int


@dataclass(slots=True)
class Budget:
    """A machine-wide resource (power, in W): its cap now and what is used now."""

    name: str
    cap: float
    used: float

    @property
    def free(self) -> float:
        """What is left under the cap (negative when over it)."""
        return self.cap - self.used


class JobRequests:
    """The jobs a real scheduler knows: rows ``0 … known − 1`` (submitted so far, in
    submission order), request-side columns only.

    Each column is a read-only numpy view over the known rows; a row of a job not yet
    submitted raises ``IndexError``. There is no ``runtime`` and no ``logged_wait``.
    :meth:`ints` gives a Python list of a column that grows as jobs arrive (for parts that
    read one value per job on hot paths).
    """

    __slots__ = ("_full", "_grown", "_lists", "_wl", "known")

    def __init__(self, workload: Workload):
        self._wl = workload
        self.known = 0
        self._lists: dict[str, list[Any]] = {}
        self._full: dict[str, list[Any]] = {}  # (engine) every row, to extend from
        self._grown: list[tuple[list[Any], list[Any]]] = []  # (known list, full list)

    def _advance(self, known: int) -> None:
        """(engine) Jobs ``self.known … known − 1`` were submitted."""
        a = self.known
        for values, full in self._grown:
            values.extend(full[a:known])
        self.known = known

    def ints(self, name: str) -> list[Any]:
        """Column ``name`` of the known jobs as a Python list that grows with arrivals."""
        if name not in _REQUEST_COLUMNS:
            raise AttributeError(f"'{name}' is not a request column dispatchers may read")
        values = self._lists.get(name)
        if values is None:
            full = self._full[name] = getattr(self._wl, name).tolist()
            values = self._lists[name] = full[:self.known]
            self._grown.append((values, full))
        return values

    @property
    def n_jobs(self) -> int:
        """How many jobs the workload holds (to size per-job arrays; rows beyond
        :attr:`known` are hidden)."""
        return self._wl.n_jobs

    def __len__(self) -> int:
        return self.known

    @property
    def runtime(self) -> IntArray:
        """Hidden: a real scheduler does not know actual run times."""
        raise AttributeError("actual run times are hidden from dispatchers; a dispatcher "
                             "that needs them must declare `oracle = True` and read "
                             "view.oracle.runtime (results then record oracle: true)")

    @property
    def logged_wait(self) -> IntArray:
        """Hidden: what happened in the traced system is not known to the simulated one."""
        raise AttributeError("the trace's logged waits are hidden from dispatchers")

    def ewt(self) -> IntArray:
        """Each known job's queue expected waiting time (s)."""
        return self._wl.ewt()[:self.known]

    def req_of(self, resource: str) -> IntArray:
        """Per-unit request of one resource for the known jobs."""
        return self._wl.req_of(resource)[:self.known]

    @property
    def job_id(self) -> IntArray:
        """Trace job ids."""
        return self._wl.job_id[:self.known]

    @property
    def submit(self) -> IntArray:
        """Submit times (s)."""
        return self._wl.submit[:self.known]

    @property
    def walltime(self) -> IntArray:
        """Requested times (s)."""
        return self._wl.walltime[:self.known]

    @property
    def units(self) -> IntArray:
        """Units asked."""
        return self._wl.units[:self.known]

    @property
    def req(self) -> IntArray:
        """Per-unit requests over the workload's resources."""
        return self._wl.req[:self.known]

    @property
    def queue(self) -> IntArray:
        """Queue codes (index ``queues``)."""
        return self._wl.queue[:self.known]

    @property
    def user(self) -> IntArray:
        """User codes (index ``users``)."""
        return self._wl.user[:self.known]

    @property
    def app(self) -> IntArray:
        """Executable codes (index ``apps``)."""
        return self._wl.app[:self.known]

    @property
    def power(self) -> FloatArray:
        """Declared or predicted power (W; NaN: unknown)."""
        return self._wl.power[:self.known]

    @property
    def est(self) -> IntArray:
        """Earliest start times (-1: none)."""
        return self._wl.est[:self.known]

    @property
    def lst(self) -> IntArray:
        """Latest start times (-1: none)."""
        return self._wl.lst[:self.known]

    @property
    def array(self) -> IntArray:
        """Job-array ids (-1: none)."""
        return self._wl.array[:self.known]

    @property
    def hetjob(self) -> IntArray:
        """Heterogeneous-job ids (-1: none)."""
        return self._wl.hetjob[:self.known]

    @property
    def min_units(self) -> IntArray:
        """Fewest units a malleable job runs on."""
        return self._wl.min_units[:self.known]

    @property
    def max_units(self) -> IntArray:
        """Most units a malleable job runs on."""
        return self._wl.max_units[:self.known]

    @property
    def alpha(self) -> FloatArray:
        """Speed-up exponents."""
        return self._wl.alpha[:self.known]

    @property
    def data(self) -> FloatArray:
        """Data a reconfiguration moves."""
        return self._wl.data[:self.known]

    @property
    def checkpoint(self) -> IntArray:
        """Checkpoint intervals (s; 0: none)."""
        return self._wl.checkpoint[:self.known]

    resources = property(lambda self: self._wl.resources, doc="Workload resource names.")
    queues: tuple[Queue, ...] = property(lambda self: self._wl.queues)  # type: ignore[assignment]
    users = property(lambda self: self._wl.users, doc="User names (codes index it).")
    apps = property(lambda self: self._wl.apps, doc="Executable names.")
    origin_unix = property(lambda self: self._wl.origin_unix, doc="Unix time of 0.")
    timezone = property(lambda self: self._wl.timezone, doc="Local time zone.")
    source = property(lambda self: self._wl.source, doc="Where the jobs come from.")


_REQUEST_COLUMNS = ("job_id", "submit", "walltime", "units", "req", "queue", "user", "app",
                    "power", "est", "lst", "array", "hetjob", "min_units", "max_units",
                    "alpha", "data", "checkpoint")


class Oracle:
    """The future, for a dispatcher that declares ``oracle = True``: the whole workload
    (every job, actual run times included). Nothing else may read it."""

    __slots__ = ("runtime", "workload")

    def __init__(self, workload: Workload):
        self.workload = workload
        self.runtime: IntArray = workload.runtime


class SystemView:
    """Read-only view of the simulated system at decision time ``now``.

    - ``jobs``: :class:`JobRequests` (known jobs, request columns); ``queue``: queued job
      indices in arrival order; ``running``: job index → :class:`Running`.
    - ``req[i]``: job ``i``'s per-unit request over the *platform's* resources,
      ``demand[i]`` its total (``units × req``), ``demand_nz[i]`` the non-zero
      ``(resource, amount)`` pairs of that total (known jobs only).
    - ``capacity``: the platform's nodes × resources; ``free``: what is free now on usable
      nodes (rows of nodes that are not on are 0); ``free_total`` per resource.
    - ``node_state``: per node one of ``ON, OFF, BOOTING, SHUTTING_DOWN, DOWN``; ``alive``:
      the usable (``ON``) nodes; ``alive_total``: their capacity per resource;
      ``node_changes``: how many node state changes happened so far (a part that mirrors
      the free resources re-reads them when it moved).
    - ``budget``: the machine-wide power :class:`Budget`, or ``None``; :meth:`power_of`:
      what a start would draw (the site's power model); ``env``: the current value of
      every scenario kind seen so far (``"power_cap"``, ``"temperature"``,
      ``"desired_utilization:cores"``, ``"signal:<name>"``, ``"alive_nodes"``);
      ``scenario``: the announced part of the scenario (its future), or ``None``.
    - ``rules``: queue rules, reservations and heterogeneous jobs the engine enforces
      (:class:`~dispatchlab.engine.constraints.Constraints`), or ``None``.
    - ``oracle``: :class:`Oracle` for dispatchers declaring ``oracle = True``, else ``None``.
    - ``unit_request``: the per-unit request every job of the run asks (the site's
      allocation mode: whole nodes, or pooled cores of one kind), or ``None`` when jobs ask
      different resource vectors.
    """

    __slots__ = (
        "_demand",
        "_demand_nz_all",
        "_req",
        "alive",
        "alive_total",
        "budget",
        "capacity",
        "demand_nz",
        "env",
        "free",
        "free_total",
        "jobs",
        "node_changes",
        "node_state",
        "now",
        "oracle",
        "platform",
        "power_model",
        "queue",
        "rules",
        "running",
        "scenario",
        "total",
        "unit_request",
    )

    def __init__(self, workload: Workload, platform: Platform, req: IntArray):
        self.jobs = JobRequests(workload)
        self.platform = platform
        self.capacity: IntArray = platform.capacity
        self.total: list[int] = platform.total.tolist()
        self.free: IntArray = platform.capacity.copy()
        self.free_total: list[int] = list(self.total)
        self._req: IntArray = req
        self._demand: IntArray = req * workload.units[:, None]
        self._demand.setflags(write=False)
        self.demand_nz: list[tuple[tuple[int, int], ...]] = []
        self._demand_nz_all: list[tuple[tuple[int, int], ...]] | None = None
        self.queue: dict[int, None] = {}
        self.running: dict[int, Running] = {}
        self.now = 0
        self.rules: Constraints | None = None
        self.node_state = np.zeros(platform.n_nodes, dtype=np.int8)
        self.node_changes = 0  # node state changes so far (parts that mirror free resources)
        self.alive = np.ones(platform.n_nodes, dtype=bool)
        self.alive_total: list[int] = list(self.total)
        self.budget: Budget | None = None
        self.power_model: Any = None  # the engine's PowerModel when there is a budget
        self.env: dict[str, float] = {}
        self.scenario: Scenario | None = None
        self.oracle: Oracle | None = None
        same = len(req) > 0 and bool((req == req[0]).all())
        self.unit_request: IntArray | None = req[0].copy() if same else None

    @property
    def req(self) -> IntArray:
        """Per-unit requests over the platform's resources (known jobs)."""
        return self._req[:self.jobs.known]

    @property
    def demand(self) -> IntArray:
        """Total requests (units × req) over the platform's resources (known jobs)."""
        return self._demand[:self.jobs.known]

    def _advance(self, known: int) -> None:
        """(engine) Jobs up to ``known − 1`` were submitted: extend the per-job lists."""
        every = self._demand_nz_all
        if every is None:  # built once, handed out as jobs arrive
            every = self._demand_nz_all = _nonzero_pairs(self._demand)
        self.demand_nz.extend(every[self.jobs.known:known])
        self.jobs._advance(known)

    def power_of(self, job: int, nodes: IntArray, counts: IntArray,
                 free: IntArray | None = None) -> float:
        """How much the machine's power (W) rises if ``job`` starts on ``nodes`` × ``counts``
        now (0 without a budget); ``free``: the free capacity to start from when other
        starts are already planned in this call (default: :attr:`free`)."""
        model = self.power_model
        if model is None:
            return 0.0
        if free is not None and hasattr(model, "start_delta"):
            return float(model.start_delta(job, nodes, counts, free))
        return float(model.job_power(job, nodes, counts))

    def fits_total(self, job: int) -> bool:
        """Cheap necessary condition: the job's total demand fits the pooled free capacity."""
        ft = self.free_total
        for r, amount in self.demand_nz[job]:
            if amount > ft[r]:
                return False
        return True


def _nonzero_pairs(demand: IntArray) -> list[tuple[tuple[int, int], ...]]:
    """Per job, the ``(resource, total amount)`` pairs it actually asks for."""
    if demand.shape[1] == 1:
        return [((0, v),) for v in demand[:, 0].tolist()]
    return [tuple((r, v) for r, v in enumerate(row) if v) for row in demand.tolist()]
