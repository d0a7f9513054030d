"""The audit page in Chromium: an auditor reviews three candidates by keyboard (one with a label edit), a reload shows
the verdicts kept, a second auditor's verdict is attributed to them, and the next run drops the Removed candidate from
the release and writes the edited label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect
from web_common import browser_page, needs_chromium, screenshot

from agenthop.construct.audit_app import AuditServer
from agenthop.construct.pipeline import run_pipeline
from agenthop.construct.settings import Settings
from agenthop.construct.verdicts import VerdictStore
from agenthop.server.corpus.importer import check_release

pytestmark = [needs_chromium, pytest.mark.slow]
CORPUS = Path(__file__).resolve().parents[1] / "corpus.sqlite"
SETTINGS = Settings(min_refs=5, max_qa=8, max_chains_per_seed=2)


def _start(page, url: str, name: str) -> None:
    page.goto(url)
    page.fill("#auditor", name)
    page.press("#auditor", "Enter")
    page.locator("#question").wait_for()


def test_review_three_candidates_by_keyboard_and_the_next_run_applies_the_verdicts(tmp_path):
    out = tmp_path / "run"
    first = run_pipeline(CORPUS, out, SETTINGS, echo=lambda line: None)
    provenance = json.loads((out / "release" / "construct" / "provenance.json").read_text())
    assert len(provenance["items"]) >= 3
    with AuditServer(CORPUS, out) as server, browser_page() as page:
        _start(page, server.url, "alice")
        ids = page.locator("#list li").evaluate_all("(lis) => lis.map((li) => li.dataset.id)")
        expect(page.locator("#list-caption")).to_have_text(f"Candidates: 0 of {len(ids)} reviewed")
        assert page.locator("#options li.gold").count() == 1 and page.inner_text("#evidence")
        assert page.locator("#sections mark").count() >= 1  # the evidence, marked in the labelled section's text
        where = page.locator("#where")
        # 1: the three axes, then Pass. (Each step waits until the page shows the candidate it acts on.)
        expect(where).to_contain_text(f"{ids[0]} ·")
        for key in "123":
            page.keyboard.press(key)
        page.keyboard.press("p")
        expect(page.locator("#status")).to_have_text("not reviewed by you yet")
        expect(page.locator("#list li").nth(0)).to_have_class("pass")
        # 2: repoint the first label to the next header, then Pass.
        expect(where).to_contain_text(f"{ids[1]} ·")
        old_section = page.locator("#labels select.section").first.input_value()
        page.keyboard.press("l")
        page.keyboard.press("ArrowDown")
        new_section = page.locator("#labels select.section").first.input_value()
        assert new_section != old_section
        page.keyboard.press("Escape")
        page.keyboard.press("p")
        expect(page.locator("#list li").nth(1)).to_have_class("pass")
        # 3: Remove, with a note.
        expect(where).to_contain_text(f"{ids[2]} ·")
        page.keyboard.press("n")
        page.keyboard.type("the options give the answer away")
        page.keyboard.press("Escape")
        page.keyboard.press("r")
        expect(page.locator("#list li").nth(2)).to_have_class("remove")
        expect(page.locator("#list-caption")).to_have_text(f"Candidates: 3 of {len(ids)} reviewed")
        screenshot(page, tmp_path, "audit.png")
        # Reload: the verdicts are the server's, not the page's.
        page.reload()
        _start(page, server.url, "alice")
        assert [page.locator("#list li").nth(i).get_attribute("class").replace("current", "").strip() for i in range(3)] == ["pass", "pass", "remove"]
        page.locator("#list li").nth(1).click()
        expect(page.locator("#status")).to_have_text("your verdict: pass")
        assert page.locator("#labels select.section").first.input_value() == new_section
        # A second auditor flags the first candidate: a Flag needs a note; the verdict is bob's.
        _start(page, server.url, "bob")
        page.locator("#list li").nth(0).click()
        expect(page.locator("#where")).to_contain_text(ids[0])
        page.keyboard.press("f")
        page.keyboard.type("is the second option also supported?")
        page.keyboard.press("Control+Enter")
        expect(page.locator("#list li").nth(0)).to_have_class("flag")
        assert page.problems == []
        assert all(url.startswith(server.url.rsplit("/audit", 1)[0]) for url in page.requested)

    rows = VerdictStore(out / "audit" / "verdicts.sqlite").rows()
    assert [(r["candidate"], r["auditor"], r["verdict"]) for r in rows] == [
        (ids[0], "alice", "pass"), (ids[1], "alice", "pass"), (ids[2], "alice", "remove"), (ids[0], "bob", "flag")]
    assert rows[1]["labels"][0]["section"] == new_section and rows[0]["labels"] is None
    assert rows[2]["note"] == "the options give the answer away" and rows[0]["axes"] == {"well_formed": True, "gold_supported": True, "labels_accurate": True}

    second = run_pipeline(CORPUS, out, SETTINGS, echo=lambda line: None)
    assert second["ran"] == ["audit", "postfilter"]
    audit_row = {r["stage"]: r for r in second["attrition"]["rows"]}["audit"]
    assert audit_row["reasons"] == {"removed_by_auditor": 1} and audit_row["flagged"] == 1
    items = json.loads((out / "release" / "construct" / "provenance.json").read_text())["items"]
    assert ids[2] not in items.values() and ids[0] in items.values() and ids[1] in items.values()
    assert len(items) == len(provenance["items"]) - 1 == first["release"]["items"] - 1
    labels = {json.loads(line)["analysis"]["construct"]["candidate"]: json.loads(line)["analysis"]["section_recall_labels"]
              for line in (out / "release" / "audit" / "recall_labels.jsonl").read_text().splitlines()}
    assert labels[ids[1]][0]["section"] == new_section
    assert check_release(out / "release", echo=lambda line: None)["ok"]
