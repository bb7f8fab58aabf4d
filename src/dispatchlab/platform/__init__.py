"""Platforms: nodes × resource types, from inline specs, TOML files or presets."""

from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.platform.resolve import resolve_platform

__all__ = ["CORES", "Platform", "resolve_platform"]
