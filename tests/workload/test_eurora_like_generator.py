"""Eurora-like generator (thesis §4.5.2) and generator specs."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload import generate, list_generators, load_workload
from dispatchlab.workload.generators import parse_generator_spec
from dispatchlab.workload.generators.eurora_like import (
    AVU,
    GPU_SHARES,
    MEM_GB,
    MEM_SHARES,
    MIC_SHARES,
    eurora_like,
)
from tests.workload.conftest import assert_same_workload

QUEUES = ("debug", "parallel", "np_longpar")


def test_same_seed_same_workload_other_seed_other() -> None:
    a = eurora_like(500, seed=11)
    b = eurora_like(500, seed=11)
    assert_same_workload(a, b, source=True)
    c = eurora_like(500, seed=12)
    assert not np.array_equal(a.submit, c.submit)


def test_exact_proportions() -> None:
    n = 1000
    wl = eurora_like(n, seed=3)
    frame = wl.to_frame()
    counts = frame["queue"].value_counts().to_dict()
    assert counts == {"debug": 270, "parallel": 720, "np_longpar": 10}
    tod = wl.submit % 86400
    day = (tod >= 8 * 3600) & (tod < 18 * 3600)
    assert int(day.sum()) == 890
    assert wl.submit.min() >= 0 and wl.submit.max() < 86400
    assert int((wl.runtime == wl.walltime).sum()) >= 200
    assert wl.job_id.tolist() == list(range(1, n + 1))
    assert (np.diff(wl.submit) >= 0).all()
    for k, q in enumerate(QUEUES):
        part = frame[frame["queue"] == q]
        size = len(part)
        gpu = part["req_gpu"].value_counts().to_dict()
        mic = part["req_mic"].value_counts().to_dict()
        mem = part["req_mem"].value_counts().to_dict()
        for value, share in zip((0, 1, 2), GPU_SHARES[k], strict=True):
            assert abs(gpu.get(value, 0) - share * size) < 1
        for value, share in zip((0, 1, 2), MIC_SHARES[k], strict=True):
            assert abs(mic.get(value, 0) - share * size) < 1
        for gb, share in zip(MEM_GB, MEM_SHARES[k], strict=True):
            assert abs(mem.get(gb * 1024, 0) - share * size) < 1


def test_request_ranges_and_walltime_formula() -> None:
    wl = eurora_like(2000, seed=5)
    frame = wl.to_frame()
    nmax = {"debug": 2, "parallel": 32, "np_longpar": 32}
    avu = dict(zip(QUEUES, AVU, strict=True))
    for q, part in frame.groupby("queue"):
        assert part["units"].between(1, nmax[str(q)]).all()
        assert part["units"].nunique() == nmax[str(q)] or str(q) == "np_longpar"
        expected = np.maximum(np.rint(avu[str(q)] / (part["units"] * part["req_cores"])), 1)
        assert (part["walltime"] == expected).all()
    assert frame["req_cores"].between(1, 16).all()
    assert frame["req_cores"].nunique() == 16
    assert not ((frame["req_gpu"] > 0) & (frame["req_mic"] > 0)).any()
    partial = wl.runtime < wl.walltime
    assert (wl.runtime[partial] >= np.floor(0.2 * wl.walltime[partial])).all()
    assert (wl.runtime <= wl.walltime).all()
    assert abs(partial.mean() - 0.8) < 0.01


def test_random_proportions_are_close() -> None:
    wl = eurora_like(20000, seed=1, proportions="random")
    frame = wl.to_frame()
    share = frame["queue"].value_counts(normalize=True)
    assert abs(share["debug"] - 0.27) < 0.015
    assert abs(share["parallel"] - 0.72) < 0.015
    tod = wl.submit % 86400
    assert abs(((tod >= 8 * 3600) & (tod < 18 * 3600)).mean() - 0.89) < 0.01
    par = frame[frame["queue"] == "parallel"]
    assert abs((par["req_gpu"] == 2).mean() - 0.65) < 0.02
    assert abs((par["req_mic"] == 1).mean() - 0.01) < 0.005
    assert not ((frame["req_gpu"] > 0) & (frame["req_mic"] > 0)).any()


def test_options() -> None:
    small = eurora_like(300, seed=2, nmax=4, cores_per_node=8)
    assert small.units.max() <= 4
    assert small.req_of("cores").max() <= 8
    per_queue = eurora_like(300, seed=2, nmax={"parallel": 3})
    frame = per_queue.to_frame()
    assert frame.loc[frame["queue"] == "parallel", "units"].max() <= 3
    assert frame.loc[frame["queue"] == "debug", "units"].max() <= 2
    capped = eurora_like(500, seed=2, cap_walltime=True)
    limits = {"debug": 1800, "parallel": 21600, "np_longpar": 86400}
    cf = capped.to_frame()
    assert (cf["walltime"] <= cf["queue"].map(limits)).all()
    only_debug = eurora_like(50, seed=2, split=(1, 0, 0))
    assert {q.name for q in only_debug.queues} == set(QUEUES)
    assert set(only_debug.to_frame()["queue"]) == {"debug"}
    night = eurora_like(100, seed=2, day_share=0.0)
    tod = night.submit % 86400
    assert not ((tod >= 8 * 3600) & (tod < 18 * 3600)).any()


def test_origin_is_local_midnight_and_ewts() -> None:
    wl = eurora_like(10, seed=0, start="2015-01-05")
    midnight = datetime(2015, 1, 5, tzinfo=ZoneInfo("Europe/Rome"))
    assert wl.origin_unix == int(midnight.timestamp())
    assert wl.timezone == "Europe/Rome"
    assert {q.name: q.ewt for q in wl.queues} == {
        "debug": 3600,
        "parallel": 18000,
        "np_longpar": 86400,
    }
    assert wl.meta["generator"] == "eurora-like"
    assert wl.meta["params"]["start"] == "2015-01-05"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"jobs": 0}, "jobs"),
        ({"seed": -1}, "seed"),
        ({"nmax": 0}, "nmax"),
        ({"nmax": (1, 2)}, "nmax"),
        ({"nmax": {"gpu": 2}}, "nmax"),
        ({"split": (1, 1)}, "split"),
        ({"split": (0, 0, 0)}, "split"),
        ({"day_share": 1.5}, "day_share"),
        ({"full_runtime_share": -0.1}, "full_runtime_share"),
        ({"cores_per_node": 0}, "cores_per_node"),
        ({"proportions": "roughly"}, "proportions"),
        ({"timezone": "Mars/Base"}, "timezone"),
        ({"start": "yesterday"}, "start"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs: dict[str, object], field: str) -> None:
    args = {"jobs": 10, **kwargs}
    with pytest.raises(WorkloadError) as info:
        eurora_like(**args)  # type: ignore[arg-type]
    assert info.value.field == field


# ------------------------------------------------------------------------------ specs


def test_spec_syntaxes_agree() -> None:
    a = generate("gen:eurora-like:jobs=120,seed=9,nmax=2/8/8,split=27/72/1")
    b = load_workload("gen:eurora-like?jobs=120&seed=9&nmax=2/8/8&split=0.27/0.72/0.01")
    c = eurora_like(120, seed=9, nmax=(2, 8, 8))
    for name in ("submit", "walltime", "runtime", "units", "req", "queue"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
        assert np.array_equal(getattr(a, name), getattr(c, name))
    assert a.source == "gen:eurora-like:jobs=120,seed=9,nmax=2/8/8"
    assert generate(a.source).submit.tolist() == a.submit.tolist()


def test_spec_parsing() -> None:
    assert parse_generator_spec("gen:eurora-like") == ("eurora-like", {})
    assert parse_generator_spec(" GEN:Eurora-Like:jobs = 5 ,seed=1, ") == (
        "eurora-like",
        {"jobs": "5", "seed": "1"},
    )
    assert "eurora-like" in list_generators()
    wl = load_workload("gen:eurora-like:cap_walltime=yes,proportions=random", jobs=7)
    assert len(wl) == 7
    assert wl.meta["params"]["cap_walltime"] is True


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        ("gen:nope", "workload", "unknown generator 'nope'"),
        ("gen:", "workload", "cannot read generator spec"),
        ("gen:eurora-like:jobs", "workload", "expected key=value"),
        ("gen:eurora-like:jobs=1,jobs=2", "jobs", "given twice"),
        ("gen:eurora-like:colour=red", "colour", "unknown parameter"),
        ("gen:eurora-like:jobs=many", "jobs", "bad value 'many'"),
        ("gen:eurora-like:nmax=1/2", "nmax", "bad value"),
        ("gen:eurora-like:split=1/2", "split", "bad value"),
        ("gen:eurora-like:cap_walltime=perhaps", "cap_walltime", "true or false"),
        ("gen:eurora-like:proportions=some", "proportions", "exact or random"),
        ("gen:eurora-like:jobs=-3", "jobs", "positive integer"),
    ],
)
def test_bad_specs(spec: str, field: str, message: str) -> None:
    with pytest.raises(WorkloadError) as info:
        load_workload(spec)
    assert message in str(info.value)
    assert info.value.field == field


def test_override_must_be_known() -> None:
    with pytest.raises(WorkloadError, match="unknown parameter"):
        generate("gen:eurora-like", colour="red")
