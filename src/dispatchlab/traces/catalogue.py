"""The trace catalogue: every real trace dispatchlab's docs, tests and experiments use.

``catalogue.toml`` (next to this module) lists each trace: its name, where it lives in the
trace layout (``swf/KTH-SP2-1996-2.1-cln.swf.gz``, ``eurora/...``), its download address,
size, SHA-256, format, what it holds and its source's licence and citation. A folder entry
(the Eurora batches, cap profiles, system files) lists its files in ``manifest.tsv``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from urllib.parse import quote

from dispatchlab.traces.errors import TraceError


@dataclass(frozen=True)
class TraceFile:
    """One file of a trace: its path in the trace layout, address, size and SHA-256."""

    path: str
    url: str
    size: int
    sha256: str

    @property
    def name(self) -> str:
        """The file's own name (the last part of its path)."""
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class Group:
    """A trace source: where it comes from, its licence, and what to cite."""

    name: str
    source: str
    licence: str
    cite: str


@dataclass(frozen=True)
class Trace:
    """A catalogued trace: one file, or a folder of files (``folder`` set)."""

    name: str
    path: str
    files: tuple[TraceFile, ...]
    format: str
    group: Group
    machine: str
    jobs: int | None = None
    period: str = ""
    acknowledge: str = ""
    folder: bool = False
    url: str = ""  # the file's address, or the one a folder's file paths are appended to
    by_subpath: dict[str, TraceFile] = field(default_factory=dict, compare=False, repr=False)

    @property
    def size(self) -> int:
        """Bytes of all the trace's files."""
        return sum(f.size for f in self.files)

    def file(self, subpath: str = "") -> TraceFile:
        """The single file, or a folder's file at ``subpath`` (relative to the folder)."""
        if not self.folder:
            if subpath:
                raise TraceError(f"trace '{self.name}' is one file; it has no '{subpath}'")
            return self.files[0]
        try:
            return self.by_subpath[subpath.strip("/")]
        except KeyError:
            examples = ", ".join(sorted(self.by_subpath)[:3])
            raise TraceError(
                f"trace '{self.name}' has no file '{subpath}' (its files are paths under "
                f"{self.path}/, e.g. {examples}; `dispatchlab traces list {self.name}` "
                "lists them)") from None

    def select(self, subpath: str = "") -> tuple[TraceFile, ...]:
        """The files under ``subpath`` (all when empty): one file, or a sub-folder's files."""
        sub = subpath.strip("/")
        if not sub:
            return self.files
        if sub in self.by_subpath or not self.folder:
            return (self.file(sub),)
        prefix = sub + "/"
        chosen = tuple(f for rel, f in self.by_subpath.items() if rel.startswith(prefix))
        if not chosen:
            self.file(sub)  # raises, naming the trace
        return chosen


@cache
def all_traces() -> dict[str, Trace]:
    """Every catalogued trace by name (read once from the package's data files)."""
    here = resources.files("dispatchlab.traces")
    doc = tomllib.loads(here.joinpath("catalogue.toml").read_text(encoding="utf-8"))
    manifest = _manifest(here.joinpath("manifest.tsv").read_text(encoding="utf-8"))
    groups = {name: Group(name, g["source"], g["licence"], g["cite"])
              for name, g in doc["groups"].items()}
    out: dict[str, Trace] = {}
    for raw in doc["trace"]:
        trace = _trace(raw, groups, manifest)
        out[trace.name] = trace
    return out


def _manifest(text: str) -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, str]] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            path, size, digest = line.split("\t")
            out[path] = (int(size), digest)
    return out


def _trace(raw: dict[str, object], groups: dict[str, Group],
           manifest: dict[str, tuple[int, str]]) -> Trace:
    name, url = str(raw["name"]), str(raw["url"])
    common = {"name": name, "format": str(raw["format"]), "group": groups[str(raw["group"])],
              "machine": str(raw.get("machine", "")), "period": str(raw.get("period", "")),
              "acknowledge": str(raw.get("acknowledge", "")),
              "jobs": int(str(raw["jobs"])) if "jobs" in raw else None, "url": url}
    if "folder" in raw:
        folder = str(raw["folder"])
        prefix = folder + "/"
        by_sub = {path[len(prefix):]: TraceFile(path, url + quote(path[len(prefix):]), size,
                                                digest)  # quote: nodes_#8 → nodes_%238
                  for path, (size, digest) in manifest.items() if path.startswith(prefix)}
        if not by_sub:
            raise TraceError(f"catalogue: folder trace '{name}' has no file in manifest.tsv")
        return Trace(path=folder, files=tuple(by_sub.values()), folder=True, by_subpath=by_sub,
                     **common)  # type: ignore[arg-type]
    one = TraceFile(str(raw["file"]), url, int(str(raw["size"])), str(raw["sha256"]))
    return Trace(path=one.path, files=(one,), **common)  # type: ignore[arg-type]


def find_trace(name: str) -> tuple[Trace, str]:
    """The trace called ``name`` and the sub-path after it (``eurora-power-caps/power_caps_100``
    → the cap profiles and ``power_caps_100``).

    A name matches case-insensitively; a trace file's own name (``KTH-SP2-1996-2.1-cln.swf.gz``)
    or its layout path (``swf/...``, ``eurora/...``) also matches.
    """
    traces = all_traces()
    text = name.strip().strip("/")
    head, _, rest = text.partition("/")
    by_lower = {n.lower(): t for n, t in traces.items()}
    if head.lower() in by_lower:
        return by_lower[head.lower()], rest
    for trace in traces.values():
        if text == trace.path or text.startswith(trace.path + "/"):
            return trace, text[len(trace.path):].strip("/")
        if not trace.folder and text == trace.files[0].name:
            return trace, ""
    raise TraceError(f"no trace '{name}' in the catalogue (known: {', '.join(traces)}; "
                     "`dispatchlab traces list` describes them)")
