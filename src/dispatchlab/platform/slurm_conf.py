"""An operator's ``slurm.conf``: the nodes and partitions (the platform) and the
scheduling settings (the ``slurm`` dispatcher family).

What is read, with where Slurm defines it (``doc/man/man5/slurm.conf.5``, Slurm 22.05;
the parsing itself is Slurm's ``src/common/read_config.c``):

- the file: one ``Key=Value`` setting per line, ``#`` starts a comment, a trailing ``\\``
  continues a line, keys are case-insensitive; ``NodeName=`` and ``PartitionName=``
  lines hold several ``Key=Value`` fields; ``NodeName=DEFAULT`` / ``PartitionName=DEFAULT``
  set the defaults of the lines after them;
- ``NodeName`` (host lists such as ``node[01-16]``, :mod:`~dispatchlab.platform.hostlist`):
  ``CPUs`` (default ``Boards × Sockets × CoresPerSocket × ThreadsPerCore``), ``Sockets``,
  ``CoresPerSocket``, ``ThreadsPerCore``, ``RealMemory`` (MB, default 1), ``State``;
- ``PartitionName``: ``Nodes`` (a host list or ``ALL``), ``MaxTime``, ``DefaultTime``,
  ``MaxNodes``, ``PriorityJobFactor``, ``PriorityTier`` (``Priority`` sets both),
  ``Default``, ``State``;
- ``SchedulerType``, ``SchedulerParameters`` (``bf_interval``, ``bf_window``,
  ``bf_resolution``, ``bf_max_job_test``, ``bf_continue``, ``bf_max_job_user``,
  ``default_queue_depth``, ``sched_interval``), ``PriorityType``, ``PriorityWeightAge``,
  ``…JobSize``, ``…Partition``, ``…QOS``, ``…FairShare``, ``PriorityMaxAge``,
  ``PriorityDecayHalfLife``, ``PriorityCalcPeriod``, ``PriorityFavorSmall``,
  ``SelectType`` (``select/cons_tres``), ``SelectTypeParameters`` (``CR_Core``,
  ``CR_Core_Memory``).

Nothing is silently ignored: a setting that changes scheduling and is not modelled is a
:class:`~dispatchlab.errors.ConfigError` naming the file, the line and the key; a setting
that cannot change a simulated schedule (daemons, paths, logging, authentication, …:
:data:`NO_EFFECT`) is accepted and listed in :attr:`SlurmConf.warnings`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dispatchlab.errors import ConfigError
from dispatchlab.platform.hostlist import expand_hostlist
from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.platform.queues import QueueConfig

#: Settings that cannot change a simulated schedule: accepted, and listed as warnings.
NO_EFFECT = frozenset(k.lower() for k in (
    "ClusterName", "SlurmctldHost", "ControlMachine", "ControlAddr", "BackupController",
    "AuthType", "AuthInfo", "CredType", "CryptoType", "ProctrackType", "TaskPlugin",
    "TaskPluginParam", "LaunchType", "MpiDefault", "SwitchType", "PluginDir",
    "JobAcctGatherType", "JobAcctGatherFrequency", "AccountingStorageType",
    "AccountingStorageHost", "AccountingStoragePort", "AccountingStorageUser",
    "AccountingStoragePass", "AccountingStorageTRES", "AccountingStorageEnforce",
    "JobCompType", "JobCompLoc", "JobCompHost", "SlurmUser", "SlurmdUser",
    "SlurmctldPort", "SlurmdPort", "SlurmctldPidFile", "SlurmdPidFile", "SlurmctldLogFile",
    "SlurmdLogFile", "SlurmctldDebug", "SlurmdDebug", "SlurmSchedLogFile",
    "SlurmSchedLogLevel", "DebugFlags", "StateSaveLocation", "SlurmdSpoolDir",
    "SlurmdParameters", "SlurmctldTimeout", "SlurmdTimeout", "MessageTimeout",
    "InactiveLimit", "KillWait", "MinJobAge", "Waittime", "ReturnToService", "MailProg",
    "MailDomain", "TmpFS", "Epilog", "Prolog", "EpilogSlurmctld", "PrologSlurmctld",
    "HealthCheckProgram", "HealthCheckInterval", "HealthCheckNodeState", "TreeWidth",
    "CommunicationParameters", "TCPTimeout", "UsePAM", "PropagateResourceLimits",
    "PropagateResourceLimitsExcept", "MaxJobCount", "MaxArraySize", "FirstJobId",
    "MaxStepCount", "MaxTasksPerNode", "SlurmctldParameters", "JobContainerType",
    "CoreSpecPlugin", "TopologyPlugin", "RoutePlugin",
))
#: Scheduler parameters that cannot change a simulated schedule: the simulated scheduling
#: pass takes no time and yields no locks.
NO_EFFECT_SCHED = frozenset({"bf_yield_interval", "bf_yield_sleep", "max_rpc_cnt",
                             "bf_max_time", "max_sched_time"})
#: Scheduler parameters modelled (integer ones; ``bf_continue`` is a flag).
SCHED_INTS = {"bf_interval": 30, "bf_window": 1440, "bf_resolution": 60,
              "bf_max_job_test": 500, "bf_max_job_user": 0, "default_queue_depth": 100,
              "sched_interval": 60}
SCHED_FLAGS = frozenset({"bf_continue"})
#: Scheduler parameters modelled at 0 only: a simulated event-triggered pass runs at the
#: event, i.e. no batch scheduling delay and no minimum interval between main passes
#: (``job_scheduler.c``, ``_schedule``); another value is an error.
SCHED_ZERO_ONLY = frozenset({"batch_sched_delay", "sched_min_interval"})
#: Top-level settings modelled, with Slurm 22.05's defaults (as written in slurm.conf).
SETTINGS = {
    "schedulertype": "sched/backfill", "schedulerparameters": "",
    "prioritytype": "priority/basic", "priorityweightage": "0",
    "priorityweightjobsize": "0", "priorityweightpartition": "0",
    "priorityweightqos": "0", "priorityweightfairshare": "0", "prioritymaxage": "7-0",
    "prioritydecayhalflife": "7-0", "prioritycalcperiod": "5", "priorityfavorsmall": "NO",
    "priorityflags": "", "selecttype": "select/cons_tres",
    "selecttypeparameters": "CR_Core",
}
_ALLOWED_VALUES = {
    "schedulertype": ("sched/backfill", "sched/builtin"),
    "prioritytype": ("priority/basic", "priority/multifactor"),
    "selecttype": ("select/cons_tres",),
    "selecttypeparameters": ("CR_Core", "CR_Core_Memory"),
    "priorityflags": ("", "NO_FAIR_TREE"),
}
_NODE_KEYS = ("cpus", "boards", "sockets", "corespersocket", "threadspercore", "realmemory",
              "state")
_NODE_NO_EFFECT = ("nodehostname", "nodeaddr", "port", "tmpdisk", "feature", "features",
                   "reason")
_PART_KEYS = ("nodes", "maxtime", "defaulttime", "maxnodes", "priorityjobfactor",
              "prioritytier", "priority", "default", "state")
_PART_NO_EFFECT = ("hidden",)
_FIELD = re.compile(r"(\S+?)=(\S*)")
_TIME = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")


@dataclass(frozen=True)
class SlurmNode:
    """One node as ``slurm.conf`` declares it."""

    name: str
    cpus: int
    real_memory: int
    line: int


@dataclass(frozen=True)
class SlurmPartition:
    """One partition (times in seconds; ``None``: unlimited / not set)."""

    name: str
    nodes: tuple[str, ...]
    max_time: int | None = None
    default_time: int | None = None
    max_nodes: int | None = None
    priority_job_factor: int = 1
    priority_tier: int = 1
    default: bool = False
    line: int = 0


@dataclass(frozen=True)
class SlurmConf:
    """What a ``slurm.conf`` says: nodes, partitions and the scheduling settings
    (``settings``: lower-case key → value, Slurm's default where not given;
    ``sched_params``: ``SchedulerParameters`` entries, defaults filled)."""

    source: str
    nodes: tuple[SlurmNode, ...]
    partitions: tuple[SlurmPartition, ...]
    settings: Mapping[str, str]
    sched_params: Mapping[str, int]
    bf_continue: bool = False
    warnings: tuple[str, ...] = ()
    lines: Mapping[str, int] = field(default_factory=dict)

    def seconds(self, key: str) -> int:
        """A duration setting (``PriorityMaxAge``, …) in seconds."""
        value = parse_slurm_time(self.settings[key])
        if value is None:
            raise self.error(key, "must be a finite duration")
        return value

    def integer(self, key: str) -> int:
        """A non-negative integer setting."""
        text = self.settings[key]
        if not text.isdigit():
            raise self.error(key, f"'{text}' is not a non-negative integer")
        return int(text)

    def flag(self, key: str) -> bool:
        """A YES/NO setting."""
        return self.settings[key].upper() in ("YES", "1", "TRUE")

    def error(self, key: str, message: str) -> ConfigError:
        """A ConfigError naming the file, the setting's line and the key."""
        line = self.lines.get(key)
        where = f"{self.source}:{line}" if line else self.source
        return ConfigError(message, source=where, field=_spelling(key))

    @property
    def default_partition(self) -> SlurmPartition | None:
        """The partition with ``Default=YES`` (Slurm takes the last one so marked)."""
        marked = [p for p in self.partitions if p.default]
        return marked[-1] if marked else None

    @property
    def memory(self) -> bool:
        """Whether memory is a consumable resource (``CR_Core_Memory``)."""
        return self.settings["selecttypeparameters"].lower() == "cr_core_memory"


