"""The ``slurm`` family's catalogue record: the ``slurm`` preset (Slurm 22.05's defaults)
and the ``slurm:conf=<slurm.conf>`` spec (also spelled ``slurm=<slurm.conf>``)."""

from __future__ import annotations

from dispatchlab.dispatchers.family import Entry, Family, preset
from dispatchlab.engine.protocol import Dispatcher
from dispatchlab.errors import ConfigError

_KEYS = ("slurm:conf", "slurm")


def entries() -> list[Entry]:
    """The ``slurm`` preset."""
    from dispatchlab.dispatchers.slurm.dispatcher import SlurmDispatcher

    return [preset("slurm", SlurmDispatcher,
                   "Slurm 22.05's scheduler with its defaults: sched/backfill, priority/basic, "
                   "select/cons_tres CR_Core, one partition of every node; "
                   "slurm:conf=<slurm.conf> configures it from an operator's file")]


def _conf_path(fields: dict[str, str]) -> str | None:
    """The slurm.conf a spec names, or None when the spec is another family's."""
    keys = [k for k in fields if k in _KEYS]
    if not keys:
        return None
    if len(keys) > 1:
        raise ConfigError("give the slurm.conf once (slurm:conf=<file>)", field=keys[1])
    other = [k for k in fields if k not in _KEYS]
    if other:
        raise ConfigError(f"the slurm family takes only slurm:conf=<file> (its settings come "
                          f"from the file); unknown key '{other[0]}'", field=other[0])
    path = fields[keys[0]].strip()
    if not path:
        raise ConfigError("slurm:conf needs a file name", field=keys[0])
    return path


def parse_slurm_spec(fields: dict[str, str]) -> Dispatcher | None:
    """``slurm:conf=<file>`` → a :class:`SlurmDispatcher` reading that file."""
    path = _conf_path(fields)
    if path is None:
        return None
    from dispatchlab.dispatchers.slurm.dispatcher import SlurmDispatcher

    return SlurmDispatcher(conf=path)


def canonical_slurm_spec(fields: dict[str, str]) -> str | None:
    """One spelling: ``slurm:conf=<file>``."""
    path = _conf_path(fields)
    return None if path is None else f"slurm:conf={path}"


FAMILY = Family("slurm", "Slurm's own scheduler (sched/backfill, multifactor priority, "
                "cons_tres) configured from a slurm.conf", entries, parse_slurm_spec,
                canonical_slurm_spec, spec_keys=_KEYS)
