"""Where runs execute: a local process pool, or Dask distributed (local or a cluster).

Every backend maps one picklable function over plain configurations and yields
``(item, result-or-exception)`` as runs finish, in completion order. The caller stores each
result as it arrives, so a killed campaign loses only the runs in flight.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Any, Protocol, TypeVar

from dispatchlab.errors import ConfigError, DispatchlabError

T = TypeVar("T")
R = TypeVar("R")

BACKENDS = ("local", "dask-local", "dask")


class WorkerLost(DispatchlabError):
    """A run kept killing the worker process that ran it."""


class Backend(Protocol):
    """What a campaign needs from an execution backend."""

    name: str

    def __enter__(self) -> Backend: ...

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    def map_unordered(
        self, fn: Callable[[T], R], items: Sequence[T], key: Callable[[T], str]
    ) -> Iterator[tuple[T, R | BaseException]]:
        """Run ``fn`` on every item; yield each with its result or exception as it ends."""
        ...


def available_cores() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


#: How often a worker checks that the process that started it is still alive (s).
PARENT_POLL = 0.5


def watch_parent(parent: int) -> None:
    """Worker initializer: leave as soon as the parent dies (a ``compare`` killed with
    SIGKILL cannot shut its pool down; its workers — and the resource tracker they keep
    open — used to run on). Linux also gets the kernel's parent-death signal."""
    import threading
    import time

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9 (Linux; harmless elsewhere)
    except (OSError, AttributeError):
        pass

    def poll() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(PARENT_POLL)

    threading.Thread(target=poll, name="watch-parent", daemon=True).start()


class LocalBackend:
    """A pool of worker processes on this machine.

    Workers are *spawned* (fresh interpreters): never forked from this process, which may
    run threads (Dask, progress bars). A worker's death is then seen by the kernel-level
    process sentinel, without a fork server in between.

    At most one run per worker is in flight, so a worker that dies (killed, out of memory,
    a native library aborting) breaks the pool with only those runs lost. They are then
    run again one at a time, alone: a run that kills its worker while alone is charged for
    it, and fails with :class:`WorkerLost` after ``max_attempts`` such deaths; the runs
    that only shared the pool with it are never charged. A pool that ran its items without
    a death serves the next :meth:`map_unordered` call too (campaigns that map round after
    round, such as a particle swarm's epochs, spawn their workers once).
    """

    name = "local"

    def __init__(self, workers: int | None = None, *, max_attempts: int = 3):
        self._workers = workers or available_cores()
        self.max_attempts = max_attempts
        self.resubmitted = 0
        self._pool: ProcessPoolExecutor | None = None
        self._pool_size = 0

    def __enter__(self) -> LocalBackend:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._shutdown()

    def _shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def map_unordered(
        self, fn: Callable[[T], R], items: Sequence[T], key: Callable[[T], str]
    ) -> Iterator[tuple[T, R | BaseException]]:
        """Run the items on the pool; after a worker's death, its runs again alone."""
        queue: deque[T] = deque(items)
        suspects: deque[T] = deque()  # in flight when a worker died: to run alone
        deaths: dict[str, int] = {}
        ctx = multiprocessing.get_context("spawn")
        while queue or suspects:
            alone = bool(suspects)
            source = suspects if alone else queue
            size = 1 if alone else max(1, min(self._workers, len(queue)))
            if alone or self._pool is None or self._pool_size < size:
                self._shutdown()
                self._pool = ProcessPoolExecutor(max_workers=size, mp_context=ctx,
                                                 initializer=watch_parent,
                                                 initargs=(os.getpid(),))
                self._pool_size = size
            running: dict[Future[R], T] = {}
            healthy = False
            try:
                self._fill(source, running, fn, size)
                while running:
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    if any(isinstance(f.exception(), BrokenProcessPool) for f in done):
                        done, _ = wait(running)  # the others end broken (or just finished)
                    ended: list[tuple[T, R | BaseException]] = []
                    lost: list[T] = []
                    for fut in done:
                        item = running.pop(fut)
                        exc = fut.exception()
                        if isinstance(exc, BrokenProcessPool):
                            lost.append(item)
                        else:
                            ended.append((item, exc if exc is not None else fut.result()))
                    if not lost:  # keep the workers busy while the caller stores results
                        self._fill(source, running, fn, size)
                    yield from ended
                    if lost:
                        yield from self._after_death(lost, alone, suspects, deaths, key)
                        break
                else:
                    healthy = not alone
            finally:
                if not healthy:  # a healthy pool serves the next call (no new spawns)
                    self._shutdown()

    def _fill(self, source: deque[T], running: dict[Future[R], T], fn: Callable[[T], R],
              size: int) -> None:
        """Submit from ``source`` until ``size`` runs are in flight. A pool found broken
        here leaves the item queued; the runs in flight then end broken."""
        assert self._pool is not None
        while source and len(running) < size:
            try:
                fut = self._pool.submit(fn, source[0])
            except BrokenProcessPool:
                return
            running[fut] = source.popleft()

    def _after_death(self, lost: list[T], alone: bool, suspects: deque[T],
                     deaths: dict[str, int], key: Callable[[T], str]
                     ) -> Iterator[tuple[T, BaseException]]:
        """Queue the runs lost with a dead worker to run alone; charge a run that died
        alone, and give it up after ``max_attempts`` deaths."""
        for item in lost:
            if alone:
                k = key(item)
                deaths[k] = deaths.get(k, 0) + 1
                if deaths[k] >= self.max_attempts:
                    yield item, WorkerLost(f"run {k}: its worker process died {deaths[k]} "
                                           "times while running it alone")
                    continue
            suspects.append(item)
            self.resubmitted += 1


