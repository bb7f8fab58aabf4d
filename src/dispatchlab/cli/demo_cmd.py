"""``dispatchlab demo``: a real simulation on data bundled with the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Annotated

import typer

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import friendly_errors
from dispatchlab.cli.simulate_cmd import console, print_summary
from dispatchlab.platform.from_workload import platform_for
from dispatchlab.simulation import simulate
from dispatchlab.workload.swf import load_swf

DEMO_TRACE = "KTH-SP2-1996-2.1-cln.slice.swf.gz"


def demo_trace() -> Path:
    """Path of the real trace slice shipped with the package."""
    return Path(str(resources.files("dispatchlab") / "data" / "traces" / DEMO_TRACE))


@app.command("demo")
@friendly_errors
def demo_command(
    out: Annotated[Path, typer.Option(help="Where to write the results.")] = Path("demo-output"),
) -> None:
    """Simulate the bundled real trace slice (KTH SP2) with strict FIFO."""
    wl = load_swf(demo_trace())
    plat, how = platform_for(wl)
    console.print(f"workload: {DEMO_TRACE} ({wl.n_jobs:,} jobs), platform {plat.name} ({how})")
    res = simulate(wl, plat, "fifo")
    res.save(out / "fifo")
    print_summary(res, title="fifo on the KTH SP2 slice")
    console.print(f"results written to {out / 'fifo'}")
