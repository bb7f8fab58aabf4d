"""Cross-check against PA-HPC-SIM (Borghesi's power-aware simulator, the paper authors' own).

Builds ``online_dispatcher`` from ``../shared/peers/pa-hpc-sim`` with g++ (into a temporary
folder), runs its list scheduler (``opt_type`` 0) and its EASY (1) on every Eurora historical
batch of the chosen sizes (default 100 and 200 jobs: 58 batches) with no cap, 3000 W, 2000 W
and the ``power_caps_100`` profile, runs dispatchlab's ``pa-list`` and ``pa-easy`` presets on
the same inputs, exactly as the command line does::

    dispatchlab simulate -w BATCH -p eurora-64 -d pa-list --power-cap 3000 \\
        --job-power pa-hpc-sim --no-idle-power --eurora-units chunks

(the profile: ``--scenario .../power_caps_100`` instead of ``--power-cap``), and prints per
case the mean wait of both, how many jobs start at the same second, the largest gap, and
the energy.

The peer runs with ``dynamic_control`` −1 (its RAPL-like power sharing off: with 0 it lowers
running jobs' current power to per-node shares of the cap at each periodic measurement, so
more jobs fit than their predicted power allows; dispatchlab models the dispatcher's own cap
check only). Energy: the peer's "Total Energy" (kJ, rounded down) sums the energy of the
jobs whose end it processed, and its event loop stops at the last start, so jobs still
running then are left out (with a cap profile it stops at the later of the last start and
the profile's last change); the comparable figure here sums watts × run time over the jobs
that ended by then (``energy kJ ended``), beside the whole run's (``all``).

Usage: ``python benchmarks/pa_hpc_sim_crosscheck.py [--batches N] [--sizes 100 200]
[--units requested] [--out FILE.md]``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED = (HERE.parent / ".." / "shared").resolve()
PEER = SHARED / "peers" / "pa-hpc-sim"
EURORA = SHARED / "traces" / "eurora"
NODES = EURORA / "system_configs" / "nodes_#64"
QUEUES = EURORA / "system_configs" / "system_queues"
PRED = EURORA / "eurora_power_predictions" / "power_predictions"
NO_VAR = EURORA / "variable_power_caps" / "power_caps_noVariations"
PROFILE = EURORA / "variable_power_caps" / "power_caps_100"
NO_CAP = 5_000_000  # PA-HPC-SIM's own default: no cap in practice
CASES = [("none", NO_VAR, NO_CAP), ("3000", NO_VAR, 3000), ("2000", NO_VAR, 2000),
         ("power_caps_100", PROFILE, NO_CAP)]
SCHEDULERS = [(0, "pa-list"), (1, "pa-easy")]
_ROW = re.compile(r"^(\d+)\tST: (\d+).*\tWait Time: ([-\d.e+]+)")
_ENERGY = re.compile(r"- Total Energy: (\d+)")


def build(out: Path) -> Path:
    """Compile ``online_dispatcher`` (its sources miss ``<random>``: ``-include random``)."""
    exe = out / "online_dispatcher"
    if not exe.exists():
        subprocess.run(["g++", "-O2", "-std=c++11", "-include", "random",
                        f"-I{PEER / 'Optimization' / 'src'}",
                        f"-I{PEER / 'TextBasedFwks' / 'src'}",
                        str(PEER / "TextBasedFwks" / "src" / "online_dispatcher.cpp"),
                        "-o", str(exe)], check=True)
    return exe


def check_cxx_sort(out: Path) -> None:
    """:func:`cxx_sort` must order ties exactly as this machine's ``std::sort``."""
    from dispatchlab.dispatchers.pa_hpc_sim.cxx_sort import cxx_sort

    src, exe = out / "sort_check.cpp", out / "sort_check"
    src.write_text(
        "#include <algorithm>\n#include <vector>\n#include <iostream>\n"
        "int main(){std::vector<int> v; for(int i=0;i<300;i++) v.push_back(i);\n"
        "std::sort(v.begin(), v.end(), [](int a, int b){return (a*7919)%13 < (b*7919)%13;});\n"
        "for(int x: v) std::cout << x << ' ';\n"
        "std::vector<int> w; for(int i=0;i<64;i++) w.push_back(i);\n"
        "std::sort(w.begin(), w.end(), [](int a, int b){return false;});\n"
        "for(int x: w) std::cout << x << ' '; std::cout << std::endl;}\n")
    subprocess.run(["g++", "-O2", "-std=c++11", str(src), "-o", str(exe)], check=True)
    want = [int(x) for x in subprocess.run([str(exe)], capture_output=True, text=True,
                                           check=True).stdout.split()]
    v = list(range(300))
    cxx_sort(v, lambda a, b: (a * 7919) % 13 < (b * 7919) % 13)
    w = list(range(64))
    cxx_sort(w, lambda a, b: False)
    if v + w != want:
        raise SystemExit("cxx_sort does not reproduce this machine's std::sort")


def run_peer(exe: Path, batch: Path, opt: int, caps: Path, cap: int
             ) -> tuple[dict[int, int], int]:
    """Job id → wait (s) from the peer's FINAL SCHEDULE (its unix start times are read in
    the machine's time zone, so waits are compared: same submits, same waits ⇔ same
    starts), and its printed Total Energy (kJ)."""
    ids = [int(line.split(";", 1)[0].split(".", 1)[0])
           for line in batch.read_text().splitlines() if line.strip()]
    run = subprocess.run([str(exe), str(NODES), str(QUEUES), str(batch), str(PRED), str(opt),
                          str(caps), "0", "-1", str(cap)], capture_output=True, text=True,
                         check=True)
    out: dict[int, int] = {}
    section = run.stdout.split("FINAL SCHEDULE", 1)[-1]
    for line in section.splitlines():
        m = _ROW.match(line)
        if m:
            out[ids[int(m.group(1))]] = round(float(m.group(3)))
    energy = _ENERGY.search(section)
    return out, int(energy.group(1)) if energy else -1


