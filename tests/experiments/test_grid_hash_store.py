"""Grid expansion, configuration hashes and atomic run folders."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest

from dispatchlab.errors import ConfigError
from dispatchlab.experiments import (
    RunConfig,
    RunStore,
    execute_run,
    parse_experiment,
    plan,
)


def spec(kth: Path, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "t",
        "workloads": [{"path": str(kth), "limit": 200}],
        "dispatchers": ["fifo"],
    }
    base.update(extra)
    return base


def test_grid_is_the_product_and_parameters_only_multiply_their_users(kth: Path) -> None:
    runs = plan(
        parse_experiment(
            spec(
                kth,
                workloads=[{"path": str(kth), "limit": "{n}", "name": "kth"}],
                platforms=["auto", "nodes={nodes},cores=1"],
                seeds=2,
                parameters={"n": [100, 200], "nodes": [100, 128]},
            )
        )
    )
    # 2 workload sizes × (auto + 2 inline platforms) × 1 dispatcher × 2 seeds
    assert len(runs) == 2 * 3 * 2
    limits = sorted({r.config.workload.limit for r in runs})
    assert limits == [100, 200], "a lone placeholder keeps the parameter's type"
    blocks = {r.labels.block for r in runs}
    assert len(blocks) == len(runs), "every run is its own set (one dispatcher)"
    assert all(r.labels.params.get("n") in (100, 200) for r in runs)
    assert {r.config.platform for r in runs} == {"auto", "nodes=100,cores=1", "nodes=128,cores=1"}


def test_windows_cut_the_slice_into_sets(kth: Path) -> None:
    runs = plan(
        parse_experiment(
            spec(kth, workloads=[{"path": str(kth), "skip": 100, "limit": 1000, "windows": 4}])
        )
    )
    assert [(r.config.workload.skip, r.config.workload.limit) for r in runs] == [
        (100, 250),
        (350, 250),
        (600, 250),
        (850, 250),
    ]
    assert [r.labels.window for r in runs] == [0, 1, 2, 3]


def test_hash_ignores_labels_and_paths_but_not_the_data(kth: Path, tmp_path: Path) -> None:
    a = plan(parse_experiment(spec(kth)))[0]
    b = plan(
        parse_experiment(
            spec(
                kth,
                name="renamed",
                workloads=[{"path": str(kth), "limit": 200, "name": "another label"}],
            )
        )
    )[0]
    assert a.key == b.key
    moved = tmp_path / "elsewhere.swf.gz"
    shutil.copyfile(kth, moved)
    c = plan(parse_experiment(spec(moved)))[0]
    assert c.key == a.key, "the file's content names it, not its path"
    d = plan(parse_experiment(spec(kth, workloads=[{"path": str(kth), "limit": 201}])))[0]
    e = plan(parse_experiment(spec(kth, seeds=[1])))[0]
    f = plan(
        parse_experiment(
            spec(
                kth, workloads=[{"path": str(kth), "limit": 200, "options": {"procs": "requested"}}]
            )
        )
    )[0]
    assert len({a.key, d.key, e.key, f.key}) == 4
    # defaults spelled out or left implicit are the same configuration
    g = plan(
        parse_experiment(
            spec(
                kth, workloads=[{"path": str(kth), "limit": 200, "options": {"procs": "allocated"}}]
            )
        )
    )[0]
    assert g.key == a.key


def test_configs_are_plain_and_picklable(kth: Path) -> None:
    run = plan(parse_experiment(spec(kth)))[0]
    again = pickle.loads(pickle.dumps(run.config))
    assert again == run.config and again.key == run.key
    assert RunConfig.from_dict(run.config.to_dict()) == run.config


def test_duplicate_runs_are_refused(kth: Path) -> None:
    with pytest.raises(ConfigError, match="repeats the run") as err:
        plan(
            parse_experiment(
                spec(
                    kth,
                    workloads=[
                        {"path": str(kth), "limit": 200},
                        {"path": str(kth), "limit": 200, "name": "b"},
                    ],
                )
            )
        )
    assert err.value.field == "dispatchers[0]"


def test_relative_paths_are_taken_from_the_experiment_folder(kth: Path, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    shutil.copyfile(kth, tmp_path / "data" / "kth.swf.gz")
    runs = plan(
        parse_experiment(spec(kth, workloads=[{"path": "data/kth.swf.gz", "limit": 50}])), tmp_path
    )
    assert runs[0].config.workload.path == str((tmp_path / "data" / "kth.swf.gz").resolve())
    assert runs[0].labels.workload == "kth"


def test_store_writes_atomically_and_never_twice(kth: Path, tmp_path: Path) -> None:
    run = plan(parse_experiment(spec(kth)))[0]
    store = RunStore(tmp_path)
    (tmp_path / "runs" / f".tmp-{run.key}-dead").mkdir(parents=True)  # a killed writer
    assert not store.is_done(run.key)
    assert [r.key for r in store.records()] == []
    assert store.clean_temporary() == 1
    out = execute_run(run.config)
    assert store.save(run, out, backend="test") is True
    assert store.save(run, out, backend="test") is False
    folder = tmp_path / "runs" / run.key
    for name in (
        "run.json",
        "summary.json",
        "jobs.parquet",
        "jobs.csv",
        "timeseries.parquet",
        "alloc.parquet",
    ):
        assert (folder / name).stat().st_size > 0, name
    rec = next(store.records())
    assert rec.key == run.key and rec.labels["dispatcher"] == "fifo"
    assert rec.doc["config"]["workload"]["limit"] == 200
    assert len(rec.jobs()) == 200
    assert set(rec.breakdown()["group"]) == {"short", "medium", "long"}
    with pytest.raises(ValueError):
        store.save(plan(parse_experiment(spec(kth, seeds=[5])))[0], out, backend="test")


@pytest.mark.parametrize("harm", ["no-run-json", "truncated-run-json", "truncated-jobs",
                                  "foreign-run-json"])
def test_damaged_runs_are_detected_and_rerun(kth: Path, tmp_path: Path, harm: str) -> None:
    """Issue 19 defect 5: a damaged run folder used to count as done (truncated table), crash
    every reader (truncated run.json) or block every re-run ("Directory not empty")."""
    run = plan(parse_experiment(spec(kth)))[0]
    store = RunStore(tmp_path)
    out = execute_run(run.config)
    assert store.save(run, out, backend="test")
    folder = tmp_path / "runs" / run.key
    if harm == "no-run-json":
        (folder / "run.json").unlink()
    elif harm == "truncated-run-json":
        text = (folder / "run.json").read_bytes()
        (folder / "run.json").write_bytes(text[: len(text) // 2])
    elif harm == "truncated-jobs":
        data = (folder / "jobs.parquet").read_bytes()
        (folder / "jobs.parquet").write_bytes(data[: len(data) - 100])
    else:
        doc = (folder / "run.json").read_text().replace(run.key, "0" * 16)
        (folder / "run.json").write_text(doc)
    assert not store.is_done(run.key)
    assert list(store.records()) == []
    assert [k for k, _ in store.damaged()] == [run.key]
    assert store.save(run, out, backend="test") is True  # replaced, not "Directory not empty"
    assert store.is_done(run.key) and store.damaged() == []
    assert len(next(store.records()).jobs()) == 200


def test_equivalent_dispatcher_spellings_are_one_run(kth: Path) -> None:
    """Issue 19: ``easy`` and ``order=fifo,select=easy`` used to hash to two runs."""
    from dispatchlab.dispatchers.registry import canonical_spec

    def key(d: str) -> str:
        return plan(parse_experiment(spec(kth, dispatchers=[d])))[0].key

    same = ["easy", "order=fifo,select=easy", " select=easy , order=fifo,alloc=first-fit",
            "preset=easy"]
    assert len({key(d) for d in same}) == 1
    assert canonical_spec("order=fifo,select=easy") == "easy"
    assert canonical_spec("cp=hcp3") == "hcp3" == canonical_spec("hcp3")
    assert canonical_spec("order=sjf,alloc=best-fit,select=easy") == \
        "order=sjf,select=easy,alloc=best-fit"
    assert key("easy") != key("order=fifo,select=easy,estimate=real")
    assert key("hcp3") == key("cp=hcp3") != key("cp=hcp3,m=50")


def test_results_leave_out_runs_of_an_edited_trace(tmp_path: Path) -> None:
    """Issue 19 defect 6: runs of the old version of an edited trace were averaged with
    the new ones; runs are keyed by content and ``results`` reads the current plan's."""
    import gzip

    from typer.testing import CliRunner

    from dispatchlab.cli.main import app
    from tests.conftest import shared_trace

    with gzip.open(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), "rt") as fh:
        lines = [next(fh) for _ in range(400)]
    trace = tmp_path / "t.swf"
    trace.write_text("".join(lines))
    out = tmp_path / "cmp"
    args = ["compare", "-w", str(trace), "-d", "fifo,sjf", "-o", str(out), "--no-report",
            "--json", "--workers", "1"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    trace.write_text("".join(lines[:-30]))  # the trace is edited: new content, new runs
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0, second.output
    assert len(list((out / "runs").iterdir())) == 4
    res = CliRunner().invoke(app, ["results", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert "2 stored run(s) are not in the current plan" in res.output
