"""Every ``dispatchlab …`` shell example of README.md and docs/*.md, run or checked.

Examples come from fenced ``sh``/``bash``/``console``/plain blocks and indented blocks (a
trailing ``\\`` joins lines; ``[optional]`` brackets are dropped, keeping what they hold).
Each example is

- **run** in-process in a temporary folder, its traces resolved through the catalogue
  (``trace:NAME``: a local copy or the cache; tests never download) and at most
  :data:`CAP` jobs (``--limit`` added or lowered: the command stays the documented one on a
  slice); a trace that is not present locally skips the example, naming it;
- or, when it holds a placeholder (``trace.parquet``, ``my-platform.toml``, ``...``,
  ``<file>``, ``OUT_DIR``) or is listed in :data:`SLOW` (with why), **parsed** against the
  command's options (every option and argument must be accepted); the slow ones are also
  run for real under ``-m slow``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from typer.exceptions import TyperException
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from tests.conftest import REPO, missing_reason, trace_available

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
CAP = 500
SHELL = {"", "sh", "bash", "console", "shell"}
PATHLIKE = re.compile(r"\.(toml|csv|parquet|swf|gz|txt|log_crypt|json|sacct)$")
PLACEHOLDER = re.compile(r"\.\.\.|…|<|>|^OUT_DIR$|^DIR$")

#: command text fragment → why the example only runs under ``-m slow``
SLOW = {
    "compare ": "compare builds the HTML report and its figures (about 25 s for 2,000 jobs)",
    "dec-feedback": "DEC solves a CP-SAT model at each event (about 3 min for the batch)",
    "dispatchlab plan ": "offline profit planning: a CP-SAT search over the thesis workload",
    "plan=plan.parquet": "needs the plan written by the `dispatchlab plan` example",
    "report ch7": "needs the runs written by the `run-experiment` example before it",
    "pricing-scenarios.toml --out ch7": "writes the runs the `report ch7` example after it "
    "reads (so both run in one folder, under -m slow)",
    "offline-delay": "offline profit planning: a CP-SAT search over the thesis workload",
    "curie-thesis": "the thesis workload generator reads and filters the whole Curie log",
    "dardis-throughput": "DARDIS's message rounds: about 3 s per 500 jobs",
}

#: command text fragment → why the example is only parsed, never run by a test
PARSE_ONLY = {
    "live slurm": "drives a running Slurm until stopped (tests/live runs it on a local cluster)",
    "live pbs": "drives a running OpenPBS until stopped (tests/live runs it on a local one)",
}


@dataclass(frozen=True)
class Example:
    """One documented command: where it is and its arguments (without ``dispatchlab``)."""

    where: str
    text: str
    argv: tuple[str, ...]


def doc_examples() -> list[Example]:
    """Every ``dispatchlab`` command in the README and the docs."""
    out: list[Example] = []
    for doc in DOCS:
        lines = doc.read_text(encoding="utf-8").splitlines()
        fence: str | None = None
        i = 0
        while i < len(lines):
            line, start = lines[i], i
            stripped = line.strip()
            if stripped.startswith("```"):
                fence = None if fence is not None else stripped[3:].strip()
                i += 1
                continue
            shell = (fence is not None and fence in SHELL) or (fence is None and
                                                                line.startswith("    "))
            if shell and re.match(r"(\.venv/bin/)?dispatchlab\s", stripped):
                text = stripped
                while text.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    text = text[:-1] + " " + lines[i].strip()
                words = [w.strip("[]") for w in shlex.split(text, comments=True)]
                if words and words[-1] == "&":  # started in the background
                    words.pop()
                out.append(Example(f"{doc.name}:{start + 1}", text,
                                   tuple(w for w in words[1:] if w)))
            i += 1
    return out


EXAMPLES = doc_examples()


def test_the_docs_have_examples_and_no_sibling_paths() -> None:
    """Examples name real traces as trace:NAME, never the sibling folder of this checkout
    (only docs/traces.md mentions it, as the last place looked in)."""
    assert len(EXAMPLES) >= 30
    for ex in EXAMPLES:
        assert not any("shared/traces" in w for w in ex.argv), ex.where
    for doc in DOCS:
        if doc.name != "traces.md":
            assert "shared/traces" not in doc.read_text(encoding="utf-8"), doc.name


def slow_reason(ex: Example) -> str | None:
    return next((why for part, why in SLOW.items() if part in ex.text), None)


def parse_only(ex: Example) -> bool:
    return any(part in ex.text for part in PARSE_ONLY)


def has_placeholder(ex: Example) -> bool:
    for k, word in enumerate(ex.argv):
        if PLACEHOLDER.search(word):
            return True
        after_out = k > 0 and ex.argv[k - 1] in ("--out", "-o")
        if PATHLIKE.search(word) and "=" not in word and not after_out \
                and not word.startswith(("trace:", "gen:")) and not (REPO / word).exists():
            return True
    return False


def needed_traces(ex: Example) -> list[str]:
    """The traces named in the command, and those its experiment files' workloads read."""
    out = [m.group(1) for w in ex.argv for m in re.finditer(r"trace:([\w./#-]+)", w)]
    for w in ex.argv:
        if w.endswith(".toml") and (REPO / w).is_file():
            text = (REPO / w).read_text(encoding="utf-8")
            out += re.findall(r"trace:([\w./#-]+)", text)
            if "gen:curie-thesis" in text:
                out.append("CEA-Curie")
    return out


