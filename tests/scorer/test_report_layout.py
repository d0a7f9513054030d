"""The report as a reader meets it: the result first and provenance last, a table of contents that
works, category names that link to a glossary in the report itself, no rows of n/a, heatmap numbers at a readable
size, a comparison that names its runs, and Cronbach's alpha with its reason. The HTML report is opened in
Debian's Chromium; screenshots go to docs/ with AGENTHOP_SCREENSHOT_DIR."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from support.scorer_fixtures import build_corpus, write_items_file, write_main_run
from support.web_common import browser_page, needs_chromium, screenshot

from agenthop.runner.cli import main as runner_main
from agenthop.scorer.cli import main as scorer_main
from agenthop.scorer.document import alpha_undefined

FIRST = ["Result", "Warnings", "Four axes"]
LAST = ["Glossary", "Run and provenance"]


@pytest.fixture(scope="module")
def baseline_report(demo, tmp_path_factory):
    """The offline baseline over 16 demo items, scored: a report like the one `make demo` writes."""
    corpus, split = demo
    root = tmp_path_factory.mktemp("layout")
    r = CliRunner().invoke(
        runner_main,
        [
            "--items",
            str(split),
            "--limit",
            "16",
            "--agent",
            "baseline",
            "--corpus",
            str(corpus),
            "--out",
            str(root / "run"),
            "--no-progress",
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        scorer_main, [str(root / "run"), "--corpus", str(corpus), "--out", str(root / "report")], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    return root / "report"


@pytest.mark.slow
def test_the_markdown_report_leads_with_the_result_and_ends_with_provenance(baseline_report):
    md = (baseline_report / "report.md").read_text()
    titles = re.findall(r"^## (.+)$", md, flags=re.M)
    assert titles[0] == "Result" and titles[-2:] == LAST, titles
    assert md.index("**Contents:** [Result](#result)") < md.index("## Result")
    result = md.split("## Result", 1)[1].split("\n## ", 1)[0]
    assert re.search(
        r"Accuracy \d+\.\d% \[[\d.]+, [\d.]+\]: \d+ of 16 items right, against 25% by chance; 16 of 16 answered\.",
        result,
    )
    for axis in (
        "| search | paper recall (ST / MT) |",
        "| synthesis | conversion",
        "| tool use | calls per turn |",
        "| resources | mean budget points |",
    ):
        assert axis in result, axis
    # A category name links to its glossary entry, and the entry is in the report.
    assert (
        "[Incorrect, neither](<#g-incorrect-neither>)" in md
        and '<a id="g-incorrect-neither"></a>**Incorrect, neither**' in md
    )
    # The bigram table shows only differences that exist.
    bigrams = md.split("*Bigrams with the largest accuracy difference", 1)[1].split("\n\n", 2)[1]
    assert "n/a" not in bigrams
    summary = json.loads((baseline_report / "summary.json").read_text())
    shown = len([line for line in bigrams.splitlines() if line.startswith("| ") and "→" in line])
    assert shown == min(10, sum(1 for b in summary["trajectory"]["bigrams"] if b["difference"] is not None))


@needs_chromium
@pytest.mark.slow
@pytest.mark.parametrize(
    "viewport,shot", [({"width": 1366, "height": 768}, "report.png"), ({"width": 800, "height": 900}, "report-800.png")]
)
def test_the_html_report_has_contents_a_glossary_and_readable_heatmap_numbers(
    baseline_report, tmp_path, viewport, shot
):
    with browser_page(viewport) as page:
        page.goto((baseline_report / "report.html").resolve().as_uri())
        order = page.eval_on_selector_all("main > section", "s => s.map(e => e.id)")
        toc = page.eval_on_selector_all(".toc a", "a => a.map(e => e.getAttribute('href'))")
        screenshot(page, tmp_path, shot)
        page.click(".toc a[href='#trajectories']")
        jumped = page.evaluate("location.hash")
        heading_top = page.eval_on_selector(
            "#trajectories h2", "e => e.getBoundingClientRect().top"
        )  # the heading is in view, at the top
        # The glossary link of an audit category lands on its definition.
        page.click("#exposure-inspection-audit a[href='#g-incorrect-neither']")
        target = page.evaluate("document.querySelector(':target') && document.querySelector(':target').textContent")
        meaning = page.eval_on_selector("#g-incorrect-neither", "e => e.closest('tr').textContent")
        # Numbers in the heatmap, as rendered: at least 12 px tall.
        sizes = page.eval_on_selector_all(
            "#plot-transition-heatmap svg text",
            "ts => ts.filter(t => /^\\d\\.\\d\\d$/.test(t.textContent.trim()))"
            ".map(t => t.getBoundingClientRect().height)",
        )
        wide = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        problems = list(page.problems)
    assert order[:3] == ["result", "warnings", "four-axes"] or order[:2] == ["result", "four-axes"], order
    assert order[-2:] == ["glossary", "run-and-provenance"]
    assert toc == [f"#{s}" for s in order]
    assert jumped == "#trajectories" and -5 < heading_top < 60
    assert target == "Incorrect, neither" and "no gold paper was ever shown or read" in meaning
    assert sizes and min(sizes) >= 12, sizes
    assert not wide
    assert problems == []


def test_a_comparison_names_its_runs_and_says_why_alpha_is_missing(tmp_path):
    corpus = build_corpus(tmp_path)
    main = write_main_run(tmp_path / "runs")
    other = write_main_run(tmp_path / "runs", name="other")
    r = CliRunner().invoke(
        scorer_main,
        [
            "compare",
            str(main),
            str(other),
            "--corpus",
            str(corpus),
            "--out",
            str(tmp_path / "cmp"),
            "--items",
            str(write_items_file(tmp_path / "items.jsonl")),
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    md = (tmp_path / "cmp" / "comparison.md").read_text()
    assert md.startswith("# AgentHop comparison: main and other\n")
    assert "## main (A) against other (B)" in md and "A is main; B is other. Differences are B minus A." in md
    assert "| accuracy of main / other |" in md and "| gains (other right, main wrong) |" in md
    assert "other vs main" not in md
    # Two runs with the same totals: alpha is undefined, and the report says why.
    assert "Cronbach's alpha over" in md and "n/a (the runs' totals are all equal" in md
    # A run against itself: the two sides are still told apart.
    r = CliRunner().invoke(
        scorer_main,
        [
            "compare",
            str(main),
            str(main),
            "--corpus",
            str(corpus),
            "--out",
            str(tmp_path / "self"),
            "--items",
            str(tmp_path / "items.jsonl"),
        ],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    own = (tmp_path / "self" / "comparison.md").read_text()
    assert "## main [A] against main [B]" in own and "| gains (main [B] right, main [A] wrong) |" in own


def test_alpha_names_what_is_missing():
    assert alpha_undefined({"n_runs": 1, "n_items": 5}) == "it needs at least 2 runs"
    assert alpha_undefined({"n_runs": 2, "n_items": 0}) == (
        "it needs at least 2 items that every run has; these runs share 0 "
        "(people who each played different items share none)"
    )
    assert (
        alpha_undefined({"n_runs": 2, "n_items": 1})
        == "it needs at least 2 items that every run has; these runs share 1"
    )
