#!/usr/bin/env bash
# Debian's chromium for the report's browser tests (tests/report/test_report_in_browser.py,
# driven by Playwright from PyPI pointed at /usr/bin/chromium: no browser download).
# Idempotent: installs only when missing; waits for the dpkg lock when another apt runs.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "setup-chromium: chromium is missing and this is not root; browser tests will skip" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2 3 4 5 6 7 8 9 10; do
    if apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; then
        exit 0
    fi
    echo "setup-chromium: apt busy or failed (attempt $attempt); retrying in 15 s" >&2
    sleep 15
done
echo "setup-chromium: could not install chromium" >&2
exit 1
