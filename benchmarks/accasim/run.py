#!/usr/bin/env python
"""Side-by-side benchmark and cross-check of dispatchlab against AccaSim 1.1.3.

Installs AccaSim into its own virtual environment (``.venv-accasim``, never the project's),
writes the inputs (a seeded synthetic SWF workload and aligned slices of real traces),
runs both simulators on the same files — every run in a fresh process, repeats
interleaved so the machine's noise hits both — checks that FIFO and SJF give identical
per-job start times, and writes ``RESULTS.md`` and ``results.csv``.

    .venv/bin/python benchmarks/accasim/run.py                 # full run (RESULTS.md here)
    .venv/bin/python benchmarks/accasim/run.py --quick         # smoke run (work/quick/)

See README.md in this folder.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import inputs  # noqa: E402

from dispatchlab.traces import resolve_source  # noqa: E402

ACCASIM_VERSION = "1.1.3"
DEFAULT_TRACE = Path("trace:SDSC-BLUE")  # a catalogued trace (docs/traces.md), or a file

#: policy → (AccaSim dispatcher, dispatchlab preset, per-job starts must match)
POLICIES: dict[str, tuple[str, str, bool]] = {
    "fifo": ("fifo", "fifo", True),
    "sjf": ("sjf", "sjf", True),
    "easy": ("ebf", "easy", False),
}
ACCASIM_NAMES = {"fifo": "FirstInFirstOut + FirstFit", "sjf": "ShortestJobFirst + FirstFit",
                 "ebf": "EASYBackfilling + FirstFit"}

#: The four measured configurations: (tool, mode).
CONFIGS = (
    ("accasim", "no schedule file"),
    ("accasim", "schedule file"),
    ("dispatchlab", "in memory"),
    ("dispatchlab", "+ jobs.csv"),
    ("dispatchlab", "in memory, warm"),
    ("dispatchlab", "in memory, general engine"),
)
#: Which AccaSim mode each dispatchlab mode is compared with.
PAIR = {"in memory": "no schedule file", "+ jobs.csv": "schedule file",
        "in memory, warm": "no schedule file", "in memory, general engine": "no schedule file"}
#: Jobs simulated, untimed, before the timed run in the *warm* mode.
WARMUP_JOBS = 500


# ---- environment -----------------------------------------------------------------------

def accasim_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_accasim(venv: Path, base_python: str) -> str:
    """Create the AccaSim venv and install AccaSim there when missing; return its version."""
    py = accasim_python(venv)
    probe = [str(py), "-c", "from importlib.metadata import version; print(version('accasim'))"]
    if py.exists():
        r = subprocess.run(probe, capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip() == ACCASIM_VERSION:
            return r.stdout.strip()
    print(f"installing accasim=={ACCASIM_VERSION} into {venv} …", flush=True)
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", f"accasim=={ACCASIM_VERSION}"],
                   check=True)
    r = subprocess.run(probe, capture_output=True, text=True, check=True)
    return r.stdout.strip()


def pip_versions(py: Path | str, packages: list[str]) -> dict[str, str]:
    code = ("import json, sys\nfrom importlib.metadata import version, PackageNotFoundError\n"
            "out = {'python': sys.version.split()[0]}\n"
            f"for p in {packages!r}:\n"
            "    try:\n        out[p] = version(p)\n"
            "    except PackageNotFoundError:\n        pass\n"
            "print(json.dumps(out))")
    r = subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def machine_info() -> dict[str, str]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return {"cpu": cpu, "cpus": str(os.cpu_count()), "memory": mem,
            "os": f"{platform.system()} {platform.release()}", "host": platform.node()}


def git_state() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + (" + uncommitted changes under src/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


def dispatchlab_presets(py: str) -> list[str]:
    r = subprocess.run([py, "-c", "import dispatchlab.dispatchers as d; "
                        "print(' '.join(d.presets()))"], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else []


# ---- one measured run ------------------------------------------------------------------

@dataclass
class Run:
    """One process: its report, its wall time seen from outside and its peak RSS."""

    report: dict[str, Any]
    process_wall: float
    maxrss_kb: int
    error: str = ""


def measure(cmd: list[str], log: Path) -> Run:
    """Run ``cmd`` in a fresh process and collect its JSON report.

    Peak RSS comes from the runner itself (VmHWM + waited children): ``ru_maxrss`` from
    ``wait4`` would include this (large) launching process, which Linux carries over
    fork+exec.
    """
    with open(log, "w") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        out = p.stdout.read() if p.stdout else ""
        _, status, _ = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = log.read_text()[-2000:]
        return Run({}, wall, 0, error=f"exit {p.returncode}: {tail.strip()}")
    report = json.loads(lines[-1])
    return Run(report, wall, int(report["maxrss_kb"]))


# ---- start-time cross-check ------------------------------------------------------------

_SCHED = re.compile(r"^([^;]+);[^;]*;[^_]*__.*__(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d);")


def accasim_starts(path: Path, offset: int) -> dict[int, int]:
    """Job id → start (SWF time base) from AccaSim's ``sched-*`` file (UTC date-times)."""
    starts: dict[int, int] = {}
    with open(path) as fh:
        for line in fh:
            m = _SCHED.match(line)
            if not m:
                continue
            t = dt.datetime.strptime(m.group(2), "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.UTC)
            starts[int(m.group(1))] = int(t.timestamp()) - offset
    return starts


def dispatchlab_starts(path: Path) -> dict[int, int]:
    with open(path) as fh:
        return {int(r["job_id"]): int(r["start"]) for r in csv.DictReader(fh)}


def compare(a: dict[int, int], b: dict[int, int]) -> tuple[int, list[str]]:
    """Number of jobs whose start differs (or is missing on one side) and a few examples."""
    bad = sorted(j for j in set(a) | set(b) if a.get(j) != b.get(j))
    return len(bad), [f"job {j}: AccaSim {a.get(j)} vs dispatchlab {b.get(j)}" for j in bad[:5]]


def mean_wait(starts: dict[int, int], submit: dict[int, int]) -> float:
    waits = [starts[j] - submit[j] for j in submit if j in starts]
    return sum(waits) / len(waits) if waits else float("nan")


def swf_submits(path: Path) -> dict[int, int]:
    out: dict[int, int] = {}
    with open(path) as fh:
        for line in fh:
            if line.startswith(";") or not line.strip():
                continue
            f = line.split()
            out[int(f[0])] = int(f[1])
    return out


# ---- the benchmark ---------------------------------------------------------------------

@dataclass
class Cell:
    """All runs of one (input, policy, tool, mode)."""

    input: str
    policy: str
    tool: str
    mode: str
    jobs: int = 0
    walls: list[float] = field(default_factory=list)
    process_walls: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    phases: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.walls) if self.walls else float("nan")

    @property
    def jobs_per_s(self) -> float:
        return self.jobs / self.median if self.walls else float("nan")


