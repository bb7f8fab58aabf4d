"""One headless Chromium for every browser test of the session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.report.browser import launch, why_no_browser


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    reason = why_no_browser()
    if reason is not None:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = launch(pw)
        yield b
        b.close()
