"""/play in a real browser: a person plays a whole item on the demo corpus with the keyboard and the
mouse, the log is scored like any run and paired with a model's; a rejection and the two-rejection ending show
on the page; no console errors and no request beyond the server."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect
from support.web_common import browser_page, needs_chromium, screenshot

from agenthop.runner.cli import main as runner_main
from agenthop.scorer.cli import main as scorer_main
from agenthop.server.item_files import read_items
from agenthop.server.log.checkpoint import read_records
from agenthop.server.play.routes import PlayOptions
from agenthop.server.transport.http import ServerThread

pytestmark = [needs_chromium, pytest.mark.slow]

GOLD = "bbf675ce4d8a3306d3ff592732e83c68d0953093"  # st_0001's gold paper in the demo corpus (README, "A session")
GOLD_TITLE = "Learning Self-Supervised Image Retrieval from Bounding Boxes"
ANSWER_TEXT = "inter-annotator agreement of 0.66 among four annotators"


def _results(page):
    return page.locator("#results > li")


def _act(page, n_before: int, do) -> None:
    """Do one action and wait until its result is on the page."""
    do()
    _results(page).nth(n_before).wait_for()


def _seed(page) -> str:
    return page.text_content("#task").split("Seed paper\nID: ", 1)[1].split("\n", 1)[0].strip()


def test_a_whole_human_session_through_the_page_is_scored_like_a_run(demo, tmp_path):
    corpus, split = demo
    log = tmp_path / "log.sqlite"
    items = tuple(ref.id for ref in read_items(split))
    with ServerThread(str(corpus), str(log), play=PlayOptions(items=items)) as server, browser_page() as page:
        page.goto(f"{server.base_url}/play")
        page.fill("#participant", "alice")
        page.press("#participant", "Enter")
        expect(page.locator("#items-caption")).to_have_text("Items for alice: 0 of 64 finished")
        page.click("#play-next")
        page.locator("#game").wait_for()
        assert "Item st_0001 · participant alice" in page.inner_text("#where")
        assert page.inner_text("#question").startswith("The seed paper relies on earlier research")
        assert "(D) an inter-annotator" in page.inner_text("#options")
        assert "Question: The seed paper relies on earlier research" in page.text_content(
            "#task"
        )  # the agents' text, folded

        # Search, from the keyboard: '/' focuses the box, Enter searches.
        page.keyboard.press("/")
        page.keyboard.type("unsupervised image retrieval token pruning")
        _act(page, 0, lambda: page.keyboard.press("Enter"))
        assert page.locator("#results > li").nth(0).locator(".paper").count() == 5
        # Open the seed paper's references (one click, from the item), then a paper card's sections, then read one section.
        _act(page, 1, lambda: page.locator("#seed").get_by_role("button", name="References").click())
        assert page.input_value("#paper-id") == _seed(page)
        card = _results(page).nth(1).locator(".paper", has_text=GOLD_TITLE)
        _act(page, 2, lambda: card.get_by_role("button", name="Sections").click())
        assert "(D)" in _results(page).nth(2).inner_text()
        _act(page, 3, lambda: _results(page).nth(2).get_by_role("button", name="Read (D)").click())
        assert ANSWER_TEXT in _results(page).nth(3).inner_text()
        screenshot(page, tmp_path, "play.png")
        # The scratch pad is think: 'n' focuses it, Ctrl+Enter saves.
        page.keyboard.press("Escape")
        page.keyboard.press("n")
        page.keyboard.type("Benchmark Construction of the cited work: 0.66 among four annotators.")
        _act(page, 4, lambda: page.keyboard.press("Control+Enter"))
        # Answer with the keyboard: 'a' focuses the options, arrows choose, Ctrl+Enter in the reason submits.
        page.keyboard.press("Escape")
        page.keyboard.press("a")
        for _ in range(3):
            page.keyboard.press("ArrowDown")
        assert page.locator("#options input:checked").get_attribute("value") == "D"
        page.fill("#reason", "Section D of the cited data source reports 0.66 among four annotators.")
        _act(page, 5, lambda: page.press("#reason", "Control+Enter"))

        page.locator("#ending").wait_for()
        ending = page.inner_text("#ending")
        header = page.inner_text("header")
        disabled = (
            page.locator("#search-form button").is_disabled() and page.locator("#paper-form button").first.is_disabled()
        )
        heading_focused = page.evaluate("document.activeElement.id")
        problems, requested = list(page.problems), list(page.requested)

    assert "You submitted an answer." in ending and "Your answer\nD" in ending
    assert "Points used\n8 of 30" in ending and "Actions\n6 of 20" in ending and "Sections read\n1" in ending
    assert "not shown" in ending and "Correct answer" not in ending  # reveal is off by default
    assert "Action 6 of 20" in header and "8 of 30 used, 22 left" in header
    assert disabled and heading_focused == "ending-title"
    assert problems == []
    assert all(url.startswith((server.base_url + "/play", server.base_url + "/static/")) for url in requested), (
        requested
    )

    records = list(read_records(log))
    start = next(r for r in records if r["kind"] == "session_start")
    calls = [r for r in records if r["kind"] == "call"]
    assert (
        start["run"] == "human-alice"
        and start["client"]["name"] == "human"
        and start["client"]["participant"] == "alice"
    )
    assert start["caps"] == {"budget": 30, "max_turns": 20, "max_tokens": None}
    assert [(c["tool"], c["turn"], c["cost"]) for c in calls] == [
        ("search_papers", 1, 1),
        ("get_references", 2, 1),
        ("list_sections", 3, 1),
        ("read_section", 4, 5),
        ("think", 5, 0),
        ("submit_answer", 6, 0),
    ]
    assert calls[3]["delivered"]["paper_id"] == GOLD

    # Scored like any run, and paired with a model's run on the same item.
    out = tmp_path / "report"
    r = CliRunner().invoke(
        scorer_main, [f"{log}::human-alice", "--corpus", str(corpus), "--out", str(out)], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    row = summary["item_results"][0]
    assert (summary["items"]["n"], summary["headline"]["accuracy"], summary["headline"]["section_recall"]) == (
        1,
        1.0,
        1.0,
    )
    assert (row["answer"], row["audit"], row["termination"], row["turns"], row["tokens"]) == (
        "D",
        "correct",
        "answer",
        6,
        None,
    )
    assert summary["calls_per_turn"]["value"] == 1.0  # one person action, one turn
    # A person's report says who played, not "agent unknown" or "assistant turns".
    md = (out / "report.md").read_text()
    assert "played by alice" in md and "- **played by**: alice (client human, through the play page)" in md
    assert (
        "agent unknown" not in md and "assistant turns" not in md and "**agent**" not in md and "not recorded" not in md
    )
    one = tmp_path / "one.txt"
    one.write_text("st_0001\n")
    r = CliRunner().invoke(
        runner_main,
        [
            "--items",
            str(one),
            "--agent",
            "baseline",
            "--corpus",
            str(corpus),
            "--out",
            str(tmp_path / "model"),
            "--no-resume",
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        scorer_main,
        [
            "compare",
            f"{log}::human-alice",
            str(tmp_path / "model"),
            "--corpus",
            str(corpus),
            "--out",
            str(tmp_path / "pair"),
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    pair = json.loads((tmp_path / "pair" / "comparison.json").read_text())
    assert pair["n_common"] == 1 and pair["run_a"] == "human-alice"


def test_a_rejection_and_the_two_rejection_ending_show_on_the_page(demo, tmp_path):
    corpus, _ = demo
    log = tmp_path / "log.sqlite"
    options = PlayOptions(items=("st_0001",), participant="bob")
    with ServerThread(str(corpus), str(log), budget=6, play=options) as server, browser_page() as page:
        page.goto(f"{server.base_url}/play")
        # The participant is fixed by the server: the page shows it and lists the items at once.
        page.locator("#choice").wait_for()
        assert (
            page.input_value("#participant") == "bob"
            and page.locator("#participant").get_attribute("readonly") is not None
        )
        page.click("#play-next")
        page.locator("#game").wait_for()
        page.fill("#paper-id", GOLD)
        _act(page, 0, lambda: page.click("#paper-form button[data-tool=list_sections]"))
        _act(page, 1, lambda: page.click("#paper-form button[data-tool=get_paper_info]"))
        read = _results(page).nth(0).get_by_role("button", name="Read (D)")
        # 4 points left: the page says what the read would cost and asks first (the server's rule stays the agents').
        read.click()
        page.locator("#over-budget").wait_for()
        warning = page.inner_text("#over-text")
        over_marked = "over" in read.get_attribute("class")
        _act(page, 2, lambda: page.click("#over-go"))
        first = _results(page).nth(2)
        first_text, first_class = first.inner_text(), first.get_attribute("class")
        still_open = page.locator("#ending").is_hidden() and page.locator("#search-form button").is_enabled()
        read.click()
        second_warning = page.inner_text("#over-text")
        _act(page, 3, lambda: page.click("#over-go"))
        page.locator("#ending").wait_for()
        second_text = _results(page).nth(3).inner_text()
        ending = page.inner_text("#ending")
        header = page.inner_text("header")
        give_up_hidden = page.locator("#give-up").is_hidden()
        read_disabled = read.is_disabled()
        screenshot(page, tmp_path, "play-ended.png")
        problems = list(page.problems)

    assert warning == (
        "read D of bbf675ce4d8a… costs 5 points, and 4 points are left. The server will refuse the call "
        "(a refusal costs nothing); two refusals in a row end the attempt."
    )
    assert second_warning.endswith("and this would be the second refusal in a row: it ends the attempt.")
    assert over_marked
    assert "error" in first_class and "budget rejected" in first_text
    assert "Rejected: read_section costs 5 point(s) and only 4 remain. Nothing was charged." in first_text
    assert still_open
    assert "Rejected: read_section costs 5 point(s) and only 4 remain" in second_text
    assert "two calls in a row were refused because the budget could not pay for them" in ending
    assert "Your answer\nnone" in ending and "Points used\n2 of 6" in ending and "Correct answer" not in ending
    assert "2 of 6 used, 4 left" in header and "Action 4 of 20" in header
    assert give_up_hidden and read_disabled
    assert problems == []
    end = [r for r in read_records(log) if r["kind"] == "session_end"]
    assert [(e["termination"], e["budget_used"]) for e in end] == [("budget", 2)]


def test_tab_alone_reaches_every_tool_in_reading_order_with_a_visible_focus(demo, tmp_path):
    corpus, _ = demo
    with (
        ServerThread(str(corpus), str(tmp_path / "log.sqlite"), play=PlayOptions(items=("st_0001",))) as server,
        browser_page() as page,
    ):
        page.goto(f"{server.base_url}/play")
        page.locator("#participant").focus()
        page.keyboard.type("carol")
        page.keyboard.press("Enter")
        page.locator("#choice").wait_for()
        page.locator("#play-next").focus()
        page.keyboard.press("Enter")
        page.locator("#game").wait_for()
        seen = []
        for step in range(40):
            if step:
                page.keyboard.press("Tab")
            seen.append(
                page.evaluate("""() => {
                const el = document.activeElement, style = getComputedStyle(el);
                if (el === document.body) return ['(browser)', true];  // past the last control, focus leaves the page
                return [el.id || el.textContent.trim().slice(0, 20), style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2];
            }""")
            )
        problems = list(page.problems)
    order = [name for name, _ in seen]
    assert order[0] == "item"  # starting an attempt puts the focus on the item (seed paper and question)
    for name in ("item", "reason", "note", "query", "top-k", "paper-id", "section"):
        assert name in order, (name, order)
    wanted = ["item", "reason", "note", "query", "paper-id", "section"]
    assert [order.index(n) for n in wanted] == sorted(order.index(n) for n in wanted), order
    assert all(visible for _, visible in seen), [s for s in seen if not s[1]]
    assert problems == []
