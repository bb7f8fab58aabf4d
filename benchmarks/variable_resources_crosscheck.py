"""Cross-check of the variable-capacity ``authors`` semantics against the authors' own
simulator (Perotin et al., github.com/lucasperotin/variableResources).

From a git copy of that repository (``--repo``, default: the local read-only mirror or
``$DISPATCHLAB_VR_REPO``) it

1. builds ``simu.cc`` unmodified (``g++ -O3``, as their readme says) into a cache folder;
2. makes the quantile file with their ``genData.py`` (on ``7D_604800.txt``, as their
   ``master.py``) and the capacity walks: model ``authors`` = their ``vargen.py`` run
   unmodified by ``python3`` with a seeded ``random`` (``Av24 Ra8 Fr1200``, 3,000,000 s,
   a row every period, no-op rows included); model ``slides`` = dispatchlab's slides walk
   (``engine.capacity.walk_counts``) written in their format, a row every period;
3. runs, on every 7-day and 14-day Borg window of the repository (14-day runs count the
   second week, as ``master.py``'s ``wins = 2``), both simulators on the same files for
   ff-aware (``FF 0``), target-stretch (``BSS``), target-asap (``BS1``) and
   packed-target-asap (``BP1``) with ``master.py``'s parameters (152 machines, 24 cores,
   ``alwUse`` 16, ``7 80 95``), and compares their result lines;
4. ff-unaware (``FF 1``: a machine order shuffled by ``random_shuffle`` seeded by the
   clock) as distributions over runs on a few windows: quantiles and a two-sample KS test.

Usage: ``python benchmarks/variable_resources_crosscheck.py [--walks 3] [--workers 2]
[--unaware-runs 20] [--unaware-windows 7D_864000] [--report-only]``; writes
``benchmarks/results/variable_resources.{md,jsonl}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.dispatchers.variable_capacity.authors import simulate_authors
from dispatchlab.dispatchers.variable_capacity.authors_sim import AuthorsSetup
from dispatchlab.engine.capacity import walk_counts
from dispatchlab.workload.vc_authors import read_authors_jobs, read_quantiles

MIRROR = Path("/work/.mirror/lucasperotin+variableResources/repo")
HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
#: strategy → simu.cc heuristic fields after ``wins`` (``master.py``'s AlgPar "7 80 95")
CPP_ARGS = {"ff-aware": "FF {wins} 0", "ff-unaware": "FF {wins} 1",
            "target-stretch": "algo {wins} {data} BSS 7 80 95",
            "target-asap": "algo {wins} {data} BS1 7 80 95",
            "packed-target-asap": "algo {wins} {data} BP1 7 80 95"}
EXACT = ("ff-aware", "target-stretch", "target-asap", "packed-target-asap")
WEEK = 604800
VAR_LEN, VAR_MEAN, VAR_RANGE, VAR_PERIOD = 3_000_000, 24, 8, 1200


def repo_dir(given: str | None = None) -> Path | None:
    """The authors' git directory: ``given``, ``$DISPATCHLAB_VR_REPO``, or the mirror."""
    for cand in (given, os.environ.get("DISPATCHLAB_VR_REPO"), str(MIRROR)):
        if cand and Path(cand).exists():
            return Path(cand)
    return None


def git_show(repo: Path, path: str) -> bytes:
    """One file of the repository's HEAD."""
    return subprocess.run(["git", "-C", str(repo), "show", f"HEAD:{path}"], check=True,
                          capture_output=True).stdout


