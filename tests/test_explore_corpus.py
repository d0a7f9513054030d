"""The committed real-paper explore corpus (explore/README.md): rebuilt from the committed sources by the project's
own `corpus build`, byte for byte the committed build, at least 500 papers with text and 1,000 citations between
them; served over stdio and explored through a real MCP client along a citation chain of three real papers."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from server_helpers import text

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parent.parent
# Reynar and Ratnaparkhi's sentence-boundary paper cites the Xerox tagger (Cutting et al.), which cites Kupiec's HMM tagger.
REYNAR = "acl:A97-1004"
XEROX = "acl:A92-1018"
KUPIEC = "acl:H89-2014"


@pytest.fixture(scope="module")
def explore_corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("explore") / "explore.sqlite"
    done = subprocess.run([sys.executable, str(ROOT / "explore" / "rebuild.py"), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # rebuild.py exits 1 when the bytes differ from the committed build
    assert "the committed build, byte for byte" in done.stderr
    return out


def test_the_corpus_has_the_papers_and_links_the_issue_asks_for(explore_corpus):
    conn = sqlite3.connect(explore_corpus)
    with_text = conn.execute("SELECT COUNT(*) FROM papers WHERE has_text = 1").fetchone()[0]
    linked = conn.execute("SELECT COUNT(*) FROM edges e JOIN papers a ON a.paper_id = e.citing JOIN papers b ON b.paper_id = e.cited "
                          "WHERE a.has_text = 1 AND b.has_text = 1").fetchone()[0]
    conn.close()
    assert with_text >= 500 and linked >= 1000


async def test_a_citation_chain_through_a_real_mcp_client(explore_corpus, tmp_path):
    params = StdioServerParameters(command=sys.executable, args=["-m", "agenthop.server", "serve", "--corpus", str(explore_corpus),
                                                                 "--log", str(tmp_path / "log.sqlite")])
    async with Client(params, read_timeout_seconds=60) as client:
        found = await client.call_tool("search_papers", {"query": "maximum entropy sentence boundaries"})
        first = await client.call_tool("get_references", {"paper_id": REYNAR})
        second = await client.call_tool("get_references", {"paper_id": XEROX})
        sections = await client.call_tool("list_sections", {"paper_id": KUPIEC})
        read = await client.call_tool("read_section", {"paper_id": KUPIEC, "section": "Introduction"})
    hits = found.structured_content["results"]
    assert (hits[0]["paper_id"], hits[0]["title"]) == (REYNAR, "A Maximum Entropy Approach To Identifying Sentence Boundaries")
    cited = {r["paper_id"]: r for r in first.structured_content["references"]}
    assert cited[XEROX]["has_text"] is True and "(e.g. (Cutting et al., 1992))" in cited[XEROX]["context"]
    cited = {r["paper_id"]: r for r in second.structured_content["references"]}
    assert cited[KUPIEC]["has_text"] is True and "In [Kupiec, 1989a], networks are used to selectively augment" in cited[KUPIEC]["context"]
    assert [s["header"] for s in sections.structured_content["sections"]][0] == "1 Introduction"
    assert not read.is_error and "The determination of part-of-speech categories for words is an important problem" in text(read)