def run_policy(args: argparse.Namespace, info: inputs.InputInfo, policy: str,
               preset: str, work: Path, acc_py: Path) -> tuple[dict[tuple[str, str], Cell],
                                                             dict[str, Any]]:
    acc_policy, _, must_match = POLICIES[policy]
    swf = Path(info.path)
    cells = {(tool, mode): Cell(info.name, policy, tool, mode) for tool, mode in CONFIGS}
    check: dict[str, Any] = {"compared": must_match, "mismatches": [], "examples": [],
                             "accasim_runs_agree": True}
    submits = swf_submits(swf)
    ref_acc: dict[int, int] | None = None
    dl_ref: dict[int, int] | None = None
    base = work / f"{info.name}-{policy}"
    base.mkdir(parents=True, exist_ok=True)
    for rep in range(args.repeats):
        order = list(CONFIGS)
        k = rep % len(order)
        order = order[k:] + order[:k]  # rotate so no configuration always runs first
        for tool, mode in order:
            cell = cells[(tool, mode)]
            tag = f"{tool}-{re.sub(r'[^a-z]+', '_', mode)}-{rep}"
            log = base / f"{tag}.log"
            if tool == "accasim":
                res_dir = base / f"accasim-{rep}-{'out' if mode == 'schedule file' else 'no'}"
                shutil.rmtree(res_dir, ignore_errors=True)
                cmd = [str(acc_py), str(HERE / "accasim_runner.py"), "--swf", str(swf),
                       "--nodes", str(info.nodes), "--cores", str(info.cores_per_node),
                       "--policy", acc_policy, "--results", str(res_dir)]
                if mode == "schedule file":
                    cmd.append("--schedule-output")
            else:
                starts = base / f"dl-starts-{tag}.csv"
                cmd = [sys.executable, str(HERE / "dispatchlab_runner.py"), "--swf", str(swf),
                       "--nodes", str(info.nodes), "--cores", str(info.cores_per_node),
                       "--dispatcher", preset, "--starts", str(starts)]
                if mode == "+ jobs.csv":
                    cmd += ["--write-jobs", str(base / f"dl-jobs-{rep}.csv")]
                if mode == "in memory, warm":
                    cmd += ["--warmup", str(WARMUP_JOBS)]
                if mode == "in memory, general engine":
                    cmd += ["--engine", "general"]
            run = measure(cmd, log)
            if run.error:
                cell.errors.append(run.error)
                print(f"  {info.name} {policy} {tool} [{mode}] #{rep}: FAILED {run.error[:300]}",
                      flush=True)
                continue
            rep_ = run.report
            cell.jobs = rep_["jobs"]
            cell.walls.append(rep_["wall"])
            cell.process_walls.append(run.process_wall)
            cell.rss_kb.append(run.maxrss_kb)
            if tool == "dispatchlab":
                cell.phases.append({k: rep_[k] for k in ("load_seconds", "simulate_seconds",
                                                         "write_seconds", "engine_seconds",
                                                         "decision_seconds", "engine",
                                                         "kernel") if
                                    rep_.get(k) is not None})
                got = dispatchlab_starts(starts)
                if dl_ref is None:
                    dl_ref = got
                elif got != dl_ref:
                    check["dispatchlab_runs_agree"] = False
            elif mode == "schedule file":
                got = accasim_starts(Path(rep_["schedule_file"]), rep_["time_offset"])
                if ref_acc is None:
                    ref_acc = got
                elif got != ref_acc:
                    check["accasim_runs_agree"] = False
            else:
                shutil.rmtree(res_dir, ignore_errors=True)
            print(f"  {info.name:>10} {policy:>4} {tool:>11} [{mode:>16}] #{rep}: "
                  f"{rep_['wall']:7.3f} s  {run.maxrss_kb / 1024:6.0f} MB", flush=True)
    if ref_acc is not None and dl_ref is not None:
        n, ex = compare(ref_acc, dl_ref)
        check["mismatches"] = n
        check["examples"] = ex
        check["accasim_jobs"] = len(ref_acc)
        check["dispatchlab_jobs"] = len(dl_ref)
        check["accasim_mean_wait"] = mean_wait(ref_acc, submits)
        check["dispatchlab_mean_wait"] = mean_wait(dl_ref, submits)
    else:
        check["mismatches"] = None
    return cells, check


