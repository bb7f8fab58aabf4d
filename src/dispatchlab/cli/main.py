"""Entry point of the ``dispatchlab`` command: imports every subcommand module."""

from __future__ import annotations

from dispatchlab.cli import demo_cmd, simulate_cmd  # noqa: F401  (registers commands)
from dispatchlab.cli.app import app

__all__ = ["app"]

if __name__ == "__main__":
    app()
