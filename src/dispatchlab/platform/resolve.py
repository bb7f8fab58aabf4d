"""Turn whatever the user gave (object, inline spec, preset name, file) into a Platform."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.errors import ConfigError
from dispatchlab.platform.inline import parse_inline
from dispatchlab.platform.platform import Platform


def resolve_platform(spec: Platform | str | Path) -> Platform:
    """A Platform from an object, an inline spec, a preset name or a TOML/node file."""
    if isinstance(spec, Platform):
        return spec
    text = str(spec).strip()
    if "=" in text and not Path(text).exists():
        return parse_inline(text)
    from dispatchlab.platform import presets

    if text in presets.PRESETS:
        return presets.PRESETS[text]()
    path = Path(text)
    if path.exists():
        from dispatchlab.platform import files

        return files.load_platform_file(path)
    raise ConfigError(
        f"'{text}' is neither an inline spec (nodes=N,cores=C,...), a preset "
        f"({', '.join(sorted(presets.PRESETS))}) nor an existing file",
        field="platform",
    )
