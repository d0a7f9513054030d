"""The review page in Chromium, by keyboard: no form before a name; the name typed and Enter; 20 verdicts by
keys only (Pass, Remove, Flag with a note, the quality axes), each saved visibly, the focus back on the candidate after
each (never in the note); a reload keeps the name, the place and the counts; a label edit survives j/k and a reload
until a verdict saves it; the filter, the key help, the skip link and focusable list entries; the layout at 1366x768
(verdict buttons above the fold) and at 800 px (no overflow); a second auditor's disagreement; the next run applies
the verdicts; and `review` binds its port before it prints a URL."""

from __future__ import annotations

import json
import re
import shutil
import socket

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect
from support.paths import REPO
from support.web_common import LAPTOP, axe_violations, browser_page, needs_chromium, screenshot

from agenthop.construct.cli import main as construct_main
from agenthop.construct.pipeline import run_pipeline
from agenthop.construct.review_app import PortTaken, ReviewServer
from agenthop.construct.settings import Settings
from agenthop.construct.verdicts import VerdictStore
from agenthop.corpus.importer import check_release

pytestmark = [needs_chromium, pytest.mark.slow]
CORPUS = REPO / "corpus.sqlite"
SETTINGS = Settings(min_refs=5)  # 23 candidates from the demo corpus, offline, in seconds


@pytest.fixture(scope="module")
def built_once(tmp_path_factory):
    out = tmp_path_factory.mktemp("review") / "run"
    run_pipeline(CORPUS, out, SETTINGS, echo=lambda line: None)
    return out


@pytest.fixture
def built(built_once, tmp_path):
    """A copy of the run per test, so each starts with no verdict."""
    return shutil.copytree(built_once, tmp_path / "run")


def _ids(page) -> list[str]:
    return page.locator("#list li").evaluate_all("(lis) => lis.map((li) => li.dataset.id)")


def _sign_in(page, name: str) -> list[str]:
    """Type the name in the focused name field, press Enter, and wait for the list; the candidate IDs in list order."""
    page.keyboard.type(name)
    page.keyboard.press("Enter")
    page.locator("#list li").first.wait_for()  # the list is drawn whole, once the server answered
    return _ids(page)


def _on(page, cid: str) -> None:
    """Wait until the page shows candidate cid (its keys act on it from then on)."""
    expect(page.locator("#where")).to_contain_text(f"{cid} ·")


def _active(page) -> str:
    return page.evaluate("document.activeElement.id || document.activeElement.tagName")


def test_twenty_verdicts_by_keys_a_reload_and_the_counts(built, tmp_path):
    out = built
    with ReviewServer(CORPUS, out) as server, browser_page() as page:
        page.goto(server.url)
        # Before a name: the form, with the focus in it, and no verdict control anywhere on the page.
        expect(page.locator("#auditor")).to_be_focused()
        assert page.locator("#desk").is_hidden() and not page.locator("#buttons button").first.is_visible()
        page.locator("#auditor").blur()
        page.keyboard.press("p")  # a shortcut outside the field, before a name, does nothing (and throws nothing)
        assert not [u for u in page.requested if "/api/" in u]
        page.locator("#auditor").focus()
        ids = _sign_in(page, "alice")
        assert len(ids) >= 22
        _on(page, ids[0])
        expect(page.locator("#candidate")).to_be_focused()
        assert page.locator("#options li.gold").count() == 1 and page.inner_text("#evidence")
        # 20 verdicts, keys only. Flag: f, the note, Ctrl+Enter. Every fifth from the fourth: Remove. Every seventh: axes first.
        expected = {}
        for i in range(20):
            cid = ids[i]
            _on(page, cid)
            if i % 7 == 0:
                for key in "123":
                    page.keyboard.press(key)
            if i % 5 == 3:
                page.keyboard.press("f")
                expect(page.locator("#note")).to_be_focused()
                page.keyboard.type(f"check option B of {cid}")
                page.keyboard.press("Control+Enter")
                kind = "flag"
            elif i % 5 == 4:
                page.keyboard.press("r")
                kind = "remove"
            else:
                page.keyboard.press("p")
                kind = "pass"
            expected[cid] = kind
            expect(page.locator("#saved")).to_have_text(
                re.compile(rf"^Saved: {kind} on {cid} by alice \(verdict #\d+\)\.$")
            )
            _on(page, ids[i + 1])
            # The focus is back on the candidate, never in the note: the next key is a shortcut.
            assert _active(page) == "candidate" and page.input_value("#note") == ""
            # "Saved" stays on screen beside the next candidate's own state.
            assert page.inner_text("#mine") == "Not reviewed by you yet."
        flagged, removed = list(expected.values()).count("flag"), list(expected.values()).count("remove")
        counts = f"You: 20 reviewed, {flagged} flagged, {removed} removed · Everyone: 20 of {len(ids)} reviewed, {flagged} flagged, {removed} removed, 0 disagreed"
        expect(page.locator("#progress")).to_have_text(counts)
        expect(page.locator(f"#list li[data-id='{ids[3]}']")).to_have_class("flag")

        # A reload: the name is remembered, the page comes back to the same candidate with the focus on it, the counts hold.
        page.reload()
        _on(page, ids[20])
        expect(page.locator("#me-name")).to_have_text("alice")
        assert page.locator("#who").is_hidden()
        expect(page.locator("#progress")).to_have_text(counts)
        expect(page.locator("#list-caption")).to_have_text(f"Candidates: 20 of {len(ids)} reviewed")
        expect(page.locator("#candidate")).to_be_focused()
        screenshot(page, tmp_path, "review.png")
        problems = list(page.problems)

    rows = VerdictStore(out / "audit" / "verdicts.sqlite").rows()
    assert [(r["candidate"], r["auditor"], r["verdict"]) for r in rows] == [
        (c, "alice", k) for c, k in expected.items()
    ]
    assert rows[0]["axes"] == {"well_formed": True, "gold_supported": True, "labels_accurate": True}
    assert rows[1]["axes"] == {}  # a plain p rates no axis: none is saved as false
    assert rows[3]["note"] == f"check option B of {ids[3]}"
    assert problems == []