def head_commit(repo: Path) -> str:
    """The repository's HEAD commit."""
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def prepare(repo: Path, folder: Path) -> Path:
    """``folder`` with simu.cc built (``SIM``), vargen.py, genData.py, the Borg windows and
    ``DATA.txt``; built once per commit."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("simu.cc", "vargen.py", "genData.py"):
        (folder / name).write_bytes(git_show(repo, name))
    sim = folder / "SIM"
    if not sim.exists():
        subprocess.run(["g++", "simu.cc", "-o", "SIM", "-O3"], cwd=folder, check=True,
                       capture_output=True)
    traces = folder / "borgSO"
    traces.mkdir(exist_ok=True)
    for name in windows(repo):
        (traces / f"{name}.txt").write_bytes(
            git_show(repo, f"files/traces/borgSO/{name}.txt"))
    data = folder / "DATA.txt"
    if not data.exists():
        subprocess.run([sys.executable, "genData.py", "borgSO/7D_604800.txt", "DATA.txt",
                        "1000", str(WEEK), str(WEEK)], cwd=folder, check=True)
    return folder


def windows(repo: Path) -> list[str]:
    """The Borg windows of the repository (``7D_<start>``, ``14D_<start>``)."""
    out = subprocess.run(["git", "-C", str(repo), "ls-tree", "--name-only", "HEAD",
                          "files/traces/borgSO/"], check=True, capture_output=True,
                         text=True).stdout.split()
    names = [Path(p).stem for p in out if Path(p).name[0].isdigit()]
    return sorted(names, key=lambda n: (int(n.split("D_")[0]), int(n.split("_")[1])))


def window_setup(name: str) -> tuple[int, int, int]:
    """``(start, window, wins)`` of a window file, as ``master.py`` runs it."""
    days, start = name.split("D_")
    return int(start), int(days) * 86400, int(days) // 7


def make_walk(folder: Path, model: str, seed: int, length: int = VAR_LEN) -> Path:
    """A variation file of ``model`` (see the module docstring) up to ``length`` s, made
    once."""
    tail = "" if length == VAR_LEN else f"_{length}"
    out = folder / "walks" / f"{model}_{seed}{tail}.txt"
    if out.exists():
        return out
    out.parent.mkdir(exist_ok=True)
    if model == "authors":
        code = ("import random, sys; random.seed(int(sys.argv[1])); "
                "sys.argv = ['vargen.py'] + sys.argv[2:]; "
                "exec(compile(open('vargen.py').read(), 'vargen.py', 'exec'))")
        subprocess.run([sys.executable, "-c", code, str(seed), str(out), str(VAR_MEAN),
                        str(VAR_RANGE), str(VAR_PERIOD), str(length)], cwd=folder, check=True)
    else:
        n = -(-length // VAR_PERIOD)
        counts = walk_counts(VAR_MEAN, VAR_RANGE, n, seed, model="slides")
        rows = [str(VAR_MEAN)] + [f"{(k + 1) * VAR_PERIOD} {int(c)}"
                                  for k, c in enumerate(counts[1:])]
        out.write_text("\n".join(rows) + "\n")
    return out


def run_cpp(folder: Path, jobs: Path, var: Path, start: int, window: int, wins: int,
            strategies: list[str], work: Path) -> dict[str, tuple[str, float]]:
    """simu.cc on one argument file (one line per strategy): its result line (the numbers,
    from the area on) and the wall time, by strategy."""
    work.mkdir(parents=True, exist_ok=True)
    lines = []
    for s in strategies:
        rest = CPP_ARGS[s].format(wins=wins, data=folder / "DATA.txt")
        lines.append(f"{jobs} 152 16 24 {var} {start} {window} {rest} {work / s}.out")
        (work / f"{s}.out").unlink(missing_ok=True)
    out: dict[str, tuple[str, float]] = {}
    for s, line in zip(strategies, lines, strict=True):
        args = work / f"{s}.args"
        args.write_text(line + "\n")
        t0 = time.perf_counter()
        subprocess.run([str(folder / "SIM"), str(args)], cwd=work, check=True,
                       capture_output=True, timeout=1800)
        dt = time.perf_counter() - t0
        text = (work / f"{s}.out").read_text().split()
        out[s] = (" ".join(text[3:]), dt)
    return out


def run_ours(folder: Path, jobs: Path, var: Path, start: int, window: int, wins: int,
             strategy: str, seed: int = 0, clock_seed: int | None = None
             ) -> tuple[str, dict[str, Any], float]:
    """The authors semantics on the same files: result line, figures, wall time."""
    setup = AuthorsSetup(strategy, start, window,
                         metrics_from=start + window - window // wins if wins > 1 else None,
                         seed=seed, clock_seed=clock_seed)
    t0 = time.perf_counter()
    res = simulate_authors(read_authors_jobs(jobs), var, setup,
                           read_quantiles(folder / "DATA.txt"))
    return res.line(), res.as_dict(), time.perf_counter() - t0


def figures(line: str) -> dict[str, float]:
    """The numbers of a result line by name."""
    keys = ("area", "util_done", "util_total", "waste", "max_stretch", "mean_stretch",
            "completed_share", "waste_per_abort")
    vals = [float(x) for x in line.split()]
    return dict(zip(keys, vals, strict=True))


def one_instance(task: tuple[str, str, str, int]) -> list[dict[str, Any]]:
    """Both simulators, the four deterministic strategies, on one window and walk."""
    folder_s, name, model, seed = task
    folder = Path(folder_s)
    done = folder / "runs" / f"{name}_{model}_{seed}.json"
    if done.exists():  # made by an earlier, interrupted run of the harness
        rows_done: list[dict[str, Any]] = json.loads(done.read_text())
        return rows_done
    start, window, wins = window_setup(name)
    jobs = folder / "borgSO" / f"{name}.txt"
    var = make_walk(folder, model, seed)
    cpp = run_cpp(folder, jobs, var, start, window, wins, list(EXACT),
                  folder / "runs" / f"{name}_{model}_{seed}")
    rows = []
    for s in EXACT:
        ours_line, _, t_ours = run_ours(folder, jobs, var, start, window, wins, s)
        a, o = figures(cpp[s][0]), figures(ours_line)
        rows.append({"window": name, "model": model, "walk": seed, "strategy": s,
                     "authors_line": cpp[s][0], "ours_line": ours_line,
                     "identical": cpp[s][0] == ours_line,
                     "goodput_authors": a["util_total"] / a["area"],
                     "goodput_ours": o["util_total"] / o["area"],
                     "waste_authors": a["waste"], "waste_ours": o["waste"],
                     "seconds_authors": round(cpp[s][1], 2), "seconds_ours": round(t_ours, 2)})
    done.write_text(json.dumps(rows))
    return rows


def unaware_run(task: tuple[str, str, int]) -> tuple[str, float, float, float, int]:
    """ff-unaware once in each simulator (theirs seeded by the clock, ours by ``k``):
    the window, both goodputs, the wall clock when theirs started, and the clock second
    with which ours (``clock_seed``: glibc's rand, libstdc++'s random_shuffle) prints
    their very line (-1: none of the seconds the run spanned)."""
    folder_s, name, k = task
    folder = Path(folder_s)
    done = folder / "runs" / f"unaware_{name}_{k}.json"
    if done.exists():
        got = json.loads(done.read_text())
        match = int(got[4]) if len(got) > 4 else -2  # -2: not tried (older cache)
        return str(got[0]), float(got[1]), float(got[2]), float(got[3]), match
    start, window, wins = window_setup(name)
    jobs = folder / "borgSO" / f"{name}.txt"
    var = make_walk(folder, "authors", 0)
    t0 = time.time()
    line = run_cpp(folder, jobs, var, start, window, wins, ["ff-unaware"],
                   folder / "runs" / f"unaware_{name}_{k}")["ff-unaware"][0]
    t1 = time.time()
    a = figures(line)
    o = figures(run_ours(folder, jobs, var, start, window, wins, "ff-unaware", k)[0])
    match = -1
    for sec in range(int(t0), int(t1) + 1):
        if run_ours(folder, jobs, var, start, window, wins, "ff-unaware",
                    clock_seed=sec)[0] == line:
            match = sec
            break
    out = (name, a["util_total"] / a["area"], o["util_total"] / o["area"], t0, match)
    done.write_text(json.dumps(out))
    return out


def unaware_summary(name: str, runs: list[tuple[str, float, float, float, int]]
                    ) -> dict[str, Any]:
    """Both distributions of one window and a two-sample KS test."""
    from scipy.stats import ks_2samp

    theirs = [r[1] for r in runs if r[0] == name]
    ours = [r[2] for r in runs if r[0] == name]
    seconds = sorted(int(r[3]) for r in runs if r[0] == name)
    ks = ks_2samp(theirs, ours)
    tried = [r[4] for r in runs if r[0] == name and r[4] != -2]
    return {"window": name, "model": "authors", "walk": 0, "runs": len(theirs),
            "goodput_authors": theirs, "goodput_ours": ours,
            "distinct_clock_seeds": len(set(seconds)),
            "clock_seed_tried": len(tried),
            "clock_seed_identical": sum(m >= 0 for m in tried),
            "ks_statistic": float(ks.statistic), "ks_pvalue": float(ks.pvalue)}


def report(rows: list[dict[str, Any]], unaware: list[dict[str, Any]], meta: dict[str, Any]
           ) -> str:
    """The Markdown report."""
    out = ["# variableResources cross-check (authors semantics vs. the authors' simu.cc)", "",
           (f"Runs made by `{meta['runs_made_by']}`; report " if meta["runs_made_by"]
            else "Made ") +
           f"by `{meta['command']}` on {meta['date']} (load average {meta['load']}), "
           f"authors' repository at commit `{meta['commit']}`, simu.cc built with "
           f"`g++ -O3` ({meta['gxx']}), unmodified. Raw rows: "
           "[variable_resources.jsonl](variable_resources.jsonl).", ""]
    n_ident = sum(r["identical"] for r in rows)
    models = sorted({r["model"] for r in rows})
    gaps = [abs(r["goodput_ours"] - r["goodput_authors"]) * 100 for r in rows]
    wrel = [abs(r["waste_ours"] - r["waste_authors"]) / r["waste_authors"]
            if r["waste_authors"] else abs(r["waste_ours"]) for r in rows]
    out += ["## Deterministic strategies", "",
            f"{len(rows)} runs ({len({(r['window'], r['model'], r['walk']) for r in rows})} "
            f"window × walk instances × {len(EXACT)} strategies): **{n_ident} of "
            f"{len(rows)} result lines identical** as simu.cc prints them (6 significant "
            f"digits: area, utilDone, utilTot, waste, max stretch, mean stretch, completed "
            f"share, waste per abort). Largest goodput gap {max(gaps, default=0):.4f} points "
            f"(target ≤ 0.2), largest aborted-volume gap {100 * max(wrel, default=0):.4f} % "
            "(target ≤ 2 %).", "",
            "Walks run per window: how many, and their seeds' indices in brackets (of the "
            "requested ones; a stopped run leaves the later walks out):", "",
            "| window | " + " | ".join(f"{m} walks" for m in models)
            + " |", "|---|" + "---|" * len(models)]
    for w in sorted({r["window"] for r in rows}, key=lambda n: window_setup(n)[1::-1]):
        done = [sorted({r["walk"] for r in rows if r["window"] == w and r["model"] == m})
                for m in models]
        out.append(f"| {w} | " + " | ".join(
            f"{len(d)} ({', '.join(map(str, d))})" if d else "0" for d in done) + " |")
    out += ["",
            "| window | walk | strategy | goodput theirs | goodput ours | aborted core-h "
            "theirs | ours | line identical | s theirs / ours |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['window']} | {r['model']} {r['walk']} | {r['strategy']} | "
                   f"{100 * r['goodput_authors']:.3f} % | {100 * r['goodput_ours']:.3f} % | "
                   f"{r['waste_authors'] / 3600:,.0f} | {r['waste_ours'] / 3600:,.0f} | "
                   f"{'yes' if r['identical'] else '**no**'} | {r['seconds_authors']} / "
                   f"{r['seconds_ours']} |")
    if unaware:
        out += ["", "## ff-unaware (random machine order) as distributions", "",
                "Theirs: `random_shuffle` seeded by the clock (`srand(time(NULL))`), one "
                "process per run (runs that start in the same second share a seed: distinct "
                "seeds are counted); ours: the order drawn from "
                "`numpy.random.default_rng(seed)`, seeds 0, 1, …. Goodput over the runs:", "",
                "| window | walk | runs (distinct clock seeds) | theirs min / median / max | "
                "ours min / median / max | KS statistic | KS p-value | identical line with "
                "their clock second |",
                "|---|---|---|---|---|---|---|---|"]
        for u in unaware:
            a = np.percentile(u["goodput_authors"], [0, 50, 100]) * 100
            b = np.percentile(u["goodput_ours"], [0, 50, 100]) * 100
            out.append(f"| {u['window']} | {u['model']} {u['walk']} | {u['runs']} "
                       f"({u['distinct_clock_seeds']}) | "
                       f"{a[0]:.2f} / {a[1]:.2f} / {a[2]:.2f} % | {b[0]:.2f} / {b[1]:.2f} / "
                       f"{b[2]:.2f} % | {u['ks_statistic']:.3f} | {u['ks_pvalue']:.3f} | "
                       + (f"{u['clock_seed_identical']} of {u['clock_seed_tried']} |"
                          if u["clock_seed_tried"] else "not tried |"))
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the cross-check (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", help="the authors' git directory")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "dispatchlab" / "vr"),
                    help="where simu.cc is built and the walks are written")
    ap.add_argument("--walks", type=int, default=3, help="walks of each model per window")
    ap.add_argument("--models", default="authors,slides")
    ap.add_argument("--windows", default="all", help="comma-separated names, or all")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--unaware-runs", type=int, default=20)
    ap.add_argument("--unaware-windows", default="7D_864000")
    ap.add_argument("--out", default=str(RESULTS / "variable_resources"))
    ap.add_argument("--report-only", action="store_true",
                    help="write the report from the runs already in the cache")
    ap.add_argument("--runs-made-by", default="",
                    help="with --report-only: the command (and when) that ran them")
    args = ap.parse_args(argv)
    repo = repo_dir(args.repo)
    if repo is None or shutil.which("g++") is None:
        print("needs the authors' repository (--repo) and g++", file=sys.stderr)
        return 2
    commit = head_commit(repo)
    folder = prepare(repo, Path(args.cache) / commit[:12])
    names = windows(repo) if args.windows == "all" else args.windows.split(",")
    models = args.models.split(",")
    # a first walk of the first model on every window first, then the next model, then
    # the further walks (an interrupted run covers every window)
    tasks = [(str(folder), n, m, s) for s in range(args.walks) for m in models for n in names]
    names = names or windows(repo)
    if args.report_only:  # what earlier (maybe interrupted) runs left in the cache
        tasks = [t for t in tasks
                 if (folder / "runs" / f"{t[1]}_{t[2]}_{t[3]}.json").exists()]
    for m in models:
        for s in range(args.walks):
            make_walk(folder, m, s)
    if not args.report_only:  # compile the kernel once, before the pool
        run_ours(folder, folder / "borgSO" / f"{names[0]}.txt",
                 make_walk(folder, models[0], 0), *window_setup(names[0]), "ff-aware")
    rows: list[dict[str, Any]] = []
    u_names = args.unaware_windows.split(",") if args.unaware_runs > 0 else []
    u_tasks = [(str(folder), n, k) for n in u_names for k in range(args.unaware_runs)]
    if args.report_only:
        u_tasks = [t for t in u_tasks
                   if (folder / "runs" / f"unaware_{t[1]}_{t[2]}.json").exists()]
        u_names = sorted({t[1] for t in u_tasks})
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        u_future = pool.map(unaware_run, u_tasks)
        for part in pool.map(one_instance, tasks):
            rows.extend(part)
            print(f"{part[0]['window']} {part[0]['model']} {part[0]['walk']}: "
                  f"{sum(r['identical'] for r in part)}/{len(part)} identical", flush=True)
        u_runs = list(u_future)
    unaware = [unaware_summary(n, u_runs) for n in u_names]
    meta = {"command": "python benchmarks/variable_resources_crosscheck.py "
            + " ".join(argv if argv is not None else sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": " ".join(f"{x:.1f}" for x in os.getloadavg()), "commit": commit,
            "gxx": subprocess.run(["g++", "--version"], capture_output=True,
                                  text=True).stdout.splitlines()[0],
            "python": platform.python_version(), "runs_made_by": args.runs_made_by}
    out = Path(args.out)
    with out.with_suffix(".jsonl").open("w") as fh:
        fh.write(json.dumps({"meta": meta}) + "\n")
        for r in rows:
            fh.write(json.dumps(r) + "\n")
        for u in unaware:
            fh.write(json.dumps({"unaware": u}) + "\n")
    out.with_suffix(".md").write_text(report(rows, unaware, meta))
    print(f"{sum(r['identical'] for r in rows)}/{len(rows)} identical; "
          f"written {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
