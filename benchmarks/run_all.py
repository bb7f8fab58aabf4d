"""Run every benchmark script in this folder (``make bench``); results go to results/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def command(script: Path, out: Path) -> list[str]:
    """How the runner calls a script: ``--out`` names the results file (every script
    accepts it, and skips with a one-line reason when its data is absent)."""
    return [sys.executable, str(script), "--out", str(out)]


def main() -> int:
    """Run bench_*.py scripts one after the other, each writing results/<name>.md."""
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        out = HERE / "results" / f"{script.stem.removeprefix('bench_')}.md"
        print(f"== {script.name}", flush=True)
        if subprocess.call(command(script, out)) != 0:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
