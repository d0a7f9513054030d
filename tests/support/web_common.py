"""Shared pieces of the browser tests of /play and the trajectory viewer; this module holds no tests.

The browser is Debian's Chromium driven by Playwright (the playwright package bundles its driver;
no browser is downloaded). ``browser_page`` records every console error, page error, failed request
and every URL the page asked for, so a test can assert a clean console and no network beyond its origin.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

from support.paths import TESTS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.browser  # conftest.py skips it without Chromium, and fails it in CI
# The flags of tests/scorer/test_scorer_html.py that apply under Playwright (it sets headless and the profile itself).
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LAPTOP = {"width": 1366, "height": 768}
AXE = TESTS / "axe" / "node_modules" / "axe-core" / "axe.min.js"


@contextmanager
def browser_page(viewport: dict = LAPTOP):
    """A fresh Chromium page; ``page.problems`` and ``page.requested`` collect what went wrong and what was fetched."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport=viewport)
            page.set_default_timeout(20_000)
            problems: list[str] = []
            requested: list[str] = []
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} {r.failure}"))
            page.on("request", lambda r: requested.append(r.url))
            page.problems = problems
            page.requested = requested
            yield page
        finally:
            browser.close()


def screenshot(page, tmp_path: Path, name: str) -> Path:
    """Save a screenshot in the test's directory and, when AGENTHOP_SCREENSHOT_DIR is set, there too (docs/*.png)."""
    shot = tmp_path / name
    page.screenshot(path=str(shot))
    target = os.environ.get("AGENTHOP_SCREENSHOT_DIR")
    if target:
        shutil.copyfile(shot, Path(target) / name)
    return shot


def axe_violations(page, exclude: tuple[str, ...] = ()) -> list[str]:
    """axe-core's violations on the page as it is now, one line each (rule, impact, how many nodes, the first target).

    axe-core comes from the npm registry, pinned by tests/axe/package-lock.json; `make test` installs it (npm ci).
    It is evaluated through the DevTools protocol, which a page's Content-Security-Policy does not govern."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run 'make test', or 'cd tests/axe && npm ci', to install axe-core")
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8") + "\n;0")
    found = page.evaluate(
        """async (exclude) => {
        const context = exclude.length ? {exclude: exclude.map((s) => [s])} : document;
        const result = await axe.run(context, {resultTypes: ['violations']});
        return result.violations.map((v) => `${v.id} (${v.impact}, ${v.nodes.length} node${v.nodes.length === 1 ? '' : 's'}): `
            + `${v.help}; first: ${v.nodes[0].target.join(' ')}`);
    }""",
        list(exclude),
    )
    return found
