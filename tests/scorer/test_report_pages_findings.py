"""The report, the comparison, the panel and the viewer say what is true for every run: a closed-book run
is not told "search, not synthesis"; a cell of fewer than three items gives no finding; the comparison and the panel
open with a finding; a footer names a glossary only where there is one; p-values are never in exponent notation;
at 800 px the comparison's runs table fits and the panel's contents do not run into each other; a one-run panel marks
nothing; its tables that cannot be computed are listed once with what they need; the viewer opens #item=ID alone."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from playwright.sync_api import expect
from support.web_common import browser_page, needs_chromium

from agenthop.runner.cli import main as runner_main
from agenthop.scorer.cli import main as scorer_main
from agenthop.scorer.document import finding, p_value, ranking_finding

NARROW = {"width": 800, "height": 900}


def _cell(n, correct, recalled, recalled_correct):
    return {
        "n": n,
        "accuracy": correct / n if n else None,
        "accuracy_ci95": (0.1, 0.9) if n else None,
        "paper_recall": recalled / n if n else None,
        "conversion": recalled_correct / recalled if recalled else None,
        "conversion_n": recalled,
        "conversion_correct": recalled_correct,
    }


def _metrics(**cells):
    empty = _cell(0, 0, 0, 0)
    return {"by_cell": {c: cells.get(c.replace("-", "_"), empty) for c in ("ST-d1", "ST-d2", "MT-d1", "MT-d2")}}


def test_a_finding_needs_items_says_its_interval_and_is_never_search_for_a_closed_book_run():
    two_items = _metrics(ST_d1=_cell(1, 1, 1, 1), MT_d2=_cell(1, 0, 0, 0))
    assert finding(two_items).startswith("No finding: the weakest cell, MT-d2, has 1 item (0.0% accuracy)")
    m = _metrics(MT_d2=_cell(10, 4, 2, 2))
    assert finding(m).startswith("Finding: fails mostly on MT-d2 (40.0% accuracy, 95% interval 10.0-90.0%, 10 items)")
    closed = finding(m, closed_book=True)
    assert closed.startswith("Finding: closed-book run (no tool but submit_answer)")
    assert "search, not synthesis" not in closed and "synthesis, not search" not in closed


def test_p_values_and_the_ranking_sentence():
    assert [p_value(x) for x in (4.768e-07, 0.000999, 0.001, 0.01234, 0.5, 1.0, None)] == [
        "< 0.001",
        "< 0.001",
        "0.001",
        "0.0123",
        "0.5",
        "1",
        "n/a",
    ]
    runs = [{"run": "a", "accuracy": 0.5, "n": 40}, {"run": "b", "accuracy": 0.8, "n": 40}]
    strong = [{"run_a": "a", "run_b": "b", "mcnemar_exact_p": 4.768e-07}]
    assert ranking_finding(runs, strong) == (
        "Finding: b is the most accurate run (80.0%), 30.0 pp above a; the exact McNemar test on the items both "
        "answered separates them (p < 0.001)."
    )
    weak = [{"run_a": "a", "run_b": "b", "mcnemar_exact_p": 0.21}]
    assert ranking_finding(runs, weak).endswith("does not separate them (p = 0.21), so the lead may be chance.")
    assert ranking_finding(runs[:1], []) == "Finding: one run, a, 50.0% on 40 items: nothing to rank it against."


@pytest.fixture(scope="module")
def pages(demo, tmp_path_factory):
    """Two full-tool baseline runs and a closed-book one on four demo items; a report of each, a comparison, a panel
    of the two full-tool runs and one of a single run, and the viewer of one run."""
    corpus, _ = demo
    root = tmp_path_factory.mktemp("findings")
    items = root / "items.txt"
    items.write_text("st_0001\nst_0002\nst_0003\nmt_0037\nmt_0038\nmt_0040\n")
    three_per_cell = root / "three.txt"  # ST-d1 and ST-d2, three items each: enough for a finding
    three_per_cell.write_text("st_0001\nst_0002\nst_0004\nst_0003\nst_0005\nst_0007\n")
    for name, extra in (("one", []), ("two", []), ("closed", ["--closed-book"])):
        chosen = three_per_cell if name == "closed" else items
        r = CliRunner().invoke(
            runner_main,
            ["--items", str(chosen), "--agent", "baseline", "--corpus", str(corpus), "--out", str(root / name)]
            + ["--no-progress", *extra],
            catch_exceptions=False,
        )
        assert r.exit_code == 0, r.output
    for args in (
        [str(root / "one"), "--out", str(root / "report"), "--view"],
        [str(root / "closed"), "--out", str(root / "closed-report")],
        ["compare", str(root / "one"), str(root / "two"), "--out", str(root / "cmp")],
        ["panel", str(root / "one"), str(root / "two"), "--out", str(root / "panel"), "--jobs", "1"],
        ["panel", str(root / "one"), "--out", str(root / "panel1"), "--jobs", "1"],
    ):
        extra = ["--resamples", "100"] if "panel" in args else []
        r = CliRunner().invoke(scorer_main, [*args, "--corpus", str(corpus), *extra], catch_exceptions=False)
        assert r.exit_code == 0, r.output
    return root


def test_the_pages_say_a_finding_that_holds_and_point_only_to_what_they_have(pages):
    closed = (pages / "closed-report" / "report.md").read_text()
    assert "Finding: closed-book run (no tool but submit_answer)" in closed
    assert "search, not synthesis" not in closed and "synthesis, not search" not in closed
    cmp_md = (pages / "cmp" / "comparison.md").read_text()
    panel_md = (pages / "panel" / "panel.md").read_text()
    assert cmp_md.split("\n\n")[1].startswith("Finding: ")
    assert panel_md.split("\n\n")[1].startswith("Finding: ")
    for page in (pages / "cmp" / "comparison.md", pages / "panel" / "panel.md", pages / "report" / "report.md"):
        assert not re.search(r"\d\.?\d*e-\d\d", page.read_text()), page  # no p-value in exponent notation
    panel_html = (pages / "panel" / "panel.html").read_text()
    assert "glossary above" not in panel_html and 'id="glossary"' not in panel_html
    assert "glossary above" in (pages / "cmp" / "comparison.html").read_text()
    # Tables that cannot be computed are listed once, each with what it needs; none is a section of its own.
    body = panel_md.split("## Not computed here", 1)
    assert len(body) == 2 and "Not computed:" not in body[0]  # no section of its own says only that
    assert (
        "- Closed-book accuracy (the paper's Table 18). Not computed: closed-book accuracy needs closed-book runs"
        in body[1]
    )
    one_run = (pages / "panel1" / "panel.md").read_text()
    main_table = one_run.split("## Main table", 1)[1].split("\n## ", 1)[0]
    values = main_table.split("need two runs or more", 1)[1]
    assert "★" not in values and "●" not in values
    assert "no value is marked" in main_table


@needs_chromium
@pytest.mark.slow
def test_at_800_px_the_runs_table_fits_and_the_contents_do_not_overlap(pages):
    with browser_page(NARROW) as page:
        page.goto((pages / "cmp" / "comparison.html").as_uri())
        runs = page.evaluate(
            "() => { const w = document.querySelector('#runs .table-wrap'); return [w.scrollWidth, w.clientWidth]; }"
        )
        page.goto((pages / "panel" / "panel.html").as_uri())
        overlaps = page.evaluate("""() => {
            const boxes = [...document.querySelectorAll('.toc li')].map((li) => {
                const r = li.getBoundingClientRect(), m = li.querySelector('a').getBoundingClientRect();
                return {left: r.left - 24, right: Math.max(r.right, m.right), top: r.top, bottom: r.bottom, text: li.textContent};
            });
            const out = [];
            for (const a of boxes) for (const b of boxes) {
                if (a !== b && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) out.push([a.text, b.text]);
            }
            return out;
        }""")
        problems = list(page.problems)
    assert runs[0] <= runs[1], runs
    assert overlaps == []
    assert problems == []


@needs_chromium
@pytest.mark.slow
def test_the_viewer_opens_an_item_alone_and_never_says_left_on_a_narrow_screen(pages):
    index = (pages / "report" / "view" / "index.html").as_uri()
    with browser_page(NARROW) as page:
        page.goto(index)
        empty = page.locator("#detail .empty").inner_text()
        page.goto(index + "#item=st_0003")
        expect(page.locator(".question h2")).to_be_visible()
        expect(page.locator("#detail")).to_contain_text("st_0003")
        address = page.evaluate("location.hash")
        problems = list(page.problems)
    assert "left" not in empty and "list of sessions" in empty
    assert address.startswith("#run=") and "item=st_0003" in address
    assert problems == []
