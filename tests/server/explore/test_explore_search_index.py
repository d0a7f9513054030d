"""Explore search on the search index beside the corpus (server/explore/index.py): sort, paging and quoted phrases
through a real MCP client over stdio; a corpus without the index still served, saying how to build it; and an import
killed with SIGKILL while it writes the index never leaves half an index under the served name.

The corpus is tests/support/explore_fixture.py: four papers with text, outside works recorded several times.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from support.explore_fixture import BAHDANAU, BPE, COARSE, PARSING, TRIVIA, VASWANI, write_explore_release
from support.server_helpers import text

pytestmark = pytest.mark.anyio


def _import(release: Path, out: Path) -> dict:
    from agenthop.corpus.importer import import_release

    return import_release(release, out, echo=lambda m: None)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("search-index")
    _import(write_explore_release(root / "release"), root / "corpus.sqlite")
    return root / "corpus.sqlite"


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
async def explore(corpus, tmp_path_factory):
    log = tmp_path_factory.mktemp("search-index-log") / "log.sqlite"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agenthop.server", "serve", "--corpus", str(corpus), "--log", str(log)]
    )
    async with Client(params, read_timeout_seconds=60) as client:

        async def call(name: str, args: dict):
            result = await client.call_tool(name, args)
            assert not result.is_error, text(result)
            return result

        yield call


def results(result) -> list[dict]:
    return result.structured_content["results"]


def ids(result) -> list[str]:
    return [r["paper_id"] for r in results(result)]


def test_the_import_writes_the_index_beside_the_corpus(corpus):
    from agenthop.server.explore.index import index_dir, why_not_served
    from agenthop.server.papers import Corpus

    manifest = json.loads((index_dir(corpus) / "manifest.json").read_text())
    assert index_dir(corpus) == corpus.with_name("corpus.sqlite.search")
    assert manifest["corpus_id"] == Corpus(corpus).meta["corpus_id"]
    assert why_not_served(index_dir(corpus), manifest["corpus_id"]) is None
    # 9 records, 2 of them merged into another record of the same work: 7 papers; 6 sections of 4 papers with text.
    assert (manifest["papers"], manifest["sections"]) == (7, 6)
    assert not list(corpus.parent.glob(".corpus.sqlite.search*"))  # no temporary folder left behind


def test_corpus_info_says_whether_the_index_serves_and_how_to_build_it(corpus, tmp_path):
    from agenthop.corpus.info import describe, format_description

    text = format_description(describe(corpus))
    assert f"search index  {corpus}.search (7 papers, 6 sections)" in text.splitlines()
    old = tmp_path / "old.sqlite"
    shutil.copy(corpus, old)
    assert (
        "search index  none that serves this corpus (has no search index): explore search uses FTS5; "
        f"build it with 'agenthop-server corpus index {old}'"
    ) in format_description(describe(old)).splitlines()


async def test_sort_by_citations_or_year_lists_papers_holding_every_word(explore):
    by_citations = await explore("search_papers", {"query": "neural translation", "sort": "citations", "top_k": 10})
    assert ids(by_citations)[0] == BAHDANAU and set(ids(by_citations)) == {BAHDANAU, BPE, "ref:bahdanau-2019"}
    counts = [r["cited_by"] for r in results(by_citations)]
    assert counts == sorted(counts, reverse=True) and counts[0] == 3
    assert by_citations.structured_content["sort"] == "citations" and ", sorted by citations" in text(by_citations)
    by_year = await explore("search_papers", {"query": "neural", "sort": "year", "top_k": 10})
    years = [r["year"] for r in results(by_year)]
    assert years == sorted(years, reverse=True) and COARSE in ids(by_year) and years[0] == 2019
    newest_acl = await explore("search_papers", {"query": "", "venue": "ACL", "sort": "year", "top_k": 10})
    assert ids(newest_acl) == [COARSE, TRIVIA, BPE]


async def test_works_known_only_by_title_and_authors_come_most_cited_first(explore):
    """Bahdanau et al. (3 citers) and a 2019 record of the same title (1 citer, too far apart in years to merge) are
    both works the corpus only cites: searched by a surname, or by the title word for word, the work people mean
    comes first, whichever record's few fields score higher."""
    for query in ("Bahdanau", "Neural machine translation by jointly learning to align and translate"):
        top = results(await explore("search_papers", {"query": query}))[:2]
        assert [r["paper_id"] for r in top] == [BAHDANAU, "ref:bahdanau-2019"], query
        assert top[0]["cited_by"] > top[1]["cited_by"]


