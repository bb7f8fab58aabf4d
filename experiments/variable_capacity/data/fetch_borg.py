"""Download the authors' Borg job files used by the case study into ``data/borg/``.

The files are the extraction of the Google Borg trace published with Robert et al.'s
simulator (github ``lucasperotin/variableResources``, ``files/traces/borgSO/``). That
repository carries no licence, so dispatchlab does not redistribute them: this script
fetches them at a pinned commit and checks their SHA-256.

    python experiments/variable_capacity/data/fetch_borg.py
"""

from __future__ import annotations

import hashlib
import sys
import urllib.request
from pathlib import Path

COMMIT = "87d73f8aa8ac27c3c0714b1fead805763ac0020b"
BASE = f"https://raw.githubusercontent.com/lucasperotin/variableResources/{COMMIT}/files/traces/borgSO/"
FILES = {
    "7D_604800.txt": "8f6a92b101373d852ebc358fa7cd1fb4142fb4b85d17a2d09ef77b8cd607319c",
    "14D_259200.txt": "55bad36961b49e8aab6096b190d6c32a815d229436ec0a565c8514bc6b2e75a2",
}


def main() -> int:
    """Fetch each missing file; fail on a checksum mismatch."""
    out = Path(__file__).resolve().parent / "borg"
    out.mkdir(exist_ok=True)
    for name, digest in FILES.items():
        path = out / name
        if not path.exists():
            print(f"downloading {name} …")
            with urllib.request.urlopen(BASE + name, timeout=60) as response:
                path.write_bytes(response.read())
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != digest:
            print(f"{path}: SHA-256 {got} is not the pinned {digest}", file=sys.stderr)
            return 1
        print(f"{path}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
