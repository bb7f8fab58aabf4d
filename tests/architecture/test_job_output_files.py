"""Scripts that submit Slurm jobs say where the jobs' output goes, so that running one from
the repository leaves no ``slurm-<id>.out`` behind (eight empty ones were once committed)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: a line of a shell script calling ``sbatch`` with options (not in a comment)
_SBATCH = re.compile(r"^[^#\n]*(?<![/\w-])sbatch\s+-.*$", re.MULTILINE)
_OUTPUT_SET = re.compile(r"(^|\s)(-o|--output)[\s=]|SBATCH_OUTPUT=")


def _shell_scripts() -> list[Path]:
    found = []
    for folder in ("tests", "tools", "experiments", "benchmarks", ".ci"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and (path.suffix == ".sh" or path.read_bytes()[:2] == b"#!"):
                found.append(path)
    return found


def test_every_script_submitting_jobs_directs_their_output() -> None:
    careless = []
    for path in _shell_scripts():
        text = path.read_text(errors="replace")
        if "SBATCH_OUTPUT=" in text:
            continue
        careless += [f"{path.relative_to(REPO)}: {line.strip()}"
                     for line in _SBATCH.findall(text) if not _OUTPUT_SET.search(line)]
    assert not careless, "sbatch without -o (or SBATCH_OUTPUT):\n" + "\n".join(careless)


def test_no_job_output_files_at_the_root() -> None:
    assert not sorted(p.name for p in REPO.glob("slurm-*.out"))