#: The documented spelling of each modelled setting.
SPELLING = {k.lower(): k for k in (
    "SchedulerType", "SchedulerParameters", "PriorityType", "PriorityWeightAge",
    "PriorityWeightJobSize", "PriorityWeightPartition", "PriorityWeightQOS",
    "PriorityWeightFairshare", "PriorityMaxAge", "PriorityDecayHalfLife",
    "PriorityCalcPeriod", "PriorityFavorSmall", "PriorityFlags", "SelectType",
    "SelectTypeParameters")}


def _spelling(key: str) -> str:
    """The documented spelling of a lower-case key, for messages."""
    return SPELLING.get(key, key)


def parse_slurm_time(text: str) -> int | None:
    """A Slurm duration in seconds: ``minutes``, ``minutes:seconds``,
    ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes``,
    ``days-hours:minutes:seconds`` (slurm.conf(5), ``MaxTime``; Slurm's
    ``time_str2mins``); ``INFINITE``/``UNLIMITED`` → ``None``. ``ValueError`` otherwise."""
    t = text.strip()
    if t.upper() in ("INFINITE", "UNLIMITED"):
        return None
    m = _TIME.match(t)
    if m is None:
        raise ValueError(f"'{text}' is not a Slurm time (minutes, [days-]hh:mm:ss, …)")
    days, a, b, c = m.groups()
    if days is not None:  # days-hours[:minutes[:seconds]]
        return int(days) * 86400 + int(a) * 3600 + int(b or 0) * 60 + int(c or 0)
    if c is not None:  # hours:minutes:seconds
        return int(a) * 3600 + int(b) * 60 + int(c)
    if b is not None:  # minutes:seconds
        return int(a) * 60 + int(b)
    return int(a) * 60


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """``(first line number, text)`` per setting: comments removed, ``\\`` joined."""
    out: list[tuple[int, str]] = []
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        whole = (pending + line).strip()
        pending = ""
        if whole:
            out.append((start, whole))
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def _fields(text: str, where: str) -> dict[str, str]:
    """``Key=Value`` fields of one line (keys lower-cased); anything else is an error."""
    out: dict[str, str] = {}
    rest = text
    for m in _FIELD.finditer(text):
        out[m.group(1).lower()] = m.group(2)
        rest = rest.replace(m.group(0), " ", 1)
    if rest.strip():
        raise ConfigError(f"'{rest.strip()}' is not a Key=Value setting", source=where)
    return out


