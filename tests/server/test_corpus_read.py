"""What a corpus of schema 2 serves, seen through a real MCP client: per-item contexts, explore coverage,
text only where there are sections, author search in explore mode, external IDs, the stored explore index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from support.release_fixture import ARXIV, make_release, pid
from support.server_helpers import session_client, text

from agenthop.corpus.importer import import_release
from agenthop.server.papers import Corpus
from agenthop.server.search import ScopeIndex, SearchEngine

pytestmark = pytest.mark.anyio


def quiet(_msg: str) -> None:
    pass


def structure(r) -> None:
    """Two items cite B -> E with their own sentences; I gets a zero-section pool record; A gets a DOI via corpus/."""
    r.graph("st_0001")["contexts"][pid("B")] = {pid("E"): "E, as st_0001 cites it [7]."}
    r.graph("mt_0001")["contexts"] = {pid("B"): {pid("E"): "E, as mt_0001 cites it [2]."}}
    r.pool.append({"arxiv_id": "2101.00009", "title": "Paper I", "sections": []})
    r.graph("st_0002")["nodes"][pid("I")]["arxivId"] = "2101.00009"
    r.paper("L")["title"] = "Lattice Paths in Citation Graphs"  # L is in the pool and in no graph
    r.corpus_papers = [
        {
            "paper_id": pid("A"),
            "title": "Paper A",
            "abstract": "Abstract of paper A.",
            "authors": ["Ada Lovelace", "Alan Turing"],
            "year": 2015,
            "venue": "ACL",
            "text_id": ARXIV["A"],
            "ids": {"doi": "10.18653/v1/x", "arxiv": ARXIV["A"]},
        }
    ]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("structure")
    out = root / "corpus.sqlite"
    import_release(make_release(root, structure), out, echo=quiet)
    return out


async def references(corpus: Path, log: Path, item: str | None, paper: str) -> dict[str, str | None]:
    async with session_client(corpus, log, item) as (client, _):
        result = await client.call_tool("get_references", {"paper_id": paper})
    return {r["paper_id"]: r["context"] for r in result.structured_content["references"]}


async def test_each_item_shows_its_own_citation_sentence(corpus, tmp_path):
    st = await references(corpus, tmp_path / "a.sqlite", "st_0001", pid("B"))
    mt = await references(corpus, tmp_path / "b.sqlite", "mt_0001", pid("B"))
    explore = await references(corpus, tmp_path / "c.sqlite", None, pid("B"))
    assert st == {pid("E"): "E, as st_0001 cites it [7]."}
    assert mt == {pid("E"): "E, as mt_0001 cites it [2]."}
    assert explore == {pid("E"): "E, as st_0001 cites it [7]."}  # explore: the first sentence the release gives


async def test_an_item_without_a_sentence_shows_none_not_another_items(corpus, tmp_path):
    # st_0001 gives A -> B a sentence; no other graph has A. J -> B (mt_0001) has no sentence anywhere.
    mt = await references(corpus, tmp_path / "a.sqlite", "mt_0001", pid("J"))
    assert mt[pid("B")] is None


async def test_explore_mode_reaches_pool_papers_in_no_graph(corpus, tmp_path):
    async with session_client(corpus, tmp_path / "log.sqlite", None) as (client, _):
        found = await client.call_tool("search_papers", {"query": "lattice paths", "top_k": 10})
        listed = await client.call_tool("list_sections", {"paper_id": f"arxiv:{ARXIV['L']}"})
        info = await client.call_tool("get_paper_info", {"paper_id": f"arxiv:{ARXIV['L']}"})
    assert [r["paper_id"] for r in found.structured_content["results"]] == [f"arxiv:{ARXIV['L']}"]
    assert [s["header"] for s in listed.structured_content["sections"]] == [
        "Introduction",
        "Method",
        "Experiments",
        "Apdx_A: Proofs",
    ]
    assert f"IDs: arXiv {ARXIV['L']}" in text(info)


async def test_a_paper_with_zero_sections_has_no_text(corpus, tmp_path):
    async with session_client(corpus, tmp_path / "log.sqlite", "st_0002") as (client, _):
        info = await client.call_tool("get_paper_info", {"paper_id": pid("I")})
        listed = await client.call_tool("list_sections", {"paper_id": pid("I")})
        read = await client.call_tool("read_section", {"paper_id": pid("I"), "section": "A"})
    assert info.structured_content["paper"]["has_text"] is False
    assert "Full text available: no" in text(info)
    for result in (listed, read):
        assert result.structured_content["outcome"] == "no_text"


async def test_authors_are_searchable_in_explore_mode_only(corpus, tmp_path):
    async with session_client(corpus, tmp_path / "a.sqlite", None) as (client, _):
        explore = await client.call_tool("search_papers", {"query": "Lovelace", "top_k": 5})
    async with session_client(corpus, tmp_path / "b.sqlite", "st_0001") as (client, _):
        item = await client.call_tool("search_papers", {"query": "Lovelace", "top_k": 5})
    assert [r["paper_id"] for r in explore.structured_content["results"]] == [pid("A")]
    assert item.structured_content["results"] == []  # item mode searches title + abstract, as the benchmark defines


async def test_get_paper_info_shows_external_ids(corpus, tmp_path):
    async with session_client(corpus, tmp_path / "log.sqlite", "st_0001") as (client, _):
        a = await client.call_tool("get_paper_info", {"paper_id": pid("A")})
        c = await client.call_tool("get_paper_info", {"paper_id": pid("C")})
    assert a.structured_content["paper"]["ids"] == {"doi": "10.18653/v1/x", "arxiv": ARXIV["A"]}
    assert f"IDs: arXiv {ARXIV['A']}; DOI 10.18653/v1/x" in text(a)
    assert c.structured_content["paper"]["ids"] == {} and "IDs: none known" in text(c)


def test_the_stored_explore_index_ranks_as_a_fresh_one(corpus):
    served = Corpus(corpus)
    engine = SearchEngine(served)
    assert None not in engine._cache  # explore sessions search with FTS5: loaded on first use, not at start
    fresh = ScopeIndex(*Corpus.search_documents(served, None))
    fresh.preferred = np.array(served.explore_has_text(), dtype=bool)  # explore mode: papers with text first, both ways
    built = []
    served.search_documents = lambda item_id: built.append(item_id) or Corpus.search_documents(served, item_id)
    for query in ("paper abstract", "Lovelace Turing", "Paper B", "abstract of paper k", "nothing-matches-this"):
        assert engine.search(None, query, 10) == fresh.search(query, 10)
    assert None in engine._cache and built == []  # loaded from the corpus file, not built from its documents


def test_a_stored_index_of_other_rules_is_rebuilt(corpus, tmp_path, caplog):
    stale = tmp_path / "stale.sqlite"
    stale.write_bytes(corpus.read_bytes())
    conn = sqlite3.connect(stale)
    conn.execute("UPDATE search_index SET data = ? WHERE name = 'params'", (b'{"format": 0}',))
    conn.commit()
    conn.close()
    served = Corpus(stale)
    engine = SearchEngine(served)
    assert engine.search(None, "Lovelace", 5) == ScopeIndex(*served.search_documents(None)).search("Lovelace", 5)
    assert "built under other rules" in caplog.text
