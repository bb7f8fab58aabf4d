"""Entry point of the ``dispatchlab`` command (subcommands are imported on demand)."""

from __future__ import annotations

from dispatchlab.cli.app import app

__all__ = ["app"]

if __name__ == "__main__":
    app()
