"""``compare`` and ``demo`` build an experiment from their options; a problem the
experiment checks find is told in the user's terms (``--windows``, ``--dispatchers``), not
the experiment file's (``workloads[1].windows``), since the user wrote no file."""

from __future__ import annotations

import re

from dispatchlab.errors import ConfigError

#: reader options of the workload entry → the flags that set them
_READER_FLAGS = {
    "procs": "--swf-procs",
    "missing_estimate": "--swf-missing-estimate",
    "units": "--swf-units",
    "cores_per_node": "--swf-cores-per-node",
    "drop_zero_runtime": "--drop-zero-runtime",
    "drop_invalid": "--keep-invalid",
    "skip_bad_lines": "--skip-bad-lines",
}
#: keys of the workload entry → the flags that set them
_ENTRY_FLAGS = {"skip": "--skip", "limit": "--limit", "format": "--format",
                "windows": "--windows", "window_jobs": "--windows"}
_FIELD = re.compile(r"^field '([^']*)': ")
_PLACE = re.compile(r"(workloads|platforms|dispatchers)\[(\d+)\]")


def option_of(field: str) -> str:
    """The command-line option behind an experiment field of the comparison."""
    head, _, rest = field.partition(".")
    if head == "workloads[1]":
        return "--windows"
    if head.startswith("workloads"):
        key = rest.split(".")
        if key[0] == "options" and len(key) > 1:
            return _READER_FLAGS.get(key[1], "--workload")
        return _ENTRY_FLAGS.get(key[0], "--workload")
    if head.startswith("platforms"):
        return "--platform"
    if head.startswith("dispatchers"):
        return "--dispatchers"
    if head == "seeds":
        return "--seeds"
    if head == "on_infeasible":
        return "--reject-infeasible"
    return field


def in_command_terms(exc: ConfigError, dispatchers: list[str]) -> ConfigError:
    """``exc`` with its field and the places its message names as compare's options."""
    text = str(exc)
    if exc.source:
        text = text.removeprefix(f"{exc.source}: ")
    field = exc.field or ""
    if field:
        text = text.removeprefix(f"field '{field}': ")
    inner = _FIELD.match(text)  # a reader's own field: dropped when the option says it
    if inner is not None:
        said = inner[1] == field.rsplit(".", 1)[-1]
        text = text[inner.end():] if said else f"key '{inner[1]}': {text[inner.end():]}"

    def place(m: re.Match[str]) -> str:
        kind, k = m[1], int(m[2])
        if kind == "dispatchers" and k < len(dispatchers):
            return f"--dispatchers '{dispatchers[k]}'"
        return option_of(m[0])

    return ConfigError(_PLACE.sub(place, text), field=option_of(field) if field else None)
