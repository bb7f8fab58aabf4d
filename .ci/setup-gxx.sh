#!/usr/bin/env bash
# Installs Debian's g++ (tests/variable_capacity/test_authors_semantics.py builds small C++
# programs and, when the authors' repository is present, their simu.cc), unless present.
set -euo pipefail
if command -v g++ >/dev/null 2>&1; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt_retry() {
    for attempt in $(seq 1 30); do
        if "$@"; then return 0; fi
        echo "setup-gxx: '$*' failed (attempt $attempt; dpkg lock held?), retrying in 10 s" >&2
        sleep 10
    done
    return 1
}
apt_retry apt-get update
apt_retry apt-get install -y --no-install-recommends g++
