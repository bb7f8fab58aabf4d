"""``trace:NAME`` resolution: checked local copies first (configured folder, cache), then a
download into the cache on first use, unless fetching is off; the catalogue itself."""

from __future__ import annotations

import gzip
import hashlib
from importlib import import_module
from pathlib import Path

import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.traces.catalogue import Group, Trace, TraceFile, all_traces, find_trace
from dispatchlab.traces.errors import TraceError
from dispatchlab.traces.resolve import local_copy, resolve
from dispatchlab.workload.load import load_workload
from tests.traces.http_server import Behaviour, serving

# the modules (the package's names ``catalogue`` / ``resolve`` are not them)
catalogue_module = import_module("dispatchlab.traces.catalogue")
resolve_module = import_module("dispatchlab.traces.resolve")

SWF = b"".join(f"{j} {10 * j} 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n".encode()
               for j in range(1, 41))
BODY = gzip.compress(SWF, mtime=0)
OTHER = BODY[:20] + bytes([BODY[20] ^ 0xFF]) + BODY[21:]  # same size, one byte differs


def tiny_catalogue(base: str) -> dict[str, Trace]:
    one = TraceFile("swf/tiny.swf.gz", f"{base}/tiny.swf.gz", len(BODY),
                    hashlib.sha256(BODY).hexdigest())
    group = Group("test", "a test server", "none", "nobody")
    return {"tiny": Trace("tiny", one.path, (one,), "swf", group, "40 jobs")}


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A catalogue of one trace served on 127.0.0.1, an empty cache, no sibling folder."""
    how = Behaviour(files={"/tiny.swf.gz": BODY})
    with serving(how) as base:
        monkeypatch.setattr(catalogue_module, "all_traces", lambda: tiny_catalogue(base))
        monkeypatch.setattr("dispatchlab.traces.locations.sibling_dir", lambda: None)
        monkeypatch.setenv("DISPATCHLAB_DATA", str(tmp_path / "data"))
        monkeypatch.delenv("DISPATCHLAB_TRACES", raising=False)
        monkeypatch.delenv("DISPATCHLAB_OFFLINE", raising=False)
        resolve_module._checked.clear()
        yield how, tmp_path


def test_first_use_fetches_into_the_cache_then_reuses_it(tiny) -> None:  # type: ignore[no-untyped-def]
    how, tmp = tiny
    wl = load_workload("trace:tiny", limit=10)
    assert wl.n_jobs == 10
    cached = tmp / "data" / "traces" / "swf" / "tiny.swf.gz"
    assert cached.read_bytes() == BODY
    assert load_workload("trace:TINY").n_jobs == 40  # names match case-insensitively
    assert len(how.ranges) == 1  # the second use read the cache


def test_offline_without_a_copy_is_a_clear_error(tiny, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    how, tmp = tiny
    monkeypatch.setenv("DISPATCHLAB_OFFLINE", "1")
    with pytest.raises(TraceError, match=r"not found locally.*traces fetch tiny"):
        load_workload("trace:tiny")
    assert how.ranges == []
    assert not (tmp / "data" / "traces" / "swf").exists()


def test_a_configured_folder_copy_is_used_flat_or_in_layout(tiny, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    how, tmp = tiny
    mine = tmp / "mine"
    mine.mkdir()
    (mine / "tiny.swf.gz").write_bytes(BODY)  # flat, as downloaded by hand
    monkeypatch.setenv("DISPATCHLAB_TRACES", str(mine))
    monkeypatch.setenv("DISPATCHLAB_OFFLINE", "1")
    assert resolve("tiny") == mine / "tiny.swf.gz"
    assert how.ranges == []


def test_a_damaged_local_copy_is_never_taken(tiny, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _, tmp = tiny
    mine = tmp / "mine"
    (mine / "swf").mkdir(parents=True)
    (mine / "swf" / "tiny.swf.gz").write_bytes(OTHER)
    monkeypatch.setenv("DISPATCHLAB_TRACES", str(mine))
    got = resolve("tiny")
    assert got == tmp / "data" / "traces" / "swf" / "tiny.swf.gz"  # downloaded instead
    assert got.read_bytes() == BODY


def test_a_failed_first_use_download_leaves_no_trace_behind(tiny) -> None:  # type: ignore[no-untyped-def]
    how, tmp = tiny
    how.files["/tiny.swf.gz"] = OTHER
    with pytest.raises(TraceError, match="SHA-256"):
        load_workload("trace:tiny")
    assert list((tmp / "data" / "traces" / "swf").glob("tiny*")) == []  # no file, no .part


def test_unknown_names_list_the_known_ones() -> None:
    with pytest.raises(TraceError, match=r"no trace 'KTH-SP3'.*KTH-SP2"):
        find_trace("KTH-SP3")
    with pytest.raises(WorkloadError):  # a path that merely looks odd is still a path
        load_workload("traces:KTH-SP2")


def test_catalogue_names_files_and_layout_paths() -> None:
    cat = all_traces()
    assert len(cat) == 19
    assert find_trace("kth-sp2")[0].name == "KTH-SP2"
    assert find_trace("KTH-SP2-1996-2.1-cln.swf.gz")[0].name == "KTH-SP2"
    assert find_trace("swf/CEA-Curie-2011-2.1-cln.swf.gz")[0].name == "CEA-Curie"
    trace, sub = find_trace("eurora-power-caps/power_caps_100")
    assert (trace.name, sub, trace.file(sub).size) == ("eurora-power-caps", "power_caps_100",
                                                      trace.file(sub).size)
    assert len(cat["eurora-historical"].select("100")) == 29
    with pytest.raises(TraceError, match="has no file"):
        cat["eurora-historical"].file("100/nope.log_crypt")
    paths = [f.path for t in cat.values() for f in t.files]
    assert len(paths) == len(set(paths))
    for t in cat.values():
        assert all(len(f.sha256) == 64 and f.size >= 0 for f in t.files)
        assert all(f.url.startswith("https://") for f in t.files)
        assert t.group.cite and t.group.licence


def test_every_local_copy_matches_the_catalogue() -> None:
    """Local copies (e.g. ../shared/traces) are the published files the figures came from."""
    cat = all_traces()
    present = [f for t in cat.values() for f in t.files if local_copy(f) is not None]
    if not present:
        pytest.skip("missing trace: no catalogued trace is present locally")
    for f in present:
        path = local_copy(f)
        assert path is not None and path.stat().st_size == f.size


def test_a_workload_loaded_by_name_records_the_trace(tiny) -> None:  # type: ignore[no-untyped-def]
    wl = load_workload("trace:tiny", limit=5)
    assert wl.meta["trace"] == {"name": "tiny", "path": "swf/tiny.swf.gz",
                                "sha256": hashlib.sha256(BODY).hexdigest(),
                                "url": all_traces_url(tiny)}


def all_traces_url(tiny) -> str:  # type: ignore[no-untyped-def]
    return catalogue_module.all_traces()["tiny"].files[0].url


def test_folder_file_addresses_are_quoted() -> None:
    """``nodes_#8`` would otherwise end the address at a fragment marker."""
    url = all_traces()["eurora-system"].file("nodes_#8").url
    assert url.endswith("/system_configs/nodes_%238")


