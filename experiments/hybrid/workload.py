"""The three Curie workloads of thesis ch. 7 (§7.6): the ``curie-thesis`` generator's
levels ``ch7-low``, ``ch7-medium`` and ``ch7-high`` (see its module doc for the windows),
optionally written to ``data/`` as Parquet.

    .venv/bin/python experiments/hybrid/workload.py
"""

from __future__ import annotations

from pathlib import Path

from dispatchlab.workload.load import load_workload, save_workload
from dispatchlab.workload.workload import Workload

HERE = Path(__file__).resolve().parent
#: name → days of submissions
CH7 = {"low": 30, "medium": 30, "high": 23}


def spec(name: str, seed: int = 0) -> str:
    """The generator spec of the ch. 7 workload ``name``."""
    return f"gen:curie-thesis:level=ch7-{name},seed={seed}"


def build(name: str, seed: int = 0) -> Workload:
    """The ch. 7 workload ``name`` (job power drawn with ``seed``)."""
    return load_workload(spec(name, seed))


def main() -> None:
    out = HERE / "data"
    out.mkdir(exist_ok=True)
    for name in CH7:
        wl = build(name)
        path = save_workload(wl, out / f"curie-ch7-{name}.parquet")
        print(f"{name}: {wl.n_jobs} jobs, offered load {wl.meta['offered_load']:.3f} -> {path}")


if __name__ == "__main__":
    main()
