"""Run one dispatchlab simulation in a fresh process (executed by the project's Python).

Prints one JSON line: wall time of the simulation (``load_swf`` + ``simulate``; the latter
includes the engine loop, the schedule audit and building the per-job and time-series
tables), its phases, jobs, peak RSS of this process. ``--write-jobs FILE`` adds writing
the per-job table as CSV to the timed part (the counterpart of AccaSim's schedule file).
``--starts FILE`` writes ``job_id,start`` (start in the SWF file's time base) after the
timed part, for the cross-check. ``--warmup N`` first simulates the file's first N jobs,
untimed, so one-off per-process costs (loading the compiled kernels, lazy imports) are
paid before the clock starts: the steady state of a process that runs many simulations.
"""

from __future__ import annotations

import argparse
import json
import resource
import time


def peak_rss_kb() -> int:
    """Peak RSS of this process (VmHWM; unlike ``ru_maxrss`` it is not inherited across
    fork+exec from the launching process) and of any child it waited for."""
    hwm = 0
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(hwm, children)


def _kernel_kind() -> str:
    """How the compiled engine's loop was loaded (aot / jit), empty when it did not run."""
    try:
        from dispatchlab.dispatchers.rule_based.compiled.kernel import kernel_kind
    except ImportError:
        return ""
    return kernel_kind()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--swf", required=True)
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--cores", type=int, required=True)
    ap.add_argument("--dispatcher", required=True, help="preset name or key=value spec")
    ap.add_argument("--write-jobs", help="write the per-job table (CSV) here, timed")
    ap.add_argument("--starts", help="write job_id,start CSV here (not timed)")
    ap.add_argument("--profile", help="write a cProfile dump of the timed part here")
    ap.add_argument("--loop", "--engine", dest="engine", default="auto",
                    help="auto | compiled | general (--engine: its old name)")
    ap.add_argument("--warmup", type=int, default=0, metavar="N",
                    help="simulate the first N jobs before the timed run")
    args = ap.parse_args()

    import dispatchlab
    import dispatchlab.dispatchers.catalogue  # the dispatcher catalogue
    from dispatchlab import simulate
    from dispatchlab.workload.swf import SwfOptions, load_swf

    # Imports happen before the clock for both tools: AccaSim's runner imports its
    # scheduler and allocator classes first, this one the dispatcher catalogue (which the
    # registry would otherwise import lazily at the first dispatcher look-up, ~15 ms).

    # AccaSim's reading of SWF: requested processors (allocated when unknown), each a
    # 1-core unit that may share a node with other units; zero-run-time jobs dropped (the
    # aligned input has none). The aligned input has requested time >= run time, so no
    # job is killed at its wall-time, as in AccaSim.
    options = SwfOptions(procs="requested", units="pool", drop_zero_runtime=True)
    platform = f"nodes={args.nodes},cores={args.cores}"

    if args.warmup:
        from dataclasses import replace

        simulate(load_swf(args.swf, replace(options, limit=args.warmup)), platform,
                 args.dispatcher, loop=args.engine)

    prof = None
    if args.profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t0 = time.perf_counter()
    workload = load_swf(args.swf, options)
    t1 = time.perf_counter()
    results = simulate(workload, platform, args.dispatcher, loop=args.engine)
    t2 = time.perf_counter()
    if args.write_jobs:
        results.jobs.to_csv(args.write_jobs, index=False)
    t3 = time.perf_counter()
    if prof is not None:
        prof.disable()
        prof.dump_stats(args.profile)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rec = results.recorder
    out = {
        "wall": t3 - t0,
        "load_seconds": t1 - t0,
        "simulate_seconds": t2 - t1,
        "write_seconds": t3 - t2,
        "engine_seconds": getattr(rec, "sim_seconds", None),
        "decision_seconds": float(sum(rec.decision_cpu)) if rec is not None else None,
        "decisions": len(rec.decision_cpu) if rec is not None else None,
        "jobs": int(workload.n_jobs),
        "started": int((results.jobs["start"] >= 0).sum()),
        "maxrss_kb": peak_rss_kb(),
        "cpu": usage.ru_utime + usage.ru_stime,
        "dispatcher": results.config.get("dispatcher"),
        "engine": results.summary.get("loop", "general"),
        "kernel": _kernel_kind(),
        "version": getattr(dispatchlab, "__version__", None),
    }
    if args.starts:
        shift = int(workload.meta.get("time_shift", 0))
        jobs = results.jobs
        with open(args.starts, "w") as fh:
            fh.write("job_id,start\n")
            for jid, s in zip(jobs["job_id"].tolist(), jobs["start"].tolist(), strict=True):
                fh.write(f"{jid},{s + shift if s >= 0 else -1}\n")
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
