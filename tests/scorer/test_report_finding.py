"""Reports that say the finding: the Result section opens with one sentence naming the
weakest cell and whether search or synthesis fails there; rows that cannot fill are left out or say why once, never
"n/a"; the scorer names report.html and the viewer, and `make demo` writes the viewer too; the viewer says which
letter is the answer and, on a multi-target item, how many targets were read."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from support.paths import REPO as ROOT

from agenthop.runner.cli import main as runner_main
from agenthop.scorer.cli import main as scorer_main
from agenthop.scorer.document import budget_bands, finding


def _cell(n, correct, recalled, recalled_correct):
    return {
        "n": n,
        "accuracy": correct / n if n else None,
        "paper_recall": recalled / n if n else None,
        "conversion": recalled_correct / recalled if recalled else None,
        "conversion_n": recalled,
        "conversion_correct": recalled_correct,
    }


def _metrics(**cells):
    empty = _cell(0, 0, 0, 0)
    return {"by_cell": {c: cells.get(c.replace("-", "_"), empty) for c in ("ST-d1", "ST-d2", "MT-d1", "MT-d2")}}


def test_the_finding_names_the_weakest_cell_and_what_fails_there():
    # The demo's figures: MT-d2 57.1% with paper recall 7.1% (1 of 14 recalled, and that one right).
    demo = _metrics(ST_d1=_cell(18, 17, 18, 17), MT_d2=_cell(14, 8, 1, 1))
    assert finding(demo) == (
        "Finding: fails mostly on MT-d2 (57.1% accuracy, 14 items): paper recall 7.1%, so search, "
        "not synthesis (conversion 100.0%, 1 of 1 when the evidence was found)."
    )
    synthesis = _metrics(ST_d2=_cell(10, 4, 9, 4), MT_d1=_cell(10, 9, 10, 9))
    assert finding(synthesis) == (
        "Finding: fails mostly on ST-d2 (40.0% accuracy, 10 items): paper recall 90.0%, but "
        "conversion 44.4%, 4 of 9, so synthesis, not search: the evidence was read and not used."
    )
    never_found = _metrics(MT_d1=_cell(3, 1, 0, 0))
    assert "paper recall 0.0%, so search, not synthesis: no item there had all its gold papers read" in finding(
        never_found
    )
    assert finding(_metrics(ST_d1=_cell(3, 3, 3, 3))) == "Finding: every cell is answered right (100%)."
    assert finding(_metrics()) is None


def test_budget_bands_above_every_cap_are_left_out():
    bands = {k: {"n": n, "accuracy": None if not n else 1.0} for k, n in (("0-5", 0), ("26-30", 3), ("31+", 0))}
    assert list(budget_bands(bands, [{"value": {"budget": 30}, "sessions": 3}])) == ["0-5", "26-30"]
    assert list(budget_bands(bands, [{"value": {"budget": None}, "sessions": 3}])) == [
        "0-5",
        "26-30",
        "31+",
    ]  # no cap: could fill


@pytest.fixture(scope="module")
def scored(demo, tmp_path_factory):
    """The offline baseline on three MT-d2 items it gets wrong or right and three ST items, scored with the viewer."""
    corpus, _ = demo
    root = tmp_path_factory.mktemp("finding")
    items = root / "items.txt"
    items.write_text("st_0001\nst_0002\nst_0003\nmt_0037\nmt_0038\nmt_0040\n")
    r = CliRunner().invoke(
        runner_main,
        [
            "--items",
            str(items),
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
        scorer_main,
        [str(root / "run"), "--corpus", str(corpus), "--out", str(root / "report"), "--view"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    return root / "report", r.output


def test_the_report_opens_with_the_finding_and_has_no_na_rows_that_cannot_fill(scored):
    report, output = scored
    md = (report / "report.md").read_text()
    result = md.split("## Result", 1)[1].split("\n## ", 1)[0]
    first = next(line for line in result.splitlines() if line.strip() and not line.startswith("<a"))
    assert re.fullmatch(
        r"Finding: fails mostly on MT-d2 \(\d+\.\d% accuracy, 95% interval \d+\.\d-\d+\.\d%, 3 items\): "
        r"paper recall \d+\.\d%, so "
        r"(search, not synthesis|synthesis, not search).*",
        first,
    ), first
    assert "| 31+ |" not in md  # no item can spend more than the 30-point budget
    table_rows = [line for line in md.splitlines() if line.startswith("| ") and line.rstrip().endswith("| n/a |")]
    assert table_rows == [], table_rows
    assert "– : no item fell in this row, so it has no rate." in md
    assert "<p>Finding: fails mostly on MT-d2" in (report / "report.html").read_text()
    # The scorer says where to look next.
    assert f"report: {report / 'report.html'} (open it in a browser" in output
    assert f"trajectory viewer: {report / 'view' / 'index.html'}" in output


def test_the_viewer_says_which_letter_is_the_answer_and_how_many_targets_were_read(scored):
    report, _ = scored
    page = (report / "view" / "index.html").read_text()
    sessions = "".join(p.read_text() for p in (report / "view" / "sessions").rglob("*.js"))
    assert ">Answer / correct</th>" in page and "answered ${r.answer" in page
    assert re.search(r"Incorrect, 1 of 2 targets inspected", sessions)


def test_make_demo_writes_the_viewer_and_names_what_to_open():
    demo = (ROOT / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    assert "agenthop-scorer runs/demo-baseline --corpus corpus.sqlite --out report/demo-baseline --view" in demo
    assert "report/demo-baseline/report.html" in demo and "report/demo-baseline/view/index.html" in demo
    assert "agenthop-server play" in demo