def test_a_folder_is_gathered_in_the_cache_from_copies_and_downloads(
        tiny, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A folder trace resolves to one folder holding all its files: the local copy is
    copied into the cache, only the missing file is downloaded."""
    how, tmp = tiny
    base = catalogue_module.all_traces()["tiny"].files[0].url.rsplit("/", 1)[0]
    files = {"a/one.log": b"first batch\n", "b/two.log": b"second batch\n"}
    by_sub = {sub: TraceFile(f"batches/{sub}", f"{base}/batches/{sub}", len(body),
                             hashlib.sha256(body).hexdigest()) for sub, body in files.items()}
    folder = Trace("batches", "batches", tuple(by_sub.values()), "eurora",
                   Group("test", "s", "l", "c"), "two files", folder=True, by_subpath=by_sub)
    monkeypatch.setattr(catalogue_module, "all_traces", lambda: {"batches": folder})
    how.files.update({f"/batches/{sub}": body for sub, body in files.items()})
    mine = tmp / "mine"
    (mine / "batches" / "a").mkdir(parents=True)
    (mine / "batches" / "a" / "one.log").write_bytes(files["a/one.log"])
    monkeypatch.setenv("DISPATCHLAB_TRACES", str(mine))
    assert resolve("batches/a") == mine / "batches" / "a"  # complete here: used in place
    got = resolve("batches")
    assert got == tmp / "data" / "traces" / "batches"
    assert {str(p.relative_to(got)) for p in got.rglob("*.log")} == set(files)
    assert how.ranges == [None] and len(how.files) == 3  # only two.log was downloaded
