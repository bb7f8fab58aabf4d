"""``describe()`` of every preset and of a set of specs, as JSON: the recorded form that
results files and run hashes depend on. ``python -m tests.dispatchers.describe_dump``
rewrites the fixture ``tests/data/describe_presets.json`` (run on the code whose output is
the reference); ``test_describe_stable.py`` compares today's output with it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "describe_presets.json"

#: specs beyond the presets: each family's key=value form, with changes and wrappers
SPECS = [
    "order=sjf,select=easy,alloc=best-fit,depth=50",
    "order=wfp3, select=conservative, depth=5, alloc=energy, estimate=real",
    "order=fifo,select=top-jobs,depth=2",
    "order=ljf,select=strict",
    "order=profit,select=nonstrict",
    "preset=pbs-fifo,estimate=real",
    "order=sjf,select=easy+poweroff:30",
    "easy+poweroff",
    "cp=hcp3",
    "cp=pcp1,objective=wait,m=50",
    "cp=hcp3,estimate=heuristic-request",
    "cp=hcp3-real,delta=0.05,delta_max=0.8,wall_limit=2",
    "dec=dec-feedback,feedback=8,delta_max=0.64",
    "dec=dec",
    "dardis=hybrid-dardis70,last_resort=nodes",
    "dardis=dardis-throughput,retries=6",
    "dardis=hybrid-dardis70,planner=multi,cooling=air,temperature=summer,prices=cheap",
    "offline=heuristic,cooling=air,temperature=summer,prices=cheap,seed=1",
    "offline=multi,cooling=air,temperature=summer,prices=expensive,seed=1",
]


def dump() -> dict[str, Any]:
    """``{"presets": {name: describe()}, "specs": {spec: describe()}}``, JSON-normalized."""
    from dispatchlab.dispatchers.registry import get_dispatcher, presets

    out: dict[str, Any] = {"presets": {}, "specs": {}}
    for name, entry in presets().items():
        out["presets"][name] = entry.factory().describe()
    for spec in SPECS:
        out["specs"][spec] = get_dispatcher(spec).describe()
    return json.loads(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(dump(), indent=1, sort_keys=True) + "\n")
    sys.stdout.write(f"wrote {FIXTURE}\n")