def test_a_label_edit_survives_j_k_and_a_reload_until_a_verdict_saves_it(built, tmp_path):
    out = built
    with ReviewServer(CORPUS, out) as server, browser_page() as page:
        page.goto(server.url)
        ids = _sign_in(page, "carol")
        _on(page, ids[0])
        old = page.locator("#labels select.section").first.input_value()
        page.keyboard.press("l")
        page.keyboard.press("ArrowDown")
        new = page.locator("#labels select.section").first.input_value()
        assert new != old
        page.keyboard.press("Escape")
        expect(page.locator("#candidate")).to_be_focused()
        expect(page.locator("#draft")).to_contain_text("Unsaved edits (labels)")
        # j asks first; a second j moves on, and the edit stays as a draft (marked in the list).
        page.keyboard.press("j")
        expect(page.locator("#draft")).to_contain_text("Press j again to go on without a verdict")
        assert ids[0] in page.inner_text("#where")
        page.keyboard.press("j")
        _on(page, ids[1])
        expect(page.locator(f"#list li[data-id='{ids[0]}']")).to_have_class(re.compile(r"\bdraft\b"))
        page.keyboard.press("k")
        _on(page, ids[0])
        assert page.locator("#labels select.section").first.input_value() == new
        page.reload()
        _on(page, ids[0])
        assert page.locator("#labels select.section").first.input_value() == new
        page.keyboard.press("p")
        expect(page.locator("#saved")).to_have_text(re.compile(rf"^Saved: pass on {ids[0]} by carol"))
        _on(page, ids[1])
        expect(page.locator(f"#list li[data-id='{ids[0]}']")).not_to_have_class(re.compile(r"\bdraft\b"))
        problems = list(page.problems)
    row = [r for r in VerdictStore(out / "audit" / "verdicts.sqlite").rows() if r["auditor"] == "carol"][0]
    assert row["candidate"] == ids[0] and row["labels"][0]["section"] == new
    assert problems == []


