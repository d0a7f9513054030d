"""The committed real-paper explore corpus (explore/README.md): rebuilt from the committed sources by the project's
own `corpus build`, byte for byte the committed build, at least 2,300 papers with text (ACL and EMNLP 2016-2018) and
4,300 citations between them; served over stdio and explored through a real MCP client along a citation chain of three
real papers; every paper with text CC BY 4.0, in its file, in the list and in the corpus."""

from __future__ import annotations

import csv
import gzip
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from server_helpers import text

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parent.parent
# Dong and Lapata's coarse-to-fine parser (ACL 2018) cites Jia and Liang's data recombination (ACL 2016), which cites
# Dong and Lapata's sequence-to-tree parser (ACL 2016): three ACL papers with text, CC BY 4.0.
COARSE_TO_FINE = "doi:10.18653/v1/p18-1068"
RECOMBINATION = "doi:10.18653/v1/p16-1002"
LOGICAL_FORM = "doi:10.18653/v1/p16-1004"


@pytest.fixture(scope="module")
def explore_corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("explore") / "explore.sqlite"
    done = subprocess.run(
        [sys.executable, str(ROOT / "explore" / "rebuild.py"), "--out", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr  # rebuild.py exits 1 when the bytes differ from the committed build
    assert "the committed build, byte for byte" in done.stderr
    return out


def test_the_corpus_has_the_papers_and_links_the_issue_asks_for(explore_corpus):
    conn = sqlite3.connect(explore_corpus)
    with_text = conn.execute("SELECT COUNT(*) FROM papers WHERE has_text = 1").fetchone()[0]
    linked = conn.execute(
        "SELECT COUNT(*) FROM edges e JOIN papers a ON a.paper_id = e.citing JOIN papers b ON b.paper_id = e.cited "
        "WHERE a.has_text = 1 AND b.has_text = 1"
    ).fetchone()[0]
    conn.close()
    assert with_text >= 2300 and linked >= 4300


async def test_a_citation_chain_through_a_real_mcp_client(explore_corpus, tmp_path):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agenthop.server", "serve", "--corpus", str(explore_corpus), "--log", str(tmp_path / "log.sqlite")],
    )
    async with Client(params, read_timeout_seconds=60) as client:
        found = await client.call_tool("search_papers", {"query": "coarse-to-fine decoding neural semantic parsing"})
        first = await client.call_tool("get_references", {"paper_id": COARSE_TO_FINE})
        second = await client.call_tool(
            "get_references", {"paper_id": "10.18653/v1/P16-1002"}
        )  # a DOI as people type it
        sections = await client.call_tool("list_sections", {"paper_id": LOGICAL_FORM})
        read = await client.call_tool("read_section", {"paper_id": LOGICAL_FORM, "section": "Introduction"})
    hits = found.structured_content["results"]
    assert (hits[0]["paper_id"], hits[0]["title"]) == (
        COARSE_TO_FINE,
        "Coarse-to-Fine Decoding for Neural Semantic Parsing",
    )
    cited = {r["paper_id"]: r for r in first.structured_content["references"]}
    assert (
        cited[RECOMBINATION]["has_text"] is True
        and "(Jia and Liang, 2016;Dong and Lapata, 2016;)" in cited[RECOMBINATION]["context"]
    )
    cited = {r["paper_id"]: r for r in second.structured_content["references"]}
    assert (
        cited[LOGICAL_FORM]["has_text"] is True
        and "Dong and Lapata (2016) concurrently de- veloped" in cited[LOGICAL_FORM]["context"]
    )
    assert [s["header"] for s in sections.structured_content["sections"]][0] == "1 Introduction"
    assert (
        not read.is_error
        and "Semantic parsing is the task of translating text to a formal meaning representation" in text(read)
    )


def test_every_paper_with_text_is_cc_by_in_its_file_and_in_the_list(explore_corpus):
    """The licence each paper is shared under, recorded beside the data (papers.tsv), in the file itself, and in the
    corpus (paper_licences), for the ACL and the EMNLP papers alike."""
    with open(ROOT / "explore" / "sources" / "papers.tsv", newline="") as fh:
        listed = {row["acl_id"]: row for row in csv.DictReader(fh, delimiter="\t")}
    files = sorted((ROOT / "explore" / "sources").glob("*/*.tei.xml.gz"), key=lambda f: f.name)
    stamped = [
        f
        for f in files
        if b'<licence target="https://creativecommons.org/licenses/by/4.0/">' in gzip.decompress(f.read_bytes())
    ]
    conn = sqlite3.connect(explore_corpus)
    with_text = {pid for (pid,) in conn.execute("SELECT paper_id FROM papers WHERE has_text = 1")}
    licences = dict(conn.execute("SELECT paper_id, licence FROM paper_licences"))
    conn.close()
    assert {row["licence"] for row in listed.values()} == {"CC BY 4.0"} and all(
        int(r["year"]) >= 2016 for r in listed.values()
    )
    assert {row["venue"] for row in listed.values()} == {"ACL", "EMNLP"}
    assert all(f.parent.name == listed[f.name.removesuffix(".tei.xml.gz")]["venue"].lower() for f in files)
    assert [f.name.removesuffix(".tei.xml.gz") for f in files] == sorted(listed) and stamped == files
    assert with_text == {f"doi:10.18653/v1/{acl_id.lower()}" for acl_id in listed}
    assert licences == dict.fromkeys(with_text, "CC BY 4.0")


def test_the_readme_gives_the_corpus_counts_and_its_quality_table(explore_corpus):
    """explore/README.md's counts are the built corpus's, and its quality table is the one `corpus info` prints."""
    from agenthop.server.corpus.info import describe, format_description

    readme = (ROOT / "explore" / "README.md").read_text(encoding="utf-8")
    conn = sqlite3.connect(explore_corpus)
    with_text = conn.execute("SELECT COUNT(*) FROM papers WHERE has_text = 1").fetchone()[0]
    outside = conn.execute("SELECT COUNT(*) FROM papers WHERE has_text = 0").fetchone()[0]
    linked, with_context = conn.execute(
        "SELECT COUNT(*), SUM(e.context IS NOT NULL) FROM edges e JOIN papers a ON a.paper_id = e.citing "
        "JOIN papers b ON b.paper_id = e.cited WHERE a.has_text = 1 AND b.has_text = 1"
    ).fetchone()
    conn.close()
    intro = readme.split("\n\n")[1]  # the paragraph under the title
    assert f"**{with_text:,} papers of the ACL conference and EMNLP" in intro
    assert f"**{linked:,} citations between papers that both have\ntext** ({with_context:,} of them" in intro
    assert f"and {outside:,} more works they cite" in intro
    table = format_description(describe(explore_corpus)).split("quality of the conversion", 1)[1].strip("\n")
    assert "quality of the conversion" + table.split("\n\n", 1)[0] in readme
