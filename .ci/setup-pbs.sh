#!/usr/bin/env bash
# Installs the Debian packages OpenPBS needs and builds it once into a cache outside the
# checkout (tools/pbs-local build; reused when present), for tests/live/test_pbs_*.
# Never fails the CI run: a failure is printed and written to the cache's unavailable.txt,
# and the PBS tests skip quoting it.
set -uo pipefail
cd "$(dirname "$0")/.."
reason_file() { python3 -c 'import sys; sys.path.insert(0, "src")
from dispatchlab.live import pbs_build; print(pbs_build.cache_dir() / "unavailable.txt")'; }
unavailable() {
    echo "setup-pbs: OpenPBS unavailable: $*" >&2
    f=$(reason_file) && mkdir -p "$(dirname "$f")" && echo "OpenPBS unavailable: $*" >"$f"
    exit 0
}
[ "$(id -u)" = 0 ] || unavailable "setup needs root (Debian packages, network namespace)"
if python3 -c 'import sys; sys.path.insert(0, "src")
from dispatchlab.live import pbs_build; sys.exit(0 if pbs_build.is_built() else 1)'; then
    exit 0
fi
packages=$(python3 -c 'import sys; sys.path.insert(0, "src")
from dispatchlab.live import pbs_build; print(" ".join(pbs_build.DEBIAN_PACKAGES))')
need=()
for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    ok=0
    for attempt in $(seq 1 30); do
        if apt-get update && apt-get install -y --no-install-recommends "${need[@]}"; then ok=1; break; fi
        echo "setup-pbs: apt-get failed (attempt $attempt; dpkg lock held?), retrying in 10 s" >&2
        sleep 10
    done
    [ "$ok" = 1 ] || unavailable "apt-get install ${need[*]} failed"
fi
tools/pbs-local build || echo "setup-pbs: OpenPBS build failed (see above); the PBS tests will skip" >&2
exit 0
