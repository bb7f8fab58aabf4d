"""Batsim workload JSON in and out, and SimGrid platform hosts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from dispatchlab.errors import ConfigError, WorkloadError
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.platform.simgrid import parse_speed, read_simgrid_platform
from dispatchlab.workload.batsim_workload import BatsimOptions, load_batsim, write_batsim
from dispatchlab.workload.load import detect_format, load_workload, save_workload
from dispatchlab.workload.workload import Workload
from tests.workload.strategies import workloads

DATA = Path(__file__).parent / "data"
KTH = (Path(__file__).parents[2] / "src" / "dispatchlab" / "data" / "traces"
       / "KTH-SP2-1996-2.1-cln.slice.swf.gz")
SAME = ("job_id", "submit", "walltime", "runtime", "units", "logged_wait", "array", "hetjob")


def assert_same_jobs(a: Workload, b: Workload) -> None:
    """The same jobs: columns, per-resource requests and per-job labels."""
    for name in SAME:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.resources == b.resources
    assert np.array_equal(a.req, b.req)
    for codes, table in (("queue", "queues"), ("user", "users"), ("app", "apps")):
        labels = [getattr(x, "name", x) for x in getattr(a, table)]
        other = [getattr(x, "name", x) for x in getattr(b, table)]
        assert [labels[i] for i in getattr(a, codes)] == [other[i] for i in getattr(b, codes)]
    assert a.queues == b.queues
    assert (a.origin_unix, a.timezone) == (b.origin_unix, b.timezone)


def test_swf_to_batsim_json_and_back_gives_the_same_workload(tmp_path: Path) -> None:
    swf = load_workload(KTH)
    path = save_workload(swf, tmp_path / "kth.json")
    assert detect_format(path) == "batsim"
    back = load_workload(path)
    assert_same_jobs(swf, back)
    doc = json.loads(path.read_text())
    assert doc["nb_res"] == 100  # the SWF header's MaxProcs
    job = doc["jobs"][0]
    assert doc["profiles"][job["profile"]] == {"type": "DelayProfile",
                                               "delay": int(swf.runtime[0])}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(max_jobs=12))
def test_any_workload_round_trips_through_batsim_json(tmp_path_factory: pytest.TempPathFactory,
                                                      wl: Workload) -> None:
    path = write_batsim(wl, tmp_path_factory.mktemp("rt") / "w.json")
    assert_same_jobs(wl, load_batsim(path))


def test_reader_profiles_platform_and_report() -> None:
    opts = BatsimOptions(platform=str(DATA / "platform.xml"))
    wl = load_batsim(DATA / "batsim_workload.json", opts)
    rep = wl.meta["load_report"]
    assert wl.job_id.tolist() == [1, 2, 3]  # "w0!1", …
    assert wl.submit.tolist() == [0, 10, 20]  # 10.4 rounded, counted
    assert wl.runtime.tolist() == [30, 50, 30]  # delay 30; 5e10 flops at 1 Gf/s
    assert wl.walltime.tolist() == [100, 200, 30]  # no walltime: the run time
    assert wl.units.tolist() == [1, 4, 2] and (wl.req[:, 0] == 2).all()  # whole 2-core hosts
    assert rep["dropped_profiles"] == {"composed": 1, "parallel": 1}
    assert rep["fractional_times_rounded"] == 1 and rep["estimate_from_runtime"] == 1
    with pytest.raises(WorkloadError, match="profile type 'parallel'") as err:
        load_batsim(DATA / "batsim_workload.json",
                    BatsimOptions(speed=1e9, unsupported="error"))
    assert err.value.job == 4 and err.value.field == "profile"


def test_parallel_homogeneous_needs_a_speed() -> None:
    with pytest.raises(WorkloadError, match="needs the hosts' speed") as err:
        load_batsim(DATA / "batsim_workload.json")
    assert err.value.job == 2
    assert load_workload(DATA / "batsim_workload.json", speed=1e10).runtime.tolist() == [
        30, 5, 30]


@pytest.mark.parametrize(("change", "field"), [
    (lambda d: d["jobs"][0].pop("subtime"), "subtime"),
    (lambda d: d["jobs"][0].update(res=0), "res"),
    (lambda d: d["jobs"][0].update(res=1.5), "res"),
    (lambda d: d["jobs"][0].update(profile="nope"), "profile"),
    (lambda d: d["jobs"][0].update(walltime="1h"), "walltime"),
    (lambda d: d.update(nb_res=-2), "nb_res"),
    (lambda d: d["profiles"]["sleep30"].update(delay=-1), "delay"),
])
def test_hostile_batsim_jobs(tmp_path: Path, change: object, field: str) -> None:
    doc = json.loads((DATA / "batsim_workload.json").read_text())
    change(doc)  # type: ignore[operator]
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(WorkloadError) as err:
        load_batsim(path, BatsimOptions(speed=1e9))
    assert err.value.field == field and err.value.source == str(path)


def test_writer_checks_nb_res(tmp_path: Path) -> None:
    wl = load_workload(KTH, limit=20)
    with pytest.raises(WorkloadError, match="below the widest job"):
        write_batsim(wl, tmp_path / "w.json", nb_res=1)
    doc = json.loads(write_batsim(wl, tmp_path / "w.json", workload_name="kth").read_text())
    assert doc["jobs"][0]["id"] == f"kth!{int(wl.job_id[0])}"
    assert load_batsim(tmp_path / "w.json").job_id.tolist() == wl.job_id.tolist()


def test_simgrid_platform_hosts() -> None:
    hosts = read_simgrid_platform(DATA / "platform.xml")
    assert hosts.names == ("node-0", "node-1", "node-2", "node-3")  # master left out
    assert hosts.uniform_speed() == 1e9 and hosts.uniform_cores() == 2
    plat = resolve_platform(str(DATA / "platform.xml"))
    assert plat.n_nodes == 4 and int(plat.total[0]) == 8
    assert parse_speed("100.0Mf, 50Mf", "h", "x") == 1e8
    assert parse_speed("1e9f", "h", "x") == 1e9


@pytest.mark.parametrize(("xml", "field"), [
    ('<platform><host id="a" speed="fast"/></platform>', "host[a].speed"),
    ('<platform><cluster id="c" prefix="n" radical="0-x" speed="1Gf"/></platform>',
     "cluster[c].radical"),
    ('<platform><cluster id="c" prefix="n" radical="0-1"/></platform>', "cluster[c]"),
    ('<platform><host id="a" speed="1Gf" core="0"/></platform>', "host[a].core"),
])
def test_hostile_platforms(tmp_path: Path, xml: str, field: str) -> None:
    path = tmp_path / "p.xml"
    path.write_text(xml)
    with pytest.raises(ConfigError) as err:
        read_simgrid_platform(path)
    assert err.value.field == field and err.value.source == str(path)
    path.write_text("<platform><zone>")
    with pytest.raises(ConfigError, match="well-formed"):
        read_simgrid_platform(path)


@pytest.mark.slow
def test_hpc2n_round_trips_through_batsim_json(tmp_path: Path) -> None:
    from tests.conftest import shared_trace

    swf = load_workload(shared_trace("HPC2N-2002-2.2-cln.swf.gz"))
    back = load_workload(write_batsim(swf, tmp_path / "hpc2n.json"))
    assert_same_jobs(swf, back)