def _int(value: str, where: str, key: str, minimum: int = 0) -> int:
    if not value.isdigit() or int(value) < minimum:
        raise ConfigError(f"'{value}' is not an integer ≥ {minimum}", source=where, field=key)
    return int(value)


def _time(value: str, where: str, key: str) -> int | None:
    try:
        return parse_slurm_time(value)
    except ValueError as exc:
        raise ConfigError(str(exc), source=where, field=key) from None


def read_slurm_conf(path: str | Path) -> SlurmConf:
    """Read a ``slurm.conf``; a mistake or an unsupported setting is a ConfigError naming
    the file, line and key."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError("file not found", source=str(p))
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read: {exc}", source=str(p)) from None
    conf = parse_slurm_conf(text, source=str(p))
    if conf.warnings:
        warnings.warn(SlurmConfWarning(
            f"{p}: {len(conf.warnings)} setting(s) cannot change a simulated schedule and "
            f"are not used: " + "; ".join(w.split(": ", 1)[1].split(" does not")[0]
                                          + f" (line {w.split(':')[-2]})"
                                          for w in conf.warnings)), stacklevel=2)
    return conf


class SlurmConfWarning(UserWarning):
    """Settings of a slurm.conf that were read and not used (they cannot change a
    simulated schedule)."""


def parse_slurm_conf(text: str, *, source: str = "slurm.conf") -> SlurmConf:
    """Parse the text of a ``slurm.conf`` (see the module doc)."""
    nodes: list[SlurmNode] = []
    parts: list[SlurmPartition] = []
    settings = dict(SETTINGS)
    lines: dict[str, int] = {}
    warnings: list[str] = []
    node_defaults: dict[str, str] = {}
    part_defaults: dict[str, str] = {}
    for number, line in _logical_lines(text):
        where = f"{source}:{number}"
        first = line.split("=", 1)[0].strip().lower()
        if first == "nodename":
            _node_line(_fields(line, where), node_defaults, nodes, warnings, where, number)
            continue
        if first == "partitionname":
            _partition_line(_fields(line, where), part_defaults, parts, warnings, where,
                            number)
            continue
        key, eq, value = line.partition("=")
        if not eq or not key.strip() or any(c.isspace() for c in key.strip()):
            raise ConfigError(f"'{line}' is not a Key=Value setting", source=where)
        fields = {first: value.strip()}
        if first in ("include",):
            raise ConfigError("Include is not followed yet: give the included settings in "
                              "this file", source=where, field=key.strip())
        if first in settings:
            value = fields[first]
            allowed = _ALLOWED_VALUES.get(first)
            if allowed is not None and value.lower() not in (a.lower() for a in allowed):
                raise ConfigError(
                    f"'{value}' is not modelled (supported: "
                    f"{', '.join(a or '(empty)' for a in allowed)})",
                    source=where, field=_spelling(first))
            settings[first] = value
            lines[first] = number
        elif first in NO_EFFECT:
            warnings.append(f"{where}: {_fields_key(line)} does not change a simulated "
                            f"schedule; not used")
        else:
            raise ConfigError("not modelled by the slurm family, and it may change the "
                              "schedule (docs/slurm_twin.md lists what is read)",
                              source=where, field=_fields_key(line))
    if not nodes:
        raise ConfigError("no NodeName line: a slurm.conf platform needs nodes",
                          source=source)
    if not parts:
        raise ConfigError("no PartitionName line", source=source)
    names = {n.name for n in nodes}
    for part in parts:
        missing = [n for n in part.nodes if n not in names and part.nodes != ("ALL",)]
        if missing:
            raise ConfigError(f"partition {part.name} names node {missing[0]}, which no "
                              f"NodeName line declares", source=f"{source}:{part.line}",
                              field="Nodes")
    sched, bf_continue = _sched_params(settings["schedulerparameters"],
                                       f"{source}:{lines.get('schedulerparameters', 0)}",
                                       warnings)
    return SlurmConf(source, tuple(nodes), tuple(parts), settings, sched, bf_continue,
                     tuple(warnings), lines)


def _fields_key(line: str) -> str:
    """The key of a one-setting line, as written."""
    return line.split("=", 1)[0].strip()


def _check_keys(fields: dict[str, str], line_kind: str, known: tuple[str, ...],
                no_effect: tuple[str, ...], warnings: list[str], where: str) -> None:
    """Every field of a NodeName/PartitionName line is modelled, or listed as a warning
    when it cannot change a simulated schedule; any other is an error."""
    for key in fields:
        if key in no_effect:
            warnings.append(f"{where}: {line_kind} {key} does not change a simulated "
                            f"schedule; not used")
        elif key not in known:
            raise ConfigError(f"{line_kind} setting not modelled by the slurm family (it may "
                              "change the schedule)", source=where, field=key)


def _with_defaults(name: str, fields: dict[str, str], defaults: dict[str, str]
                   ) -> dict[str, str] | None:
    """A ``…Name=DEFAULT`` line updates the defaults (``None``); any other line's fields
    over the defaults."""
    if name.upper() == "DEFAULT":
        defaults.update(fields)
        return None
    return {**defaults, **fields}


def _node_line(fields: dict[str, str], defaults: dict[str, str], nodes: list[SlurmNode],
               warnings: list[str], where: str, number: int) -> None:
    """One ``NodeName=`` line (slurm.conf(5), "NODE CONFIGURATION")."""
    names = fields.pop("nodename")
    _check_keys(fields, "NodeName", _NODE_KEYS, _NODE_NO_EFFECT, warnings, where)
    f = _with_defaults(names, fields, defaults)
    if f is None:
        return
    threads = _int(f.get("threadspercore", "1"), where, "ThreadsPerCore", 1)
    if threads > 1:
        raise ConfigError("ThreadsPerCore > 1 is not modelled yet (CR_Core then allocates "
                          "whole cores of several CPUs)", source=where, field="ThreadsPerCore")
    product = (_int(f.get("boards", "1"), where, "Boards", 1)
               * _int(f.get("sockets", "1"), where, "Sockets", 1)
               * _int(f.get("corespersocket", "1"), where, "CoresPerSocket", 1) * threads)
    topology = ("boards", "sockets", "corespersocket", "threadspercore")
    own_topology = "cpus" not in fields and any(k in fields for k in topology)
    cpus = _int(f["cpus"], where, "CPUs", 1) if "cpus" in f and not own_topology else product
    memory = _int(f.get("realmemory", "1"), where, "RealMemory", 1)
    state = f.get("state", "UNKNOWN").upper()
    if state not in ("UNKNOWN", "IDLE", "CLOUD"):
        raise ConfigError(f"State={state} is not modelled (nodes start up and idle)",
                          source=where, field="State")
    try:
        expanded = expand_hostlist(names)
    except ValueError as exc:
        raise ConfigError(str(exc), source=where, field="NodeName") from None
    nodes.extend(SlurmNode(n, cpus, memory, number) for n in expanded)


def _partition_line(fields: dict[str, str], defaults: dict[str, str],
                    parts: list[SlurmPartition], warnings: list[str], where: str,
                    number: int) -> None:
    """One ``PartitionName=`` line (slurm.conf(5), "PARTITION CONFIGURATION")."""
    name = fields.pop("partitionname")
    _check_keys(fields, "PartitionName", _PART_KEYS, _PART_NO_EFFECT, warnings, where)
    f = _with_defaults(name, fields, defaults)
    if f is None:
        return
    state = f.get("state", "UP").upper()
    if state != "UP":
        raise ConfigError(f"State={state} is not modelled (partitions are up)",
                          source=where, field="State")
    nodes_text = f.get("nodes", "")
    if not nodes_text:
        raise ConfigError("a partition needs Nodes= (a host list or ALL)", source=where,
                          field="Nodes")
    try:
        nodes = ("ALL",) if nodes_text.upper() == "ALL" else tuple(expand_hostlist(nodes_text))
    except ValueError as exc:
        raise ConfigError(str(exc), source=where, field="Nodes") from None
    max_nodes = f.get("maxnodes", "UNLIMITED")
    job_factor = tier = 1
    if "priority" in f:  # the older spelling sets both (slurm.conf(5), "Priority")
        job_factor = tier = _int(f["priority"], where, "Priority")
    job_factor = _int(f.get("priorityjobfactor", str(job_factor)), where, "PriorityJobFactor")
    tier = _int(f.get("prioritytier", str(tier)), where, "PriorityTier")
    parts.append(SlurmPartition(
        name, nodes, _time(f.get("maxtime", "UNLIMITED"), where, "MaxTime"),
        _time(f["defaulttime"], where, "DefaultTime") if "defaulttime" in f else None,
        None if max_nodes.upper() in ("UNLIMITED", "INFINITE")
        else _int(max_nodes, where, "MaxNodes", 1),
        job_factor, tier, f.get("default", "NO").upper() == "YES", number))


def _sched_params(text: str, where: str, warnings: list[str]) -> tuple[dict[str, int], bool]:
    """``SchedulerParameters`` (slurm.conf(5); read by Slurm's
    ``src/plugins/sched/backfill/backfill.c``, ``_load_config``, and
    ``src/slurmctld/job_scheduler.c``)."""
    out = dict(SCHED_INTS)
    bf_continue = False
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        key, eq, value = item.partition("=")
        key = key.lower()
        if key in SCHED_INTS and eq:
            out[key] = _int(value, where, f"SchedulerParameters.{key}",
                            0 if key == "bf_max_job_user" else 1)
        elif key in SCHED_FLAGS and not eq:
            bf_continue = True
        elif key in SCHED_ZERO_ONLY and eq and value.strip() == "0":
            pass  # what the simulation does: event-triggered passes at the event
        elif key in NO_EFFECT_SCHED:
            warnings.append(f"{where}: SchedulerParameters {key} does not change a "
                            f"simulated schedule (a simulated pass takes no time); not used")
        else:
            only = " (only 0 is)" if key in SCHED_ZERO_ONLY else ""
            raise ConfigError(f"'{item}' is not modelled by the slurm family{only}",
                              source=where, field="SchedulerParameters")
    return out, bf_continue


def platform_from_slurm_conf(conf: SlurmConf, name: str = "slurm") -> Platform:
    """The machine of a ``slurm.conf``: one node per declared node (``cores`` = CPUs, and
    ``mem`` = RealMemory MB under ``CR_Core_Memory``), one group and one queue per
    partition (its node set, ``MaxTime`` and ``MaxNodes``, checked at submission)."""
    index = {n.name: k for k, n in enumerate(conf.nodes)}
    resources: tuple[str, ...] = (CORES, "mem") if conf.memory else (CORES,)
    rows = [[n.cpus, n.real_memory] if conf.memory else [n.cpus] for n in conf.nodes]
    groups: dict[str, np.ndarray] = {}
    queues: dict[str, QueueConfig] = {}
    for part in conf.partitions:
        members = (list(index) if part.nodes == ("ALL",) else list(part.nodes))
        groups[part.name] = np.array([index[m] for m in members], dtype=np.int64)
        queues[part.name] = QueueConfig(part.name, max_nodes=part.max_nodes,
                                        max_walltime=part.max_time,
                                        nodes=tuple(members))
    return Platform(resources, np.array(rows, dtype=np.int64),
                    tuple(n.name for n in conf.nodes), groups, name=name, queues=queues)


def load_slurm_platform(path: str | Path) -> Platform:
    """``-p slurm.conf``: the platform a ``slurm.conf`` describes."""
    conf = read_slurm_conf(path)
    return platform_from_slurm_conf(conf, name=Path(path).stem)


def looks_like_slurm_conf(path: Path) -> bool:
    """A file named ``*.conf`` whose settings include a ``NodeName=`` line."""
    if path.suffix.lower() != ".conf" or not path.is_file():
        return False
    try:
        head = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"(?im)^\s*nodename\s*=", head) is not None
