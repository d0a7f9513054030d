"""A three-participant study in a real browser, from consent to the side-by-side report: each participant reads the
instructions, ticks the consent line, enrols with the study code, plays their own items in their order (one of them
goes on in a second browser with their key), and agenthop-scorer then sets the three beside a model run on the same
items. Screenshots go to docs/ with AGENTHOP_SCREENSHOT_DIR."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect, sync_playwright
from support.study_helpers import CONSENT, baseline_run, write_study
from support.web_common import ARGS, CHROMIUM, LAPTOP, axe_violations, needs_chromium, screenshot

from agenthop.scorer.cli import main as scorer_main
from agenthop.server.log.checkpoint import read_records
from agenthop.server.play.routes import PlayOptions, check_participant
from agenthop.server.play.study import load_study
from agenthop.server.transport.http import ServerThread

pytestmark = [needs_chromium, pytest.mark.slow, pytest.mark.browser]


def _watched(browser):
    """A page in a fresh context (its own cookies and storage: another person's browser) that records problems."""
    page = browser.new_context(viewport=LAPTOP).new_page()
    page.set_default_timeout(20_000)
    page.problems = []
    page.on("console", lambda m: page.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    return page


def _enrol(page, url: str, name: str, code: str) -> None:
    page.goto(f"{url}/play")
    page.locator("#study").wait_for()
    page.fill("#study-name", name)
    page.fill("#study-code", code)
    page.check("#study-consent")
    page.get_by_role("button", name="I agree: begin").click()
    page.locator("#choice").wait_for()


def _play_next(page, letter_index: int) -> str:
    """Start the next item, look at the seed paper's references, answer; the item's ID."""
    page.click("#play-next")
    page.locator("#game").wait_for()
    item = page.inner_text("#where")
    page.locator("#seed").get_by_role("button", name="References").click()
    page.locator("#results > li").first.wait_for()
    page.locator("#options input").nth(letter_index).check()
    page.fill("#reason", "what the references said")
    page.get_by_role("button", name="Submit answer").click()
    page.locator("#ending").wait_for()
    return item


def test_three_participants_from_consent_to_the_side_by_side_report(demo, tmp_path):
    corpus, split = demo
    log = tmp_path / "study-log.sqlite"
    study_path = write_study(tmp_path, split, limit=900)
    study = load_study(study_path, check_participant=check_participant)
    played: dict[str, list[str]] = {}
    with (
        ServerThread(str(corpus), str(log), play=PlayOptions(study=study)) as server,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            pages = []
            for n, name in enumerate(study.participants):
                page = _watched(browser)
                if n == 0:  # what a participant sees first: the instructions and the consent line, nothing to play yet
                    page.goto(f"{server.base_url}/play")
                    page.locator("#study").wait_for()
                    expect(page.locator("#study-name")).to_be_focused()
                    gate_text = page.inner_text("#study")
                    start_hidden = not page.locator("#start").is_visible()
                    gate_axe = axe_violations(page)
                    screenshot(page, tmp_path, "play-study.png")
                    # A wrong code is refused in words, and nothing is enrolled.
                    page.fill("#study-name", name)
                    page.fill("#study-code", "not-the-code")
                    page.check("#study-consent")
                    page.get_by_role("button", name="I agree: begin").click()
                    expect(page.locator("#study-problem")).to_contain_text("not this study's code")
                    refused = list(page.problems)  # the browser logs the 403 it was answered
                    page.problems.clear()
                _enrol(page, server.base_url, name, study.code)
                listed = [c.inner_text() for c in page.locator("#items th[scope=row]").all()]
                if n == 0:  # items come in order: the list offers no Play button of its own, only the next item
                    list_buttons = page.locator("#items button:visible").count()
                played[name] = [_play_next(page, n % 4)]
                pages.append((name, page, listed))
            # p02 goes on in another browser: the key from the list, then the second item there.
            name, first, _ = pages[1]
            first.click("#back")
            first.locator("#choice").wait_for()
            first.locator("#my-key summary").click()
            key = first.inner_text("#my-key-value")
            laptop = _watched(browser)
            laptop.goto(f"{server.base_url}/play")
            laptop.locator("#study").wait_for()
            laptop.fill("#study-resume-name", name)
            laptop.fill("#study-key", key)
            laptop.get_by_role("button", name="Continue").click()
            laptop.locator("#choice").wait_for()
            resumed_status = laptop.inner_text("#items")
            played[name].append(_play_next(laptop, 1))
            has_clock = laptop.locator("#study-clock").count() == 1
            for other, page, _ in (pages[0], pages[2]):
                page.click("#next-item")
                page.locator("#game").wait_for()
                page.click("#give-up")
                page.click("#give-up")
                page.locator("#ending").wait_for()
                played[other].append(page.inner_text("#where"))
            problems = [p for _, page, _ in pages for p in page.problems] + laptop.problems
        finally:
            browser.close()
    assert study.title in gate_text and "Work alone." in gate_text and CONSENT in gate_text and start_hidden
    assert gate_axe == []
    assert len(refused) == 1 and "403" in refused[0]
    assert problems == []
    assert "finished" in resumed_status
    assert all(len(listed) == 2 for _, _, listed in pages) and list_buttons == 0
    assert has_clock  # a timed study shows a clock (its text ticks: not asserted)

    starts = [r for r in read_records(log) if r["kind"] == "session_start"]
    by_person = {}
    for s in starts:
        by_person.setdefault(s["client"]["participant"], []).append(s)
    assert sorted(by_person) == ["p01", "p02", "p03"]
    for person, sessions in by_person.items():
        assert [s["client"]["study"]["slot"] for s in sessions] == [1, 2]
        assert [f"Item {s['item_id']} · participant {person}" for s in sessions] == played[person]
        assert all(s["client"]["study"]["consented_at"] <= s["time"] for s in sessions)

    # The side-by-side report: the three people beside the offline baseline on the same items.
    items = sorted({s["item_id"] for s in starts})
    model = baseline_run(corpus, items, tmp_path / "baseline")
    out = tmp_path / "report"
    scored = CliRunner().invoke(
        scorer_main,
        ["study", str(log), "--model", str(model), "--corpus", str(corpus), "--out", str(out), "--resamples", "200"],
    )
    assert scored.exit_code == 0, scored.output
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport=LAPTOP)
            page.goto((out / "study.html").as_uri())
            side = page.locator("table").first
            rows = [r.inner_text().split("\t")[0].strip() for r in side.locator("tbody tr").all()]
            report_axe = axe_violations(page)
            screenshot(page, tmp_path, "study-report.png")
        finally:
            browser.close()
    assert rows == ["p01", "p02", "p03", "people (pooled)", "baseline"]
    assert report_axe == []


def test_the_clock_ends_a_timed_item_and_the_end_screen_says_the_time_ran_out(demo, tmp_path):
    """A one-second limit: the page's clock asks the server when it runs out, the server ends the attempt, and the
    end screen says the time ran out (not "you gave up"). The test waits for that state, never for a time."""
    corpus, split = demo
    study = load_study(write_study(tmp_path, split, per=1, limit=1), check_participant=check_participant)
    log = tmp_path / "log.sqlite"
    with (
        ServerThread(str(corpus), str(log), play=PlayOptions(study=study)) as server,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = _watched(browser)
            _enrol(page, server.base_url, "p01", study.code)
            page.click("#play-next")
            page.locator("#game").wait_for()
            # Waits for the state (the default 5 s of expect is short on a loaded machine), never for a time.
            expect(page.locator("#ending")).to_be_visible(timeout=30_000)
            expect(page.locator("#ending-text")).to_contain_text("Time is up", timeout=30_000)
            tools_disabled = page.locator("#search-form button").is_disabled()
            problems = list(page.problems)
        finally:
            browser.close()
    assert tools_disabled and problems == []
    end = next(r for r in read_records(log) if r["kind"] == "session_end")
    assert end["termination"] == "abandoned" and end["reason"].startswith("time_limit:")
