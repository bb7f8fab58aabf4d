"""What every ``bench_*.py`` script shares with the runner (``run_all.py``, ``make bench``).

Each script accepts ``--out FILE`` (where the runner wants its results) and ``--check-data``
(parse the arguments, look for the data, say whether it would run, stop: what the tests
run instead of the benchmark). When its data is absent (the shared traces are not on user
machines) a script says so in one ``skipped:`` line and exits 0: skipped, not failed.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
from pathlib import Path
from typing import Any, NoReturn, TextIO

CHECK = "--check-data"


def runner_options(ap: argparse.ArgumentParser, *, out: bool = True) -> None:
    """Add ``--check-data`` (and ``--out`` when the script has none of its own)."""
    if out:
        ap.add_argument("--out", type=Path, default=None,
                        help="also write the results here (run_all.py: results/NAME.md)")
    ap.add_argument(CHECK, action="store_true",
                    help="only parse the arguments and look for the data, then stop")


def skip(reason: str) -> NoReturn:
    """One line saying why the benchmark does not run, and exit status 0."""
    print(f"skipped: {reason}", flush=True)
    raise SystemExit(0)


def ready(args: argparse.Namespace, *needs: Path | str) -> None:
    """Skip unless every file or folder (a Path) and catalogued trace (a name) in ``needs``
    is here; with ``--check-data``, stop after saying it would run."""
    for need in needs:
        if isinstance(need, Path):
            if not need.exists():
                skip(f"{need} is absent (the shared traces, ../shared/traces beside the "
                     "checkout)")
            continue
        from dispatchlab.traces.errors import TraceError
        from dispatchlab.traces.resolve import resolve

        try:
            resolve(need, fetch=False)
        except TraceError:
            skip(f"trace {need} is not present locally (`dispatchlab traces fetch {need}`)")
    if getattr(args, "check_data", False):
        print("ready: the arguments parse and the data is here", flush=True)
        raise SystemExit(0)


class _Tee:
    """Standard output that is also kept, to be written to ``--out`` at exit."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.kept: list[str] = []

    def write(self, text: str) -> int:
        self.kept.append(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def keep_output(out: Path | None) -> None:
    """For scripts that print their results: also write what they print to ``out`` (at
    exit, through a temporary file renamed into place)."""
    if out is None:
        return
    tee = _Tee(sys.stdout)
    sys.stdout = tee  # type: ignore[assignment]

    def write() -> None:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".tmp-{os.getpid()}-{out.name}")
        tmp.write_text("".join(tee.kept))
        os.replace(tmp, out)

    atexit.register(write)
