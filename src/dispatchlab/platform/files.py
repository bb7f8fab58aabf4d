"""Platform files: TOML descriptions and Eurora node lists (filled in by the platform work)."""

from __future__ import annotations

from pathlib import Path

from dispatchlab.errors import ConfigError
from dispatchlab.platform.platform import Platform


def load_platform_file(path: Path) -> Platform:
    """Load a platform from ``path``."""
    raise ConfigError("platform files are not supported yet", source=str(path))