def test_filter_help_skip_link_focusable_list_and_a_disagreement(built, tmp_path):
    out = built
    with ReviewServer(CORPUS, out) as server, browser_page() as page:
        page.goto(server.url)
        # The skip link comes first in the focus order, shows when focused, and Enter on it moves the focus to the review.
        first = page.evaluate("document.querySelector('a[href], button, input, select, textarea').className")
        skip = page.locator("a.skip")
        skip.focus()
        assert first == "skip" and skip.bounding_box()["x"] >= 0
        page.keyboard.press("Enter")
        expect(page.locator("#main")).to_be_focused()
        page.locator("#auditor").focus()
        ids = _sign_in(page, "dana")
        _on(page, ids[0])
        page.keyboard.press("p")
        _on(page, ids[1])
        # The key help opens on ? and closes on Esc.
        page.keyboard.press("?")
        expect(page.locator("#help")).to_be_visible()
        assert "Pass, then the next candidate" in page.inner_text("#help")
        page.keyboard.press("Escape")
        expect(page.locator("#help")).to_be_hidden()
        # The list entries take the focus (c), with a visible ring; Enter on one opens it.
        page.keyboard.press("c")
        focused = page.evaluate("""() => { const a = document.activeElement, s = getComputedStyle(a);
            return [a.closest('li') && a.closest('li').dataset.id, s.outlineStyle, parseFloat(s.outlineWidth)]; }""")
        assert focused[0] == ids[1] and focused[1] != "none" and focused[2] >= 2
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        _on(page, ids[2])
        # The filter (v): "not reviewed by me" leaves out the candidate dana passed.
        page.keyboard.press("v")
        expect(page.locator("#filter")).to_be_focused()
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Escape")
        expect(page.locator("#list-count")).to_have_text(f"{len(ids) - 1} of {len(ids)} shown (not reviewed by me)")
        assert ids[0] not in _ids(page)
        # Another auditor removes what dana passed: the filter "disagreed" shows it, the counts say it.
        other = page.context.browser.new_context(viewport=LAPTOP).new_page()  # another browser profile: no name stored
        other.goto(server.url)
        _on(other, _sign_in(other, "erik")[0])
        other.keyboard.press("r")
        expect(other.locator("#saved")).to_have_text(re.compile(rf"^Saved: remove on {ids[0]} by erik"))
        other.context.close()
        page.reload()
        _on(page, ids[2])
        page.select_option("#filter", "disagreed")
        expect(page.locator("#list li")).to_have_count(1)
        assert _ids(page) == [ids[0]]
        expect(page.locator("#progress")).to_contain_text(
            f"Everyone: 1 of {len(ids)} reviewed, 0 flagged, 1 removed, 1 disagreed"
        )
        problems = list(page.problems)
    assert problems == []


@pytest.mark.parametrize(
    "viewport,shot", [({"width": 1366, "height": 768}, None), ({"width": 800, "height": 900}, "review-800.png")]
)
def test_the_page_fits_a_laptop_with_the_verdict_in_view_and_800_px_without_overflow(built, tmp_path, viewport, shot):
    out = built
    with ReviewServer(CORPUS, out) as server, browser_page(viewport) as page:
        page.goto(server.url)
        _on(page, _sign_in(page, "fay")[0])
        fit = page.evaluate("""() => ({wide: document.documentElement.scrollWidth > innerWidth,
            buttons: Math.max(...[...document.querySelectorAll('#buttons button')].map((b) => b.getBoundingClientRect().bottom)),
            progress: document.querySelector('#progress').getBoundingClientRect().bottom})""")
        if shot:
            screenshot(page, tmp_path, shot)
        problems = list(page.problems)
    assert not fit["wide"]
    assert fit["progress"] <= viewport["height"]  # the counts are on screen
    if viewport["width"] == 1366:
        assert fit["buttons"] <= viewport["height"]  # the verdict buttons are above the fold
    assert problems == []


def test_review_binds_its_port_before_printing_and_a_taken_port_is_a_clear_error(built):
    out = built
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(PortTaken, match=rf"port {port} on 127.0.0.1 is already in use .* --port"):
            ReviewServer(CORPUS, out, port=port)
        r = CliRunner().invoke(
            construct_main, ["review", "--corpus", str(CORPUS), "--out", str(out), "--port", str(port)]
        )
    assert r.exit_code == 1 and f"port {port} on 127.0.0.1 is already in use" in r.output
    assert "http://" not in r.output  # no URL that would lead to whatever else listens there


