"""Explore mode on a corpus built from the real eLife fixtures, through a real MCP client over stdio: papers you
can read come before reference stubs in search, and paper IDs are found as people type them
(point 6)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from support.server_helpers import build_fixture_corpus, text

pytestmark = pytest.mark.anyio
WITH_TEXT = {"doi:10.7554/elife.00007", "doi:10.7554/elife.00240", "doi:10.7554/elife.04490"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("elife") / "corpus.sqlite"
    build_fixture_corpus("jats", out)
    return out


async def explore(corpus: Path, log: Path, calls: list[tuple[str, dict]]) -> list:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agenthop.server", "serve", "--corpus", str(corpus), "--log", str(log)]
    )
    async with Client(params, read_timeout_seconds=60) as client:
        return [await client.call_tool(name, args) for name, args in calls]


async def test_papers_with_text_come_before_reference_stubs(corpus, tmp_path):
    """Baldwin wrote two of the three papers and dozens of the works they cite; the cited works' stubs (title and
    authors only) are short documents, which BM25 ranks first."""
    baldwin, volatiles = await explore(
        corpus,
        tmp_path / "log.sqlite",
        [
            ("search_papers", {"query": "Baldwin", "top_k": 10}),
            ("search_papers", {"query": "herbivore-induced plant volatiles"}),
        ],
    )
    found = baldwin.structured_content["results"]
    assert [r["paper_id"] for r in found[:2]] == ["doi:10.7554/elife.00007", "doi:10.7554/elife.04490"]
    assert all(r["has_text"] for r in found[:2]) and not any(r["has_text"] for r in found[2:])
    assert len(found) == 10  # the stubs still come, after the papers you can read
    # Since explore mode got its own tools, a stub whose title holds every word of the query is not a weak match: it comes first, then the
    # papers with text (which hold some of the words), then the other stubs.
    ranked = volatiles.structured_content["results"]
    assert (
        ranked[0]["title"].startswith("The evolutionary context for herbivore-induced plant volatiles")
        and not ranked[0]["has_text"]
    )
    assert [r["paper_id"] for r in ranked[1:3]] == ["doi:10.7554/elife.00007", "doi:10.7554/elife.04490"]
    assert not any(r["has_text"] for r in ranked[3:])


async def test_dois_are_found_however_they_are_typed(corpus, tmp_path):
    results = await explore(
        corpus,
        tmp_path / "log.sqlite",
        [
            ("get_paper_info", {"paper_id": "doi:10.7554/eLife.00240"}),
            ("get_paper_info", {"paper_id": "10.7554/elife.00240"}),
            ("get_paper_info", {"paper_id": "https://doi.org/10.7554/eLife.00240"}),
            ("get_references", {"paper_id": "10.7554/ELIFE.00240"}),
            ("list_sections", {"paper_id": "doi:10.7554/eLife.00240"}),
        ],
    )
    for result in results:
        assert not result.is_error, text(result)
    assert {r.structured_content.get("paper", {}).get("paper_id") for r in results[:3]} == {"doi:10.7554/elife.00240"}
    assert len(results[3].structured_content["references"]) == 7
    assert [s["header"] for s in results[4].structured_content["sections"]] == ["Main text"]


async def test_an_unknown_id_suggests_the_closest_one(corpus, tmp_path):
    result, bare = await explore(
        corpus,
        tmp_path / "log.sqlite",
        [
            ("get_paper_info", {"paper_id": "doi:10.7554/elife.0024"}),
            ("get_paper_info", {"paper_id": "10.7554/eLife.0449"}),
        ],
    )
    assert result.structured_content["closest"] == "doi:10.7554/elife.00240"
    assert bare.structured_content["closest"] == "doi:10.7554/elife.04490"
    assert (
        "Paper 'doi:10.7554/elife.0024' is not in the papers available to you. The closest ID is 'doi:10.7554/elife.00240'."
        in text(result)
    )
