"""Batsim workloads and SimGrid platforms from Batsim's own repository (see
``data/batsim/README.md``), with the values Batsim's documentation and tests give them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dispatchlab.errors import ConfigError, WorkloadError
from dispatchlab.platform.simgrid import read_simgrid_platform
from dispatchlab.workload.batsim_workload import BatsimOptions, load_batsim, write_batsim

BATSIM = Path(__file__).parent / "data" / "batsim"


def test_current_batsim_profile_names_are_read() -> None:
    """Batsim 5 names (``DelayProfile``, ``ParallelTaskHomogeneousProfile`` and its
    ``DefinedAmountsSpreadUniformly`` strategy): docs/input-workload.rst."""
    wl = load_batsim(BATSIM / "test_various_profile_types.json", BatsimOptions(speed=1e6))
    rep = wl.meta["load_report"]
    # by submit time: delay 20.20 s (rounded up); homogeneous 10e6 flops per host at
    # 1 Mf/s; spread uniformly: 10e6 flops over 2 then 4 hosts; homogeneous 0 and 2e5
    assert wl.runtime.tolist() == [21, 10, 5, 3, 0, 1]
    assert wl.units.tolist() == [1, 4, 2, 4, 4, 4]
    assert rep["dropped_profiles"] == {"ParallelTaskProfile": 4,
                                       "SequentialCompositionProfile": 1}
    assert rep["communication_ignored"] == 4


def test_batsim_4_names_give_the_same_jobs() -> None:
    """The same workload at Batsim v4.2.1 (``delay``, ``parallel_homogeneous``,
    ``parallel_homogeneous_total``) is read as the 5.0 one."""
    new = load_batsim(BATSIM / "test_various_profile_types.json", BatsimOptions(speed=1e6))
    old = load_batsim(BATSIM / "v4.2.1_test_various_profile_types.json",
                      BatsimOptions(speed=1e6))
    for name in ("submit", "runtime", "units"):  # 5.0 dropped one job's walltime
        assert getattr(old, name).tolist() == getattr(new, name).tolist(), name
    # v4.2.1's file has two ParallelTask jobs fewer
    assert old.meta["load_report"]["dropped_profiles"] == {"composed": 1, "parallel": 2}


def test_every_delay_workload_is_read_with_a_platform_of_several_speeds() -> None:
    """A workload of delays needs no speed: small_platform.xml's hosts have two."""
    opts = BatsimOptions(platform=str(BATSIM / "small_platform.xml"))
    wl = load_batsim(BATSIM / "test_delays.json", opts)
    assert wl.n_jobs == 10 and set(wl.runtime.tolist()) == {10}
    assert wl.submit.tolist() == list(range(0, 30, 3))
    with pytest.raises(WorkloadError, match="2 different speeds") as err:
        load_batsim(BATSIM / "test_walltime.json", opts)
    assert err.value.field == "profile"


def test_preview_name_ptask_homogeneous() -> None:
    """test_walltime.json still names a 5.0-preview ``ptask_homogeneous`` profile."""
    wl = load_batsim(BATSIM / "test_walltime.json", BatsimOptions(speed=1e9))
    assert wl.n_jobs == 44 and set(wl.runtime.tolist()) == {10}  # 1e10 flops at 1 Gf/s


def test_writer_names_profiles_for_the_batsim_version(tmp_path: Path) -> None:
    wl = load_batsim(BATSIM / "test_delays.json")
    current = json.loads(write_batsim(wl, tmp_path / "a.json").read_text())
    assert {p["type"] for p in current["profiles"].values()} == {"DelayProfile"}
    old = json.loads(write_batsim(wl, tmp_path / "b.json", batsim_version="4.2.1")
                     .read_text())
    assert {p["type"] for p in old["profiles"].values()} == {"delay"}
    for name in ("a.json", "b.json"):
        assert load_batsim(tmp_path / name).runtime.tolist() == wl.runtime.tolist()
    with pytest.raises(WorkloadError, match="unknown Batsim version") as err:
        write_batsim(wl, tmp_path / "c.json", batsim_version="6")
    assert err.value.field == "batsim_version"