class DaskBackend:
    """Dask distributed: an existing scheduler (``address``) or a LocalCluster started here.

    Tasks are keyed by the run's hash, so the scheduler never runs one twice at once; if a
    worker dies, the scheduler reschedules its tasks on the others.
    """

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        *,
        connect_timeout: float = 30.0,
    ):
        self.address = address
        self.name = "dask" if address else "dask-local"
        self._n = workers
        self.connect_timeout = connect_timeout
        self._cluster: Any = None
        self._client: Any = None

    def __enter__(self) -> DaskBackend:
        from distributed import Client, LocalCluster

        if self.address is None:
            self._cluster = LocalCluster(
                n_workers=self._n or available_cores(),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
            )
            self._client = Client(self._cluster)
        else:
            try:
                self._client = Client(self.address, timeout=self.connect_timeout)
            except (OSError, TimeoutError) as exc:
                raise ConfigError(
                    f"cannot reach the Dask scheduler at {self.address}: {exc}", field="scheduler"
                ) from None
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (inside the ``with`` block)."""
        return self._client

    def map_unordered(
        self, fn: Callable[[T], R], items: Sequence[T], key: Callable[[T], str]
    ) -> Iterator[tuple[T, R | BaseException]]:
        """Submit everything, yield results as the cluster finishes them."""
        from distributed import as_completed

        if self._client is None:
            raise RuntimeError("use DaskBackend inside a with block")
        futures = {}
        for it in items:
            fut = self._client.submit(fn, it, key=f"dispatchlab-run-{key(it)}", pure=False)
            futures[fut.key] = (fut, it)
        try:
            for fut in as_completed([f for f, _ in futures.values()]):
                item = futures[fut.key][1]
                try:
                    yield item, fut.result()
                except Exception as exc:
                    yield item, exc
                finally:
                    fut.release()
        finally:
            for f, _ in futures.values():
                f.cancel()


def make_backend(
    name: str = "local", *, scheduler: str | None = None, workers: int | None = None
) -> LocalBackend | DaskBackend:
    """The backend called ``name`` (``local``, ``dask-local`` or ``dask`` + ``scheduler``)."""
    if name == "local":
        if scheduler:
            raise ConfigError("--scheduler needs --backend dask", field="scheduler")
        return LocalBackend(workers)
    if name == "dask-local":
        if scheduler:
            raise ConfigError(
                "--backend dask-local starts its own cluster; drop --scheduler or use "
                "--backend dask",
                field="scheduler",
            )
        return DaskBackend(None, workers)
    if name == "dask":
        if not scheduler:
            raise ConfigError("--backend dask needs --scheduler tcp://host:8786", field="scheduler")
        return DaskBackend(scheduler, workers)
    raise ConfigError(f"unknown backend '{name}' (known: {', '.join(BACKENDS)})", field="backend")
