"""Entry point of the ``dispatchlab`` command: imports every subcommand module."""

from __future__ import annotations

from dispatchlab.cli import (  # noqa: F401  (importing registers the commands)
    compare_cmd,
    demo_cmd,
    experiment_cmd,
    results_cmd,
    simulate_cmd,
    trace_info_cmd,
)
from dispatchlab.cli.app import app

__all__ = ["app"]

if __name__ == "__main__":
    app()
