"""The trajectory viewer as a person uses it: the run list fits its column at 1366x768 (the points
column shows, audit labels are whole), a click anywhere on a row opens its session, a deep link brings its row
into view, an expanded result says "hide", and at 800 px the page is one column. Opened from file://, offline."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect
from support.web_common import LAPTOP, browser_page, needs_chromium, screenshot

from agenthop.runner.cli import main as runner_main
from agenthop.scorer.cli import main as scorer_main

pytestmark = [needs_chromium, pytest.mark.slow]


@pytest.fixture(scope="module")
def view(demo, tmp_path_factory):
    """The viewer of the offline baseline over 40 demo items (a list longer than the screen)."""
    corpus, split = demo
    root = tmp_path_factory.mktemp("viewpage")
    r = CliRunner().invoke(
        runner_main,
        [
            "--items",
            str(split),
            "--limit",
            "40",
            "--agent",
            "baseline",
            "--corpus",
            str(corpus),
            "--out",
            str(root / "baseline"),
            "--no-progress",
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        scorer_main,
        ["view", str(root / "baseline"), "--corpus", str(corpus), "--out", str(root / "view")],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    return (root / "view" / "index.html").resolve().as_uri()


def test_the_list_fits_its_column_and_a_row_click_opens_the_session(view, tmp_path):
    with browser_page(LAPTOP) as page:
        page.goto(view)
        page.locator("#rows tr").first.wait_for()
        fits = page.evaluate("""() => {
            const list = document.querySelector('.list'), table = document.querySelector('.sessions');
            const cells = [...document.querySelectorAll('.sessions th, .sessions td')];
            return {table: table.scrollWidth <= list.clientWidth,
                    clipped: cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent)};
        }""")
        points_visible = page.get_by_role("columnheader", name="Points").is_visible()
        row = page.locator("#rows tr").nth(2)
        item = row.get_attribute("data-item")
        row.locator("td").nth(3).click()  # the audit cell, not the link
        page.locator(".question h2").wait_for()
        opened = page.evaluate("location.hash")
        heading = page.inner_text(".question h2")
        current = page.locator("#rows tr.current").get_attribute("data-item")
        problems = list(page.problems)
    assert fits == {"table": True, "clipped": []}
    assert points_visible
    assert opened.endswith(f"item={item}") and heading.startswith(item) and current == item
    assert problems == []


def test_a_deep_link_shows_its_row_and_an_opened_result_says_hide(view, tmp_path):
    with browser_page(LAPTOP) as page:
        page.goto(view)
        last = page.locator("#rows tr").last.get_attribute("data-item")
        run = page.locator("#rows tr").last.get_attribute("data-run")
        # The hash change loads the session's script; let it finish, so the reload aborts nothing of ours.
        page.goto(f"{view}#run={run}&item={last}")
        page.locator(".question h2", has_text=last).wait_for()
        page.reload()
        page.locator(".question h2", has_text=last).wait_for()
        in_view = page.evaluate("""() => {
            const row = document.querySelector('#rows tr.current'), list = document.querySelector('.list');
            const r = row.getBoundingClientRect(), l = list.getBoundingClientRect();
            return r.top >= l.top && r.bottom <= l.bottom;
        }""")
        summary = page.locator("details.long summary").first
        before = summary.inner_text()
        # The details element's toggle event (which rewrites the summary) fires in a later task than the click:
        # wait for the text each click should bring, never read it right after the click.
        summary.click()
        expect(summary).to_have_text(re.compile(r"; hide$"))
        summary.click()
        expect(summary).to_have_text(re.compile(r"; show$"))
        screenshot(page, tmp_path, "view-deep-link.png")
        problems = list(page.problems)
    assert in_view
    assert before.endswith("; show")
    assert problems == []


def test_at_800_px_the_viewer_is_one_column(view, tmp_path):
    with browser_page({"width": 800, "height": 900}) as page:
        page.goto(view)
        page.locator("#rows tr").first.click()
        page.locator(".question h2").wait_for()
        wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        summary_visible = page.locator("#summary").is_visible()
        stray = [line for line in page.inner_text("#detail").splitlines() if line.strip() in ("null", "undefined")]
        screenshot(page, tmp_path, "view-800.png")
        problems = list(page.problems)
    assert not wide and summary_visible
    assert stray == []
    assert problems == []
