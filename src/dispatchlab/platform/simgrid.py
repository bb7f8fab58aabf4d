"""The compute hosts of a SimGrid / Batsim platform XML: names, speeds (flop/s), cores.

Read as SimGrid's platform DTD (``simgrid.dtd``, platform version 4.1) defines them:
``<host id speed core>`` and ``<peer id speed>`` (a one-core host) elements, and
``<cluster prefix radical suffix speed core>`` and ``<cabinet prefix radical suffix
speed>`` elements, each of which stands for one host per number of its ``radical``
(``"0-63"`` or ``"0-3,8,10-11"``) named prefix + number + suffix, at any depth of
``<zone>`` / ``<AS>``. Blank lines before the ``<?xml …?>`` declaration are skipped, as
SimGrid's parser does. As Batsim decides which hosts compute (``src/machines.cpp``,
``--master-host``): the host named ``master_host`` (another name with ``master``) runs
the scheduler and is no compute node, nor is a host whose ``role`` property (on the host
or its ``<cluster>``) is ``master`` or ``storage`` without ``compute_node``. A speed is
``<number><unit>`` with ``f`` / ``flops`` and the SI prefixes (``1Gf``, ``100.0Mf``,
``1e9f``) or a comma-separated list of power states (the first is used). Links, routes
and bandwidths are not read: dispatchlab does not model the network. Errors name the
file, the element and the attribute.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from dispatchlab.errors import ConfigError
from dispatchlab.platform.platform import CORES, Platform

_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_SPEED = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKMGTPE]i?)?(f|flops)?\s*$")
_NOT_COMPUTE = ("master", "storage")
#: The name Batsim gives its master host unless told otherwise (``--master-host``).
MASTER_HOST = "master_host"
#: Elements that stand for one host per number of their ``radical``.
_HOST_RANGES = ("cluster", "cabinet")


@dataclass(frozen=True)
class SimgridHosts:
    """The compute hosts of a platform file."""

    source: str
    names: tuple[str, ...]
    speeds: tuple[float, ...]
    cores: tuple[int, ...]

    @property
    def n_hosts(self) -> int:
        """Number of compute hosts."""
        return len(self.names)

    def uniform_speed(self) -> float:
        """The hosts' one speed (flop/s); an error when they differ."""
        if len(set(self.speeds)) != 1:
            raise ConfigError(f"hosts have {len(set(self.speeds))} different speeds; give "
                              "speed= explicitly", source=self.source, field="speed")
        return self.speeds[0]

    def uniform_cores(self) -> int:
        """The hosts' one core count; an error when they differ."""
        if len(set(self.cores)) != 1:
            raise ConfigError("hosts have different core counts", source=self.source,
                              field="core")
        return self.cores[0]

    def to_platform(self) -> Platform:
        """One dispatchlab node per compute host with its cores."""
        import numpy as np

        cap = np.array(self.cores, dtype=np.int64).reshape(-1, 1)
        return Platform(resources=(CORES,), capacity=cap, node_names=self.names,
                        name=f"{Path(self.source).stem} ({self.n_hosts} hosts)")


def parse_speed(text: str, where: str, source: str) -> float:
    """flop/s of a SimGrid speed (first power state of a list)."""
    first = text.split(",")[0]
    m = _SPEED.match(first)
    if m is None:
        raise ConfigError(f"unreadable speed {text!r} (expected e.g. 1Gf, 100.0Mf, 1e9f)",
                          source=source, field=f"{where}.speed")
    value = float(m.group(1)) * _PREFIX[m.group(2) or ""]
    if value <= 0:
        raise ConfigError(f"speed must be positive, got {text!r}", source=source,
                          field=f"{where}.speed")
    return value


def _radical(text: str, where: str, source: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise ConfigError(f"unreadable radical {text!r} (expected e.g. 0-63 or 0-3,8)",
                              source=source, field=f"{where}.radical")
        out.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    return out


def _cores(elem: ET.Element, where: str, source: str) -> int:
    text = elem.get("core", "1")
    if not text.isdigit() or int(text) <= 0:
        raise ConfigError(f"core must be a positive integer, got {text!r}", source=source,
                          field=f"{where}.core")
    return int(text)


def _roles(elem: ET.Element) -> set[str]:
    """The Batsim roles in ``elem``'s ``role`` properties (comma-separated)."""
    return {r.strip() for prop in elem.findall("prop") if prop.get("id") == "role"
            for r in (prop.get("value") or "").split(",") if r.strip()}


def _computes(roles: set[str]) -> bool:
    return not roles or "compute_node" in roles or not roles & set(_NOT_COMPUTE)


def read_simgrid_platform(path: str | Path, master: str = MASTER_HOST) -> SimgridHosts:
    """The compute hosts of a SimGrid/Batsim platform file (``master``: the name of
    Batsim's master host, its ``--master-host``)."""
    p = Path(path)
    src = str(p)
    if not p.is_file():
        raise ConfigError("file not found", source=src)
    try:
        root = ET.fromstring(p.read_bytes().lstrip())
    except ET.ParseError as exc:
        raise ConfigError(f"not a well-formed XML file ({exc})", source=src) from None
    if root.tag != "platform":
        raise ConfigError(f"root element is <{root.tag}>, expected <platform>", source=src)
    names: list[str] = []
    speeds: list[float] = []
    cores: list[int] = []
    for elem in root.iter():
        if elem.tag in ("host", "peer"):
            hid = elem.get("id")
            where = f"{elem.tag}[{hid}]"
            if hid is None or elem.get("speed") is None:
                raise ConfigError(f"a <{elem.tag}> needs id and speed", source=src,
                                  field=where)
            if hid == master or not _computes(_roles(elem)):
                continue
            names.append(hid)
            speeds.append(parse_speed(elem.get("speed", ""), where, src))
            cores.append(_cores(elem, where, src))
        elif elem.tag in _HOST_RANGES:
            cid = elem.get("id", "?")
            where = f"{elem.tag}[{cid}]"
            missing = [a for a in ("prefix", "radical", "speed") if elem.get(a) is None]
            if missing:
                raise ConfigError(f"a <{elem.tag}> needs {', '.join(missing)}", source=src,
                                  field=where)
            speed = parse_speed(elem.get("speed", ""), where, src)
            ncores = _cores(elem, where, src)
            computes = _computes(_roles(elem))
            for k in _radical(elem.get("radical", ""), where, src):
                name = f"{elem.get('prefix')}{k}{elem.get('suffix', '')}"
                if computes and name != master:
                    names.append(name)
                    speeds.append(speed)
                    cores.append(ncores)
    if not names:
        raise ConfigError("no compute host (<host>, <peer>, <cluster> or <cabinet>) in the "
                          "platform",
                          source=src)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ConfigError(f"host name {dup!r} appears twice", source=src, field="host")
    return SimgridHosts(source=src, names=tuple(names), speeds=tuple(speeds),
                        cores=tuple(cores))