def build_inputs(args: argparse.Namespace, work: Path) -> list[inputs.InputInfo]:
    infos = []
    if not args.no_synthetic:
        infos.append(inputs.synthetic(work / f"synthetic-{args.jobs}-s{args.seed}.swf",
                                      jobs=args.jobs, seed=args.seed, load=args.load))
    for tr in args.trace:
        path = Path(resolve_source(tr))  # trace:NAME → a checked local copy
        stem = path.name.split(".swf")[0]
        infos.append(inputs.trace_slice(path, work / f"{stem}-{args.skip}-{args.limit}.swf",
                                        limit=args.limit, skip=args.skip, nodes=args.nodes,
                                        cores=args.cores))
    return infos


# ---- profile ---------------------------------------------------------------------------

def profile_dispatchlab(info: inputs.InputInfo, policy: str, preset: str,
                        work: Path) -> list[str]:
    """cProfile'd dispatchlab runs (cold and warm): where the time goes, as Markdown."""
    lines: list[str] = []
    for warm in (False, True):
        lines += _profile_one(info, policy, preset, work, warm)
        lines.append("")
    return lines


def _profile_one(info: inputs.InputInfo, policy: str, preset: str, work: Path,
                 warm: bool) -> list[str]:
    import pstats

    base = work / f"{info.name}-{policy}"
    base.mkdir(parents=True, exist_ok=True)
    kind = "warm" if warm else "cold"
    prof = base / f"dispatchlab-{kind}.prof"
    cmd = [sys.executable, str(HERE / "dispatchlab_runner.py"), "--swf", info.path,
           "--nodes", str(info.nodes), "--cores", str(info.cores_per_node),
           "--dispatcher", preset, "--profile", str(prof)]
    if warm:
        cmd += ["--warmup", str(WARMUP_JOBS)]
    run = measure(cmd, base / f"profile-{kind}.log")
    if run.error or not prof.exists():
        return [f"(profile of {policy} failed: {run.error[:200]})"]
    st = pstats.Stats(str(prof))
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, dict[Any, Any]]] = \
        st.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in raw.values())

    def cum(pred: Any) -> float:
        # cumulative time of the outermost matching frames (no double counting)
        keys = {k for k in raw if pred(k)}
        inner = {k for k in keys if any(c in keys for c in raw[k][4])}
        return sum(raw[k][3] for k in keys - inner)

    def pct(x: float) -> str:
        return f"{x:.3f} s ({x / total:.0%})"

    src = "dispatchlab" + os.sep
    load = cum(lambda k: k[2] == "load_swf")
    sim = cum(lambda k: k[2] == "simulate" and k[0].endswith("simulation.py"))
    run_ = cum(lambda k: (k[2] == "run" and k[0].endswith(os.path.join("engine", "simulator.py")))
               or (k[2] == "run_slots" and src in k[0]))
    decide = cum(lambda k: k[2] == "decide" and src in k[0])
    jit = cum(lambda k: k[2] == "_compile_for_args" and "numba" in k[0])
    imports = cum(lambda k: k[2] == "_find_and_load")
    audit = cum(lambda k: k[2] == "audit" and src in k[0])
    tables = cum(lambda k: k[2] == "from_recorder" and src in k[0])
    what = ("warm process (the first "
            f"{WARMUP_JOBS} jobs simulated before, untimed)" if warm else "cold process")
    lines = [
        f"**{preset}, {what}** — cProfile of one run on {info.name} ({info.jobs} jobs); the "
        f"profiler inflates Python-heavy parts, read the shares. Total {total:.3f} s:",
        "",
        f"- `load_swf`: {pct(load)}",
        f"- `simulate`: {pct(sim)}, of which",
        f"  - engine (`Simulator.run` or the compiled `run_slots`): {pct(run_)}, of which "
        f"dispatcher `decide` (general engine only): {pct(decide)}",
        f"  - first-call loading of the cached Numba kernels (`_compile_for_args`, wherever "
        f"it is first reached): {pct(jit)}; imports done during the run (mostly Numba's, "
        f"e.g. scipy.linalg for its BLAS check): {pct(imports)}",
        f"  - schedule audit: {pct(audit)}; per-job and time-series tables "
        f"(`Results.from_recorder`): {pct(tables)}",
        "",
        "| own s | cum s | calls | function (top 12 by own time) |",
        "|---:|---:|---:|---|",
    ]
    top = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)[:12]
    for (fn, line, name), (_, nc, tt, ct, _) in top:
        short = fn.split("site-packages" + os.sep)[-1].split("src" + os.sep)[-1]
        short = short.split("lib" + os.sep + "python3")[-1]
        lines.append(f"| {tt:.3f} | {ct:.3f} | {nc} | `{short}:{line}({name})` |")
    return lines


