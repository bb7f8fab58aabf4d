"""One run's configuration: plain, picklable values and the hash that names its results."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dispatchlab.params import given
from dispatchlab.run_settings import RunSettings

#: Bumped when the meaning of a configuration changes, so old run folders are not reused.
HASH_SCHEMA = 1


@dataclass(frozen=True)
class WorkloadRef:
    """Where a worker finds the jobs: a path (or generator spec) plus reader options.

    ``digest`` is the SHA-256 of the file's bytes (None for non-file specs); it names the
    data in the hash, so moving the file keeps finished runs and editing it does not.
    ``scenario`` (a scenario/capacity file or ``gen:`` spec), ``walltime_kill`` and
    ``metrics_window`` (``[start, T]``: variable-capacity metrics such as ``goodput`` over
    it) describe the machine the jobs run on; they enter the hash only when set.
    """

    path: str
    format: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    skip: int | None = None
    limit: int | None = None
    digest: str | None = None
    scenario: str | list[str] | None = None  # several: merged
    walltime_kill: bool = True
    metrics_window: tuple[int, int] | None = None
    power_cap: float | None = None  # a fixed machine-wide cap (W)
    #: the profit accounting's inputs (``cooling``, ``temperature``, ``prices``,
    #: ``it_power``): one pricing scenario; they shape the summary, not the schedule
    cooling: dict[str, str] | None = None
    #: the run settings that differ from their defaults
    #: (:meth:`dispatchlab.run_settings.RunSettings.changed`)
    settings: dict[str, Any] = field(default_factory=dict)

    def identity(self) -> dict[str, Any]:
        """What determines the jobs (used in the run hash)."""
        window = self.metrics_window
        return {
            "source": f"sha256:{self.digest}" if self.digest else self.path,
            "format": self.format,
            "options": self.options,
            "skip": self.skip,
            "limit": self.limit,
            # the machine's entries enter only when set
            **given(scenario=self.scenario, walltime_kill=None if self.walltime_kill else False,
                    metrics_window=None if window is None else list(window),
                    power_cap=self.power_cap, cooling=self.cooling,
                    settings=self.settings or None),
        }

    def run_settings(self) -> RunSettings:
        """The run settings of this workload's runs."""
        return RunSettings(**self.settings)

    def load_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`dispatchlab.workload.load.load_workload`."""
        return {**self.options, **given(format=self.format, skip=self.skip, limit=self.limit)}


@dataclass(frozen=True)
class RunConfig:
    """Everything a worker needs to run one simulation, as plain values.

    ``platform`` is an inline spec, a preset name, a file path or ``auto`` (the machine
    the trace's header describes); ``platform_digest`` is set for files.
    ``schedule_formats``: the layouts the run's schedule is also written in (``batsim``,
    ``swf``); they shape no result, so they are not part of the hash.
    """

    workload: WorkloadRef
    platform: str
    dispatcher: str
    seed: int = 0
    on_infeasible: str = "error"
    platform_digest: str | None = None
    schedule_formats: tuple[str, ...] = ()

    def identity(self) -> dict[str, Any]:
        """The values that determine the results; labels and engines are not part of it."""
        from dispatchlab.dispatchers.registry import canonical_spec

        platform = f"file sha256:{self.platform_digest}" if self.platform_digest else self.platform
        return {
            "schema": HASH_SCHEMA,
            "workload": self.workload.identity(),
            "platform": platform,
            # equivalent spellings (easy, order=fifo,select=easy) are one run; a file it
            # names (slurm:conf=FILE, plan=FILE) by its content
            "dispatcher": files_by_content(canonical_spec(self.dispatcher)),
            "seed": self.seed,
            "on_infeasible": self.on_infeasible,
        }

    @property
    def key(self) -> str:
        """Hash of :meth:`identity`: the name of this run's result folder."""
        return config_hash(self.identity())

    @property
    def simulation_key(self) -> str:
        """Hash of :meth:`identity` without the pricing inputs (``workload.cooling``): runs
        that share it differ only in how the finished schedule is priced."""
        ident = self.identity()
        ident["workload"] = {k: v for k, v in ident["workload"].items() if k != "cooling"}
        return config_hash(ident)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in ``run.json``)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """Inverse of :meth:`to_dict`."""
        wl = WorkloadRef(**data["workload"])
        formats = tuple(data.get("schedule_formats", ()))
        return cls(**{**data, "workload": wl, "schedule_formats": formats})


@dataclass(frozen=True)
class RunLabels:
    """How a run is shown and grouped; not part of the hash.

    ``block`` names the set a run belongs to (everything but the dispatcher): runs sharing a
    block are compared with each other by the ranking statistics.
    """

    experiment: str
    workload: str
    window: int | None
    platform: str
    dispatcher: str
    seed: int
    params: dict[str, Any]
    block: str
    pricing: str | None = None  # the pricing scenario's name (a workload's ``pricing`` list)


@dataclass(frozen=True)
class PlannedRun:
    """A run of the grid: its configuration and its labels.

    ``shares_simulation``: the dispatcher declares that its decisions do not depend on the
    pricing inputs (``reads_pricing`` False, the default), so this run may take its
    schedule from one simulation shared with the runs that differ from it only in those
    inputs (same :attr:`RunConfig.simulation_key`), each priced on its own.
    """

    config: RunConfig
    labels: RunLabels
    shares_simulation: bool = False

    @property
    def key(self) -> str:
        """The run's hash."""
        return self.config.key


def canonical_json(value: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces) for hashing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def config_hash(identity: dict[str, Any]) -> str:
    """First 16 hex digits of the SHA-256 of the canonical JSON of ``identity``."""
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()[:16]


def files_by_content(spec: str) -> str:
    """A dispatcher spec with each value that names a file (``slurm:conf=FILE``,
    ``plan=FILE``, ``cooling=FILE:scaled``; relative paths from the current folder, where
    the dispatcher reads them) replaced by ``sha256:<digest>`` of its bytes: an edited file
    is another run, a moved one the same. Specs naming no file are returned unchanged."""
    from dispatchlab.dispatchers.registry import spec_fields

    if "=" not in spec:
        return spec
    fields = spec_fields(spec)
    changed = False
    for key, value in fields.items():
        name, colon, rest = value.rpartition(":") if ":" in value else (value, "", "")
        for path, tail in ((value, ""), (name, colon + rest)):
            if path and Path(path).expanduser().is_file():
                fields[key] = f"sha256:{_cached_digest(Path(path).expanduser())}{tail}"
                changed = True
                break
    return ",".join(f"{k}={v}" for k, v in fields.items()) if changed else spec


_DIGESTS: dict[tuple[str, int, int], str] = {}


def _cached_digest(path: Path) -> str:
    """:func:`file_digest`, computed once per file version (path, size, modification
    time in ns): a run's key is asked for often."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = file_digest(path)
    return _DIGESTS[key]


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