async def test_offset_pages_through_the_same_ranking(explore):
    whole = await explore("search_papers", {"query": "attention", "top_k": 10})
    first = await explore("search_papers", {"query": "attention", "top_k": 3})
    second = await explore("search_papers", {"query": "attention", "top_k": 3, "offset": 3})
    assert ids(first) + ids(second) == ids(whole) and len(ids(whole)) == 5
    assert [r["rank"] for r in results(second)] == [4, 5]
    assert "[More: call search_papers with offset 3.]" in text(first) and first.structured_content["more"] is True
    assert "Search results for 'attention' (4-5):" in text(second) and second.structured_content["more"] is False
    assert "[More:" not in text(second)
    past = await explore("search_papers", {"query": "attention", "offset": 900})
    assert ids(past) == [] and "No more papers match 'attention' after the first 900." in text(past)


async def test_a_quoted_phrase_must_appear_as_written(explore):
    words = await explore("search_papers", {"query": "attention is all you need", "top_k": 10})
    assert len(ids(words)) > 1 and PARSING in ids(words)
    phrase = await explore("search_papers", {"query": '"attention is all you need"', "top_k": 10})
    assert ids(phrase) == [VASWANI]
    body = await explore("search_papers", {"query": '"byte pair encoding"', "scope": "full_text"})
    assert ids(body) == [BPE]
    assert "**byte** **pair** **encoding**" in results(body)[0]["match"]["snippet"]
    nowhere = await explore("search_papers", {"query": '"encoding pair byte"', "scope": "full_text"})
    assert ids(nowhere) == []


async def test_full_text_paging_shows_each_paper_once(explore):
    both = await explore("search_papers", {"query": "introduction evaluate", "scope": "full_text", "top_k": 10})
    assert len(ids(both)) == len(set(ids(both))) >= 3
    one = await explore("search_papers", {"query": "introduction evaluate", "scope": "full_text", "top_k": 1})
    rest = await explore(
        "search_papers", {"query": "introduction evaluate", "scope": "full_text", "top_k": 9, "offset": 1}
    )
    assert ids(one) + ids(rest) == ids(both)


def test_the_index_finds_every_word_the_bm25_tokenizer_makes(corpus):
    """Each word server/search.tokenize makes of a paper's title, abstract or authors finds that paper in the index."""
    import tantivy

    from agenthop.server.explore.index import corpus_index
    from agenthop.server.papers import Corpus
    from agenthop.server.search import tokenize

    served = Corpus(corpus)
    index, why = corpus_index(served)
    assert why is None
    searcher = index.papers.searcher()
    rows = served.conn.execute(
        "SELECT rowid, title, abstract, authors FROM papers WHERE paper_id NOT IN ('ref:vaswani-a', 'ref:bahdanau-iclr')"
    ).fetchall()
    for rowid, title, abstract, authors in rows:
        for field, value in (("title", title), ("abstract", abstract), ("authors", " ".join(json.loads(authors)))):
            for word in tokenize(value or ""):
                query = tantivy.Query.term_query(index.papers_schema, field, word)
                found = searcher.fast_field_values("rowid", [a for _, a in searcher.search(query, 20).hits])
                assert rowid in found, (field, word)


def _session(corpus: Path, log: Path):
    from agenthop.server.caps import Caps
    from agenthop.server.log.checkpoint import CheckpointLog
    from agenthop.server.transport.mcp_app import make_sandbox

    checkpoint = CheckpointLog(log)
    sandbox = make_sandbox(corpus, checkpoint, Caps())
    return checkpoint, sandbox.sessions.create(sandbox.scope(None), caps=Caps(None, None, None), transport="stdio")


def test_a_corpus_without_the_index_still_searches_and_says_how_to_build_it(corpus, tmp_path):
    old = tmp_path / "old.sqlite"
    shutil.copy(corpus, old)  # the corpus file alone, as one imported before the index
    log, session = _session(old, tmp_path / "log.sqlite")
    try:
        slow = session.call("search_papers", {"query": "subword units", "sort": "citations"})
        assert [r["paper_id"] for r in slow.data["results"]][:1] == [BPE]
        assert any("has no search index" in n and "agenthop-server corpus index" in n for n in slow.data["notes"])
        assert "sort 'citations' needs the search index" in slow.text
        paged = session.call("search_papers", {"query": "attention", "top_k": 2, "offset": 2})
        assert [r["rank"] for r in paged.data["results"]] == [3, 4]

        cli = [sys.executable, "-m", "agenthop.server", "corpus", "index", str(old)]
        built = subprocess.run(cli, capture_output=True, text=True, check=True)
        assert built.stdout.strip() == f"wrote {old}.search: 7 papers, 6 sections"
        again = subprocess.run(cli, capture_output=True, text=True, check=True)
        assert "is up to date" in again.stdout

        # The running server uses the index from the next search on.
        fast = session.call("search_papers", {"query": "subword units", "sort": "citations"})
        assert [r["paper_id"] for r in fast.data["results"]][:1] == [BPE] and fast.data["notes"] == []
        assert ", sorted by citations" in fast.text
    finally:
        log.close()


