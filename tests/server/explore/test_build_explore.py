"""A corpus built from each fixture format with `agenthop-server corpus build`, served over stdio and explored
through a real MCP client: search by an abstract word and by an author, references in and out of the set with
their citation sentences, the real section headers, and read_section by alias, header, normalised header and
part of a header."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from support.server_helpers import build_fixture_corpus, text

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SPECTER_TEI = "paper:1ed3c473f7cade3d"  # GROBID found no identifier in SPECTER's PDF: a hash of its normalised title
GRAPH_TEI = "paper:bfd6511f1cda14f9"  # the same for the Semantic Scholar literature-graph paper
FES_DOI = "doi:10.1186/s12984-016-0129-6"
SPECTER_HEADERS = [
    "1 Introduction",
    "2 Model 2.1 Overview",
    "3 SCIDOCS Evaluation Framework",
    "4 Experiments",
    "5 Results",
    "6 Analysis",
    "7 Related Work",
    "8 Conclusions and Future Work",
]
SPECTER_READS = [
    ("D", "4 Experiments"),
    ("4 EXPERIMENTS", "4 Experiments"),
    ("experiments", "4 Experiments"),
    ("SCIDOCS Evaluation", "3 SCIDOCS Evaluation Framework"),
]
VASWANI = (
    "ref:bed85d7e76ff7cd9",
    "Attention Is All You Need",
    "into the Transformer (Vaswani et al., 2017) language models",
)
AMMAR_CONTEXT = "we use a subset of the Semantic Scholar corpus (Ammar et al., 2018) consisting of"

CASES = {
    "jats": {
        "abstract_word": ("Darwinian", "doi:10.7554/elife.00240"),
        "author": ("Pickett", "doi:10.7554/elife.00240"),
        "citing": "doi:10.7554/elife.00240",
        "references": 7,  # an Insight: a short reference list
        # (paper ID, has text, a piece of its citation sentence or None when the text never cites it)
        "in_set": [("doi:10.7554/elife.00007", "a wild tobacco plant (Schuman et al., 2012).")],
        "outside": (
            "doi:10.1126/science.1191634",
            "Insects betray themselves in nature",
            "(Figure 1; Allmann and Baldwin, 2010).",
        ),
        "sectioned": "doi:10.7554/elife.04490",
        "headers": ["Introduction", "Results", "Discussion", "Materials and methods", "Acknowledgements"],
        "reads": [
            ("C", "Discussion"),
            ("MATERIALS AND METHODS", "Materials and methods"),
            ("Acknowl", "Acknowledgements"),
        ],
        "ids_line": "IDs: DOI 10.7554/elife.04490",
    },
    "tei": {
        "abstract_word": ("SCIDOCS", SPECTER_TEI),
        "author": ("Simon-Martinez", FES_DOI),
        "citing": SPECTER_TEI,
        "references": 57,  # with entry b6 (Bruna et al. 2014), which has only its printed text
        "in_set": [(GRAPH_TEI, AMMAR_CONTEXT), (FES_DOI, None)],
        "outside": VASWANI,
        "sectioned": SPECTER_TEI,
        "headers": SPECTER_HEADERS,
        "reads": SPECTER_READS,
        "ids_line": None,
    },
    "s2orc": {
        "abstract_word": ("SCIDOCS", "s2orc:2020"),  # doc2json names a paper by its file name up to the first dot
        "author": ("Simon-Martinez", "s2orc:s12984-016-0129-6"),
        "citing": "s2orc:2020",
        "references": 54,  # doc2json's JSON of the same TEI lost two entries
        "in_set": [("s2orc:N18-3011", AMMAR_CONTEXT), ("s2orc:s12984-016-0129-6", None)],
        "outside": VASWANI,
        "sectioned": "s2orc:2020",
        "headers": SPECTER_HEADERS,
        "reads": SPECTER_READS,
        "ids_line": None,
    },
}


@pytest.fixture(scope="module", params=list(CASES))
def built(request, tmp_path_factory):
    root = tmp_path_factory.mktemp(request.param)
    summary = build_fixture_corpus(request.param, root / "corpus.sqlite")
    return request.param, root, summary


async def explore(corpus: Path, log: Path, calls: list[tuple[str, dict]]) -> list:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agenthop.server", "serve", "--corpus", str(corpus), "--log", str(log)]
    )
    async with Client(params, read_timeout_seconds=60) as client:
        return [await client.call_tool(name, args) for name, args in calls]


async def test_built_corpus_is_explore_only_and_links_the_set(built):
    _, _, summary = built
    converted, imported = summary["converted"], summary["imported"]
    assert converted["papers_in_set"] == 3 and converted["papers_with_text"] == 3
    assert converted["citations_in_set"] == 2  # e00240 and e04490 cite e00007; SPECTER cites the other two
    assert imported["counts"]["items"] == 0 and imported["counts"]["papers_in_no_item"] == imported["counts"]["papers"]
    assert imported["counts"]["papers"] == 3 + converted["metadata_only_references"]
    assert imported["warnings"] == {}


async def test_search_finds_a_paper_by_an_abstract_word_and_by_an_author(built):
    fmt, root, _ = built
    case = CASES[fmt]
    (word, by_word), (author, by_author) = case["abstract_word"], case["author"]
    word_result, author_result = await explore(
        root / "corpus.sqlite",
        root / "search-log.sqlite",
        [("search_papers", {"query": word}), ("search_papers", {"query": author})],
    )
    found = word_result.structured_content["results"]
    assert (found[0]["paper_id"], found[0]["has_text"]) == (by_word, True)
    found = author_result.structured_content["results"]
    assert (found[0]["paper_id"], found[0]["has_text"]) == (by_author, True)
    assert by_author in text(author_result)


async def test_references_show_papers_in_and_out_of_the_set_with_their_sentences(built):
    fmt, root, _ = built
    case = CASES[fmt]
    [result] = await explore(
        root / "corpus.sqlite", root / "refs-log.sqlite", [("get_references", {"paper_id": case["citing"]})]
    )
    assert not result.is_error, text(result)
    references = {r["paper_id"]: r for r in result.structured_content["references"]}
    assert len(references) == case["references"]  # the real reference list, not only the papers of the set
    assert [pid for pid, r in references.items() if r["has_text"]] == [pid for pid, _ in case["in_set"]]
    for pid, context in case["in_set"]:
        if context is None:
            assert references[pid]["context"] is None  # cited in the bibliography, never in the text
        else:
            assert context in references[pid]["context"] and context in text(result)
    out_id, out_title, out_context = case["outside"]
    outside = references[out_id]
    assert outside["has_text"] is False and outside["title"].startswith(out_title) and out_context in outside["context"]


async def test_sections_keep_their_real_headers_and_read_by_alias_header_and_part(built):
    fmt, root, _ = built
    case = CASES[fmt]
    pid = case["sectioned"]
    results = await explore(
        root / "corpus.sqlite",
        root / "read-log.sqlite",
        [
            ("get_paper_info", {"paper_id": pid}),
            ("list_sections", {"paper_id": pid}),
            *[("read_section", {"paper_id": pid, "section": name}) for name, _ in case["reads"]],
        ],
    )
    info, listed, reads = results[0], results[1], results[2:]
    assert info.structured_content["paper"]["has_text"] is True and "Full text available: yes" in text(info)
    if case["ids_line"]:
        assert case["ids_line"] in text(info)
    headers = [s["header"] for s in listed.structured_content["sections"]]
    assert headers[: len(case["headers"])] == case["headers"]
    for (name, header), result in zip(case["reads"], reads, strict=True):
        assert not result.is_error, f"read_section({name!r}): {text(result)}"
        alias = chr(ord("A") + headers.index(header))
        assert text(result).splitlines()[0].startswith(f"=== ({alias}) {header} — "), name
        assert result.structured_content["section"]["header"] == header


async def test_a_paper_without_headed_sections_reads_as_main_text(tmp_path):
    """eLife Insights have no <sec>: their paragraphs become one section, "Main text"."""
    build_fixture_corpus("jats", tmp_path / "corpus.sqlite")
    listed, read = await explore(
        tmp_path / "corpus.sqlite",
        tmp_path / "log.sqlite",
        [
            ("list_sections", {"paper_id": "doi:10.7554/elife.00240"}),
            ("read_section", {"paper_id": "doi:10.7554/elife.00240", "section": "main"}),
        ],
    )
    assert [s["header"] for s in listed.structured_content["sections"]] == ["Main text"]
    assert "Schuman, Kathleen Barthel and Ian Baldwin" in text(read)
