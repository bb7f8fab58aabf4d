"""The ``authors`` semantics: the simulation of ``simu.cc`` (github.com/lucasperotin/
variableResources), re-written statement by statement so that it gives the same numbers.

It is a simulation of its own, not a dispatcher of the engine: the authors' results
depend on how ``std::priority_queue`` orders equal events and equal releases (reproduced by
:mod:`.cpp_heap`), on which events are pushed (their variation file's no-op rows included,
and the arrivals of the jobs released after the window), and on state updates in the
middle of an event, none of which the engine's event loop can follow.
docs/variable_capacity.md lists every rule where it differs from the default (slides)
semantics. The loop (:mod:`.authors_loop`) is compiled with Numba when it is available.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from dispatchlab.dispatchers.variable_capacity import authors_books, authors_loop, cpp_heap
from dispatchlab.dispatchers.variable_capacity.authors_loop import (
    ABORTS,
    AREA,
    ARRIVAL,
    COUNT_W,
    ERROR,
    LOOPS,
    MAX_ST,
    MULT,
    N_DONE,
    N_DONE2,
    N_START,
    NE,
    NEGATIVE,
    OVERWORK,
    PLACEMENTS,
    REALLOCS,
    SUM_ST,
    UTIL_DONE,
    UTIL_TOT,
    WASTE,
    event_key,
)
from dispatchlab.engine.compiled.slot_availability_ops import shift_in
from dispatchlab.engine.kernels import COMPILED
from dispatchlab.errors import ConfigError
from dispatchlab.numba_loader import compiled
from dispatchlab.seeds import check_seed

#: strategy name → (target strategy?, packed targets?, accept only a start now first?,
#: first fit's maxDist: 1 = the machine order shuffled)
STRATEGIES: dict[str, tuple[bool, bool, bool, int]] = {
    "ff-aware": (False, False, False, 0),
    "ff-unaware": (False, False, False, 1),
    "target-stretch": (True, False, False, 0),   # simu.cc "algo … BSS"
    "target-asap": (True, False, True, 0),       # "algo … BS1"
    "packed-target-asap": (True, True, True, 0),  # "algo … BP1"
}
#: simu.cc's messages when it writes no result line
ERRORS = {LOOPS: "updateMuse never returns (M_use flips between two sizes)",
          NEGATIVE: "FATAL ERROR less than 0 processors used",
          OVERWORK: "FATAL ERROR : You worked too much2"}


@dataclass(frozen=True)
class AuthorsSetup:
    """One line of the authors' argument file (``master.py``'s values as defaults).

    ``neighbourhood``: ``maxDist`` of the target strategies (``ceil(7 % × 152) = 11``);
    ``safe``: ``alwUse`` (``Av − Ra = 24 − 8``); ``metrics_from``: ``startcount``, the
    time from which goodput and waste count (``None``: the window start; the authors'
    14-day runs count the second week); ``seed``: the machine order of ff-unaware (the
    authors' ``random_shuffle`` is seeded by the clock); ``clock_seed``: instead, the
    value their ``srand(time(NULL))`` got, which gives their very order
    (:func:`glibc_shuffle`).
    """

    strategy: str
    start: float
    window: float
    machines: int = 152
    cores: int = 24
    safe: int = 16
    neighbourhood: int = 11
    util_low: float = 0.80
    util_high: float = 0.95
    metrics_from: float | None = None
    seed: int = 0
    clock_seed: int | None = None

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigError(f"unknown strategy '{self.strategy}' (known: "
                              f"{', '.join(STRATEGIES)})", field="vc")
        if self.machines < 1 or self.cores < 1 or self.window <= 0 or self.neighbourhood < 0:
            raise ConfigError("need machines ≥ 1, cores ≥ 1, window > 0 and "
                              "neighbourhood ≥ 0", field="window")
        check_safe(self.safe, self.machines, STRATEGIES[self.strategy][0])
        check_seed(self.seed)
        if self.clock_seed is not None:
            check_seed(self.clock_seed, "clock_seed")
        if not 0 <= self.util_low <= self.util_high <= 1:
            raise ConfigError(f"need 0 ≤ util_low ≤ util_high ≤ 1, got util_low="
                              f"{self.util_low}, util_high={self.util_high}",
                              field="util_low")
        mf = self.metrics_from
        if mf is not None and not self.start <= mf < self.start + self.window:
            raise ConfigError(f"the metrics must start inside the window [{self.start}, "
                              f"{self.start + self.window}), got {mf}", field="metrics_from")


def check_safe(safe: int, machines: int, target: bool) -> None:
    """``safe`` is ``simu.cc``'s ``alwUse``, the machines that never leave (the slides' "half
    the machines are safe", ``M_avg − M_ra``): at most the platform's machines (simu.cc has
    no machine past them, and its ``M_use = (alive + safe) / 2`` would point there), and at
    least 1 for the target strategies (``M_use`` shrinks down to ``safe``; at 0 their target
    machine is −1). First fit does not use it."""
    if safe < 0:
        raise ConfigError(f"safe={safe}: must be ≥ 0", field="safe")
    if target and not 1 <= safe <= machines:
        raise ConfigError(f"safe={safe}: the machines that never leave must be within "
                          f"[1, {machines}] (the platform has {machines} machines)",
                          field="safe")


@dataclass
class AuthorsResult:
    """The figures of ``simu.cc``'s output line (its names in brackets).

    ``area``: alive core-seconds counted [areaAvail × nodes]; ``util_done``: work of the
    jobs completed [utilDone]; ``util_total``: plus the work in progress at the end
    [utilTot]; ``waste``: work lost by aborts [waste]; ``max_stretch`` / ``mean_stretch``:
    of the jobs completed in the counted period [maxFFStret, avgStret]; ``completed_share``
    [njdone2 / (njstart − njdone)]; ``aborts`` [countW]. ``error``: why ``simu.cc`` would
    write no line (the figures are then not meaningful).
    """

    area: float = 0.0
    util_done: float = 0.0
    util_total: float = 0.0
    waste: float = 0.0
    max_stretch: float = 0.0
    mean_stretch: float = 0.0
    completed_share: float = 0.0
    aborts: int = 0
    error: str = ""
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def goodput(self) -> float:
        """``util_total / area`` (the authors' plotted goodput, ``utiltot``)."""
        return self.util_total / self.area if self.area else math.nan

    @property
    def aborted_share(self) -> float:
        """``waste / area`` (the authors' plotted aborted volume)."""
        return self.waste / self.area if self.area else math.nan

    def line(self) -> str:
        """The numbers as ``simu.cc`` prints them (``%g``, 6 digits), from ``area`` on."""
        per_abort = self.waste / self.aborts if self.aborts else math.nan
        return " ".join(_g(v) for v in (
            self.area, self.util_done, self.util_total, self.waste, self.max_stretch,
            self.mean_stretch, self.completed_share, per_abort))

    def as_dict(self) -> dict[str, Any]:
        """Every figure, the two shares included."""
        return {**asdict(self), "goodput": self.goodput, "aborted_share": self.aborted_share}


def _g(v: float) -> str:
    """C++ ``ostream << double`` with the default precision."""
    if math.isnan(v):
        return "-nan"  # every NaN there is a 0 / 0, which x86 makes negative
    return f"{v:.6g}"


def find_quantile(quantiles: list[int], length: int, ordered: bool = False) -> float:
    """``findQuantile``: ``1 − i / 1000`` for the first quantile above ``length`` (0 when
    ``length`` equals the last one). ``ordered``: the list is sorted (found by bisection)."""
    if ordered:
        maxi = bisect.bisect_right(quantiles, length)
        if maxi == len(quantiles) and not (quantiles and length > quantiles[-1]):
            maxi = 0
        return 1 - maxi / 1000
    maxi = 0
    for i, q in enumerate(quantiles):
        if length < q:
            maxi = i
            break
    if quantiles and length > quantiles[-1]:
        maxi = len(quantiles)
    return 1 - maxi / 1000


def glibc_rand(seed: int) -> Iterator[int]:
    """glibc's ``rand()`` after ``srand(seed)`` (the additive feedback generator of
    ``random_r.c``, TYPE_3)."""
    seed &= 0xFFFFFFFF
    r = [seed if seed else 1]
    for i in range(1, 31):
        hi, lo = divmod(r[i - 1] if r[i - 1] < 2**31 else r[i - 1] - 2**32, 127773)
        word = 16807 * lo - 2836 * hi
        r.append(word + 2147483647 if word < 0 else word)
    r += [r[i - 31] for i in range(31, 34)]
    for i in range(34, 344):
        r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
    while True:
        nxt = (r[-31] + r[-3]) & 0xFFFFFFFF
        r.append(nxt)
        del r[0]
        yield nxt >> 1


def glibc_shuffle(n: int, seed: int) -> list[int]:
    """``srand(seed); std::random_shuffle`` of ``0 … n − 1`` (libstdc++: for each ``i`` from
    1, swap with ``rand() % (i + 1)``)."""
    order = list(range(n))
    rand = glibc_rand(seed)
    for i in range(1, n):
        j = next(rand) % (i + 1)
        if i != j:
            order[i], order[j] = order[j], order[i]
    return order


def _helpers() -> list[Callable[..., Any]]:
    """The plain functions ``run_loop`` calls: those of the heap, books and loop modules,
    and the shared insert of the compiled loops."""
    out: list[Callable[..., Any]] = [shift_in]
    for mod in (cpp_heap, authors_books, authors_loop):
        for name in dir(mod):
            obj = getattr(mod, name)
            if callable(obj) and getattr(obj, "__module__", "") == mod.__name__ \
                    and name != "run_loop" and not isinstance(obj, type):
                out.append(obj)
    return out


def _compiled_loop() -> Callable[..., None]:
    """``run_loop``, compiled with Numba (disk-cached) when it is available."""
    if not COMPILED:
        return authors_loop.run_loop
    return compiled(authors_loop.run_loop, helpers=_helpers(),
                    fallback=authors_loop.run_loop, what="the authors' simulation")


def simulate_rows(names: list[str], release: list[float], length: list[float],
                  cores: list[int], initial: int, variations: list[tuple[int, int]],
                  quantiles: list[int], setup: AuthorsSetup) -> AuthorsResult:
    """One run on the rows of a job file (file order) and of a variation file."""
    del names  # the C++ keeps them for its debug output only
    algo, packed, first_one, ff_dist = STRATEGIES[setup.strategy]
    top = max([initial] + [m for _, m in variations])
    if top > setup.machines:
        raise ConfigError(f"the variation file asks for {top} machines, the platform has "
                          f"{setup.machines}", field="machines")
    if algo and (initial < 1 or any(m < 1 for _, m in variations)):
        when = ("the start" if initial < 1 else
                f"time {next(t for t, m in variations if m < 1)}")
        raise ConfigError(f"{setup.strategy} needs one machine alive at least at all times "
                          "(with none, simu.cc's target machine is −1); the variation file "
                          f"has 0 at {when}", field="alive")
    # M_use reaches max(alive, safe) − 1 (authors_loop.check_bounds)
    rows = max(top, setup.safe if algo else 0, 1)
    start, end = float(setup.start), float(setup.start + setup.window)
    times = list(release) + list(length) + [float(t) for t, _ in variations] + [end]
    if any(x != int(x) for x in times) or max(times) * 5 + 5 >= (1 << 62) // MULT \
            or max(release, default=0) + 1 >= MULT:
        raise ConfigError("the authors' simulation needs whole-number times below 2^31 s",
                          field="release")
    keep: list[int] = []
    at: list[float] = []
    fac: list[float] = []
    for k, (r, t) in enumerate(zip(release, length, strict=True)):
        if r >= start:
            keep.append(k)
            at.append(r)
            fac.append(0.0)
        elif r + t >= start:
            keep.append(k)
            at.append(start)
            fac.append(start - r)
    rel = np.array([release[k] for k in keep], dtype=np.float64)
    lng = np.array([length[k] for k in keep], dtype=np.float64)
    np_ = np.array([cores[k] for k in keep], dtype=np.int64)
    if setup.cores < int(np_.max(initial=0)):
        raise ConfigError(f"a job asks for {int(np_.max())} cores, machines have "
                          f"{setup.cores}", field="cores")
    ordered = all(a <= b for a, b in itertools.pairwise(quantiles))
    perc = np.array([find_quantile(quantiles, int(min(t, end - start)), ordered)
                     for t in lng])
    n = len(keep)
    shuf = np.arange(setup.machines, dtype=np.int64)
    if not algo and ff_dist > 0:
        shuf = (np.array(glibc_shuffle(setup.machines, setup.clock_seed), dtype=np.int64)
                if setup.clock_seed is not None else
                np.random.default_rng(setup.seed).permutation(setup.machines).astype(np.int64))
    f32 = np.array([float(np.float32(p) / np.float32(setup.cores))
                    for p in range(setup.cores + 1)])
    var_t = np.array([float(t) for t, _ in variations], dtype=np.float64)
    var_m = np.array([m for _, m in variations], dtype=np.int64)
    counted = start if setup.metrics_from is None else float(setup.metrics_from)
    max_dist = setup.neighbourhood if algo else ff_dist
    cap_e, cap_b = 32 * n + 1024, 256
    loop = _compiled_loop()
    while True:
        EK = np.zeros(cap_e, np.int64)
        EP = np.zeros(cap_e, np.int64)
        IS = np.zeros(8, np.int64)
        FS = np.zeros(9, np.float64)
        for k in range(n):
            IS[NE] = cpp_heap.heap_push(EK, EP, int(IS[NE]),
                                        event_key(at[k], ARRIVAL, int(rel[k])), k)
        QK, QP, TK, TP = (np.zeros(n + 1, np.int64) for _ in range(4))
        BP = np.zeros((rows, cap_b), np.int64)
        BT = np.zeros((rows, cap_b), np.float64)
        SP = np.zeros(cap_b, np.int64)
        ST = np.zeros(cap_b, np.float64)
        try:
            loop(rel, lng, np_, np.array(fac), perc, EK, EP, QK, QP, TK, TP, var_t, var_m,
                 initial, shuf, BP, BT, SP, ST, f32, setup.machines, setup.cores,
                 setup.safe, max_dist, algo, packed, first_one, setup.util_low,
                 setup.util_high, start, end, counted, IS, FS)
        except IndexError as exc:  # a heap or a book is full: more room, run again
            if cap_e > 1024 * (n + len(variations) + 1024) or cap_b > 1 << 22:
                raise
            if "book" in str(exc):
                cap_b *= 2
            else:
                cap_e *= 2
            continue
        break
    done2 = FS[N_DONE2]
    started = FS[N_START] - FS[N_DONE]
    return AuthorsResult(
        area=FS[AREA] * setup.cores, util_done=FS[UTIL_DONE], util_total=FS[UTIL_TOT],
        waste=FS[WASTE], max_stretch=FS[MAX_ST],
        mean_stretch=FS[SUM_ST] / done2 if done2 else math.nan,
        completed_share=done2 / started if started else math.nan,
        aborts=int(IS[COUNT_W]), error=ERRORS.get(int(IS[ERROR]), ""),
        stats={"reallocations": int(IS[REALLOCS]), "placements": int(IS[PLACEMENTS]),
               "aborts": int(IS[ABORTS])})