def test_the_next_run_applies_the_verdicts(tmp_path):
    out = tmp_path / "run"
    first = run_pipeline(CORPUS, out, SETTINGS, echo=lambda line: None)
    provenance = json.loads((out / "release" / "construct" / "provenance.json").read_text())
    ids = sorted(provenance["items"].values())  # candidates in the release
    store = VerdictStore(out / "audit" / "verdicts.sqlite")
    axes = {"well_formed": True, "gold_supported": True, "labels_accurate": True}
    store.add(ids[0], "alice", "pass", axes)
    store.add(ids[1], "alice", "remove", axes, "the options give the answer away")
    store.add(ids[0], "bob", "flag", axes, "is the second option also supported?")
    store.close()
    second = run_pipeline(CORPUS, out, SETTINGS, echo=lambda line: None)
    assert second["ran"] == ["audit", "postfilter"]
    audit_row = {r["stage"]: r for r in second["attrition"]["rows"]}["audit"]
    assert audit_row["reasons"] == {"removed_by_auditor": 1} and audit_row["flagged"] == 1
    items = json.loads((out / "release" / "construct" / "provenance.json").read_text())["items"]
    assert ids[1] not in items.values() and ids[0] in items.values()
    # Every other item stays. Each blank is asked once per release, so the removed item's blank may come back
    # once, asked by the item it had displaced: at most one new ID, and never the removed one.
    before, after = set(provenance["items"].values()), set(items.values())
    assert len(before) == first["release"]["items"]
    assert after >= before - {ids[1]}
    back = after - before
    assert len(back) <= 1 and len(after) == len(before) - 1 + len(back)
    assert check_release(out / "release", echo=lambda line: None)["ok"]


def _verdict_posts(page) -> int:
    return sum(1 for u in page.requested if u.endswith("/review/api/verdicts"))


def test_a_note_and_ctrl_enter_give_no_verdict_and_an_axis_left_alone_is_not_rated(built):
    out = built
    with ReviewServer(CORPUS, out) as server, browser_page() as page:
        page.goto(server.url)
        ids = _sign_in(page, "gil")
        _on(page, ids[0])
        # Untouched axes show as mixed (a dash), not as unchecked.
        assert page.locator("#axes input").evaluate_all("(bs) => bs.map((b) => b.indeterminate)") == [True] * 3
        page.keyboard.press("n")
        page.keyboard.type("The gold answer is not supported by the evidence.")
        page.keyboard.press("Control+Enter")
        expect(page.locator("#draft")).to_contain_text("Note kept. Now choose: p Pass, f Flag")
        expect(page.locator("#candidate")).to_be_focused()
        assert _verdict_posts(page) == 0 and ids[0] in page.inner_text("#where")
        page.keyboard.press("f")  # with the note written, f flags at once
        expect(page.locator("#saved")).to_have_text(re.compile(rf"^Saved: flag on {ids[0]} by gil"))
        _on(page, ids[1])
        page.keyboard.press("2")
        page.keyboard.press("p")
        expect(page.locator("#saved")).to_have_text(re.compile(rf"^Saved: pass on {ids[1]} by gil"))
        _on(page, ids[2])
        problems = list(page.problems)
    rows = VerdictStore(out / "audit" / "verdicts.sqlite").rows()
    assert [(r["candidate"], r["verdict"]) for r in rows] == [(ids[0], "flag"), (ids[1], "pass")]
    assert rows[0]["note"] == "The gold answer is not supported by the evidence." and rows[0]["axes"] == {}
    assert rows[1]["axes"] == {"gold_supported": True}
    assert problems == []


def test_keys_pressed_while_a_verdict_is_saved_are_not_applied_and_the_page_says_so(built):
    out = built
    with ReviewServer(CORPUS, out) as server, browser_page() as page:
        page.goto(server.url)
        ids = _sign_in(page, "hal")
        _on(page, ids[0])
        # Five quick p presses, all before the first save can answer (dispatched in one task, so always "quick").
        page.evaluate("""() => { for (let i = 0; i < 5; i += 1) document.getElementById('candidate')
            .dispatchEvent(new KeyboardEvent('keydown', {key: 'p', bubbles: true, cancelable: true})); }""")
        expect(page.locator("#saved")).to_have_text(re.compile(rf"^Saved: pass on {ids[0]} by hal"))
        expect(page.locator("#ignored")).to_have_text(
            "4 keys (p p p p) pressed while a verdict was being saved: not applied, no verdict given by them. "
            "Press again once the candidate shows."
        )
        _on(page, ids[1])
        page.keyboard.press("j")  # the next key that acts clears the notice
        _on(page, ids[2])
        expect(page.locator("#ignored")).to_be_hidden()
        problems = list(page.problems)
    rows = VerdictStore(out / "audit" / "verdicts.sqlite").rows()
    assert [(r["candidate"], r["verdict"]) for r in rows] == [(ids[0], "pass")]
    assert problems == []