#: a repository path given as a spec's value (``slurm:conf=examples/…``)
_SPEC_PATH = re.compile(r"(?<=[=,])([\w.-]+/[\w./-]+)")


def _absolute(m: re.Match[str]) -> str:
    return str(REPO / m[1]) if (REPO / m[1]).exists() else m[1]


def prepared(ex: Example) -> list[str]:
    """The example's arguments with repository paths made absolute and at most CAP jobs."""
    argv = [str(REPO / w) if w and not w.startswith("-") and "/" in w and (REPO / w).exists()
            else _SPEC_PATH.sub(_absolute, w) for w in ex.argv]
    if argv and argv[0] in ("simulate", "compare", "plan"):
        if "--limit" in argv:
            k = argv.index("--limit") + 1
            argv[k] = str(min(int(argv[k]), CAP))
        else:
            argv += ["--limit", str(CAP)]
    return argv


def check_parses(ex: Example) -> None:
    """Every option and argument of the example is one the command accepts."""
    argv = [w for w in ex.argv if w != "--offline"]  # the one group option besides --version
    if argv[:1] == ["--version"]:
        return
    group = typer.main.get_command(app)
    name, rest = argv[0], argv[1:]
    cmd = group.get_command(group.make_context("dispatchlab", [], resilient_parsing=True), name)  # type: ignore[attr-defined]
    assert cmd is not None, f"{ex.where}: no command '{name}'"
    try:
        cmd.make_context(name, rest)
    except TyperException as exc:
        pytest.fail(f"{ex.where}: `{ex.text}` does not parse: {exc}")


def run(ex: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for ref in needed_traces(ex):
        if not trace_available(ref):
            pytest.skip(f"{ex.where}: {missing_reason(ref)}")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, prepared(ex))
    assert result.exit_code == 0, f"{ex.where}: `{ex.text}` failed:\n{result.output[-2000:]}"


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_doc_example(ex: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check_parses(ex)
    if has_placeholder(ex) or slow_reason(ex) or parse_only(ex):
        return  # parsed above; a placeholder cannot run, a slow one runs under -m slow
    if ex.argv[:2] in (("traces", "fetch"), ("traces", "path")):  # tests never download
        for name in (w for w in ex.argv[2:] if not w.startswith("-")):
            if not trace_available(name):
                pytest.skip(f"{ex.where}: {missing_reason(name)}")
    run(ex, tmp_path, monkeypatch)


SLOW_EXAMPLES = [e for e in EXAMPLES
                 if slow_reason(e) and not has_placeholder(e) and not parse_only(e)]
#: a page's long examples run on one test worker, in the page's order (``--dist loadgroup``)
SLOW_PARAMS = [pytest.param(e, id=e.where,
                            marks=pytest.mark.xdist_group("doc-" + e.where.split(":")[0]))
               for e in SLOW_EXAMPLES]


@pytest.mark.slow
@pytest.mark.parametrize("ex", SLOW_PARAMS)
def test_slow_doc_example_runs(ex: Example, tmp_path_factory: pytest.TempPathFactory,
                               monkeypatch: pytest.MonkeyPatch,
                               request: pytest.FixtureRequest) -> None:
    """The long examples, run for real only when asked (``-m slow``, ``make test-slow``):
    together they take about 10 minutes. One folder per page, so an example can read what
    an earlier one of its page wrote (the plan of ``dispatchlab plan``)."""
    expr = (request.config.getoption("markexpr") or "").replace(" ", "")
    if "slow" not in expr or "notslow" in expr:
        pytest.skip(f"long example ({slow_reason(ex)}); runs with -m slow")
    folder = tmp_path_factory.getbasetemp() / "doc-examples" / ex.where.split(":")[0]
    folder.mkdir(parents=True, exist_ok=True)
    run(ex, folder, monkeypatch)
