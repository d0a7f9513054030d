"""Every page people use has 0 axe-core violations: the score report, the comparison, the panel,
the trajectory viewer, /play (start page, item list, an attempt, the end screen, a refused name) and the review page
(name form, desk, key help, paper dialog). axe-core comes from the npm registry, pinned by tests/axe/package-lock.json
and installed by `make test`; it runs inside Debian's Chromium on each page in the state named."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import REPO as ROOT
from support.web_common import axe_violations, browser_page, needs_chromium

from agenthop.construct.pipeline import run_pipeline
from agenthop.construct.review_app import ReviewServer
from agenthop.construct.settings import Settings
from agenthop.runner.cli import main as runner_main
from agenthop.scorer.cli import main as scorer_main
from agenthop.server.play.routes import PlayOptions
from agenthop.server.transport.http import ServerThread

pytestmark = [needs_chromium, pytest.mark.slow]


@pytest.fixture(scope="module")
def static_pages(demo, tmp_path_factory) -> dict[str, Path]:
    """A report with its viewer, a comparison and a panel, from two small offline baseline runs."""
    corpus, _ = demo
    root = tmp_path_factory.mktemp("a11y")
    items = root / "items.txt"
    items.write_text("st_0001\nst_0002\nmt_0037\nmt_0038\n")
    for name in ("one", "two"):
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
                str(root / name),
                "--no-progress",
            ],
            catch_exceptions=False,
        )
        assert r.exit_code == 0, r.output
    for args in (
        [str(root / "one"), "--out", str(root / "report"), "--view"],
        ["compare", str(root / "one"), str(root / "two"), "--out", str(root / "cmp")],
        [
            "panel",
            str(root / "one"),
            str(root / "two"),
            "--out",
            str(root / "panel"),
            "--jobs",
            "1",
            "--resamples",
            "100",
        ],
    ):
        r = CliRunner().invoke(scorer_main, [*args, "--corpus", str(corpus)], catch_exceptions=False)
        assert r.exit_code == 0, r.output
    return {
        "report": root / "report" / "report.html",
        "viewer": root / "report" / "view" / "index.html",
        "comparison": root / "cmp" / "comparison.html",
        "panel": root / "panel" / "panel.html",
    }


@pytest.mark.parametrize("name", ["report", "comparison", "panel", "viewer"])
@pytest.mark.parametrize(
    "viewport", [{"width": 1366, "height": 768}, {"width": 800, "height": 900}], ids=["1366", "800"]
)
def test_the_static_pages_have_no_axe_violations(static_pages, name, viewport):
    with browser_page(viewport) as page:
        page.goto(static_pages[name].as_uri())
        if name == "viewer":  # a session open, with its calls and gold papers
            page.locator("#rows tr").first.click()
            page.locator(".question h2").wait_for()
        found = axe_violations(page)
        problems = list(page.problems)
    assert found == []
    assert problems == []


def test_play_has_no_axe_violations_from_the_start_page_to_the_end_screen(demo, tmp_path):
    corpus, _ = demo
    found = {}
    with (
        ServerThread(
            str(corpus), str(tmp_path / "log.sqlite"), play=PlayOptions(items=("st_0001", "st_0002"))
        ) as server,
        browser_page() as page,
    ):
        page.goto(f"{server.base_url}/play")
        page.locator("#participant").wait_for()
        found["start"] = axe_violations(page)
        page.fill("#participant", "ada")
        page.press("#participant", "Enter")
        page.locator("#choice").wait_for()
        found["list"] = axe_violations(page)
        page.click("#play-next")
        page.locator("#game").wait_for()
        page.locator("#seed").get_by_role("button", name="Sections").click()
        page.locator("#results > li").first.wait_for()
        page.keyboard.press("?")
        page.locator("#help").wait_for()
        found["attempt, with the key help"] = axe_violations(page)
        page.keyboard.press("Escape")
        page.click("#give-up")
        page.click("#give-up")
        page.locator("#ending").wait_for()
        found["end screen"] = axe_violations(page)
        # Another browser that enters the same name: the refusal and the key field.
        other = page.context.browser.new_context().new_page()
        other.goto(f"{server.base_url}/play")
        other.fill("#participant", "ada")
        other.press("#participant", "Enter")
        other.locator("#key-form").wait_for()
        found["a refused name"] = axe_violations(other)
        other.context.close()
        problems = list(page.problems)
    assert found == {state: [] for state in found}
    assert problems == []


def test_the_review_page_has_no_axe_violations(tmp_path):
    out = tmp_path / "run"
    run_pipeline(
        ROOT / "corpus.sqlite",
        out,
        Settings(min_refs=5, max_qa=8, max_chains_per_seed=2),
        until="sanity",
        echo=lambda line: None,
    )
    found = {}
    with ReviewServer(ROOT / "corpus.sqlite", out) as server, browser_page() as page:
        page.goto(server.url)
        page.locator("#auditor").wait_for()
        found["name form"] = axe_violations(page)
        page.keyboard.type("ada")
        page.keyboard.press("Enter")
        page.locator("#where").filter(has_text="·").wait_for()
        found["desk"] = axe_violations(page)
        page.keyboard.press("?")
        page.locator("#help").wait_for()
        found["key help"] = axe_violations(page)
        page.keyboard.press("Escape")
        page.locator("#papers button").first.click()
        page.locator("#paper-view[open]").wait_for()
        found["paper dialog"] = axe_violations(page)
        problems = list(page.problems)
    assert found == {state: [] for state in found}
    assert problems == []
