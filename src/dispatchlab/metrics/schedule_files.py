"""A run's schedule in other tools' layouts (Batsim's ``jobs.csv``, SWF), written next to
its results by ``simulate --out`` and by the runs of ``compare`` and experiments."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from dispatchlab.metrics.results import Results

#: ``--schedule-format`` value → file written in the results folder.
SCHEDULE_FILES = {"batsim": "out_jobs.csv", "swf": "schedule.swf"}


def write_schedules(res: Results, folder: Path, formats: Sequence[str]) -> None:
    """The schedule in each asked-for layout, in ``folder``."""
    for fmt in dict.fromkeys(formats):
        if fmt == "batsim":
            from dispatchlab.metrics.batsim_schedule import write_batsim_jobs

            write_batsim_jobs(res, folder / SCHEDULE_FILES[fmt])
        else:
            from dispatchlab.workload.swf_writer import write_schedule_swf

            assert res.recorder is not None
            write_schedule_swf(res.jobs, res.recorder.workload, folder / SCHEDULE_FILES[fmt],
                               platform=res.recorder.platform)


def schedule_files(res: Results, formats: Sequence[str]) -> dict[str, bytes]:
    """The files :func:`write_schedules` writes, as file name → content (a worker returns
    them to the process that stores the run)."""
    if not formats:
        return {}
    with tempfile.TemporaryDirectory(prefix="dispatchlab-schedule-") as tmp:
        write_schedules(res, Path(tmp), formats)
        return {p.name: p.read_bytes() for p in sorted(Path(tmp).iterdir())}
