"""The twin check at scale: replayed slices of several real traces onto a local Slurm with
``sched/backfill`` and ``priority/multifactor``, under two slurm.conf settings, against
the ``slurm`` family configured from the very slurm.conf each run used.

Slices (``SLICES``: trace, skip, 200+ jobs, compression) are replayed with the twin check's
replay (``twin_check.run_one``: ``live/replay.py``'s ``submit_replay``, tick-aligned jobs,
realized starts from Slurm's job completion log) on ``LocalCluster`` nodes sized to the
trace's machine. The simulation runs in wall seconds (the scaled slice's ticks × tick)
with ``slurm:conf=<that slurm.conf>``: Slurm's settings are wall seconds and minutes on
the real cluster, so they are the simulation's too and nothing needs converting. The two
settings (``SETTINGS``) keep every priority fixed from submission on (no age or fair-share
weight; see README.md, "Multifactor under time compression").

  python experiments/live_slurm/twin_multifactor.py scan [--trace KTH]
  python experiments/live_slurm/twin_multifactor.py run --slice KTH --setting size
  python experiments/live_slurm/twin_multifactor.py summary

``run`` writes ``results/multifactor_<slice>_<setting>_<k>.json`` (configuration,
slurm.conf, versions, load before/after, start differences against the twin and against
``easy``, makespans) and ``…_jobs.csv`` (per job: cores, submit, simulated and realized
start and end, nodes); ``summary`` re-simulates every stored run with the current
``slurm`` family and prints the table (``results/multifactor_summary.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from backfill_vs_sims import compare, in_seconds  # noqa: E402
from twin_check import run_one  # noqa: E402

from dispatchlab.live.local_cluster import LocalCluster  # noqa: E402
from dispatchlab.live.replay import scaled_workload  # noqa: E402
from dispatchlab.platform.slurm_conf import SlurmConfWarning  # noqa: E402
from dispatchlab.provenance import versions  # noqa: E402
from dispatchlab.simulation import simulate  # noqa: E402
from dispatchlab.workload.load import load_workload, slice_workload  # noqa: E402
from dispatchlab.workload.workload import Workload  # noqa: E402

TRACES = Path(os.environ.get("DISPATCHLAB_TRACES", HERE.parents[2] / "shared/traces/swf"))
TICK = 2


@dataclass(frozen=True)
class Trace:
    """A trace file and the local cluster standing in for its machine."""

    file: str
    nodes: int
    cpus: int


TRACE = {
    "KTH": Trace("KTH-SP2-1996-2.1-cln.swf.gz", 4, 25),  # 100 processors
    "CTC": Trace("CTC-SP2-1996-3.1-cln.swf.gz", 4, 85),  # 338-processor batch partition
    "SDSC-BLUE": Trace("SDSC-BLUE-2000-4.2-cln.swf.gz", 4, 288),  # 1,152 processors
    "HPC2N": Trace("HPC2N-2002-2.2-cln.swf.gz", 4, 60),  # 240 processors
}


@dataclass(frozen=True)
class Slice:
    """A window of a trace and its compression (trace seconds per tick)."""

    trace: str
    skip: int
    limit: int
    compression: float


#: The slices replayed (chosen with ``scan``: most simulated queueing among windows whose
#: replay lasts 3–6 minutes).
SLICES: dict[str, Slice] = {
    "KTH": Slice("KTH", 9424, 200, 1590.0),  # 1–80 processors (median 1)
    "CTC": Slice("CTC", 0, 200, 4760.0),  # 1–306 processors (median 3)
    "SDSC-BLUE": Slice("SDSC-BLUE", 0, 200, 1660.0),  # 1–1,120 processors (median 32)
}

#: Two slurm.conf settings: extra lines and SchedulerParameters entries (over
#: LocalCluster's backfill ones: sched_interval=1, batch_sched_delay=0,
#: sched_min_interval=0, bf_interval=1, bf_resolution=1, bf_continue).
SETTINGS: dict[str, dict[str, str]] = {
    # wide jobs first: job size = (min nodes / nodes + CPUs / cluster CPUs) / 2
    "size": {"extra_conf": "PriorityType=priority/multifactor\nPriorityWeightJobSize=10000\n"
                           "PriorityWeightAge=0\nPriorityWeightFairshare=0",
             "sched_params": ""},
    # narrow jobs first (PriorityFavorSmall), and backfill tests only 20 jobs a pass
    "small-bf20": {"extra_conf": "PriorityType=priority/multifactor\n"
                                 "PriorityWeightJobSize=10000\nPriorityFavorSmall=YES\n"
                                 "PriorityWeightAge=0\nPriorityWeightFairshare=0",
                   "sched_params": "bf_max_job_test=20"},
}
DEBUG_CONF = "DebugFlags=Backfill,Priority\nSlurmctldDebug=debug"


def write_conf(folder: Path, trace: Trace, setting: str, debug: bool = False) -> Path:
    """The slurm.conf ``LocalCluster`` writes for ``trace`` under ``setting`` (its own
    writer; no daemon is started)."""
    kw = cluster_kw(trace, setting, debug)
    cluster = LocalCluster(root=folder, **kw)
    cluster._write_conf()
    return cluster.conf


def cluster_kw(trace: Trace, setting: str, debug: bool = False) -> dict[str, Any]:
    """LocalCluster options for a run of ``trace`` under ``setting``."""
    s = SETTINGS[setting]
    extra = s["extra_conf"] + ("\n" + DEBUG_CONF if debug else "")
    return {"nodes": trace.nodes, "cpus": trace.cpus, "partition": "main",
            "scheduler": "backfill", "extra_conf": extra, "sched_params": s["sched_params"]}


def scaled_slice(sl: Slice, full: Workload | None = None) -> Workload:
    """The slice in ticks (``live/replay.py``'s ``scaled_workload``)."""
    path = TRACES / TRACE[sl.trace].file
    wl = (slice_workload(full, sl.skip, sl.limit) if full is not None
          else load_workload(path, skip=sl.skip, limit=sl.limit))
    return scaled_workload(wl, sl.compression, TICK)


def twin(scaled: Workload, trace: Trace, setting: str, dispatcher: str = "slurm"
         ) -> pd.DataFrame:
    """The simulation in wall seconds: the ``slurm`` family from the run's slurm.conf,
    or another dispatcher on the same nodes."""
    work = in_seconds(scaled, TICK)
    with tempfile.TemporaryDirectory(prefix="dispatchlab-twin-") as tmp:
        conf = write_conf(Path(tmp), trace, setting)
        with warnings.catch_warnings():  # daemons, ports, paths: reported, not used
            warnings.simplefilter("ignore", SlurmConfWarning)
            spec = f"slurm:conf={conf}" if dispatcher == "slurm" else dispatcher
            plat = str(conf) if dispatcher == "slurm" else \
                f"nodes={trace.nodes},cores={trace.cpus}"
            return simulate(work, plat, spec).jobs


def scan(trace_name: str, limit: int, wall_span: float, windows: int) -> None:
    """Windows of ``limit`` jobs across the trace, each compressed so its submissions
    span ``wall_span`` wall seconds: simulated waiting jobs and makespan (setting
    ``size``)."""
    trace = TRACE[trace_name]
    full = load_workload(TRACES / trace.file)
    n = full.n_jobs
    rows = []
    for skip in np.linspace(0, n - limit - 1, windows).astype(int):
        sub = slice_workload(full, int(skip), limit)
        span = float(sub.submit.max() - sub.submit.min())
        comp = max(round(span / (wall_span / TICK), -1), 10.0)
        sl = Slice(trace_name, int(skip), limit, comp)
        scaled = scaled_slice(sl, full)
        sim = twin(scaled, trace, "size")
        waits = sim["start"] - sim["submit"]
        rows.append({"skip": int(skip), "compression": comp,
                     "waiting": int((waits > 0).sum()), "mean_wait_s": float(waits.mean()),
                     "makespan_s": int(sim["end"].max()),
                     "max_cores": int(sub.units.max()),
                     "median_cores": float(np.median(sub.units))})
        print(rows[-1], flush=True)


def run(slice_name: str, setting: str, out: Path, debug: bool, together: bool) -> None:
    """One replay of ``slice_name`` under ``setting`` against the twin."""
    sl = SLICES[slice_name]
    trace = TRACE[sl.trace]
    scaled = scaled_slice(sl)
    sim = twin(scaled, trace, setting)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"multifactor_{slice_name}_{setting}"
    k = 1 + len(list(out.glob(f"{stem}_[0-9]*.json")))
    logs = Path(tempfile.gettempdir()) / f"dispatchlab-twin-{stem}-{k}-{os.getpid()}"
    kw = {**cluster_kw(trace, setting, debug), "root": logs, "keep": debug}
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dispatchlab-twin-") as tmp:
        conf_text = "\n".join(
            line for line in write_conf(Path(tmp), trace, setting).read_text().splitlines()
            if line.split("=")[0] in ("SchedulerType", "SchedulerParameters", "SelectType",
                                      "SelectTypeParameters", "NodeName", "PartitionName")
            or line.startswith("Priority"))
    load_before = os.getloadavg()
    t_start = time.time()
    df, summary = run_one("backfill", scaled, sim, "slurm", cluster_kw=kw, sim_unit_s=1,
                          together=together)
    wall = time.time() - t_start
    load_after = os.getloadavg()
    df.to_csv(out / f"{stem}_{k}_jobs.csv", index=False)
    real = df.set_index("trace_job")
    report = {
        "config": {"slice": sl.__dict__, "trace": trace.__dict__, "setting": setting,
                   "submission": "held before time zero, each tick's jobs released at once"
                   if together
                   else "sbatch at the job's time",
                   "tick_s": TICK, "compression_wall": sl.compression / TICK,
                   "time_unit": "wall s", "slurm_conf": conf_text.splitlines(),
                   "debug_log": str(logs) if debug else None,
                   "differences": "realized - simulated start, wall s"},
        "versions": versions(), "load_before": load_before, "load_after": load_after,
        "replay_wall_s": round(wall, 1), "jobs": len(df),
        "vs_slurm": compare(real, sim, TICK),
        "vs_easy": compare(real, twin(scaled, trace, setting, "easy"), TICK),
        "replay": {k2: v for k2, v in summary.items()
                   if k2 in ("submission_lag_s", "makespan_s", "sim_waiting_jobs")}}
    (out / f"{stem}_{k}.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(stem, k, json.dumps(report["vs_slurm"]), flush=True)


def _submission(text: str) -> str:
    """The short name of a run's submission mode (runs before ``together`` have none)."""
    if text.startswith("held one tick ahead"):
        return "held 1 tick ahead"
    return "together" if text.startswith("held") else "one by one"


def summary(out: Path) -> None:
    """Every stored run against the current ``slurm`` family: the table."""
    rows = []
    sims: dict[tuple[str, str], pd.DataFrame] = {}
    for path in sorted(out.glob("multifactor_*_[0-9]*.json")):
        rep = json.loads(path.read_text())
        cfg = rep["config"]
        name = next(n for n, s in SLICES.items() if s.__dict__ == cfg["slice"]) \
            if any(s.__dict__ == cfg["slice"] for s in SLICES.values()) else "?"
        sl = Slice(**cfg["slice"])
        key = (json.dumps(cfg["slice"]), cfg["setting"])
        if key not in sims:
            sims[key] = twin(scaled_slice(sl), TRACE[sl.trace], cfg["setting"])
        real = pd.read_csv(path.with_name(path.stem + "_jobs.csv")).set_index("trace_job")
        now = compare(real, sims[key], TICK)
        rows.append({"run": path.stem, "slice": name, "setting": cfg["setting"],
                     "submission": _submission(cfg.get("submission", "")),
                     "jobs": now["jobs"], "1 tick": now["within_1tick"],
                     "2 ticks": now["within_2ticks"], "median": now["median"],
                     "p95": now["p95"], "max": now["max"],
                     "real span": now["real_makespan_s"], "sim span": now["sim_makespan_s"],
                     "span %": now["makespan_diff_pct"],
                     "easy 1 tick": rep["vs_easy"]["within_1tick"],
                     "load": f"{rep['load_before'][0]:.1f}/{rep['load_after'][0]:.1f}"})
    table = pd.DataFrame(rows)
    (out / "multifactor_summary.json").write_text(json.dumps(
        {"versions": versions(), "load_avg": os.getloadavg(), "rows": rows},
        indent=2, default=str) + "\n")
    print(table.to_string(index=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sc = sub.add_parser("scan")
    sc.add_argument("--trace", choices=sorted(TRACE), required=True)
    sc.add_argument("--limit", type=int, default=200)
    sc.add_argument("--wall-span", type=float, default=180.0)
    sc.add_argument("--windows", type=int, default=12)
    rn = sub.add_parser("run")
    rn.add_argument("--slice", choices=sorted(SLICES), required=True)
    rn.add_argument("--setting", choices=sorted(SETTINGS), required=True)
    rn.add_argument("--debug", action="store_true",
                    help="slurmctld debug log (DebugFlags=Backfill,Priority), kept")
    rn.add_argument("--one-by-one", action="store_true",
                    help="submit each job with sbatch at its time (not held and released "
                         "a tick at a time)")
    sub.add_parser("summary")
    args = ap.parse_args()
    out = HERE / "results"
    if args.cmd == "scan":
        scan(args.trace, args.limit, args.wall_span, args.windows)
    elif args.cmd == "run":
        run(args.slice, args.setting, out, args.debug, not args.one_by_one)
    else:
        summary(out)


if __name__ == "__main__":
    main()