def run_ours(batch: Path, preset: str, cap_name: str, units: str) -> Any:
    """dispatchlab with the options of the command line in the module docstring."""
    from dispatchlab import simulate
    from dispatchlab.energy.job_power import job_power_source
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.workload.eurora import EuroraOptions
    from dispatchlab.workload.load import load_workload

    wl = load_workload(batch, eurora=EuroraOptions(units=units))  # type: ignore[arg-type]
    plat = resolve_platform("eurora-64")
    kw: dict[str, Any] = {"power_model": job_power_source("pa-hpc-sim", wl, plat),
                          "count_idle": False}
    if cap_name == "power_caps_100":
        kw["scenario"] = [str(PROFILE)]
    elif cap_name != "none":
        kw["power_cap"] = float(cap_name)
    return wl, simulate(wl, plat, preset, **kw)


def energy_kj(res: Any, wl: Any, cap_name: str) -> tuple[int, int]:
    """Watts × run time (kJ, rounded down) over the jobs ended when the peer's loop stops
    (the last start, or the profile's last cap change if later), and over all jobs."""
    from dispatchlab.energy.pa_hpc_sim_power import peer_job_watts

    watts = peer_job_watts(wl)
    jobs = res.jobs
    run = (jobs["end"] - jobs["start"]).to_numpy()
    stop = int(jobs["start"].max())
    if cap_name == "power_caps_100":
        last_change = max(int(line.split(";")[0]) for line in
                          PROFILE.read_text().splitlines() if ";" in line)
        stop = max(stop, last_change)
    ended = (jobs["end"] <= stop).to_numpy()
    joules = watts * run
    return int(joules[ended].sum()) // 1000, int(joules.sum()) // 1000


def summarize(rows: list[str]) -> list[str]:
    """Per scheduler: cases with every start identical, identical starts, energy equal."""
    out = ["| scheduler | cases | cases with identical starts | identical starts | "
           "comparable energy equal (±1 kJ) |", "|---|---|---|---|---|"]
    for _, preset in SCHEDULERS:
        cells = [[c.strip() for c in r.strip("|").split("|")] for r in rows
                 if f"| {preset} |" in r]
        if not cells:
            continue
        jobs = [int(c[3].split("/")[0]) for c in cells]
        same = [int(c[6]) for c in cells]
        whole = sum(s == j for s, j in zip(same, jobs, strict=True))
        energy = sum(abs(int(c[8]) - int(c[9])) <= 1 for c in cells)
        out.append(f"| {preset} | {len(cells)} | {whole} ({100 * whole / len(cells):.1f} %) | "
                   f"{sum(same)} of {sum(jobs)} ({100 * sum(same) / sum(jobs):.2f} %) | "
                   f"{energy} of {len(cells)} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batches", type=int, default=None, help="first N batches of each size "
                    "(default: all)")
    ap.add_argument("--sizes", nargs="+", default=["100", "200"])
    ap.add_argument("--units", default="chunks", choices=["chunks", "requested"],
                    help="Eurora job units (chunks: the peer's reading)")
    ap.add_argument("--build-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None, help="also write the table here")
    args = ap.parse_args()
    build_dir = args.build_dir or Path(tempfile.mkdtemp(prefix="pa-hpc-sim-"))
    build_dir.mkdir(parents=True, exist_ok=True)
    exe = build(build_dir)
    check_cxx_sort(build_dir)
    lines = ["| batch | scheduler | cap | jobs | PA mean wait s | dispatchlab mean wait s | "
             "same start | max start gap s | PA energy kJ | energy kJ ended | all |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for line in lines:
        print(line)
    for size in args.sizes:
        folder = EURORA / "job_instances" / "historical_traces" / size
        for batch in sorted(folder.iterdir())[:args.batches]:
            for opt, preset in SCHEDULERS:
                for cap_name, caps, cap in CASES:
                    peer, peer_kj = run_peer(exe, batch, opt, caps, cap)
                    wl, res = run_ours(batch, preset, cap_name, args.units)
                    ours = dict(zip(wl.job_id.tolist(), res.jobs["wait"].tolist(),
                                    strict=True))
                    ids = [j for j in ours if j in peer]
                    gaps = np.array([abs(ours[j] - peer[j]) for j in ids])
                    ended, total = energy_kj(res, wl, cap_name)
                    row = (f"| {batch.name} | {preset} | {cap_name} | {len(ids)}/{wl.n_jobs} "
                           f"| {np.mean([peer[j] for j in ids]):.0f} | "
                           f"{res.summary['mean_wait']:.0f} | {int((gaps == 0).sum())} | "
                           f"{int(gaps.max()) if len(gaps) else 0} | {peer_kj} | {ended} | "
                           f"{total} |")
                    lines.append(row)
                    print(row, flush=True)
    summary = summarize(lines[2:])
    print("\n".join(["", *summary]))
    if args.out is not None:
        args.out.write_text("\n".join([*summary, "", *lines]) + "\n")


if __name__ == "__main__":
    main()