def test_cluster_energy_128_as_batsim_counts_it() -> None:
    """A blank line before ``<?xml``; 128 compute hosts host0…host127 at the first power
    state's 100 Mf (Batsim's test/edc-lib/platform-check.cpp); the master cluster's
    ``role=master`` property leaves it out."""
    hosts = read_simgrid_platform(BATSIM / "cluster_energy_128.xml")
    assert hosts.names == tuple(f"host{k}" for k in range(128))
    assert set(hosts.speeds) == {100e6}


def test_cabinets_and_the_master_host() -> None:
    """``<cabinet>`` elements: 4 × 128 hosts (radical 100-227), and the master cabinet's
    host ``master_host0`` once Batsim is told its name (``--master-host``)."""
    path = BATSIM / "cluster_locality_4x128.xml"
    hosts = read_simgrid_platform(path, master="master_host0")
    assert hosts.n_hosts == 512
    assert hosts.names[:2] == ("algol100", "algol101") and hosts.names[-1] == "dart227"
    assert "master_host0" in read_simgrid_platform(path).names  # not Batsim's default name


@pytest.mark.parametrize(("name", "count", "first"), [
    ("small_platform.xml", 4, "Jupiter"),  # master_host, Batsim's default master, left out
    ("cluster512.xml", 512, "a0"),  # cluster M has role=master
    ("properties_example.xml", 7, "node-0.simgrid.org"),  # blank line, zones, master_host
])
def test_batsim_platforms_compute_hosts(name: str, count: int, first: str) -> None:
    hosts = read_simgrid_platform(BATSIM / name)
    assert hosts.n_hosts == count and hosts.names[0] == first
    assert "master_host" not in hosts.names


def test_uniform_speed_still_refused_when_needed() -> None:
    with pytest.raises(ConfigError, match="different speeds"):
        read_simgrid_platform(BATSIM / "small_platform.xml").uniform_speed()


SIMGRID = Path(__file__).parent / "data" / "simgrid"


@pytest.mark.parametrize(("name", "hosts", "cores"), [
    ("cluster_multi.xml", 24, 8 * 1 + 8 * 2 + 8 * 4),  # three clusters, core 1, 2 and 4
    ("two_peers.xml", 2, 2),  # <peer>s: one-core hosts of 1.5 Gf and 730 Mf
    ("three_multicore_hosts.xml", 3, 4 + 4 + 2),
])
def test_simgrid_example_platforms(name: str, hosts: int, cores: int) -> None:
    """SimGrid's own examples/platforms, as its DTD reads them (``core`` defaults to 1)."""
    from dispatchlab.platform.resolve import resolve_platform

    plat = resolve_platform(str(SIMGRID / name))
    assert plat.n_nodes == hosts and int(plat.total[0]) == cores
    if name == "two_peers.xml":
        assert read_simgrid_platform(SIMGRID / name).speeds == (1.5e9, 730e6)


def test_batsim_example_hpc_workload_is_read_whole() -> None:
    """Batsim's 250-job example workload (14 DelayProfile profiles, nb_res 128) was read
    as zero jobs before its 5.0 names were known."""
    import math

    path = BATSIM / "example_workload_hpc_seed1_jobs250.json"
    doc = json.loads(path.read_text())
    wl = load_batsim(path)
    assert wl.n_jobs == 250 and wl.meta["load_report"]["dropped_unsupported_profile"] == 0
    delays = {j["id"]: math.ceil(doc["profiles"][j["profile"]]["delay"]) for j in doc["jobs"]}
    assert dict(zip(wl.job_id.tolist(), wl.runtime.tolist(), strict=True)) == delays
    assert int(wl.units.max()) == 128 and wl.meta["load_report"]["header"]["MaxProcs"] == "128"
