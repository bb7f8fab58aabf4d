"""Cross-check against PA-HPC-SIM (Borghesi's power-aware simulator, the paper authors' own).

Builds ``online_dispatcher`` from ``../shared/peers/pa-hpc-sim`` with g++, runs its list
scheduler (``opt_type`` 0) and its EASY (1) on Eurora historical batches (``nodes_#64``,
``system_queues``, the power predictions) with no cap, 3000 W, 2000 W and the
``power_caps_100`` profile, runs dispatchlab in a compatibility setting, and prints per
case the mean wait of both, how many jobs start at the same second, and the largest gap.

Compatibility setting, from PA-HPC-SIM's code (``OnlineDispatcher.hpp``, ``Predictor.hpp``):
job power is the prediction found by the peer's exact-string lookup (none, on these
batches: see :func:`compat_power`) rounded up, split into a whole number of W per node (at least
1, at most 400 W a node) and multiplied back; jobs without a prediction get its fallback
formula ``40 W × nodes + 62 W × GPUs + 115 W × MICs``; no idle power; the profile's caps
apply from the batch's first arrival (before its first line, the command-line cap).

The peer runs with ``dynamic_control`` −1: with 0 (the earlier setting of this harness) its
RAPL-like power sharing runs at every periodic power measurement and lowers the *current*
power of running jobs to per-node shares of the cap (``enforce_dyn_power_cap``, mode 0:
power lowered, duration unchanged); its list scheduler counts running jobs at that lowered
power and new jobs at their prediction, so more jobs fit under the cap than their predicted
power allows. With −1 only the dispatcher's own cap check applies, which is what
dispatchlab models.

The list scheduler is compared with :class:`pa_hpc_sim_compat.PaListScheduler` (its
dispatching triggers, job order with ``std::sort``'s tie order, node order, integer power
check; ``--plain`` compares ``order=sjf,select=nonstrict`` instead) and EASY with
``easy`` (its ``BackFillingScheduler`` is not matched one for one).

Usage: ``python benchmarks/pa_hpc_sim_crosscheck.py [--batches 3] [--sizes 100 200]
[--dynamic-control 0] [--plain]``.
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import tempfile
from pathlib import Path

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
SCHEDULERS = [(0, "list", "order=sjf,select=nonstrict"), (1, "easy", "easy")]
_ROW = re.compile(r"^(\d+)\tST: (\d+).*\tWait Time: ([-\d.e+]+)")


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
    """:func:`cxx_sort.cxx_sort` must order ties exactly as this machine's ``std::sort``."""
    from cxx_sort import cxx_sort

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


def peer_waits(exe: Path, batch: Path, opt: int, caps: Path, cap: int,
               dynamic: int = -1) -> dict[int, int]:
    """Job id → wait (s) from the peer's FINAL SCHEDULE (its unix start times are read in
    the machine's time zone, so waits are compared: same submits, same waits ⇔ same
    starts)."""
    ids = [int(line.split(";", 1)[0].split(".", 1)[0])
           for line in batch.read_text().splitlines() if line.strip()]
    run = subprocess.run([str(exe), str(NODES), str(QUEUES), str(batch), str(PRED), str(opt),
                          str(caps), "0", str(dynamic), str(cap)], capture_output=True,
                         text=True,
                         check=True)
    out: dict[int, int] = {}
    section = run.stdout.split("FINAL SCHEDULE", 1)[-1]
    for line in section.splitlines():
        m = _ROW.match(line)
        if m:
            out[ids[int(m.group(1))]] = round(float(m.group(3)))
    return out


def compat_power(wl: object, batch: Path) -> np.ndarray:
    """PA-HPC-SIM's job power: rounded prediction (or its fallback), whole W per node.

    Its ``Predictor`` looks a job up by the exact id string of the job file (``498605``)
    among the prediction file's ids (``498605.node129``): on the historical batches none
    matches, so every job gets the fallback formula — the peer ignores the predictions."""
    raw = [line.split(";", 1)[0] for line in batch.read_text().splitlines() if line.strip()]
    table = {}
    for line in PRED.read_text().splitlines():
        if ";" in line:
            key, value = line.split(";", 1)
            table[key] = float(value)
    res = list(wl.resources)  # type: ignore[attr-defined]
    req = wl.req  # type: ignore[attr-defined]
    units = wl.units  # type: ignore[attr-defined]
    out = []
    for j in range(len(raw)):
        n = int(units[j])
        gpus = n * int(req[j, res.index("gpu")]) if "gpu" in res else 0
        mics = n * int(req[j, res.index("mic")]) if "mic" in res else 0
        p = table.get(raw[j])
        p = 40.0 * n + 62.0 * gpus + 115.0 * mics if p is None else p
        p = max(math.ceil(p), 1)
        per = min(max(math.ceil(p / n), 1), 400)
        out.append(float(per * n))
    return np.array(out)


def main() -> None:
    from dispatchlab import simulate
    from dispatchlab.energy.job_power import JobPower
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.workload.load import load_workload
    from pa_hpc_sim_compat import PaListScheduler

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--sizes", nargs="+", default=["100", "200"])
    ap.add_argument("--build-dir", type=Path, default=None)
    ap.add_argument("--dynamic-control", type=int, default=-1,
                    help="the peer's dynamic_control argument (-1: none; 0: its RAPL-like "
                         "power sharing)")
    ap.add_argument("--plain", action="store_true",
                    help="compare the list scheduler with order=sjf,select=nonstrict")
    args = ap.parse_args()
    build_dir = args.build_dir or Path(tempfile.mkdtemp(prefix="pa-hpc-sim-"))
    build_dir.mkdir(parents=True, exist_ok=True)
    exe = build(build_dir)
    check_cxx_sort(build_dir)
    plat = resolve_platform("eurora-64")
    print("| batch | scheduler | cap | jobs | PA mean wait s | dispatchlab mean wait s | "
          "same start | max start gap s |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        folder = EURORA / "job_instances" / "historical_traces" / size
        for batch in sorted(folder.iterdir())[:args.batches]:
            wl = load_workload(batch)
            watts = compat_power(wl, batch)
            assert len(watts) == wl.n_jobs
            for opt, label, disp in SCHEDULERS:
                for cap_name, caps, cap in CASES:
                    peer = peer_waits(exe, batch, opt, caps, cap, args.dynamic_control)
                    src = JobPower(wl, watts, source="pa-hpc-sim compat")
                    dispatcher: object = disp
                    if label == "list" and not args.plain:
                        dispatcher = PaListScheduler(watts)
                    kw: dict[str, object] = {"power_model": src, "count_idle": False}
                    if cap != NO_CAP:
                        kw["power_cap"] = float(cap)
                    if caps == PROFILE:
                        kw["scenario"] = PROFILE
                    res = simulate(wl, plat, dispatcher, **kw)  # type: ignore[arg-type]
                    ours = dict(zip(wl.job_id.tolist(), res.jobs["wait"].tolist(),
                                    strict=True))
                    ids = [j for j in ours if j in peer]
                    gaps = np.array([abs(ours[j] - peer[j]) for j in ids])
                    pa_wait = np.mean([peer[j] for j in ids])
                    print(f"| {batch.name} | {label} | {cap_name} | {len(ids)}/{wl.n_jobs} | "
                          f"{pa_wait:.0f} | {res.summary['mean_wait']:.0f} | "
                          f"{int((gaps == 0).sum())} | {int(gaps.max()) if len(gaps) else 0} |",
                          flush=True)


if __name__ == "__main__":
    main()
