"""The backend-neutral pieces of a replay: one submission loop for Slurm and PBS (run
against stand-in ``sbatch``/``qsub`` programs that record their arguments), the job
script's tick-grid sleep run by a real shell, and the PBS accounting read-back."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.live.adapter import JsonLog
from dispatchlab.live.pbs_submit import (
    PbsTarget,
    accounting_runs,
    pbs_start_shell,
    walltime_text,
)
from dispatchlab.live.replay import (
    ALIGNED_SLEEP,
    Realized,
    SlurmTarget,
    job_script,
    run_submit,
    scaled_workload,
    submit_replay,
)
from dispatchlab.workload.workload import Workload


def _program(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _workload() -> Workload:
    return scaled_workload(Workload.from_columns(
        submit=[0, 0, 1], walltime=[60, 120, 60], runtime=[1, 2, 1], units=[1, 3, 2],
        req={"cores": [1, 1, 1]}, job_id=[7, 8, 9]), 1.0)


def _env(folder: Path) -> dict[str, str]:
    conf = folder / "pbs.conf"
    conf.write_text("PBS_SERVER=x\n")
    return {"PATH": f"{folder}:/usr/bin:/bin", "PBS_CONF_FILE": str(conf)}


def test_pbs_replay_submits_each_job_once_with_its_select_walltime_and_script(
        tmp_path: Path) -> None:
    """Jobs 7 and 8 share a tick: both ``qsub -h`` in one shell, then one ``qrls`` (the
    adapter sees them arrive together); job 9 alone: a plain ``qsub``."""
    calls = tmp_path / "calls"
    _program(tmp_path, "qstat", "exit 0\n")
    _program(tmp_path, "qsub", f'n=$(grep -c ^qsub {calls} 2>/dev/null || echo 0)\n'
             f'printf "qsub %s\\n" "$*" >> {calls}\necho "$((n + 41)).pbshost"\n')
    _program(tmp_path, "qrls", f'printf "qrls %s\\n" "$*" >> {calls}\n')
    target = PbsTarget(_env(tmp_path), "workq", accounting=tmp_path)
    log = io.StringIO()
    sub = submit_replay(_workload(), None, "ignored", hold=target.adapter_holds,
                        target=target, log=JsonLog(log))
    assert sub.ids == {7: 41, 8: 42, 9: 43} and not sub.failed
    lines = calls.read_text().splitlines()
    assert [x.split()[0] for x in lines] == ["qsub", "qsub", "qrls", "qsub"]
    assert lines[1].startswith("qsub -q workq -N replay-8 -l select=3:ncpus=1 -l place=free "
                               "-l walltime=00:02:00 -j oe -o /dev/null -h -- /bin/sh -c ")
    assert lines[2] == "qrls -h u 41 42"
    assert " -h " not in lines[3]  # PBS jobs wait for the adapter unheld
    assert f"{tmp_path}/qstat -f \"$PBS_JOBID\"" in lines[1] and "stime" in lines[1]
    assert "/ 1 + 2) * 1" in lines[1]  # two ticks after the tick of the recorded start
    events = [json.loads(x)["event"] for x in log.getvalue().splitlines()]
    assert events == ["submitted"] * 3


def test_a_failed_qsub_in_a_tick_is_retried_alone_and_a_lost_one_named(
        tmp_path: Path) -> None:
    _program(tmp_path, "qstat", "exit 0\n")
    _program(tmp_path, "qsub", 'case "$*" in *replay-8*) echo "qsub: busy" >&2; exit 1;; '
             'esac\necho "5.pbshost"\n')
    _program(tmp_path, "qrls", "exit 0\n")
    _program(tmp_path, "qselect", "exit 0\n")
    target = PbsTarget(_env(tmp_path), "workq")
    log = io.StringIO()
    sub = submit_replay(_workload(), None, "", hold=False, target=target, retry_for=0.6,
                        log=JsonLog(log), offset=0.0)
    assert sorted(sub.ids) == [7, 9] and list(sub.failed) == [8]
    assert "qsub: busy" in sub.failed[8]
    assert '"submit_retry"' in log.getvalue() and '"replay_incomplete"' in log.getvalue()


def test_slurm_target_builds_the_sbatch_line_it_always_did(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    _program(tmp_path, "sbatch", f'printf "%s\\n" "$*" >> {calls}\necho "5;cluster"\n')
    sub = submit_replay(_workload(), {"PATH": f"{tmp_path}:/usr/bin:/bin"}, "main",
                        hold=True, aligned=False)
    assert sub.slurm_id == {7: 5, 8: 5, 9: 5}
    assert calls.read_text().splitlines()[1] == (
        "--parsable -p main -n 3 -t 2 -o /dev/null -J replay-8 --hold --wrap sleep 2")
    assert SlurmTarget(None, "main").start_shell in ALIGNED_SLEEP


def test_run_submit_retries_then_names_the_last_error(tmp_path: Path) -> None:
    count = tmp_path / "count"
    flaky = _program(tmp_path, "flaky", f'echo x >> {count}\n'
                     f'[ "$(wc -l < {count})" -ge 3 ] && echo 12.pbshost && exit 0\n'
                     'echo "qsub: server busy" >&2; exit 1\n')
    log = io.StringIO()
    got = run_submit([str(flaky)], None, lambda out: int(out.split(".")[0]), lambda: None,
                     program="qsub", retry_for=10, log=JsonLog(log), job=3)
    assert got == 12
    retries = [json.loads(x) for x in log.getvalue().splitlines()]
    assert [r["attempt"] for r in retries] == [1, 2] and retries[0]["job"] == 3
    broken = _program(tmp_path, "broken", 'echo "qsub: Unknown queue" >&2; exit 2\n')
    with pytest.raises(Exception, match="qsub: Unknown queue"):
        run_submit([str(broken)], None, int, lambda: None, program="qsub", retry_for=0.2)
    odd = _program(tmp_path, "odd", "echo hello\n")
    with pytest.raises(DispatchlabError, match="qsub answered 'hello', not a job id"):
        run_submit([str(odd)], None, int, lambda: None, program="qsub")


def test_pbs_target_needs_its_configuration(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="PBS_CONF_FILE"):
        PbsTarget({"PATH": str(tmp_path)}, "workq")


@pytest.mark.parametrize("offset", [0.1, 0.9, 1.6])
def test_aligned_script_sleeps_to_the_tick_grid_of_the_pbs_recorded_start(
        tmp_path: Path, offset: float) -> None:
    """The job script, run by sh with a stand-in qstat giving ``stime`` and a stand-in
    sleep echoing its argument: it sleeps to ``runtime`` ticks after its start's tick.
    (The start is recorded in whole seconds, up to ``offset`` + 1 s ago; the job's end is
    3.05 s after it, so ``offset`` stays below 2 for the sleep to be still ahead.)"""
    now = time.time()
    stime = int(now - offset)  # recorded in whole seconds, ``offset`` s ago
    t0 = stime - 3  # the start is 3 s (tick 1 of 2 s) into the replay
    stamp = time.strftime("%a %b %e %H:%M:%S %Y", time.localtime(stime))
    _program(tmp_path, "qstat", f'echo "    stime = {stamp}"\n')
    _program(tmp_path, "sleep", 'echo "$1"\n')
    env = _env(tmp_path)
    script = job_script(2, True, t0=t0, tick=2,
                        start=pbs_start_shell(str(tmp_path / "qstat"), env["PBS_CONF_FILE"]))
    out = subprocess.run(["sh", "-c", script], env={**os.environ, **env,
                                                   "PBS_JOBID": "1.pbshost"},
                         capture_output=True, text=True, check=True)
    end = t0 + (1 + 2) * 2 + 0.05  # end of the 2nd tick after tick 1
    assert float(out.stdout) == pytest.approx(end - time.time(), abs=0.15)


def test_walltime_text() -> None:
    assert [walltime_text(m) for m in (1, 2, 60, 125)] == [
        "00:01:00", "00:02:00", "01:00:00", "02:05:00"]


def test_accounting_runs_keep_the_first_start_of_a_restarted_server(tmp_path: Path) -> None:
    """A server restarted while job 2 ran wrote its S record again with the recovery time
    (and that start in its E record): the first S record's start is the real one. A job
    deleted while queued (E without S) and one still running (S only) are not finished."""
    folder = tmp_path / "accounting"
    folder.mkdir()
    q = "queue=workq ctime=100 qtime=100 etime=100"
    (folder / "20261207").write_text(
        f"12/07/2026 20:33:51;Q;1.pbshost;{q}\n"
        f"12/07/2026 20:33:52;S;1.pbshost;user=u {q} start=102 exec_vnode=(vnode1:ncpus=1)\n"
        f"12/07/2026 20:33:52;S;2.pbshost;user=u {q} start=102 exec_vnode=(vnode2:ncpus=2)\n"
        f"12/07/2026 20:33:58;E;1.pbshost;user=u {q} start=102 end=108 Exit_status=0 "
        "exec_vnode=(vnode1:ncpus=1) run_count=1\n"
        "12/07/2026 20:34:10;L;license;floating license hour:0 day:0\n"
        "12/07/2026 20:34:11;S;2.pbshost;user=u ctime=100 qtime=101 start=131 "
        "exec_vnode=(vnode2:ncpus=2)\n")
    (folder / "20261208").write_text(
        "12/08/2026 00:00:05;E;2.pbshost;user=u ctime=100 qtime=101 start=131 end=140 "
        "Exit_status=0 exec_vnode=(vnode2:ncpus=2) run_count=1\n"
        "12/08/2026 00:00:06;E;3.pbshost;user=u qtime=103 end=141 Exit_status=-3\n"
        "12/08/2026 00:00:07;S;4.pbshost;user=u qtime=104 start=141 exec_vnode=(vnode3:n")
    runs = accounting_runs(folder)
    assert runs == {
        1: Realized(100, 102, 108, "(vnode1:ncpus=1)", "exit 0", 1),
        2: Realized(101, 102, 140, "(vnode2:ncpus=2)", "exit 0", 1)}
    _program(tmp_path, "qstat", "exit 0\n")
    assert PbsTarget(_env(tmp_path), accounting=folder).realized() == runs


def test_difference_stats_of_a_replay() -> None:
    from dispatchlab.live.replay import difference_stats

    got = difference_stats(np.array([0.0, -1.0, 2.0, 3.0]))
    assert got["median"] == 1.5 and got["max"] == 3.0 and got["mean_signed"] == 1.0
    assert got["within_1s"] == 0.5 and got["within_2s"] == 0.75
