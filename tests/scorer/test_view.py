"""The trajectory viewer: its marks are the scorer's, result texts are what the session was shown,
the report links each item to it, and in Chromium (from file://, offline) it filters, steps through a session
and shows two runs side by side with no console errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner
from playwright.sync_api import expect
from support.web_common import browser_page, needs_chromium, screenshot

from agenthop.scorer.cli import main as scorer_main
from agenthop.scorer.gold import Gold
from agenthop.server.papers import Corpus
from agenthop.server.transport.http import ServerThread

GOLD = "bbf675ce4d8a3306d3ff592732e83c68d0953093"  # st_0001's gold paper in the demo corpus


def _call(http, sid, tool, **arguments) -> dict:
    r = http.post(f"/play/api/sessions/{sid}/call", json={"tool": tool, "arguments": arguments})
    assert r.status_code == 200, r.text
    return r.json()


def _wrong(gold: Gold, item: str) -> str:
    return next(letter for letter in "ABCD" if letter != gold.items[item].correct_letter)


@pytest.fixture(scope="module")
def played(demo, tmp_path_factory):
    """Three sessions played through the play API: alice right on st_0001 and wrong on st_0002, bob wrong on st_0001
    after seeing the gold paper. Returns (root, log, texts alice's st_0001 calls were shown)."""
    corpus, _ = demo
    root = tmp_path_factory.mktemp("view")
    log = root / "log.sqlite"
    gold = Gold(corpus)
    seed = Corpus(corpus).item("st_0001").seed_paper_id
    with ServerThread(str(corpus), str(log)) as server, httpx2.Client(base_url=server.base_url) as http:

        def start(who, item):
            return http.post("/play/api/sessions", json={"participant": who, "item": item}).json()["session_id"]

        sid = start("alice", "st_0001")
        shown = [
            _call(http, sid, "get_references", paper_id=seed),
            _call(http, sid, "list_sections", paper_id=GOLD),
            _call(http, sid, "read_section", paper_id=GOLD, section="D"),
            _call(http, sid, "submit_answer", answer=gold.items["st_0001"].correct_letter, reasoning="section D"),
        ]
        sid = start("alice", "st_0002")
        _call(http, sid, "think", reasoning="a guess")
        _call(http, sid, "submit_answer", answer=_wrong(gold, "st_0002"), reasoning="guess")
        sid = start("bob", "st_0001")
        _call(http, sid, "get_references", paper_id=seed)
        _call(http, sid, "submit_answer", answer=_wrong(gold, "st_0001"), reasoning="guess")
    gold.close()
    for args in (
        ["view", str(log), "--corpus", str(corpus), "--out", str(root / "view")],
        [str(log), "--corpus", str(corpus), "--out", str(root / "report"), "--view"],
    ):
        r = CliRunner().invoke(scorer_main, args, catch_exceptions=False)
        assert r.exit_code == 0, r.output
    return root, log, [s["text"].rsplit("\n\n[", 1)[0] for s in shown]


def _index(view: Path) -> dict:
    html = (view / "index.html").read_text()
    return json.loads(re.search(r'<script type="application/json" id="view-index">(.*?)</script>', html, re.S).group(1))


def _session(view: Path, row: dict) -> dict:
    text = (view / row["file"]).read_text()
    assert text.startswith("AgentHopView.load(") and text.endswith(");\n")
    return json.loads(text[len("AgentHopView.load(") : -3])


def test_the_viewer_marks_are_the_scorers_and_texts_are_what_the_person_saw(played):
    root, _, shown = played
    index = _index(root / "view")
    # Runs are keyed as the score command names their report directories: a log's "log::LABEL" becomes "log__LABEL".
    assert [(r["key"], r["name"]) for r in index["runs"]] == [
        ("log__human-alice", "log::human-alice"),
        ("log__human-bob", "log::human-bob"),
    ]
    rows = {(r["run"], r["item_id"]): r for r in index["rows"]}
    assert set(rows) == {
        ("log__human-alice", "st_0001"),
        ("log__human-alice", "st_0002"),
        ("log__human-bob", "st_0001"),
    }
    summary = json.loads((root / "report" / "log__human-alice" / "summary.json").read_text())
    scored = {r["item_id"]: r for r in summary["item_results"]}
    for item in ("st_0001", "st_0002"):
        row, data, s = (
            rows[("log__human-alice", item)],
            _session(root / "view", rows[("log__human-alice", item)]),
            scored[item],
        )
        assert (row["audit"], row["correct"], row["answer"]) == (s["audit"], s["correct"], s["answer"])
        firsts = [
            (m["paper_id"], c["seq"], m["rank"])
            for c in data["calls"]
            for m in c["marks"]
            if m["kind"] == "first_exposure"
        ]
        assert firsts == [(e["paper_id"], e["seq"], e["rank"]) for e in s["exposures"] if e["exposed"]]
        delivered = [m for c in data["calls"] for m in c["marks"] if m["kind"] == "delivered"]
        assert sorted({m["paper_id"] for m in delivered}) == s["gold_delivered"]
        assert sorted({m["paper_id"] for m in delivered if m["direct_hit"]}) == s["gold_direct_hit"]
    data = _session(root / "view", rows[("log__human-alice", "st_0001")])
    assert [c["tool"] for c in data["calls"]] == ["get_references", "list_sections", "read_section", "submit_answer"]
    assert [m["kind"] for m in data["calls"][0]["marks"]] == ["first_exposure"]
    assert [m["kind"] for m in data["calls"][2]["marks"]] == ["inspected", "delivered"] and data["calls"][2]["marks"][
        1
    ]["direct_hit"]
    # Texts of successful calls are reproduced from the corpus, exactly as the person was shown them.
    assert [c["text"] for c in data["calls"]] == shown
    assert [c["text_source"] for c in data["calls"]] == ["reproduced"] * 4
    bob = _session(root / "view", rows[("log__human-bob", "st_0001")])
    assert bob["audit"] == "incorrect_exposed" and bob["client"]["participant"] == "bob"


def test_the_report_links_each_item_to_its_session_in_the_view_beside_it(played):
    root, _, _ = played
    report = root / "report" / "log__human-alice" / "report.html"
    links = re.findall(r'<a href="([^"]*index\.html#[^"]+)">(\w+)</a>', report.read_text())
    assert [text for _, text in links] == ["st_0001", "st_0002"]
    index = _index(root / "report" / "view")
    for href, item in links:
        target, fragment = href.replace("&amp;", "&").split("#")
        assert (report.parent / target).resolve() == (root / "report" / "view" / "index.html").resolve()
        params = dict(part.split("=") for part in fragment.split("&"))
        assert any(r["run"] == params["run"] and r["item_id"] == params["item"] == item for r in index["rows"])
    markdown = (root / "report" / "log__human-alice" / "report.md").read_text()
    assert "[st_0001](<../view/index.html#run=log__human-alice&item=st_0001>)" in markdown
    # Without --view, a report has no item links and no Items section.
    plain = root / "plain"
    r = CliRunner().invoke(
        scorer_main,
        [f"{played[1]}::human-bob", "--corpus", "corpus.sqlite", "--out", str(plain)],
        catch_exceptions=False,
    )
    assert (
        r.exit_code == 0 and "index.html#" not in (plain / "report.html").read_text() and not (plain / "view").exists()
    )


@needs_chromium
def test_the_viewer_filters_steps_and_shows_two_runs_side_by_side_offline(played, tmp_path):
    root, _, _ = played
    url = (root / "view" / "index.html").resolve().as_uri()
    with browser_page() as page:
        page.goto(url)
        count = page.locator("#count")
        expect(count).to_have_text("3 of 3 sessions shown")
        page.select_option("#f-correct", "1")
        expect(count).to_have_text("1 of 3 sessions shown")
        page.select_option("#f-correct", "")
        page.select_option("#f-audit", "incorrect_exposed")
        expect(count).to_have_text("1 of 3 sessions shown")
        assert "human-bob" in page.inner_text("#rows")
        page.select_option("#f-audit", "")
        page.keyboard.press("/")
        page.keyboard.type("st_0002")
        expect(count).to_have_text("1 of 3 sessions shown")
        page.fill("#f-item", "")
        page.select_option("#f-run", "log__human-alice")
        expect(count).to_have_text("2 of 3 sessions shown")

        page.get_by_role("link", name="st_0001").click()
        position = page.locator(".stepper .note")
        expect(position).to_have_text("Call 1 of 4")
        calls = page.locator(".call")
        assert "gold bbf675ce4d8a… first shown (rank 2)" in calls.nth(0).inner_text()
        assert "action 1 · ok · cost 1" in calls.nth(0).inner_text()  # a person's turn is an action
        page.keyboard.press("Escape")
        page.keyboard.press("j")
        page.keyboard.press("j")
        expect(position).to_have_text("Call 3 of 4")
        expect(calls.nth(2)).to_have_class(re.compile(r"\bcurrent\b"))
        assert "delivered a labelled section of gold bbf675ce4d8a…" in calls.nth(2).inner_text()
        assert page.evaluate("document.activeElement.dataset.seq") == calls.nth(2).get_attribute("data-seq")
        screenshot(page, tmp_path, "view.png")
        page.keyboard.press("k")
        expect(position).to_have_text("Call 2 of 4")
        page.get_by_role("button", name="call 1").click()
        expect(position).to_have_text("Call 1 of 4")
        facts = page.inner_text(".facts")

        page.select_option("#vs", "log__human-bob")
        expect(page.locator(".sides.two > .side")).to_have_count(2)
        assert page.url.endswith("#run=log__human-alice&item=st_0001&vs=log__human-bob")
        sides = page.locator(".side")
        assert (
            "Correct" in sides.nth(0).inner_text()
            and "Incorrect, target exposed but not inspected" in sides.nth(1).inner_text()
        )
        options = page.inner_text(".options")

        page.keyboard.press("]")
        expect(page.locator(".question h2")).to_contain_text("st_0002")
        problems, requested = list(page.problems), list(page.requested)
    assert (
        "Played by\talice (client human, the play page)" in facts
        or "Played by\nalice (client human, the play page)" in facts
    )
    assert "actions 4" in facts and "agent" not in facts.lower().replace("agenthop", "")
    assert "answered by log::human-alice" in options and "answered by log::human-bob" in options
    assert problems == []
    assert all(u.startswith("file://") for u in requested), requested
