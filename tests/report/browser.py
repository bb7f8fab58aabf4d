"""Open a report in Debian's headless Chromium, driven by Playwright (no browser download):
offline, recording console errors and every request, until its figures are drawn."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Chromium's flags: headless, no sandbox (CI runs as root), nothing fetched in the back.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def chromium() -> str | None:
    """Path of the system Chromium, or None."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def why_no_browser() -> str | None:
    """Why the browser tests cannot run here (None when they can)."""
    if chromium() is None:
        return "Debian's chromium is not installed (.ci/setup-chromium.sh installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    return None


def launch(pw: Any) -> Any:
    """A headless Chromium browser from a started Playwright."""
    return pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)


@dataclass
class OpenedReport:
    """A report page opened offline, and what happened while it loaded."""

    page: Any
    rendered_ms: float
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def close(self) -> None:
        self.page.context.close()


def open_report(browser: Any, html: Path, *, width: int = 1280, height: int = 900,
                timeout_ms: int = 120_000) -> OpenedReport:
    """Open ``html`` from ``file://`` with the network off (every non-file request is
    aborted and recorded) and wait until the page says its figures are drawn;
    ``rendered_ms`` is the time from navigation start to then, measured by the page."""
    ctx = browser.new_context(viewport={"width": width, "height": height}, offline=True)
    page = ctx.new_page()
    opened = OpenedReport(page, 0.0)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.on("request", lambda r: opened.requests.append(r.url))
    page.on("requestfailed", lambda r: opened.failed.append(r.url))
    ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
              else route.abort())
    page.goto(html.resolve().as_uri())
    page.wait_for_function("document.body.dataset.rendered === '1'", timeout=timeout_ms)
    opened.rendered_ms = float(page.evaluate("window.reportRenderedAt"))
    return opened
