"""pytest fixtures of the dashboard's browser tests: one Chromium (Debian's, through
Playwright's `executable_path`; `playwright install` is never run) for the whole run, and a
page per test module. Run by scripts/dashboard-check.sh, which sets FLEET_BIN and
FLEET_CHROMIUM."""

import os
import sys

import pytest
from playwright.sync_api import expect, sync_playwright

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

# Every `expect` waits this long at most (CI runs on 2 loaded cores).
expect.set_options(timeout=harness.WAIT_S * 1000)

VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=harness.CHROMIUM, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def context(browser):
    ctx = browser.new_context(viewport=VIEWPORT)
    ctx.set_default_timeout(harness.WAIT_S * 1000)
    yield ctx
    ctx.close()
