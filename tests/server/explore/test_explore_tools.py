"""Explore mode's own tools and arguments, through a real MCP client over stdio, every result checked
against the tool's outputSchema; and item mode exactly as before.

The explore corpus is tests/support/explore_fixture.py: four papers with text, two outside works each recorded twice.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from urllib.parse import quote

import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from pybtex.database import parse_string
from support.explore_fixture import BAHDANAU, BPE, COARSE, PARSING, TRIVIA, VASWANI, write_explore_release
from support.item_mode_calls import item_mode_results
from support.paths import FIXTURES
from support.server_helpers import text

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    from agenthop.corpus.importer import import_release

    root = tmp_path_factory.mktemp("explore33")
    summary = import_release(write_explore_release(root / "release"), root / "corpus.sqlite", echo=lambda m: None)
    assert summary["explore"] == {"clustered_works": 2, "clustered_records_merged": 2}
    return root / "corpus.sqlite"


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
async def explore(corpus, tmp_path_factory):
    """One stdio server for the module: call(name, args) -> result, checked against the listed outputSchema."""
    log = tmp_path_factory.mktemp("explore33-log") / "log.sqlite"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agenthop.server", "serve", "--corpus", str(corpus), "--log", str(log)]
    )
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}

        async def call(name: str, args: dict):
            result = await client.call_tool(name, args)
            jsonschema.validate(result.structured_content, tools[name].output_schema)
            return result

        call.tools = tools
        call.client = client
        yield call


def ids(result) -> list[str]:
    return [r["paper_id"] for r in result.structured_content["results"]]


async def test_explore_sessions_list_the_explore_arguments_and_tools(explore):
    tools = explore.tools
    assert list(tools) == [
        "search_papers",
        "get_paper_info",
        "get_references",
        "list_sections",
        "read_section",
        "think",
        "get_citing_papers",
        "find_similar_papers",
        "get_citation",
        "get_author",
    ]
    search = tools["search_papers"].input_schema["properties"]
    assert set(search) == {"query", "top_k", "year_from", "year_to", "venue", "author", "scope", "sort", "offset"}
    assert search["sort"]["enum"] == ["relevance", "citations", "year"] and search["sort"]["default"] == "relevance"
    assert search["scope"]["enum"] == ["title_abstract", "full_text"] and search["scope"]["default"] == "title_abstract"
    assert "required" not in tools["search_papers"].input_schema  # a filter alone is a search too
    refs = tools["get_references"].input_schema["properties"]
    assert set(refs) == {"paper_id", "offset", "limit", "sort"}
    assert tools["get_citing_papers"].input_schema["required"] == ["paper_id"]
    assert set(tools["find_similar_papers"].input_schema["properties"]["method"]["enum"]) == {
        "both",
        "co_citation",
        "coupling",
    }
    assert tools["get_citation"].input_schema["properties"]["format"]["enum"] == ["bibtex", "csl_json"]


async def test_an_outside_work_is_found_by_its_title_or_author_once_and_says_it_has_no_text(explore):
    by_title = await explore("search_papers", {"query": "Attention is all you need"})
    assert ids(by_title)[0] == VASWANI and "ref:vaswani-a" not in ids(by_title)
    first = by_title.structured_content["results"][0]
    assert first["has_text"] is False and first["cited_by"] == 3
    assert "full text: no (metadata only" in text(by_title).split("[2]")[0]
    by_author = await explore("search_papers", {"query": "Vaswani"})
    assert ids(by_author)[0] == VASWANI
    # The papers with text that only say "attention" a lot still come, after it.
    assert PARSING in ids(by_title)


async def test_filters_narrow_the_results_and_show_what_was_applied(explore):
    year = await explore("search_papers", {"query": "attention", "year_from": 2017, "year_to": 2017, "top_k": 10})
    assert {r["year"] for r in year.structured_content["results"]} == {2017}
    assert year.structured_content["filters"]["year_from"] == 2017
    venue = await explore("search_papers", {"query": "attention", "venue": "ACL", "top_k": 10})
    assert set(ids(venue)) == {COARSE, TRIVIA, BPE}  # "ACL" matches the proceedings' full name, not the EMNLP paper
    emnlp = await explore("search_papers", {"query": "attention", "venue": "emnlp"})
    assert ids(emnlp) == [PARSING]
    author_only = await explore("search_papers", {"author": "Lapata"})
    assert ids(author_only) == [COARSE]
    assert author_only.structured_content["results"][0]["authors"] == ["Li Dong", "Mirella Lapata"]
    assert author_only.structured_content["results"][0]["venue"].endswith("Association for Computational Linguistics")
    initial = await explore(
        "search_papers", {"author": "A"}
    )  # a one-letter word of a name is a filter too, not dropped
    assert ids(initial) == [VASWANI]


async def test_fts5_query_syntax_in_a_query_or_author_is_matched_as_words(explore):
    for query in [
        '"attention',
        "NEAR(attention is)",
        "attent*",
        "-attention",
        "title: attention",
        "a AND OR NOT",
        "^attention",
        "{title}: attention",
        'x"y',
        "*",
        ":",
    ]:
        for scope in ("title_abstract", "full_text"):
            result = await explore("search_papers", {"query": query, "scope": scope, "author": 'Vaswani"'})
            assert not result.is_error and result.structured_content["outcome"] == "ok", (query, text(result))
    quoted = await explore("search_papers", {"query": '"attention" NEAR all*'})
    assert VASWANI in ids(quoted)


async def test_a_query_of_stop_words_only_matches_nothing_and_says_why(explore):
    result = await explore("search_papers", {"query": "the of a"})
    assert ids(result) == [] and "only stop words" in result.structured_content["notes"][0]
    with_filter = await explore("search_papers", {"query": "the", "author": "Lapata"})
    assert ids(with_filter) == [COARSE] and "the filters alone were applied" in text(with_filter)


async def test_a_year_in_the_query_works_as_the_year_filter(explore):
    result = await explore("search_papers", {"query": "attention 2016", "top_k": 10})
    assert ids(result) == [BPE]
    assert result.structured_content["filters"]["year_from"] == 2016 == result.structured_content["filters"]["year_to"]
    assert "read 2016 in the query as the year filter (2016)" in result.structured_content["notes"][0]


async def test_full_text_search_finds_words_of_the_body_with_a_marked_snippet(explore):
    abstract_only = await explore("search_papers", {"query": "WikiSQL"})
    assert ids(abstract_only) == []
    result = await explore("search_papers", {"query": "WikiSQL", "scope": "full_text"})
    assert ids(result) == [COARSE]
    match = result.structured_content["results"][0]["match"]
    assert match["section"] == {"alias": "B", "header": "4 Experiments"} and "**WikiSQL**" in match["snippet"]
    assert 'Match in (B) 4 Experiments: "' in text(result)
    filtered = await explore(
        "search_papers", {"query": "introduction units", "scope": "full_text", "author": "Sennrich"}
    )
    assert ids(filtered) == [BPE]


async def test_records_of_one_work_are_one_paper_with_all_its_citers(explore):
    info = await explore("get_paper_info", {"paper_id": "ref:bahdanau-iclr"})
    data = info.structured_content
    assert data["paper"]["paper_id"] == BAHDANAU and data["also_recorded_as"] == ["ref:bahdanau-iclr"]
    assert data["cited_by"]["count"] == 3
    assert {p["paper_id"] for p in data["cited_by"]["papers"]} == {COARSE, TRIVIA, PARSING}
    far = await explore("get_paper_info", {"paper_id": "ref:bahdanau-2019"})  # four years later: not merged
    assert far.structured_content["paper"]["paper_id"] == "ref:bahdanau-2019"
    refs = await explore("get_references", {"paper_id": PARSING})
    assert [r["paper_id"] for r in refs.structured_content["references"]] == [
        BAHDANAU,
        VASWANI,
        TRIVIA,
        "ref:bahdanau-2019",
    ]


@pytest.mark.parametrize(
    "typed",
    [
        "P18-1068",
        "acl:P18-1068",
        "https://aclanthology.org/P18-1068/",
        "https://aclanthology.org/P18-1068.pdf",
        "http://www.aclweb.org/anthology/P18-1068",
        "https://doi.org/10.18653/v1/P18-1068",
        "10.18653/V1/P18-1068",
    ],
)
async def test_pasted_acl_and_doi_identifiers_resolve(explore, typed):
    result = await explore("get_paper_info", {"paper_id": typed})
    assert result.structured_content["paper"]["paper_id"] == COARSE, text(result)


@pytest.mark.parametrize(
    "typed", ["1706.03762", "arXiv:1706.03762v5", "https://arxiv.org/abs/1706.03762v2", "arxiv.org/pdf/1706.03762.pdf"]
)
async def test_pasted_arxiv_identifiers_resolve(explore, typed):
    result = await explore("list_sections", {"paper_id": typed})  # any tool taking a paper: a stub has no text
    assert result.structured_content["outcome"] == "no_text" and result.structured_content["paper_id"] == VASWANI


async def test_an_unknown_identifier_names_the_closest(explore):
    acl = await explore("get_paper_info", {"paper_id": "P18-1069"})
    assert acl.structured_content["outcome"] == "not_found" and acl.structured_content["closest"] == COARSE
    assert f"The closest ID is '{COARSE}'." in text(acl)
    arxiv = await explore("get_paper_info", {"paper_id": "arXiv:1706.03763"})
    assert arxiv.structured_content["closest"] == VASWANI


async def test_cited_by_pages_and_sorts(explore):
    first = await explore("get_citing_papers", {"paper_id": VASWANI, "limit": 2})
    data = first.structured_content
    assert data["total"] == 3 and len(data["papers"]) == 2 and [p["rank"] for p in data["papers"]] == [1, 2]
    assert "[More: call get_citing_papers with offset 2.]" in text(first)
    rest = await explore("get_citing_papers", {"paper_id": VASWANI, "limit": 2, "offset": 2})
    assert [p["rank"] for p in rest.structured_content["papers"]] == [3]
    assert {p["paper_id"] for p in data["papers"] + rest.structured_content["papers"]} == {COARSE, TRIVIA, PARSING}
    by_year = await explore("get_citing_papers", {"paper_id": BAHDANAU, "sort": "year"})
    years = [p["year"] for p in by_year.structured_content["papers"]]
    assert years == sorted(years, reverse=True)
    by_citations = await explore("get_citing_papers", {"paper_id": BPE, "sort": "citations"})
    assert [p["paper_id"] for p in by_citations.structured_content["papers"]] == [
        TRIVIA,
        COARSE,
    ]  # TRIVIA is cited once


async def test_references_page_and_sort(explore):
    everything = await explore("get_references", {"paper_id": PARSING})
    assert everything.structured_content["total"] == 4
    page = await explore("get_references", {"paper_id": PARSING, "offset": 1, "limit": 2})
    assert [r["paper_id"] for r in page.structured_content["references"]] == [VASWANI, TRIVIA]
    by_year = await explore("get_references", {"paper_id": PARSING, "sort": "year"})
    assert [r["year"] for r in by_year.structured_content["references"]] == [2019, 2017, 2017, 2014]
    by_citations = await explore("get_references", {"paper_id": PARSING, "sort": "citations"})
    assert [r["cited_by"] for r in by_citations.structured_content["references"]] == [3, 3, 1, 1]


async def test_similar_papers_name_their_shared_neighbours(explore):
    coupled = await explore("find_similar_papers", {"paper_id": COARSE, "method": "coupling"})
    first = coupled.structured_content["similar"][0]
    assert first["paper_id"] == TRIVIA and first["shared"] == 3
    assert {r["paper_id"] for r in first["shared_references"]} == {VASWANI, BAHDANAU, BPE}
    co_cited = await explore("find_similar_papers", {"paper_id": VASWANI, "method": "co_citation"})
    first = co_cited.structured_content["similar"][0]
    assert first["paper_id"] == BAHDANAU and first["shared"] == 3
    assert {p["paper_id"] for p in first["co_cited_by"]} == {COARSE, TRIVIA, PARSING}
    assert "Cited together by: " in text(co_cited)
    both = await explore("find_similar_papers", {"paper_id": COARSE, "top_k": 1})
    assert [p["paper_id"] for p in both.structured_content["similar"]] == [TRIVIA] and both.structured_content[
        "method"
    ] == "both"


async def test_citations_as_bibtex_and_csl_json_by_tool_and_resource(explore):
    bib = await explore("get_citation", {"paper_id": "P18-1068"})
    entry = parse_string(bib.structured_content["citation"], "bibtex").entries["dong2018coarsetofine"]
    assert (
        entry.type == "inproceedings"
        and entry.fields["year"] == "2018"
        and entry.fields["doi"] == "10.18653/v1/p18-1068"
    )
    assert [str(p) for p in entry.persons["author"]] == ["Dong, Li", "Lapata, Mirella"]
    assert entry.fields["url"] == "https://aclanthology.org/P18-1068"
    csl = await explore("get_citation", {"paper_id": VASWANI, "format": "csl_json"})
    (item,) = json.loads(csl.structured_content["citation"])
    assert item["title"] == "Attention is all you need" and item["author"][0] == {"family": "Vaswani", "given": "A"}
    assert item["issued"] == {"date-parts": [[2017]]} and item["URL"] == "https://arxiv.org/abs/1706.03762"
    templates = [t.uri_template for t in (await explore.client.list_resource_templates()).resource_templates]
    assert "agenthop://paper/{paper_id}/bibtex" in templates and "agenthop://paper/{paper_id}/csl-json" in templates
    resource = await explore.client.read_resource(f"agenthop://paper/{quote(COARSE, safe='')}/bibtex")
    assert resource.contents[0].text == bib.structured_content["citation"]


@pytest.mark.parametrize(
    ("tool", "args", "says"),
    [
        ("search_papers", {"query": " "}, "give keywords to look for, or a filter"),
        (
            "search_papers",
            {"query": "x", "year_from": 2018, "year_to": 2016},
            "year_from (2018) is after year_to (2016)",
        ),
        ("search_papers", {"query": "x", "scope": "body"}, "scope"),
        ("get_citing_papers", {"paper_id": VASWANI, "sort": "popularity"}, "sort"),
        ("get_references", {"paper_id": VASWANI, "limit": 0}, "limit"),
        ("search_papers", {"author": "-"}, "give an author's name"),
    ],
)
async def test_bad_explore_arguments_are_refused_for_free(explore, tool, args, says):
    result = await explore(tool, args)
    assert (
        result.is_error and result.structured_content["outcome"] == "invalid" and result.structured_content["cost"] == 0
    )
    assert says in text(result)


def test_fts5_and_the_bm25_tokenizer_find_the_same_words(corpus, tmp_path):
    """Every word the item-mode BM25 tokenizer makes of a paper's title, abstract and authors is a term of the FTS5
    index, and FTS5 has no other terms but stop words and one-character words (which queries never contain)."""
    from agenthop.server.search import _STOPWORDS, tokenize

    conn = sqlite3.connect(f"file:{corpus}?mode=ro", uri=True)
    conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, papers_fts, 'row')")
    fts = {term for (term,) in conn.execute("SELECT term FROM temp.vocab")}
    bm25 = set()
    for title, abstract, authors in conn.execute("SELECT title, abstract, authors FROM papers"):
        bm25 |= set(tokenize(f"{title}\n{abstract}\n{' '.join(json.loads(authors))}"))
    assert bm25 <= fts
    assert {t for t in fts - bm25 if len(t) > 1 and t not in _STOPWORDS} == set()


def test_item_mode_results_are_as_before(demo_corpus):
    """The same calls in item sessions give the same results, byte for byte, as before explore mode's own tools (digests recorded by
    tests/support/item_mode_calls.py on the code before the change), and an item session lists the same tool
    definitions."""
    before = json.loads((FIXTURES / "item_mode_before.json").read_text())
    now = json.loads(json.dumps(item_mode_results(demo_corpus), sort_keys=True))
    assert now["tools"] == before["tools"]
    for item_id, calls in before["calls"].items():
        for was, is_ in zip(calls, now["calls"][item_id], strict=True):
            assert is_ == was, f"{item_id}: {was[0]} {was[1]} changed"


def test_a_corpus_built_before_the_explore_tables_still_searches(corpus, tmp_path):
    """Without the tables (a corpus imported before explore mode's own tools), explore search falls back to the stored bm25s index
    for a query alone, and says a rebuild is needed for filters and full text; pasted DOIs still resolve."""
    import shutil

    from agenthop.server.caps import Caps
    from agenthop.server.log.checkpoint import CheckpointLog
    from agenthop.server.transport.mcp_app import make_sandbox

    old = tmp_path / "old.sqlite"
    shutil.copy(corpus, old)
    with sqlite3.connect(old) as conn:
        for table in ("papers_fts", "sections_fts", "paper_clusters", "external_ids", "cited_by_counts"):
            conn.execute(f"DROP TABLE {table}")
    log = CheckpointLog(tmp_path / "log.sqlite")
    try:
        sandbox = make_sandbox(old, log, Caps())
        session = sandbox.sessions.create(sandbox.scope(None), caps=Caps(None, None, None), transport="stdio")
        plain = session.call("search_papers", {"query": "subword units"})
        assert [r["paper_id"] for r in plain.data["results"]][:1] == [BPE] and "rebuild it" in plain.data["notes"][0]
        filtered = session.call("search_papers", {"query": "subword units", "year_from": 2016})
        assert filtered.data["results"] == [] and "rebuild it" in filtered.text
        assert (
            session.call("get_paper_info", {"paper_id": "https://doi.org/10.18653/v1/P16-1162"}).data["paper"][
                "paper_id"
            ]
            == BPE
        )
    finally:
        log.close()
