"""Is Slurm usable from here? Checked once, before the first read, so that a missing
program or configuration is one clear line and exit code 2 instead of a poll loop that
never reads anything (Slurm's client commands retry a missing ``slurm.conf`` for 60 s)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping

from dispatchlab.errors import ConfigError

#: The client commands the live mode runs (all in Debian's ``slurm-client``).
CLIENT_PROGRAMS = ("squeue", "sinfo", "scontrol")

#: What Slurm's commands print when they cannot read a configuration.
_CONF_TROUBLE = ("cannot stat file", "Unable to process configuration file",
                 "Could not establish a configuration source", "fatal:")


def check_slurm_setup(env: Mapping[str, str] | None = None, probe_timeout: float = 5.0) -> None:
    """Raise :class:`ConfigError` naming the missing program or configuration: every
    client command on ``PATH``, ``SLURM_CONF`` (when set) an existing file, and
    ``scontrol ping`` able to read the configuration. A controller that is down is not
    refused here: the poll loop waits for it and says so."""
    env = dict(os.environ if env is None else env)
    path = env.get("PATH", "")
    for prog in CLIENT_PROGRAMS:
        if shutil.which(prog, path=path) is None:
            raise ConfigError(
                f"Slurm's '{prog}' command is not installed or not on PATH (live mode runs "
                f"{', '.join(CLIENT_PROGRAMS)}; Debian: apt-get install slurm-client)")
    conf = env.get("SLURM_CONF")
    if conf is not None and not os.path.isfile(conf):
        raise ConfigError(f"SLURM_CONF={conf}: no such file (the Slurm configuration the "
                          "client commands read)")
    try:
        res = subprocess.run(["scontrol", "ping"], env=env, capture_output=True, text=True,
                             timeout=probe_timeout)
        stderr = res.stderr
    except subprocess.TimeoutExpired as err:  # a missing file is retried for 60 s
        raw = err.stderr or b""
        stderr = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    except OSError as err:
        raise ConfigError(f"cannot run scontrol: {err}") from None
    if not any(mark in stderr for mark in _CONF_TROUBLE):
        return  # read the configuration (the controller may still be down)
    where = f"SLURM_CONF={conf}" if conf is not None else "SLURM_CONF not set"
    missing = re.search(r"cannot stat file (\S+?):", stderr)
    if missing:
        raise ConfigError(f"the Slurm configuration {missing.group(1)} does not exist "
                          f"({where})")
    if "Could not establish a configuration source" in stderr:
        raise ConfigError(f"no Slurm configuration found ({where}, no slurm.conf in Slurm's "
                          "default place and no configless DNS SRV record): set SLURM_CONF "
                          "to the cluster's slurm.conf")
    lines = [ln.split("error:", 1)[-1].split("fatal:", 1)[-1].strip()
             for ln in stderr.splitlines() if "error:" in ln or "fatal:" in ln]
    raise ConfigError(f"Slurm's configuration cannot be read ({where}): "
                      f"{'; '.join(lines[-2:]) or stderr.strip()[-200:]}")
