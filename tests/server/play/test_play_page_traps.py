"""/play's traps: "i" then an ID replaces the ID in the field (never a costly "not found" call on the two
glued together), and a long ID wraps inside its card; a reload keeps the paper of the last action, so "s", a section
and Read go on; the "also open in another tab" banner goes when that tab leaves and on the end screen; a refusal is
worded for a person; error cards and the end screen pass axe; the name field has the focus on arrival and the item
list's rows are small enough that more than one fits above the fold."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from support.web_common import ARGS, CHROMIUM, LAPTOP, axe_violations, browser_page, needs_chromium

from agenthop.server.play.routes import PlayOptions
from agenthop.server.transport.http import ServerThread

pytestmark = [needs_chromium, pytest.mark.slow]

GOLD = "bbf675ce4d8a3306d3ff592732e83c68d0953093"  # st_0001's gold paper in the demo corpus


def _results(page):
    return page.locator("#results > li")


def _act(page, n_before: int, do) -> None:
    """Do one action and wait until its result is on the page."""
    do()
    _results(page).nth(n_before).wait_for()


def _start(page, url: str, participant: str) -> None:
    page.goto(f"{url}/play")
    expect(page.locator("#participant")).to_be_focused()  # no Tab needed to type the name
    page.keyboard.type(participant)
    page.keyboard.press("Enter")
    page.locator("#choice").wait_for()
    page.click("#play-next")
    page.locator("#game").wait_for()


def test_i_replaces_the_id_a_long_id_wraps_and_a_reload_keeps_the_paper(demo, tmp_path):
    corpus, _ = demo
    with (
        ServerThread(str(corpus), str(tmp_path / "log.sqlite"), play=PlayOptions(items=("st_0001",))) as server,
        browser_page() as page,
    ):
        _start(page, server.base_url, "ines")
        _act(page, 0, lambda: page.locator("#seed").get_by_role("button", name="Sections").click())
        seed = page.input_value("#paper-id")
        assert seed
        page.keyboard.press("i")
        long_id = "not-a-paper-" * 12
        page.keyboard.type(long_id)
        assert page.input_value("#paper-id") == long_id  # replaced, not appended to the seed's ID
        _act(page, 1, lambda: page.click("#paper-form button[data-tool=get_paper_info]"))
        card = _results(page).nth(1)
        expect(card).to_have_class("result error")
        overflow = card.evaluate("(li) => li.scrollWidth - li.clientWidth")
        # A reload: the paper of the last action is back in the field, so "s", an alias and Read need nothing else.
        page.locator("#paper-id").fill(GOLD)
        _act(page, 2, lambda: page.click("#paper-form button[data-tool=list_sections]"))
        page.reload()
        page.locator("#game").wait_for()
        expect(page.locator("#paper-id")).to_have_value(GOLD)
        expect(_results(page).last.locator("h3")).to_be_focused()  # back on the latest result: keys are shortcuts
        page.keyboard.press("s")
        page.keyboard.type("A")
        _act(page, 3, lambda: page.click("#paper-form button[data-tool=read_section]"))
        read = _results(page).nth(3).locator("h3").inner_text()
        problems = list(page.problems)
    assert overflow <= 0
    assert read.startswith("4. read A of")
    assert problems == []


def test_a_refusal_speaks_to_a_person_and_error_cards_and_the_end_screen_pass_axe(demo, tmp_path):
    corpus, _ = demo
    options = PlayOptions(items=("st_0001",))
    with (
        ServerThread(str(corpus), str(tmp_path / "log.sqlite"), budget=6, play=options) as server,
        browser_page() as page,
    ):
        _start(page, server.base_url, "otto")
        page.fill("#paper-id", GOLD)
        _act(page, 0, lambda: page.click("#paper-form button[data-tool=list_sections]"))
        _act(page, 1, lambda: page.click("#paper-form button[data-tool=get_paper_info]"))
        read = _results(page).nth(0).get_by_role("button", name="Read (D)")
        read.click()
        _act(page, 2, lambda: page.click("#over-go"))
        refusal = _results(page).nth(2)
        message = refusal.locator(".message").inner_text()
        refusal.locator("details.raw summary").click()
        agent_text = refusal.locator("details.raw pre").inner_text()
        error_card = axe_violations(page)
        read.click()
        _act(page, 3, lambda: page.click("#over-go"))
        page.locator("#ending").wait_for()
        ending_message = _results(page).nth(3).locator(".message").inner_text()
        end_screen = axe_violations(page)
        problems = list(page.problems)
    assert "Submit your answer now (it is free), or give up: another refused call in a row ends the attempt." in message
    assert "submit_answer" not in message and "session" not in message
    assert "Call submit_answer now" in agent_text  # the agent's words are still there, under their own heading
    assert "the attempt has ended (budget)" in ending_message and "submit_answer" not in ending_message
    assert error_card == [] and end_screen == []
    assert problems == []


def test_the_other_tab_banner_goes_when_that_tab_leaves_and_on_the_end_screen(demo, tmp_path):
    corpus, _ = demo
    from playwright.sync_api import sync_playwright

    with (
        ServerThread(str(corpus), str(tmp_path / "log.sqlite"), play=PlayOptions(items=("st_0001",))) as server,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport=LAPTOP)
        first = context.new_page()
        _start(first, server.base_url, "pia")
        second = context.new_page()
        second.goto(f"{server.base_url}/play")
        second.locator("#game").wait_for()
        _act(second, 0, lambda: second.locator("#seed").get_by_role("button", name="Info").click())
        _results(first).nth(0).wait_for()
        expect(first.locator("#elsewhere")).to_contain_text("also open in another tab")
        second.close(run_before_unload=True)  # the other tab is closed: the banner is no longer true
        expect(first.locator("#elsewhere")).to_be_hidden()
        # Open again, act there, then end here: the end screen shows no banner.
        third = context.new_page()
        third.goto(f"{server.base_url}/play")
        third.locator("#game").wait_for()
        _act(third, 1, lambda: third.locator("#seed").get_by_role("button", name="References").click())
        expect(first.locator("#elsewhere")).to_be_visible()
        first.click("#give-up")
        first.click("#give-up")
        first.locator("#ending").wait_for()
        expect(first.locator("#elsewhere")).to_be_hidden()
        # The tab that did not end it shows the end screen too, without the banner.
        expect(third.locator("#ending")).to_be_visible()
        expect(third.locator("#elsewhere")).to_be_hidden()
        browser.close()


def test_more_than_one_item_row_fits_above_the_fold(demo, tmp_path):
    corpus, _ = demo
    with (
        ServerThread(str(corpus), str(tmp_path / "log.sqlite"), play=PlayOptions()) as server,
        browser_page() as page,
    ):
        page.goto(f"{server.base_url}/play")
        expect(page.locator("#participant")).to_be_focused()
        page.keyboard.type("quinn")
        page.keyboard.press("Enter")
        page.locator("#items tr").nth(2).wait_for()
        sizes = page.evaluate("""() => ({question: getComputedStyle(document.querySelector('#items td.question')).fontSize,
            body: getComputedStyle(document.body).fontSize,
            bottoms: [...document.querySelectorAll('#items tr')].map((r) => r.getBoundingClientRect().bottom)})""")
        page.reload()  # a remembered name: listed at once, and the field still has the focus
        page.locator("#items tr").first.wait_for()
        expect(page.locator("#participant")).to_be_focused()
        problems = list(page.problems)
    assert float(sizes["question"].rstrip("px")) < float(sizes["body"].rstrip("px"))
    assert sum(b <= LAPTOP["height"] for b in sizes["bottoms"]) >= 2
    assert problems == []
