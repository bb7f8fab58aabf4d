"""Turn ``trace:NAME[/SUB]`` into a local path: a checked local copy, else a download.

``trace:KTH-SP2`` is the KTH SP2 log, ``trace:eurora-power-caps/power_caps_100`` one cap
profile, ``trace:eurora-historical/100`` a folder of batches. Every option or TOML key that
takes a trace file takes these names (they are resolved in :func:`resolve_source`). A file
found in a local folder (see :mod:`dispatchlab.traces.locations`) is used when its size and
SHA-256 are the catalogue's; otherwise it is downloaded into the cache on first use, unless
fetching is off (``DISPATCHLAB_OFFLINE=1`` / ``dispatchlab --offline``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from dispatchlab.atomic_output import atomic_output
from dispatchlab.traces.catalogue import Trace, TraceFile, find_trace
from dispatchlab.traces.checksum import file_sha256
from dispatchlab.traces.errors import TraceError
from dispatchlab.traces.locations import OFFLINE_ENV, cache_dir, fetch_allowed, search_dirs
from dispatchlab.traces.progress import StderrProgress, human_bytes

PREFIX = "trace:"

#: (path, size, mtime_ns) → SHA-256, so a copy is hashed once per process
_checked: dict[tuple[str, int, int], str] = {}


def is_trace_ref(text: object) -> bool:
    """True for a ``trace:NAME`` string."""
    return isinstance(text, str) and text.startswith(PREFIX)


def resolve_source(text: str | Path, *, fetch: bool | None = None) -> str | Path:
    """``text`` unchanged unless it is ``trace:…``; then the local path (str) of that trace."""
    if not is_trace_ref(text):
        return text
    return str(resolve(str(text)[len(PREFIX):], fetch=fetch))


def trace_record(text: str) -> dict[str, str]:
    """What a result should record of ``trace:NAME[/SUB]``: the catalogue name, the file's
    layout path, SHA-256 and address (a folder: its name and path only)."""
    trace, sub = find_trace(text[len(PREFIX):] if is_trace_ref(text) else text)
    if trace.folder and sub not in trace.by_subpath:
        return {"name": trace.name, "path": f"{trace.path}/{sub}".rstrip("/")}
    one = trace.file(sub)
    return {"name": trace.name, "path": one.path, "sha256": one.sha256, "url": one.url}


def resolve(name: str, *, fetch: bool | None = None) -> Path:
    """The local path of the trace (file or folder) ``name``, downloading when allowed."""
    trace, sub = find_trace(name)
    allowed = fetch_allowed() if fetch is None else fetch
    if trace.folder and not (sub and sub in trace.by_subpath):
        return _resolve_folder(trace, sub, allowed)
    return materialise(trace, trace.file(sub), fetch=allowed)


def local_copy(file: TraceFile) -> Path | None:
    """The first checked copy of ``file`` in the local folders, or None."""
    for folder in search_dirs():
        for candidate in (folder / file.path, folder / file.name):
            if is_valid_copy(candidate, file):
                return candidate
    return None


def damaged_copy(file: TraceFile) -> str | None:
    """What is wrong with the first local file named like ``file`` that is not the
    catalogued one (size, else SHA-256: expected and actual), or None when there is none."""
    for folder in search_dirs():
        for candidate in (folder / file.path, folder / file.name):
            try:
                if not candidate.is_file() or is_valid_copy(candidate, file):
                    continue
                size = candidate.stat().st_size
            except OSError:
                continue
            if size != file.size:
                return (f"the copy at {candidate} is damaged: {size:,} bytes, the catalogue's "
                        f"file has {file.size:,}")
            return (f"the copy at {candidate} is damaged: SHA-256 {file_sha256(candidate)}, "
                    f"expected {file.sha256}")
    return None


def is_valid_copy(path: Path, file: TraceFile) -> bool:
    """True when ``path`` is a file of the catalogued size and SHA-256 (hashed once)."""
    try:
        st = path.stat()
    except OSError:
        return False
    if not path.is_file() or st.st_size != file.size:
        return False
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _checked:
        _checked[key] = file_sha256(path)
    return _checked[key] == file.sha256


def materialise(trace: Trace, file: TraceFile, *, fetch: bool,
                into_cache: bool = False) -> Path:
    """A checked local copy of ``file`` (in the cache when ``into_cache``), fetching it when
    there is none and ``fetch`` allows."""
    cached = cache_dir() / file.path
    found = local_copy(file)
    if found is not None and (not into_cache or found == cached):
        return found
    if found is not None:  # a folder is being gathered in the cache: copy, don't download
        with atomic_output(cached) as tmp:
            shutil.copyfile(found, tmp)
        return cached
    if not fetch:
        raise TraceError(_missing_message(trace, file))
    from dispatchlab.traces.download import download  # urllib, http.client: on demand

    label = f"{trace.name} {file.name}" if trace.folder else trace.name
    if not trace.folder:
        print(f"fetching {label} ({human_bytes(file.size)}) from {file.url} into "
              f"{cached.parent}", file=sys.stderr)
    return download(file.url, cached, size=file.size, sha256=file.sha256,
                    progress=None if trace.folder else StderrProgress(label))


def _resolve_folder(trace: Trace, sub: str, fetch: bool) -> Path:
    """A folder holding every selected file: a local folder that has them all, else the
    cache after filling it in."""
    files = trace.select(sub)
    for folder in search_dirs():
        if all(is_valid_copy(folder / f.path, f) for f in files):
            return folder / trace.path / sub
    missing = [f for f in files if local_copy(f) is None]
    if missing and not fetch:
        raise TraceError(_missing_message(trace, missing[0], len(missing)))
    if missing:
        print(f"fetching {len(missing)} file(s) of {trace.name} "
              f"({human_bytes(sum(f.size for f in missing))}) into {cache_dir()}",
              file=sys.stderr)
    for f in files:
        materialise(trace, f, fetch=fetch, into_cache=True)
    return cache_dir() / trace.path / sub


def _missing_message(trace: Trace, file: TraceFile, count: int = 1) -> str:
    where = ", ".join(str(d) for d in search_dirs())
    what = f"{count} file(s) of trace '{trace.name}'" if count > 1 else \
        f"trace '{trace.name}'" + (f" file {file.path}" if trace.folder else "")
    damage = damaged_copy(file)
    if damage is not None:
        return (f"{what}: {damage}; run `dispatchlab traces fetch {trace.name}` to fetch "
                "it again, or replace it with a good copy")
    return (f"{what} not found locally (looked in {where}) and downloading is off "
            f"({OFFLINE_ENV}=1 or --offline); run `dispatchlab traces fetch {trace.name}` "
            "or put a copy in $DISPATCHLAB_TRACES")
