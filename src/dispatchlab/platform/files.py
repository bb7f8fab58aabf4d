"""Platform files: TOML platform descriptions and Eurora node lists.

TOML schema (memory in MB, power in W; see ``examples/platforms/*.toml``)::

    name = "eurora"                    # optional; defaults to the file name
    description = "..."                # optional free text
    resources = ["cores", "mem", "gpu", "mic"]   # optional column order; default:
                                       # cores first, then in order of appearance

    [[nodes]]                          # one table per group of identical nodes
    count = 32                         # how many (default 1)
    name_prefix = "gpu"                # names gpu00..gpu31; or `names = [...]`, one
                                       # per node; default n<global index>
    group = "gpu"                      # partition label, or a list of labels
    power = 350.0                      # busy power per node, W (all groups or none)
    capacity = { cores = 16, mem = "16 GB", gpu = 2 }
    power_model = { idle = 64, core_first = 26.25, core = 6.25, gpu = 50 }  # optional

    [queues.np_longpar]                # queue rules (dispatchlab.platform.queues)
    ewt = 86400
    max_nodes = 16
    max_walltime = "24:00:00"
    windows = ["18:00-08:00"]          # local start windows; default: any time

    [[reservations]]                   # dispatchlab.platform.reservations
    name = "maint"
    nodes = ["gpu"]                    # node names or group labels
    start = "2014-04-01T09:00"         # or seconds from the workload origin
    duration = "02:00:00"
    period = 604800                    # optional: a standing (weekly) reservation

``power_model`` (top level: ``"generic"``, ``"eurora"`` or a table; per group: a table)
turns on the node power model of :mod:`dispatchlab.platform.power`: a group's table
replaces single values (``idle``, ``core_first``, ``core``, ``gpu``, ``mic``, ``off``,
``booting``, ``shutting_down``, ``down`` in W; ``boot_time``, ``shutdown_time`` in s) of
the top-level model (default: generic, SPEC §8). Without any ``power_model`` the platform
has none.

Instead of ``[[nodes]]``, ``extends = "<preset, inline spec or file>"`` takes the machine
(and its rules) from elsewhere: queues given here replace same-named ones, reservations
are added.

A resource missing from a group's ``capacity`` has capacity 0 there. Memory accepts an
integer (MB) or a string with a unit (``KB``, ``MB``, ``GB``, ``TB``; binary multiples).
Names ``memory``, ``gpus``, ``mics``, ``cpus``... are read as ``mem``, ``gpu``, ``mic``,
``cores``. A document whose nodes sit under a ``[platform]`` table (an experiment file) is
accepted too. Every mistake is a :class:`ConfigError` naming the file and the field
(``nodes[1].capacity.gpu``).

Eurora node lists (``nodes_#8`` …, Borghesi's simulator): one node per line,
``node_id cores gpus mics memory reserved``. The memory column is documented as bytes but
holds KB (PBS ``kb``): 33554432 would be 32 MB as bytes, and job allocations in the same
data set write their memory the same way (4194304 for a 4 GB request). It is converted to
MB. Every node gets the Eurora power model (:func:`~dispatchlab.platform.power.eurora_spec`
for its GPU count). Nodes with ``reserved = 1`` form the ``reserved`` group; nodes with
GPUs / MICs form the ``gpu`` / ``mic`` groups.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from dispatchlab.errors import ConfigError
from dispatchlab.input_files import read_text
from dispatchlab.platform.inline import ALIASES
from dispatchlab.platform.platform import CORES, MAX_AMOUNT, MAX_NODES, Platform
from dispatchlab.platform.power import GENERIC, NodePowerSpec, eurora_spec, parse_spec
from dispatchlab.platform.quantities import parse_capacity
from dispatchlab.platform.queues import parse_queues
from dispatchlab.platform.reservations import parse_reservations

#: Keys a ``[[nodes]]`` table may hold.
NODE_KEYS = ("count", "capacity", "name_prefix", "names", "group", "power", "power_model")
#: Keys the top level of a platform document may hold.
TOP_KEYS = ("name", "description", "resources", "nodes", "extends", "queues", "reservations",
            "power_model")
#: Columns of a Eurora node list, in file order.
EURORA_NODE_COLUMNS = ("node_id", "cores", "gpus", "mics", "memory", "reserved")

MemUnit = Literal["kb", "bytes", "mb"]
_MEM_DIVISOR = {"kb": 1024, "bytes": 1024 * 1024, "mb": 1}


def load_platform_file(path: str | Path) -> Platform:
    """Load a TOML platform or a Eurora node list, told apart by extension or content."""
    p = Path(path)
    src = str(p)
    if p.is_dir():
        raise ConfigError(
            "is a folder, expected a platform file (.toml or a node list)", source=src
        )
    text = read_text(p, lambda why: ConfigError(why, source=src))
    if p.suffix.lower() != ".toml" and _looks_like_node_list(text):
        return parse_eurora_nodes(text, source=src, name=p.name)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"not valid TOML ({exc}); platform files are TOML descriptions or Eurora node "
            f"lists ('node_id cores gpus mics memory reserved' per line)",
            source=src,
        ) from None
    return platform_from_mapping(doc, source=src, name=p.stem)


def load_platform_toml(path: str | Path) -> Platform:
    """Load a TOML platform description (schema in this module's docstring)."""
    p = Path(path)
    try:
        doc = tomllib.loads(read_text(p, lambda why: ConfigError(why, source=str(p))))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML: {exc}", source=str(p)) from None
    return platform_from_mapping(doc, source=str(p), name=p.stem)


def platform_from_mapping(
    doc: Mapping[str, Any], *, source: str | None = None, name: str | None = None
) -> Platform:
    """A Platform from a parsed TOML document (or its ``[platform]`` table)."""
    prefix = ""
    if "nodes" not in doc and isinstance(doc.get("platform"), Mapping):
        doc, prefix = doc["platform"], "platform."
    unknown = sorted(set(doc) - set(TOP_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown key (allowed: {', '.join(TOP_KEYS)})",
            field=prefix + unknown[0],
            source=source,
        )
    if "extends" in doc:
        return _extended(doc, prefix, source, name)
    pname = doc.get("name", name or "platform")
    if not isinstance(pname, str) or not pname:
        raise ConfigError("must be a non-empty string", field=prefix + "name", source=source)
    if "description" in doc and not isinstance(doc["description"], str):
        raise ConfigError("must be a string", field=prefix + "description", source=source)
    groups_doc = doc.get("nodes")
    if groups_doc is None:
        raise ConfigError(
            "missing: describe the machine with [[nodes]] tables",
            field=prefix + "nodes",
            source=source,
        )
    if not isinstance(groups_doc, list) or not groups_doc:
        raise ConfigError(
            "must be a non-empty array of tables ([[nodes]])", field=prefix + "nodes", source=source
        )

    declared = _declared_resources(doc.get("resources"), prefix, source)
    parsed = [_parse_group(g, f"{prefix}nodes[{k}]", source) for k, g in enumerate(groups_doc)]
    resources = _resource_order(declared, parsed, prefix, source)

    total = sum(g.count for g in parsed)
    if total > MAX_NODES:
        raise ConfigError(f"{total:,} nodes is more than the {MAX_NODES:,} this simulator "
                          "accepts", field=f"{prefix}nodes", source=source)
    for g in parsed:
        for r, amount in g.capacity.items():
            if amount > MAX_AMOUNT:
                raise ConfigError(f"{amount:,} per node is more than the {MAX_AMOUNT:,} "
                                  "accepted", field=f"{g.where}.capacity.{r}", source=source)
    width = len(str(max(total - 1, 0)))
    cap = np.zeros((total, len(resources)), dtype=np.int64)
    names: list[str] = []
    owner: dict[str, str] = {}
    groups: dict[str, list[int]] = {}
    powers: list[float] = []
    with_power = [g.power is not None for g in parsed]
    if any(with_power) and not all(with_power):
        k = with_power.index(False)
        raise ConfigError(
            "power is given for some node groups but not this one; give it for all groups or none",
            field=f"{prefix}nodes[{k}].power",
            source=source,
        )
    top_model = doc.get("power_model")
    models: list[NodePowerSpec] = []
    with_model = top_model is not None or any(g.model is not None for g in parsed)
    row = 0
    for g in parsed:
        if with_model:
            models += [_group_model(top_model, g, prefix, source)] * g.count
        for r, amount in g.capacity.items():
            cap[row : row + g.count, resources.index(r)] = amount
        if g.names is not None:
            gnames = list(g.names)
        elif g.name_prefix is not None:
            w = len(str(max(g.count - 1, 0)))
            gnames = [f"{g.name_prefix}{i:0{w}d}" for i in range(g.count)]
        else:
            gnames = [f"n{i:0{width}d}" for i in range(row, row + g.count)]
        for nm in gnames:
            if nm in owner:
                raise ConfigError(
                    f"node name '{nm}' is also produced by {owner[nm]}",
                    field=g.where + ".names",
                    source=source,
                )
            owner[nm] = g.where
        names += gnames
        for label in g.groups:
            groups.setdefault(label, []).extend(range(row, row + g.count))
        if g.power is not None:
            powers += [g.power] * g.count
        row += g.count
    if total == 0:
        raise ConfigError(
            "the platform has no nodes (every group has count = 0)",
            field=prefix + "nodes",
            source=source,
        )
    queues = parse_queues(doc["queues"], source=source, prefix=prefix + "queues") \
        if "queues" in doc else {}
    reservations = parse_reservations(doc["reservations"], source=source,
                                      prefix=prefix + "reservations") \
        if "reservations" in doc else ()
    try:
        return Platform(
            resources=tuple(resources),
            capacity=cap,
            node_names=tuple(names),
            groups={k: np.asarray(v, dtype=np.int64) for k, v in groups.items()},
            node_power=np.asarray(powers, dtype=np.float64) if powers else None,
            name=pname,
            queues=queues,
            reservations=reservations,
            node_model=tuple(models) if with_model else None,
        )
    except ConfigError as exc:
        raise _with_source(exc, source) from None


def _group_model(top: object, g: _Group, prefix: str, source: str | None) -> NodePowerSpec:
    """The power model of group ``g``: the top-level one with the group's values replaced."""
    if top is None or top == "generic":
        base = GENERIC
    elif top == "eurora":
        base = eurora_spec(g.capacity.get("gpu", 0))
    else:
        base = parse_spec(top, prefix + "power_model", source)
    if g.model is None:
        return base
    return parse_spec(g.model, g.where + ".power_model", source, base)


def _extended(doc: Mapping[str, Any], prefix: str, source: str | None, name: str | None
              ) -> Platform:
    """``extends = "..."``: another platform's nodes plus this document's rules."""
    from dispatchlab.platform.resolve import resolve_platform

    if "nodes" in doc or "resources" in doc:
        raise ConfigError("a platform that extends another cannot list nodes or resources",
                          field=prefix + "extends", source=source)
    base_spec = doc["extends"]
    if not isinstance(base_spec, str) or not base_spec:
        raise ConfigError("must name a preset, inline spec or file", field=prefix + "extends",
                          source=source)
    if source and not base_spec.startswith("/") and "=" not in base_spec:
        candidate = Path(source).parent / base_spec
        if candidate.exists():
            base_spec = str(candidate)
    chain = _EXTENDING.get()
    here = str(Path(source).resolve()) if source else ""
    target = Path(base_spec)
    if target.exists() and str(target.resolve()) in (*chain, here):
        loop = " → ".join(Path(p).name for p in (*chain, here, str(target.resolve())))
        raise ConfigError(f"extends itself ({loop})", field=prefix + "extends", source=source)
    token = _EXTENDING.set((*chain, here))
    try:
        base = resolve_platform(base_spec)
        queues = parse_queues(doc["queues"], source=source, prefix=prefix + "queues") \
            if "queues" in doc else None
        reservations = parse_reservations(doc["reservations"], source=source,
                                          prefix=prefix + "reservations") \
            if "reservations" in doc else None
        out = base.with_rules(
            queues=None if queues is None else {**base.queues, **queues},
            reservations=None if reservations is None
            else (*base.reservations, *reservations))
    except ConfigError as exc:
        raise _with_source(exc, source) from None
    finally:
        _EXTENDING.reset(token)
    from dataclasses import replace

    return replace(out, name=str(doc.get("name", name or base.name)))


#: Platform files being extended (resolved paths), to refuse a cycle of ``extends``.
_EXTENDING: ContextVar[tuple[str, ...]] = ContextVar("platform_extending", default=())


@dataclass(slots=True)
class _Group:
    """One parsed ``[[nodes]]`` table."""

    where: str
    count: int
    capacity: dict[str, int]
    name_prefix: str | None
    names: list[str] | None
    groups: list[str]
    power: float | None
    model: object = None


def _parse_group(g: object, where: str, source: str | None) -> _Group:
    if not isinstance(g, Mapping):
        raise ConfigError("must be a table", field=where, source=source)
    unknown = sorted(set(g) - set(NODE_KEYS))
    if unknown:
        hint = (
            " (resource capacities go in `capacity = { ... }`)"
            if _canonical(unknown[0]) in (CORES, "mem", "gpu", "mic")
            else ""
        )
        raise ConfigError(
            f"unknown key (allowed: {', '.join(NODE_KEYS)}){hint}",
            field=f"{where}.{unknown[0]}",
            source=source,
        )
    count = g.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ConfigError(
            f"must be a non-negative integer, got {count!r}", field=f"{where}.count", source=source
        )
    raw_cap = g.get("capacity")
    if raw_cap is None:
        raise ConfigError(
            'missing: e.g. capacity = { cores = 16, mem = "16 GB" }',
            field=f"{where}.capacity",
            source=source,
        )
    if not isinstance(raw_cap, Mapping) or not raw_cap:
        raise ConfigError(
            "must be a non-empty table of resource = amount",
            field=f"{where}.capacity",
            source=source,
        )
    capacity: dict[str, int] = {}
    for key, value in raw_cap.items():
        res = _canonical(key)
        fld = f"{where}.capacity.{key}"
        if res in capacity:
            raise ConfigError(f"given twice (as '{res}' and an alias)", field=fld, source=source)
        capacity[res] = parse_capacity(res, value, field=fld, source=source)
    prefix = g.get("name_prefix")
    if prefix is not None and (not isinstance(prefix, str) or not prefix):
        raise ConfigError("must be a non-empty string", field=f"{where}.name_prefix", source=source)
    names = g.get("names")
    if names is not None:
        if prefix is not None:
            raise ConfigError(
                "give either names or name_prefix, not both", field=f"{where}.names", source=source
            )
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise ConfigError(
                "must be a list of non-empty strings", field=f"{where}.names", source=source
            )
        if len(names) != count:
            raise ConfigError(
                f"{len(names)} names for count = {count}", field=f"{where}.names", source=source
            )
    labels = g.get("group", [])
    if isinstance(labels, str):
        labels = [labels]
    if not isinstance(labels, list) or not all(isinstance(x, str) and x for x in labels):
        raise ConfigError(
            "must be a label or a list of labels", field=f"{where}.group", source=source
        )
    power = g.get("power")
    if power is not None:
        if isinstance(power, bool) or not isinstance(power, int | float) or power < 0:
            raise ConfigError(
                f"must be a non-negative number of W, got {power!r}",
                field=f"{where}.power",
                source=source,
            )
        power = float(power)
    return _Group(where, count, capacity, prefix, names, list(dict.fromkeys(labels)), power,
                  g.get("power_model"))


def _canonical(name: str) -> str:
    key = name.strip().lower()
    return ALIASES.get(key, key)


def _declared_resources(value: object, prefix: str, source: str | None) -> list[str] | None:
    if value is None:
        return None
    fld = prefix + "resources"
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError("must be a list of resource names", field=fld, source=source)
    names = [_canonical(v) for v in value]
    if len(set(names)) != len(names):
        raise ConfigError(f"duplicate resource names {value}", field=fld, source=source)
    if CORES not in names:
        raise ConfigError("every platform needs a 'cores' resource", field=fld, source=source)
    return names


def _resource_order(
    declared: Sequence[str] | None, groups: Sequence[_Group], prefix: str, source: str | None
) -> list[str]:
    if declared is not None:
        for g in groups:
            for r in g.capacity:
                if r not in declared:
                    raise ConfigError(
                        f"resource '{r}' is not in resources = {list(declared)}",
                        field=f"{g.where}.capacity.{r}",
                        source=source,
                    )
        return list(declared)
    order = [CORES]
    for g in groups:
        order += [r for r in g.capacity if r not in order]
    if not any(CORES in g.capacity for g in groups):
        raise ConfigError(
            "no node group gives 'cores'; every platform needs cores",
            field=prefix + "nodes[0].capacity.cores",
            source=source,
        )
    return order


# --------------------------------------------------------------------------- Eurora lists


def _looks_like_node_list(text: str) -> bool:
    """The first data line is whitespace-separated values with no TOML ``=`` or ``[``."""
    for line in text.splitlines():
        s = line.split("#", 1)[0].strip()
        if s:
            return len(s.split()) >= 3 and "=" not in s and "[" not in s
    return False


def load_eurora_nodes(path: str | Path, *, mem_unit: MemUnit = "kb") -> Platform:
    """Load a Eurora node list (``node_id cores gpus mics memory reserved`` per line)."""
    p = Path(path)
    return parse_eurora_nodes(read_text(p, lambda why: ConfigError(why, source=str(p))),
                              source=str(p), name=p.name, mem_unit=mem_unit)


def parse_eurora_nodes(
    text: str, *, source: str = "<text>", name: str = "eurora-nodes", mem_unit: MemUnit = "kb"
) -> Platform:
    """A Platform (cores, mem [MB], gpu, mic) from the text of a Eurora node list."""
    if mem_unit not in _MEM_DIVISOR:
        raise ConfigError(
            f"mem_unit must be one of {', '.join(_MEM_DIVISOR)}", field="mem_unit", source=source
        )
    rows: list[list[int]] = []
    ids: dict[int, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        where = f"{source}:{lineno}"
        parts = s.split()
        if len(parts) != len(EURORA_NODE_COLUMNS):
            raise ConfigError(
                f"expected {len(EURORA_NODE_COLUMNS)} columns "
                f"({' '.join(EURORA_NODE_COLUMNS)}), found {len(parts)}",
                source=where,
            )
        values: list[int] = []
        for col, tok in zip(EURORA_NODE_COLUMNS, parts, strict=True):
            try:
                v = int(tok)
            except ValueError:
                raise ConfigError(f"not an integer: {tok!r}", field=col, source=where) from None
            if v < 0:
                raise ConfigError(f"must not be negative, got {v}", field=col, source=where)
            values.append(v)
        if values[5] not in (0, 1):
            raise ConfigError(f"must be 0 or 1, got {values[5]}", field="reserved", source=where)
        if values[0] in ids:
            raise ConfigError(
                f"node id {values[0]} already given on line {ids[values[0]]}",
                field="node_id",
                source=where,
            )
        mem_raw = values[4]
        if mem_raw % _MEM_DIVISOR[mem_unit]:
            raise ConfigError(
                f"{mem_raw} {mem_unit} is not a whole number of MB", field="memory", source=where
            )
        ids[values[0]] = lineno
        rows.append(values)
    if not rows:
        raise ConfigError("no nodes in the node list", source=source)
    data = np.array(rows, dtype=np.int64)
    cap = np.column_stack(
        [data[:, 1], data[:, 4] // _MEM_DIVISOR[mem_unit], data[:, 2], data[:, 3]]
    )
    width = max(2, len(str(int(data[:, 0].max()))))
    names = tuple(f"node{i:0{width}d}" for i in data[:, 0].tolist())
    groups = {
        label: np.flatnonzero(mask)
        for label, mask in (
            ("gpu", data[:, 2] > 0),
            ("mic", data[:, 3] > 0),
            ("reserved", data[:, 5] == 1),
        )
        if mask.any()
    }
    try:
        return Platform(
            resources=(CORES, "mem", "gpu", "mic"),
            capacity=cap,
            node_names=names,
            groups=groups,
            name=name,
            node_model=tuple(eurora_spec(int(g)) for g in data[:, 2].tolist()),
        )
    except ConfigError as exc:
        raise _with_source(exc, source) from None


def _with_source(exc: ConfigError, source: str | None) -> ConfigError:
    """``exc`` re-raised with the file named (the Platform itself does not know it)."""
    if source is None or exc.source is not None:
        return exc
    out = ConfigError(str(exc), source=source)
    out.field = exc.field
    return out
