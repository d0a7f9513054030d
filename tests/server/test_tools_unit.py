"""The pure tool functions, called directly: fast and precise, beside the MCP-client tests.

Each tool is ``f(scope, args) -> ToolOutput``; charging, logging and the status line belong to the session,
so these tests see exactly what a tool returns: outcome, text, structured data, exposure and delivery."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from support.release_fixture import ARXIV, pid

from agenthop.server.papers import Corpus
from agenthop.server.search import SearchEngine
from agenthop.server.tools import (
    TOOLS,
    PaperArgs,
    ReadArgs,
    Scope,
    SearchArgs,
    SubmitArgs,
    ThinkArgs,
    get_paper_info,
    get_references,
    list_sections,
    read_section,
    search_papers,
    section_body,
    submit_answer,
    think,
)
from agenthop.server.transport.mcp_app import complete_item_ids


@pytest.fixture(scope="module")
def corpus(fixture_corpus):
    return Corpus(fixture_corpus)


@pytest.fixture(scope="module")
def item(corpus):
    return Scope(corpus, SearchEngine(corpus), "st_0001")


@pytest.fixture(scope="module")
def explore(corpus):
    return Scope(corpus, SearchEngine(corpus), None)


def test_search_ranks_the_scope_and_reports_what_it_exposed(item):
    out = search_papers(item, SearchArgs(query="paper abstract", top_k=2))
    assert out.outcome == "ok"
    assert [r["paper_id"] for r in out.data["results"]] == [pid("A"), pid("B")]  # equal scores: graph order
    assert out.exposed == [{"paper_id": pid("A"), "rank": 1}, {"paper_id": pid("B"), "rank": 2}]
    assert out.data["results"][0] == {
        "rank": 1,
        "paper_id": pid("A"),
        "title": "Paper A",
        "year": 2015,
        "abstract": "Abstract of paper A.",
        "has_text": True,
    }
    assert out.text.splitlines()[:3] == ["Search results for 'paper abstract' (2):", "", f"[1] {pid('A')}"]
    assert out.delivered is None and out.answer is None


def test_search_with_no_hit_or_only_stopwords(item):
    for query in ("zzzz", "the of and"):
        out = search_papers(item, SearchArgs(query=query))
        assert (out.outcome, out.data, out.exposed) == ("ok", {"query": query, "results": []}, [])
        assert out.text == f"No papers match '{query}'. Try other keywords."


def test_paper_info_in_and_out_of_scope(item, explore):
    out = get_paper_info(item, PaperArgs(paper_id=pid("A")))
    assert out.data["paper"] == {
        "paper_id": pid("A"),
        "title": "Paper A",
        "authors": ["Ada Lovelace", "Alan Turing"],
        "year": 2015,
        "venue": "ACL",
        "ids": {"arxiv": ARXIV["A"]},
        "abstract": "Abstract of paper A.",
        "has_text": True,
    }
    assert "Full text available: yes (use list_sections)" in out.text
    outside = get_paper_info(item, PaperArgs(paper_id=pid("H")))  # in the corpus, not in st_0001's neighbourhood
    assert outside.outcome == "not_found" and outside.data == {"error": f"unknown paper ID {pid('H')!r}"}
    assert get_paper_info(explore, PaperArgs(paper_id=pid("H"))).outcome == "ok"


def test_references_follow_the_items_graph_with_contexts(item, explore):
    out = get_references(item, PaperArgs(paper_id=pid("A")))
    assert [(r["paper_id"], r["context"]) for r in out.data["references"]] == [
        (pid("B"), "We build on the data of Paper B [3]."),
        (pid("C"), None),
        (pid("D"), None),
    ]
    assert out.exposed == [{"paper_id": pid(n), "rank": i} for i, n in enumerate("BCD", 1)]
    assert get_references(item, PaperArgs(paper_id=pid("C"))).data["references"] == []
    assert [r["paper_id"] for r in get_references(explore, PaperArgs(paper_id=pid("C"))).data["references"]] == [
        pid("I")
    ]


def test_list_sections_gives_aliases_and_lengths_or_says_there_is_no_text(item):
    out = list_sections(item, PaperArgs(paper_id=pid("B")))
    assert [(s["alias"], s["header"]) for s in out.data["sections"]] == [
        ("A", "Introduction"),
        ("B", "Method"),
        ("C", "Experiments"),
        ("D", "Apdx_A: Proofs"),
    ]
    assert out.text.splitlines()[-2] == "(C) Experiments (74 chars)"
    no_text = list_sections(item, PaperArgs(paper_id=pid("C")))
    assert no_text.outcome == "no_text" and no_text.data["sections"] == [] and no_text.data["error"] == "no full text"


def test_read_section_delivers_the_text_in_each_channel_and_records_what_it_delivered(item):
    out = read_section(item, ReadArgs(paper_id=pid("B"), section="experiments"))
    body = "We train on 4,096 examples and reach 81.5% accuracy on the held-out split."
    # The text is in both channels: a client hands its model the text content or the structured content.
    assert out.data == {
        "paper_id": pid("B"),
        "section": {"alias": "C", "header": "Experiments", "chars": len(body)},
        "text": body,
    }
    assert out.text == f"=== (C) Experiments — Paper B ===\n\n{body}\n\n=== End of (C) Experiments ==="
    assert out.delivered == {
        "paper_id": pid("B"),
        "arxiv_id": "2101.00002",
        "section_index": 2,
        "header": "Experiments",
    }
    # What the session appends after the end line is never part of the section.
    assert section_body(out.text + "\n\n[Budget spent: ...]\n\n[Budget used: 5/5 (0 left)]") == body
    assert section_body("Noted.") is None


def test_read_section_failures_list_the_candidates_and_deliver_nothing(item):
    ambiguous = read_section(item, ReadArgs(paper_id=pid("B"), section="e"))
    assert ambiguous.outcome == "ambiguous" and ambiguous.delivered is None
    assert ambiguous.data["candidates"] == [{"alias": "B", "header": "Method"}, {"alias": "C", "header": "Experiments"}]
    unknown = read_section(item, ReadArgs(paper_id=pid("B"), section="Conclusion"))
    assert unknown.outcome == "not_found" and len(unknown.data["candidates"]) == 4
    assert unknown.text == (
        "Section 'Conclusion' is not in this paper. Its sections are: (A) Introduction; (B) Method; "
        "(C) Experiments; (D) Apdx_A: Proofs."
    )
    assert read_section(item, ReadArgs(paper_id=pid("D"), section="A")).outcome == "no_text"  # arXiv ID not in the pool


def test_argument_models_refuse_what_the_tools_never_see():
    with pytest.raises(ValidationError, match="blank"):
        ReadArgs(paper_id=pid("B"), section="   ")
    with pytest.raises(ValidationError):
        SearchArgs(query="x", top_k=11)
    with pytest.raises(ValidationError):
        SubmitArgs(answer="a", reasoning="lowercase letters are not options")
    with pytest.raises(ValidationError):
        PaperArgs(paper_id=pid("A"), extra=1)


def test_think_and_submit(item):
    assert think(item, ThinkArgs(reasoning="plan")).text == "Noted."
    out = submit_answer(item, SubmitArgs(answer="B", reasoning="r"))
    assert (out.answer, out.data) == ("B", {"answer": "B"})


def test_costs_and_read_only_hints_are_the_specs():
    assert {n: t.cost for n, t in TOOLS.items()} == {
        "search_papers": 1,
        "get_paper_info": 1,
        "get_references": 1,
        "list_sections": 1,
        "read_section": 5,
        "think": 0,
        "submit_answer": 0,
    }
    assert [n for n, t in TOOLS.items() if not t.read_only] == ["submit_answer"]


def test_item_id_completion_is_a_capped_prefix_match():
    ids = [f"st_{i:04d}" for i in range(150)] + ["mt_0001"]
    first = complete_item_ids(ids, "ST_00", limit=100)
    assert first.values == ids[:100] and first.total == 100 and first.has_more is False
    capped = complete_item_ids(ids, "", limit=100)
    assert len(capped.values) == 100 and capped.total == 151 and capped.has_more is True
    assert complete_item_ids(ids, "mt").values == ["mt_0001"] and complete_item_ids(ids, "x").values == []