# ---- report ----------------------------------------------------------------------------

def fmt_rss(cell: Cell) -> str:
    return f"{max(cell.rss_kb) / 1024:.0f}" if cell.rss_kb else "—"


def speedup(cells: list[Cell], c: Cell) -> float | None:
    """dispatchlab jobs/s ÷ AccaSim jobs/s in the paired mode (None for AccaSim cells)."""
    if c.tool != "dispatchlab" or not c.walls:
        return None
    for a in cells:
        if (a.input, a.policy, a.tool, a.mode) == (c.input, c.policy, "accasim", PAIR[c.mode]):
            return c.jobs_per_s / a.jobs_per_s if a.walls else None
    return None


def target_ratios(cells: list[Cell], policy: str) -> dict[str, float | None]:
    """Synthetic-workload speed-ups of ``policy``, cold and warm."""
    out: dict[str, float | None] = {}
    for mode in ("in memory", "in memory, warm"):
        hit = [c for c in cells if c.input == "synthetic" and c.policy == policy
               and c.tool == "dispatchlab" and c.mode == mode]
        out[mode] = speedup(cells, hit[0]) if hit else None
    return out


def write_outputs(out: Path, meta: dict[str, Any], infos: list[inputs.InputInfo],
                  cells: list[Cell], checks: dict[tuple[str, str], dict[str, Any]],
                  targets: dict[str, float], profiles: dict[str, list[str]]) -> None:
    out.mkdir(parents=True, exist_ok=True)

    def ratio(c: Cell) -> float | None:
        return speedup(cells, c)

    with open(out / "results.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["input", "policy", "tool", "mode", "jobs", "runs", "wall_median_s",
                    "wall_min_s", "wall_max_s", "process_wall_median_s", "peak_rss_mb",
                    "jobs_per_s", "speedup_vs_accasim", "start_mismatches", "walls_s"])
        for c in cells:
            chk = checks.get((c.input, c.policy), {})
            r = ratio(c)
            w.writerow([c.input, c.policy, c.tool, c.mode, c.jobs, len(c.walls),
                        f"{c.median:.4f}", f"{min(c.walls):.4f}" if c.walls else "",
                        f"{max(c.walls):.4f}" if c.walls else "",
                        f"{statistics.median(c.process_walls):.4f}" if c.process_walls else "",
                        fmt_rss(c), f"{c.jobs_per_s:.1f}", f"{r:.2f}" if r else "",
                        chk.get("mismatches") if chk.get("compared") else "not compared",
                        " ".join(f"{x:.4f}" for x in c.walls)])
    (out / "results.json").write_text(json.dumps({
        "meta": meta, "inputs": [i.as_dict() for i in infos],
        "cells": [c.__dict__ for c in cells],
        "checks": {f"{k[0]}/{k[1]}": v for k, v in checks.items()},
    }, indent=1, default=str))

    md: list[str] = []
    md.append("# dispatchlab vs AccaSim — side-by-side benchmark and cross-check\n")
    md.append("Generated by `benchmarks/accasim/run.py` (see README.md there). Both simulators "
              "run on the same SWF files, every run in a fresh process, the repeats "
              "interleaved in one invocation so the machine's noise hits both.\n")
    md.append("## Setup\n")
    md.append(f"- Date: {meta['date']}")
    m = meta["machine"]
    md.append(f"- Machine: {m['cpu']}, {m['cpus']} CPUs, {m['memory']} RAM, {m['os']}")
    md.append(f"- Load average (1, 5, 15 min) before / after: {meta['loadavg_before']} / "
              f"{meta['loadavg_after']}")
    busy = max(float(x) for x in (meta["loadavg_before"].split()[1:2]
                                  + meta["loadavg_after"].split()[1:2]))
    if busy > 1.0:
        md.append("  — other work shared the machine during the run: single runs vary (see "
                  "the min–max column); ratios use the medians of interleaved runs")
    av, dv = meta["accasim_env"], meta["dispatchlab_env"]
    md.append(f"- AccaSim {av.get('accasim')} (own venv `.venv-accasim`, Python {av['python']}, "
              f"sortedcontainers {av.get('sortedcontainers', '?')}), run through "
              "`accasim_runner.py` which restores `collections.Mapping` before importing it")
    md.append(f"- dispatchlab {dv.get('dispatchlab')} at {meta['git']} (Python {dv['python']}, "
              f"numpy {dv.get('numpy', '?')}, pandas {dv.get('pandas', '?')}, "
              f"numba {dv.get('numba', '—')})")
    md.append(f"- Command: `{meta['command']}`")
    md.append(f"- Repeats: {meta['repeats']} per configuration; wall time = median\n")
    md.append("Inputs (aligned SWF files written by the harness; both tools read the same "
              "file):\n")
    for i in infos:
        drops = ", ".join(f"{v} {k}" for k, v in i.dropped.items() if v) or "nothing dropped"
        md.append(f"- **{i.name}**: {i.jobs} jobs — {i.description}. Cleaning: {drops}.")
    md.append("")
    md.append("What is timed: AccaSim — building its `Simulator` and `start_simulation()` "
              "(reads the SWF lazily, simulates, and in *schedule file* mode writes "
              "`sched-<workload>`); dispatchlab — `load_swf` + `simulate()` (engine, schedule "
              "audit, per-job and time-series tables), and in *+ jobs.csv* mode also writing "
              "the per-job table as CSV; *in memory, warm* first simulates the first "
              f"{WARMUP_JOBS} jobs untimed in the same process (one-off per-process costs such "
              "as loading compiled kernels paid before the clock starts: the steady state of "
              "a process running many simulations); *in memory, general engine* forces "
              "`simulate(..., loop=\"general\")` (the Python event loop; the other "
              "dispatchlab modes run the compiled engine where it applies). Interpreter "
              "start-up and imports are "
              "excluded for both (process wall time is in results.csv). Peak RSS: VmHWM of "
              "each run's process, or of a child it forked if larger (AccaSim's writer). "
              "Speed-up = dispatchlab jobs/s ÷ AccaSim jobs/s in the paired mode (*in memory* "
              "and *in memory, warm* ↔ *no schedule file*, *+ jobs.csv* ↔ *schedule file*).\n")
    md.append("## Results\n")
    md.append("| input | policy | tool | mode | jobs | wall s (median) | min–max s | peak RSS MB "
              "| jobs/s | speed-up | per-job starts |")
    md.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    for c in cells:
        chk = checks.get((c.input, c.policy), {})
        if not chk.get("compared"):
            st = "speed only (AccaSim EBF ≠ EASY)"
        elif chk.get("mismatches") is None:
            st = "not checked"
        else:
            st = f"{chk['mismatches']} mismatches"
        r = ratio(c)
        tool = ("AccaSim " + ACCASIM_NAMES[POLICIES[c.policy][0]] if c.tool == "accasim"
                else f"dispatchlab `{meta['presets'].get(c.policy, c.policy)}`")
        if c.errors and not c.walls:
            md.append(f"| {c.input} | {c.policy} | {tool} | {c.mode} | — | FAILED | | | | | "
                      f"{c.errors[0][:80]} |")
            continue
        md.append(f"| {c.input} | {c.policy} | {tool} | {c.mode} | {c.jobs} | {c.median:.3f} | "
                  f"{min(c.walls):.3f}–{max(c.walls):.3f} | {fmt_rss(c)} | "
                  f"{c.jobs_per_s:,.0f} | {f'{r:.1f}×' if r else ''} | "
                  f"{st if c.tool == 'dispatchlab' else ''} |")
    md.append("")
    md.append("## Cross-check of per-job start times\n")
    md.append("| input | policy | compared | jobs (AccaSim / dispatchlab) | mismatches | "
              "mean wait s (AccaSim / dispatchlab) |")
    md.append("|---|---|---|---|---:|---|")
    for (inp, pol), chk in checks.items():
        mw = (f"{chk.get('accasim_mean_wait', float('nan')):.1f} / "
              f"{chk.get('dispatchlab_mean_wait', float('nan')):.1f}")
        jobs = f"{chk.get('accasim_jobs', '—')} / {chk.get('dispatchlab_jobs', '—')}"
        if chk.get("compared"):
            mism = chk.get("mismatches")
            mism_s = "—" if mism is None else str(mism)
        else:
            mism_s = f"({chk.get('mismatches')} differ; not expected to match)"
        md.append(f"| {inp} | {pol} | {'yes' if chk.get('compared') else 'speed only'} | "
                  f"{jobs} | {mism_s} | {mw} |")
        for ex in chk.get("examples", [])[:3] if chk.get("compared") else []:
            md.append(f"|  |  |  | {ex} |  |  |")
    md.append("")
    md.append("## dispatchlab time breakdown (median over runs, seconds)\n")
    md.append("| input | policy | mode | engine | load_swf | simulate | of which engine loop | "
              "of which dispatcher | simulate − engine loop (setup incl. one-off kernel "
              "loading when cold, audit, tables) | write CSV |")
    md.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    for c in cells:
        if c.tool != "dispatchlab" or not c.phases:
            continue

        def med(k: str, c: Cell = c) -> float:
            v = [p[k] for p in c.phases if k in p]
            return statistics.median(v) if v else float("nan")

        eng = str(c.phases[-1].get("engine", "general"))
        if c.phases[-1].get("kernel"):
            eng += f" ({c.phases[-1]['kernel']})"
        md.append(f"| {c.input} | {c.policy} | {c.mode} | {eng} | {med('load_seconds'):.3f} | "
                  f"{med('simulate_seconds'):.3f} | {med('engine_seconds'):.3f} | "
                  f"{med('decision_seconds'):.3f} | "
                  f"{med('simulate_seconds') - med('engine_seconds'):.3f} | "
                  f"{med('write_seconds'):.3f} |")
    md.append("")
    md.append("## Targets\n")
    for pol, want in targets.items():
        rs = target_ratios(cells, pol)
        r, w = rs["in memory"], rs["in memory, warm"]
        verdict = "not measured" if r is None else ("met" if r >= want else "**missed**")
        warm = "" if w is None else f" (warm process: {w:.1f}×)"
        md.append(f"- {pol.upper()} on the synthetic workload: ≥ {want:g}× AccaSim "
                  f"({'EBF' if pol == 'easy' else pol.upper()}) throughput — measured "
                  f"{'—' if r is None else f'{r:.1f}×'}{warm}: {verdict}")
    md.append("")
    if profiles:
        md.append("## Where dispatchlab's time goes\n")
        for pol, lines in profiles.items():
            md.append(f"### {pol.upper()} on the synthetic workload\n")
            md.extend(lines)
            md.append("")
    md.append("## Notes\n")
    md.extend(NOTES)
    if meta.get("extra_notes"):
        md.append("")
        md.extend(meta["extra_notes"])
    (out / "RESULTS.md").write_text("\n".join(md) + "\n")


