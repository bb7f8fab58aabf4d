"""Run every benchmark script in this folder (``make bench``); results go to results/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    """Run bench_*.py scripts one after the other, each writing results/<name>.md."""
    failed = 0
    for script in sorted(HERE.glob("bench_*.py")):
        out = HERE / "results" / f"{script.stem.removeprefix('bench_')}.md"
        print(f"== {script.name}", flush=True)
        rc = subprocess.call([sys.executable, str(script), "--out", str(out)])
        failed += rc != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