def test_a_label_edit_shows_its_own_section_and_two_labelled_sections_pass_axe(built):
    out = built
    with ReviewServer(CORPUS, out) as server, browser_page() as page:
        page.goto(server.url)
        ids = _sign_in(page, "ivy")
        _on(page, ids[0])
        page.keyboard.press("p")
        expect(page.locator("#saved")).to_have_text(re.compile(rf"^Saved: pass on {ids[0]}"))
        # A candidate whose first label's paper has another header to choose.
        for cid in ids[1:]:
            _on(page, cid)
            if page.locator("#labels select.section").first.locator("option").count() > 1:
                break
            page.keyboard.press("j")
        else:
            pytest.fail("no candidate has a label with a second header to choose")
        old = page.locator("#labels select.section").first.input_value()
        expect(page.locator("#sections h4").first).to_contain_text(f"{old} ·")
        page.keyboard.press("l")
        page.keyboard.press(
            "ArrowDown"
            if page.locator("#labels select.section").first.evaluate("(s) => s.selectedIndex < s.options.length - 1")
            else "ArrowUp"
        )
        new = page.locator("#labels select.section").first.input_value()
        assert new != old
        # The labelled section follows the edit, and the last candidate's "Saved" no longer sits under this one's edits.
        expect(page.locator("#sections h4").first).to_contain_text(f"{new} ·")
        expect(page.locator("#sections section").first).to_have_attribute("aria-label", f"Text of label 1: {new}")
        expect(page.locator("#saved")).to_have_text("")
        expect(page.locator("#draft")).to_contain_text("Unsaved edits (labels)")
        # The label's own button does not read like the candidate's Remove verdict.
        assert page.locator("#labels tbody button").first.inner_text() == "Delete label"
        page.click("#add-label")
        expect(page.locator("#sections section")).to_have_count(2)
        two_sections = axe_violations(page)
        problems = list(page.problems)
    assert two_sections == []
    assert problems == []


def test_a_filter_opens_what_it_shows_and_an_empty_view_offers_no_verdict(built):
    out = built
    with ReviewServer(CORPUS, out) as server, browser_page({"width": 800, "height": 900}) as page:
        page.goto(server.url)
        ids = _sign_in(page, "jo")
        _on(page, ids[0])
        page.keyboard.press("f")
        page.keyboard.type("option C is also supported")
        page.keyboard.press("Control+Enter")
        _on(page, ids[1])
        # At 800 px the page scrolls: the outcome of the verdict is still in the window.
        expect(page.locator("#saved")).to_have_text(re.compile(rf"^Saved: flag on {ids[0]}"))
        box = page.locator("#saved").bounding_box()
        assert 0 <= box["y"] and box["y"] + box["height"] <= 900
        pinned = axe_violations(page)
        page.select_option("#filter", "flagged")
        _on(page, ids[0])  # the flagged one opens, not the unflagged one that was on screen
        page.select_option("#filter", "removed")
        expect(page.locator("#nothing")).to_have_text(
            "No candidate in this view (removed). Press v to choose another filter."
        )
        expect(page.locator("#verdict")).to_be_hidden()
        assert page.locator("#buttons button:visible").count() == 0
        empty_view = axe_violations(page)
        page.locator("body").press("p")
        page.select_option("#filter", "all")
        _on(page, ids[0])
        expect(page.locator("#verdict")).to_be_visible()
        problems = list(page.problems)
    assert [r["verdict"] for r in VerdictStore(out / "audit" / "verdicts.sqlite").rows()] == ["flag"]
    assert pinned == [] and empty_view == []
    assert problems == []


def test_review_of_a_run_with_no_candidate_names_the_stage_that_kept_none(tmp_path):
    out = tmp_path / "empty"
    run_pipeline(CORPUS, out, Settings(min_refs=500), until="sanity", echo=lambda line: None)
    r = CliRunner().invoke(construct_main, ["review", "--corpus", str(CORPUS), "--out", str(out), "--port", "0"])
    assert r.exit_code == 1
    assert "nothing to review" in r.output and "Seeds kept none of" in r.output and "sanity stage" not in r.output
    assert "http://" not in r.output
