"""/play in a real browser, the stumbles of issue 26: fields that belong to the attempt, the seed paper one click
away, an attempt resumed after its tab closed, one cut short by a server restart (and a dropped connection) said
in words, the end screen with reveal, and the page at 800 px. Screenshots go to docs/ with AGENTHOP_SCREENSHOT_DIR."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from web_common import ARGS, CHROMIUM, LAPTOP, browser_page, needs_chromium, screenshot

from agenthop.server.play.routes import PlayOptions
from agenthop.server.transport.http import ServerThread

pytestmark = [needs_chromium, pytest.mark.slow]

GOLD_TITLE = "Learning Self-Supervised Image Retrieval from Bounding Boxes"  # st_0001's gold paper in the demo corpus


def _results(page):
    return page.locator("#results > li")


def _act(page, n_before: int, do) -> None:
    do()
    _results(page).nth(n_before).wait_for()


def _enter(page, url: str, participant: str) -> None:
    page.goto(f"{url}/play")
    page.fill("#participant", participant)
    page.press("#participant", "Enter")
    page.locator("#choice").wait_for()


def test_the_start_page_explains_the_rules_and_fields_belong_to_the_attempt(demo, tmp_path):
    corpus, _ = demo
    options = PlayOptions(items=("st_0001", "st_0002"))
    with ServerThread(str(corpus), str(tmp_path / "log.sqlite"), play=options) as server, browser_page() as page:
        _enter(page, server.base_url, "hana")
        rules = page.inner_text("#start")
        screenshot(page, tmp_path, "play-start.png")
        page.click("#play-next")
        page.locator("#game").wait_for()
        # The seed paper is one click from its sections; a section typed for it is cleared when another paper is used.
        _act(page, 0, lambda: page.locator("#seed").get_by_role("button", name="Sections").click())
        seed = page.input_value("#paper-id")
        page.fill("#section", "Introduction")
        _act(page, 1, lambda: page.locator("#seed").get_by_role("button", name="References").click())
        section_kept_for_same_paper = page.input_value("#section")
        card = _results(page).nth(1).locator(".paper", has_text=GOLD_TITLE)
        _act(page, 2, lambda: card.get_by_role("button", name="Sections").click())
        after_other_paper = (page.input_value("#paper-id"), page.input_value("#section"))
        page.fill("#query", "token pruning")
        page.fill("#note", "a plan")
        page.fill("#reason", "half a reason")
        page.click("#give-up")
        page.click("#give-up")
        page.locator("#ending").wait_for()
        page.click("#next-item")
        expect(page.locator("#where")).to_contain_text("Item st_0002")
        fields = {name: page.input_value(f"#{name}") for name in ("query", "paper-id", "section", "note", "reason")}
        results_left = _results(page).count()
        problems = list(page.problems)
    assert "What an action costs" in rules and "read_section 5 points" in rules and "think free" in rules
    assert "A budget of 30 points and 20 actions" in rules or "You have a budget of 30 points and 20 actions" in rules
    assert "two refusals in a row end the attempt" in rules and "scores it like any agent run" in rules
    assert section_kept_for_same_paper == "Introduction"
    assert after_other_paper[0] != seed and after_other_paper[1] == ""
    assert fields == {"query": "", "paper-id": "", "section": "", "note": "", "reason": ""}
    assert results_left == 0
    assert problems == []


def test_an_attempt_is_resumed_after_its_tab_closes_and_a_restart_is_said_in_words(demo, tmp_path):
    corpus, _ = demo
    log = tmp_path / "log.sqlite"
    from playwright.sync_api import sync_playwright

    server = ServerThread(str(corpus), str(log), play=PlayOptions(items=("st_0001", "st_0002"))).start()
    port = server.port
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            first = browser.new_context(viewport=LAPTOP).new_page()
            _enter(first, server.base_url, "ivan")
            first.click("#play-next")
            first.locator("#game").wait_for()
            _act(first, 0, lambda: first.locator("#seed").get_by_role("button", name="Info").click())
            first.close()
            # The same browser, a new tab: the attempt is there, with its result.
            again = first.context.new_page()
            again.goto(f"{server.base_url}/play")
            again.locator("#game").wait_for()
            resumed = (again.inner_text("#where"), _results(again).count(), again.inner_text("#budget-text"))
            # Another browser: the list offers to resume it.
            other = browser.new_context(viewport=LAPTOP).new_page()
            _enter(other, server.base_url, "ivan")
            listed = other.inner_text("#items")
            note = other.inner_text("#unfinished")
            other.get_by_role("button", name="Resume st_0001").click()
            other.locator("#game").wait_for()
            _results(other).nth(0).wait_for()
            from_list = _results(other).count()
            # The server goes away: an action says so in words, not "Failed to fetch".
            server.stop()
            other.locator("#seed").get_by_role("button", name="References").click()
            other.locator("#problem").wait_for()
            dropped = other.inner_text("#problem")
            # It comes back (a new process on the same port): the lost attempt is explained, and not counted as played.
            server = ServerThread(str(corpus), str(log), port=port, play=PlayOptions(items=("st_0001", "st_0002"))).start()
            other.reload()
            other.locator("#choice").wait_for()
            lost = other.inner_text("#problem")
            after = other.inner_text("#items")
            browser.close()
    finally:
        server.stop()
    assert resumed == ("Item st_0001 · participant ivan", 1, "1 of 30 used, 29 left")
    assert "in progress" in listed and "You have 1 attempt in progress (st_0001)" in note
    assert from_list == 1
    assert dropped.startswith("The call did not go through: cannot reach the AgentHop server at 127.0.0.1:") and "Failed to fetch" not in dropped
    assert "was cut short: the server was restarted during it" in lost and "It does not count as played" in lost
    assert "cut short (server restarted)" in after


def test_the_end_screen_shows_the_outcome_and_reveal_blocks_a_replay(demo, tmp_path):
    corpus, _ = demo
    options = PlayOptions(items=("st_0001",), participant="jo", reveal=True)
    with ServerThread(str(corpus), str(tmp_path / "log.sqlite"), play=options) as server, browser_page() as page:
        page.goto(f"{server.base_url}/play")
        page.locator("#choice").wait_for()
        page.click("#play-next")
        page.locator("#game").wait_for()
        page.locator("#options input[value=A]").check()
        page.fill("#reason", "a guess")
        _act(page, 0, lambda: page.click("#answer-form button[type=submit]"))
        page.locator("#ending").wait_for()
        ending = page.inner_text("#ending")
        box = page.get_attribute("#ending", "class")
        colour = page.eval_on_selector("#ending", "e => getComputedStyle(e).borderTopColor")
        expect(page.locator("#next-item")).to_have_text("No unplayed item left")
        next_after_end = page.locator("#next-item").is_disabled()
        screenshot(page, tmp_path, "play-ended.png")
        page.click("#back")
        # The list is re-read from the server after #back: until then #choice still shows the list from before the
        # attempt, so wait for the finished row, not for #choice.
        expect(page.locator("#items tr")).to_contain_text("finished")
        expect(page.locator("#play-next")).to_be_disabled()
        row = page.inner_text("#items tr")
        next_disabled = page.locator("#play-next").is_disabled()
        problems = list(page.problems)
    assert ending.startswith("Not correct") and "Your answer\nA" in ending and "Correct answer\nD" in ending
    assert "Points used\n0 of 30" in ending and "Actions\n1 of 20" in ending and "Sections read\n0" in ending
    assert "The evidence was in:" in ending and GOLD_TITLE in ending
    assert box == "ending wrong" and colour == "rgb(164, 22, 26)"  # --bad, not the green of a right answer
    assert "finished" in row and "answer shown" in row and "Play again" not in row
    assert next_disabled and next_after_end
    assert problems == []


def test_at_800_px_the_header_keeps_item_and_participant_and_the_page_scrolls(demo, tmp_path):
    corpus, _ = demo
    with ServerThread(str(corpus), str(tmp_path / "log.sqlite"), play=PlayOptions(items=("st_0001",))) as server, \
            browser_page({"width": 800, "height": 900}) as page:
        _enter(page, server.base_url, "kim")
        screenshot(page, tmp_path, "play-start-800.png")
        page.click("#play-next")
        page.locator("#game").wait_for()
        _act(page, 0, lambda: page.locator("#seed").get_by_role("button", name="References").click())
        where = page.locator("#where")
        clipped = where.evaluate("e => e.scrollWidth > e.clientWidth")
        visible = where.is_visible()
        inner_scroll = page.eval_on_selector(".results-wrap", "e => getComputedStyle(e).overflowY")
        tops = {name: page.locator(sel).bounding_box()["y"] for name, sel in
                (("item", "#item"), ("tools", "#search-form"), ("results", "#results"), ("answer", "#answer-form"))}
        wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        page.evaluate("window.scrollTo(0, 0)")
        screenshot(page, tmp_path, "play-800.png")
        problems = list(page.problems)
    assert visible and not clipped
    assert inner_scroll == "visible"  # one column: the page scrolls, nothing scrolls inside it
    assert tops["item"] < tops["tools"] < tops["results"] < tops["answer"]  # in working order
    assert not wide
    assert problems == []
