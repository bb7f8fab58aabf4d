"""Turn whatever the user gave (object, inline spec, preset name, file) into a Platform."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from dispatchlab.errors import ConfigError
from dispatchlab.input_files import input_problem
from dispatchlab.platform.inline import parse_inline
from dispatchlab.platform.platform import Platform
from dispatchlab.traces.resolve import resolve_source


def resolve_platform(spec: Platform | str | Path) -> Platform:
    """A Platform from an object, an inline spec, a preset name, a TOML/node file, a
    ``slurm.conf`` or a SimGrid/Batsim platform XML."""
    if isinstance(spec, Platform):
        return spec
    text = str(spec).strip()
    if not text:
        raise ConfigError("empty; give an inline spec (nodes=N,cores=C,...), a preset name "
                          "or a platform file", field="platform")
    text = str(resolve_source(text))
    if "=" in text and not Path(text).exists():
        return parse_inline(text)
    from dispatchlab.platform import presets

    if text in presets.PRESETS:
        return presets.PRESETS[text]()
    path = Path(text)
    if path.is_dir():
        raise ConfigError(f"'{text}' is a folder; give a platform file (TOML or node list)",
                          field="platform")
    if path.exists() and path.suffix.lower() == ".xml":  # a SimGrid / Batsim platform
        from dispatchlab.platform.simgrid import read_simgrid_platform

        return read_simgrid_platform(path).to_platform()
    if path.exists():
        from dispatchlab.platform import files, slurm_conf

        if slurm_conf.looks_like_slurm_conf(path):
            return slurm_conf.load_slurm_platform(path)

        return files.load_platform_file(path)
    if os.path.lexists(text) or os.sep in text or text.endswith((".toml", ".xml")):
        raise ConfigError(input_problem(path) or "cannot read it", source=text)
    close = difflib.get_close_matches(text, list(presets.PRESETS), n=2, cutoff=0.6)
    hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    raise ConfigError(
        f"'{text}'{hint} is neither an inline spec (nodes=N,cores=C,...), a preset "
        f"({', '.join(sorted(presets.PRESETS))}) nor an existing file",
        field="platform",
    )