def test_an_index_of_another_corpus_is_not_served(corpus, tmp_path):
    from agenthop.server.explore.index import corpus_index
    from agenthop.server.papers import Corpus

    other = tmp_path / "other.sqlite"
    release = write_explore_release(tmp_path / "release")
    with open(release / "corpus" / "papers.jsonl", "a") as f:
        f.write(json.dumps({"paper_id": "ref:extra", "title": "Zebra finches sing", "year": 2001}) + "\n")
    _import(release, other)
    shutil.rmtree(f"{other}.search")
    shutil.copytree(f"{corpus}.search", f"{other}.search")  # left over from an earlier corpus at this path
    index, why = corpus_index(Corpus(other))
    assert index is None and why == "has a search index built for another version of the corpus"


KILLED_IMPORT = """
import sys
from agenthop.corpus.importer import import_release

def echo(message):
    print(message, flush=True)
    if message.startswith("search index:") and "papers indexed" in message:
        sys.stdin.readline()  # the papers are written, the sections not yet: wait here until killed

import_release(sys.argv[1], sys.argv[2], echo=echo)
"""


def _import_killed_while_indexing(release: Path, out: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_IMPORT, str(release), str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    for line in child.stdout:
        if "papers indexed" in line:
            break
    else:
        raise AssertionError(f"the import ended before indexing (exit {child.wait()})")
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    child.stdin.close()
    child.stdout.close()


def test_an_import_killed_while_indexing_never_leaves_half_an_index_served(tmp_path):
    from agenthop.server.explore.index import corpus_index
    from agenthop.server.papers import Corpus

    release = write_explore_release(tmp_path / "release")
    out = tmp_path / "corpus.sqlite"
    served = Path(f"{out}.search")

    _import_killed_while_indexing(release, out)  # the first import
    assert not out.exists() and not served.exists()
    (half,) = tmp_path.glob(".corpus.sqlite.search.building-*")
    assert (half / "papers").is_dir() and not (half / "manifest.json").exists()

    first = _import(release, out)
    assert not half.exists()  # the killed build's folder is cleared by the next import
    assert json.loads((served / "manifest.json").read_text())["corpus_id"] == first["corpus_id"]

    with open(release / "corpus" / "papers.jsonl", "a") as f:
        f.write(json.dumps({"paper_id": "ref:extra", "title": "Zebra finches sing", "year": 2001}) + "\n")
    _import_killed_while_indexing(release, out)  # an import over a served corpus
    assert json.loads((served / "manifest.json").read_text())["corpus_id"] == first["corpus_id"]
    index, why = corpus_index(Corpus(out))  # the corpus and index as they were, both whole
    assert why is None and index.manifest["papers"] == 7

    second = _import(release, out)
    assert second["corpus_id"] != first["corpus_id"] and not list(tmp_path.glob(".corpus.sqlite.search*"))
    log, session = _session(out, tmp_path / "log.sqlite")
    try:
        found = session.call("search_papers", {"query": "zebra finches"})
        assert [r["paper_id"] for r in found.data["results"]] == ["ref:extra"] and found.data["notes"] == []
    finally:
        log.close()


def test_an_error_of_the_index_answers_with_fts5_and_says_so(corpus, tmp_path, monkeypatch):
    from agenthop.server.explore import search

    def broken(*args, **kwargs):
        raise ValueError("simulated: the index cannot answer")

    monkeypatch.setattr(search, "_search_papers", broken)
    log, session = _session(corpus, tmp_path / "log.sqlite")
    try:
        found = session.call("search_papers", {"query": "subword units"})
        assert found.data["outcome"] == "ok" and [r["paper_id"] for r in found.data["results"]][:1] == [BPE]
        assert any("could not use its search index" in n for n in found.data["notes"])
    finally:
        log.close()


async def test_over_streamable_http_sessions_search_the_index_at_once(corpus, tmp_path):
    """Two explore sessions of one HTTP server search concurrently (the server's worker threads share the index)."""
    import anyio
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from agenthop.server.transport.http import ServerThread

    found: dict[str, list[str]] = {}
    with ServerThread(str(corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            sessions = [(await http.post("/sessions", json={})).json() for _ in range(2)]

        async def search(session: dict, name: str, args: dict) -> None:
            async with (
                httpx2.AsyncClient(headers=session["headers"]) as http,
                Client(streamable_http_client(session["mcp_url"], http_client=http)) as client,
            ):
                for _ in range(5):
                    result = await client.call_tool("search_papers", args)
                    assert not result.is_error, text(result)
                    found.setdefault(name, ids(result))
                    assert ids(result) == found[name]

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(search, sessions[0], "sorted", {"query": "neural", "sort": "year", "top_k": 10})
            tasks.start_soon(search, sessions[1], "phrase", {"query": '"byte pair encoding"', "scope": "full_text"})
    assert found["phrase"] == [BPE] and found["sorted"][0] == "ref:bahdanau-2019"
