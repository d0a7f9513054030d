"""End to end: fake models with different habits run through the real runner and server, the panel scores
them, and panel.html opens in Chromium with every figure drawn and a clean console.

The models (tests/support/fake_openai.py, scripted per item from the seed paper in the prompt):
an early committer (one search, then a guess), an over-searcher (four searches, then reads the gold
papers and submits at once), and a verifier (reads the gold papers, thinks, submits), the verifier also
run closed-book and without search_papers (the ablations).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.fake_openai import FakeOpenAI, seed_id, text, tool_calls, turn_index
from support.release_fixture import ITEM_IDS, make_release, pid
from support.web_common import browser_page, needs_chromium

from agenthop.corpus.importer import import_release
from agenthop.runner.cli import main as runner_main
from agenthop.scorer.cli import main as scorer_main

# seed paper -> (gold papers, correct letter) of the fixture's three items
ITEMS = {pid("A"): (["B"], "B"), pid("F"): (["H"], "A"), pid("J"): (["B", "K"], "A")}
PLOTS = ("panel-coverage", "panel-accuracy-vs-recall", "panel-transitions")


def _item(body):
    return ITEMS[seed_id(body)]


def early(body, fake):
    if turn_index(body) == 0:
        return tool_calls(("search_papers", {"query": "method results"}))
    return tool_calls(("submit_answer", {"answer": "D", "reasoning": "a guess"}))


def searcher(body, fake):
    gold, letter = _item(body)
    t = turn_index(body)
    if t < 4:
        return tool_calls(("search_papers", {"query": f"query {t}"}))
    if t - 4 < len(gold):
        return tool_calls(("read_section", {"paper_id": pid(gold[t - 4]), "section": "C"}))
    return tool_calls(("submit_answer", {"answer": letter, "reasoning": "read it"}))


def verifier(body, fake):
    if [t["function"]["name"] for t in body.get("tools", [])] == ["submit_answer"]:
        return text("From the question alone: (C).")  # closed-book
    gold, letter = _item(body)
    t = turn_index(body)
    if t < len(gold):
        return tool_calls(("read_section", {"paper_id": pid(gold[t]), "section": "C"}))
    if t == len(gold):
        return tool_calls(("think", {"reasoning": "check the evidence against each option"}))
    return tool_calls(("submit_answer", {"answer": letter, "reasoning": "verified"}))


RUNS = (
    ("early", "early-1", early, ()),
    ("searcher", "searcher-1", searcher, ()),
    ("verifier", "verifier-1", verifier, ()),
    ("verifier-cb", "verifier-1", verifier, ("--closed-book",)),
    ("verifier-ns", "verifier-1", verifier, ("--disable-tools", "search_papers")),
)


@pytest.fixture(scope="module")
def panel_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("panel-e2e")
    corpus = root / "corpus.sqlite"
    import_release(make_release(root / "release"), corpus)
    items = root / "items.txt"
    items.write_text("\n".join(ITEM_IDS) + "\n")
    dirs = []
    for name, model, script, extra in RUNS:
        with FakeOpenAI(script) as fake:
            r = CliRunner().invoke(
                runner_main,
                [
                    "--items",
                    str(items),
                    "--agent",
                    "raw",
                    "--model",
                    model,
                    "--base-url",
                    fake.base_url,
                    "--corpus",
                    str(corpus),
                    "--out",
                    str(root / name),
                    "--no-progress",
                    "--backoff",
                    "0.01",
                    *extra,
                ],
                catch_exceptions=False,
            )
            assert r.exit_code == 0, r.output
        dirs.append(str(root / name))
    tiers = root / "tiers.toml"
    tiers.write_text('early = "small"\nsearcher = "small"\nverifier = "large"\n', encoding="utf-8")
    out = root / "panel"
    r = CliRunner().invoke(
        scorer_main,
        [
            "panel",
            *dirs,
            "--corpus",
            str(corpus),
            "--out",
            str(out),
            "--tiers",
            str(tiers),
            "--jobs",
            "1",
            "--resamples",
            "500",
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    return out


@pytest.mark.slow
def test_behaviours_show_in_the_panel(panel_dir):
    p = json.loads((panel_dir / "panel.json").read_text())
    assert [(r["run"], r["role"]) for r in p["runs"]] == [
        ("early", "full"),
        ("searcher", "full"),
        ("verifier", "full"),
        ("verifier-cb", "closed_book"),
        ("verifier-ns", "no_search"),
    ]
    main = {r["run"]: r for r in p["main_table"]["rows"]}
    # Ranked by accuracy within the tier: the searcher (100%) above the early committer (0%).
    assert list(main) == ["searcher", "early", "verifier"] and main["verifier"]["tier"] == "large"
    assert main["early"]["accuracy"] == 0.0 and main["searcher"]["accuracy"] == main["verifier"]["accuracy"] == 1.0
    stop = {r["run"]: r for r in p["stopping"]["rows"]}

    def counts(run, scope):
        return {k: v["n"] for k, v in stop[run][scope]["categories"].items() if v["n"]}

    assert counts("early", "mt_fail") == {"zero_gold": 1} and counts("early", "st") == {}
    assert counts("searcher", "st") == {"imm": 2} and counts("searcher", "mt_both") == {"imm": 1}
    assert counts("verifier", "st") == {"thnk": 2} and counts("verifier", "mt_both") == {"thnk": 1}
    tg = {r["run"]: r for r in p["trigrams"]["rows"]}
    assert tg["searcher"]["top"] == ["search_papers"] * 3 and tg["searcher"]["top_count"] == 6  # two per item
    (abl,) = p["ablation"]["rows"]
    assert (abl["model"], abl["closed_book"], abl["no_search"], abl["full"]) == (
        "verifier-1",
        "verifier-cb",
        "verifier-ns",
        "verifier",
    )
    # Closed-book answers C everywhere (right on none of the three); with tools the verifier is right on all.
    assert abl["accuracy"] == {"closed_book": 0.0, "no_search": 1.0, "full": 1.0}
    assert (abl["lift_tools"]["gains"], abl["lift_tools"]["losses"], abl["lift_tools"]["lift"]) == (3, 0, 1.0)
    assert (abl["lift_search"]["gains"], abl["lift_search"]["losses"]) == (0, 0)
    assert p["contact"]["rows"]["inspected"]["closed_book_n"] == 3  # the verifier's items, beside its closed-book run
    assert p["difficulty"]["histogram"] == [0, 0, 3, 0]  # searcher and verifier right on every item, early on none


@needs_chromium
def test_panel_page_draws_every_figure_without_console_errors(panel_dir):
    with browser_page() as page:
        page.goto((panel_dir / "panel.html").as_uri())
        drawn = page.eval_on_selector_all(
            "svg[data-plot]",
            "els => els.map(e => [e.dataset.plot, e.getBoundingClientRect().width,"
            " e.getBoundingClientRect().height, e.querySelectorAll('path, use, rect').length])",
        )
        assert sorted(d[0] for d in drawn) == sorted(PLOTS)
        for name, width, height, marks in drawn:
            assert width > 100 and height > 100 and marks > 5, (name, width, height, marks)
        # The per-run heatmaps' labels were once about 6 px, with no colour scale. Each label's size on screen:
        # its font size times the scale the page draws the figure at.
        sizes = page.eval_on_selector_all(
            "svg[data-plot=panel-transitions] text",
            "els => els.filter(e => e.textContent.trim()).map(e => { const m = e.getScreenCTM();"
            " return [e.textContent, parseFloat(getComputedStyle(e).fontSize) * Math.hypot(m.a, m.b)]; })",
        )
        assert sizes and min(size for _, size in sizes) >= 11, sorted(sizes, key=lambda t: t[1])[:3]
        assert "share of the row's next calls" in [label for label, _ in sizes]  # the colour scale's label
        headings = page.locator("h2").all_inner_texts()  # the table of contents, then the result first
        assert headings[0] == "Contents" and headings[1].startswith("Main table")
        assert page.problems == []
        assert all(url.startswith("file://") for url in page.requested), page.requested
