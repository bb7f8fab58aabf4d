"""Where local copies of traces are looked for, and where downloads go.

In order: the folders of ``$DISPATCHLAB_TRACES`` (``os.pathsep``-separated), the cache
(``$DISPATCHLAB_DATA/traces``; by default the per-user data folder), and, in a source
checkout, the ``shared/traces`` folder beside the repository. Each holds the trace layout
(``swf/…``, ``eurora/…``, ``borg/…``); a configured folder may also hold the files flat.
``DISPATCHLAB_OFFLINE=1`` forbids downloads on first use (``dispatchlab traces fetch`` still
downloads: it is asked to).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

TRACES_ENV = "DISPATCHLAB_TRACES"
DATA_ENV = "DISPATCHLAB_DATA"
OFFLINE_ENV = "DISPATCHLAB_OFFLINE"


def data_dir() -> Path:
    """``$DISPATCHLAB_DATA``, else the per-user data folder (XDG on Linux)."""
    configured = os.environ.get(DATA_ENV)
    if configured:
        return Path(configured).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return base / "dispatchlab"


def cache_dir() -> Path:
    """Where downloaded traces are kept (in the trace layout)."""
    return data_dir() / "traces"


def configured_dirs() -> list[Path]:
    """The folders named by ``$DISPATCHLAB_TRACES``."""
    text = os.environ.get(TRACES_ENV, "")
    return [Path(p).expanduser() for p in text.split(os.pathsep) if p.strip()]


def sibling_dir() -> Path | None:
    """``../shared/traces`` beside this source checkout, when there is one."""
    repo = Path(__file__).resolve().parents[3]
    folder = repo.parent / "shared" / "traces"
    if (repo / "pyproject.toml").is_file() and folder.is_dir():
        return folder
    return None


def search_dirs() -> list[Path]:
    """Every folder a local copy is looked for in, first match wins."""
    out = [*configured_dirs(), cache_dir()]
    sibling = sibling_dir()
    if sibling is not None:
        out.append(sibling)
    return out


def fetch_allowed() -> bool:
    """False when ``$DISPATCHLAB_OFFLINE`` is set to anything but ``0`` / empty."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in ("", "0", "false", "no")