NOTES = [
    "- Model alignment (see README.md): AccaSim turns a p-processor SWF job into p one-core "
    "requests that may share nodes (dispatchlab `SwfOptions(units=\"pool\", "
    "procs=\"requested\")`), runs jobs for their actual run time and never kills them (the "
    "aligned input has requested time ≥ run time), and dispatches at submissions and "
    "completions, completions first (as dispatchlab's engine). Jobs with zero run time are "
    "dropped from the inputs: AccaSim frees their cores only at the *next* event, dispatchlab "
    "at the same timestamp (a second decision round), so starts would diverge.",
    "- FIFO = AccaSim `FirstInFirstOut` (stable sort by submit time, strict: stops at the "
    "first job that does not fit) ↔ dispatchlab `fifo`. SJF = AccaSim `ShortestJobFirst` "
    "(stable sort by requested time, ties in arrival order, strict) ↔ dispatchlab `sjf`. "
    "With 1-core units every free core is usable, so first-fit's node order cannot change a "
    "start time; it only changes which node a unit lands on.",
    "- EASY is compared on speed only: AccaSim's `EASYBackfilling` computes a reservation "
    "for the blocked head job but calls the allocator with `reserved_nodes=[]`, so every "
    "later job that fits now is started, whether or not it delays the head job — not "
    "textbook EASY. dispatchlab `easy` protects the reservation, so start times differ.",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=20_000, help="synthetic jobs (default 20000)")
    ap.add_argument("--seed", type=int, default=1, help="synthetic workload seed")
    ap.add_argument("--load", type=float, default=0.98, help="synthetic offered load")
    ap.add_argument("--no-synthetic", action="store_true", help="only the given traces")
    ap.add_argument("--trace", action="append", default=None,
                    help=f"real SWF trace (repeatable; default {DEFAULT_TRACE.name})")
    ap.add_argument("--no-trace", action="store_true", help="synthetic workload only")
    ap.add_argument("--limit", type=int, default=20_000, help="jobs per trace slice")
    ap.add_argument("--skip", type=int, default=0, help="jobs skipped before the slice")
    ap.add_argument("--nodes", type=int, help="trace machine nodes (default from header)")
    ap.add_argument("--cores", type=int, help="trace machine cores per node (default header)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per configuration (≥ 3)")
    ap.add_argument("--policies", default="fifo,sjf,easy", help="subset of fifo,sjf,easy")
    ap.add_argument("--dispatcher", action="append", default=[], metavar="POLICY=SPEC",
                    help="dispatchlab dispatcher for a policy (default: the preset of the "
                         "same name), e.g. sjf=sjf")
    ap.add_argument("--profile", action="store_true",
                    help="always add a cProfile breakdown of dispatchlab FIFO/EASY (it is "
                         "added anyway when a speed target is missed)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 2000 synthetic jobs, 1500-job trace slice, 1 repeat")
    ap.add_argument("--out", help="where RESULTS.md / results.csv go (default: this folder; "
                                  "work/quick with --quick)")
    ap.add_argument("--work", default=str(HERE / "work"), help="scratch folder")
    ap.add_argument("--venv", default=str(HERE / ".venv-accasim"), help="AccaSim venv")
    ap.add_argument("--python", default=shutil.which("python3") or "python3",
                    help="interpreter used to create the AccaSim venv")
    args = ap.parse_args()
    if args.quick:
        args.jobs, args.limit, args.repeats = min(args.jobs, 2000), min(args.limit, 1500), 1
    if args.trace is None:
        args.trace = [] if args.no_trace else [str(DEFAULT_TRACE)]
    out = Path(args.out) if args.out else (HERE / "work" / "quick" if args.quick else HERE)
    work = Path(args.work) / ("quick" if args.quick else "full")
    work.mkdir(parents=True, exist_ok=True)

    venv = Path(args.venv)
    acc_version = ensure_accasim(venv, args.python)
    acc_py = accasim_python(venv)
    presets_now = dispatchlab_presets(sys.executable)
    overrides = dict(s.split("=", 1) for s in args.dispatcher)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    chosen: dict[str, str] = {}
    notes: list[str] = []
    for pol in policies:
        if pol not in POLICIES:
            raise SystemExit(f"unknown policy {pol!r} (fifo, sjf, easy)")
        spec = overrides.get(pol, POLICIES[pol][1])
        if "=" not in spec and spec not in presets_now:
            notes.append(f"- dispatchlab preset `{spec}` does not exist yet (presets: "
                         f"{', '.join(presets_now) or 'none'}); {pol.upper()} skipped.")
            print(notes[-1], flush=True)
            continue
        chosen[pol] = spec

    infos = build_inputs(args, work)
    meta: dict[str, Any] = {
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "machine": machine_info(),
        "loadavg_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "accasim_env": pip_versions(acc_py, ["accasim", "sortedcontainers", "numpy"]),
        "dispatchlab_env": pip_versions(sys.executable, ["dispatchlab", "numpy", "pandas",
                                                         "numba"]),
        "git": git_state(),
        "command": " ".join([Path(sys.executable).name, *map(str, sys.argv)]),
        "repeats": args.repeats,
        "presets": chosen,
        "accasim_version": acc_version,
        "extra_notes": notes,
    }
    print(f"AccaSim {acc_version}; dispatchlab presets {presets_now}; inputs: "
          + ", ".join(f"{i.name} ({i.jobs} jobs)" for i in infos), flush=True)

    all_cells: list[Cell] = []
    checks: dict[tuple[str, str], dict[str, Any]] = {}
    for info in infos:
        for pol, spec in chosen.items():
            cells, check = run_policy(args, info, pol, spec, work, acc_py)
            all_cells.extend(cells.values())
            checks[(info.name, pol)] = check
            if check.get("compared"):
                print(f"  {info.name} {pol}: {check.get('mismatches')} per-job start "
                      f"mismatches {check.get('examples', [])[:2]}", flush=True)
    meta["loadavg_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    targets = {"fifo": 50.0, "easy": 20.0}
    profiles: dict[str, list[str]] = {}
    synthetic = [i for i in infos if i.name == "synthetic"]
    for pol, want in targets.items():
        r = target_ratios(all_cells, pol)["in memory"]
        if synthetic and pol in chosen and (args.profile or (r is not None and r < want)):
            print(f"profiling dispatchlab {pol} on the synthetic workload …", flush=True)
            profiles[pol] = profile_dispatchlab(synthetic[0], pol, chosen[pol], work)
    write_outputs(out, meta, infos, all_cells, checks, targets, profiles)
    print(f"wrote {out / 'RESULTS.md'} and {out / 'results.csv'}")
    bad = [k for k, v in checks.items() if v.get("compared") and v.get("mismatches")]
    if bad:
        print(f"per-job start mismatches in {bad}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
