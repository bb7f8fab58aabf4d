"""Run one AccaSim 1.1.3 simulation (executed by ``.venv-accasim/bin/python``, not the project's).

AccaSim imports ``collections.Mapping``, removed in Python 3.10; the alias is restored here
before AccaSim is imported, so the installed package stays untouched.

Prints one JSON line: wall time of the simulation (construction + ``start_simulation``,
i.e. reading the SWF, simulating and, when enabled, writing the schedule file), jobs,
peak RSS of this process.
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import json
import os
import resource
import time

# AccaSim 1.1.3 predates Python 3.10: restore the alias it imports.
for _name in ("Mapping", "MutableMapping", "Sequence", "Iterable", "Callable"):
    if not hasattr(collections, _name):
        setattr(collections, _name, getattr(collections.abc, _name))

# Schedule files carry local date-times; UTC makes them map back to epoch seconds exactly.
os.environ["TZ"] = "UTC"
time.tzset()

#: Added by AccaSim to every SWF submit time (``start_time`` of the system config). AccaSim
#: mishandles a simulated time of 0 (``if not self.current_time`` in EventManager.load_event
#: resets the clock), so times must never reach 0.
TIME_OFFSET = 1_000_000

POLICIES = ("fifo", "sjf", "ebf")


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--swf", required=True)
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--cores", type=int, required=True)
    ap.add_argument("--policy", choices=POLICIES, required=True)
    ap.add_argument("--results", required=True, help="AccaSim results folder")
    ap.add_argument("--schedule-output", action="store_true",
                    help="write AccaSim's per-job schedule file (sched-<workload>)")
    args = ap.parse_args()

    from accasim.base.allocator_class import FirstFit
    from accasim.base.scheduler_class import EASYBackfilling, FirstInFirstOut, ShortestJobFirst
    from accasim.base.simulator_class import Simulator

    os.makedirs(args.results, exist_ok=True)
    sys_config = os.path.join(args.results, "sys_config.json")
    with open(sys_config, "w") as fh:
        json.dump({"groups": {"g0": {"core": args.cores}}, "resources": {"g0": args.nodes},
                   "equivalence": {"processor": {"core": 1}}, "start_time": TIME_OFFSET}, fh)

    t0 = time.perf_counter()
    allocator = FirstFit()
    if args.policy == "fifo":
        dispatcher = FirstInFirstOut(allocator)
    elif args.policy == "sjf":
        dispatcher = ShortestJobFirst(allocator)
    else:
        dispatcher = EASYBackfilling(allocator)
    sim = Simulator(args.swf, sys_config, dispatcher, RESULTS_FOLDER_PATH=args.results,
                    scheduling_output=args.schedule_output, statistics_output=False,
                    show_statistics=False, pprint_output=False, benchmark_output=False,
                    LOG_LEVEL="WARNING")
    sim.start_simulation()
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out = {
        "wall": wall,
        "jobs": sim.loaded_jobs,
        "dispatched": sim.dispatched_jobs,
        "rejected": sim.rejected_jobs,
        "maxrss_kb": peak_rss_kb(),
        "cpu": usage.ru_utime + usage.ru_stime,
        "time_offset": TIME_OFFSET,
        "schedule_file": (os.path.join(args.results, "sched-" + os.path.basename(args.swf))
                          if args.schedule_output else None),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
