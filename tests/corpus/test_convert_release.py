"""Linking and the release writer on the real fixtures: paper IDs, in-set and outside references, items' graphs."""

import json

import pytest
from support.paths import FIXTURES

from agenthop.corpus.convert.build import write_release
from agenthop.corpus.convert.linking import paper_id
from agenthop.corpus.convert.model import ConvertError

SPECTER_TEI = "paper:"  # SPECTER's TEI carries no identifier: its ID is a title hash


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def release_of(fmt, tmp_path, **kw):
    out = tmp_path / fmt
    summary = write_release([FIXTURES / fmt], out, echo=lambda m: None, **kw)
    papers = {p["paper_id"]: p for p in lines(out / "corpus/papers.jsonl")}
    citations = {c["paper_id"]: c["references"] for c in lines(out / "corpus/citations.jsonl")}
    return out, summary, papers, citations


def test_jats_links_by_doi_and_keeps_outside_references_as_metadata_only(tmp_path):
    out, summary, papers, citations = release_of("jats", tmp_path)
    insight, later, cited = "doi:10.7554/elife.00240", "doi:10.7554/elife.04490", "doi:10.7554/elife.00007"
    assert summary["papers_in_set"] == 3 and summary["citations_in_set"] == 2
    assert papers[cited]["text_id"] == cited and papers[cited]["ids"] == {"doi": "10.7554/elife.00007"}
    refs = citations[insight]
    assert [r["paper_id"] for r in refs].index(cited) == 3  # bib4: reference-list order is kept
    assert refs[3]["context"].endswith("a wild tobacco plant (Schuman et al., 2012).")
    outside = papers[refs[0]["paper_id"]]  # bib1: Allmann and Baldwin 2010, Science
    assert outside == {
        "paper_id": "doi:10.1126/science.1191634",
        "title": "Insects betray themselves in nature to predators by rapid isomerization of green leaf volatiles",
        "abstract": None,
        "authors": ["S Allmann", "IT Baldwin"],
        "year": 2010,
        "venue": "Science",
        "text_id": None,
        "ids": {"doi": "10.1126/science.1191634"},
    }
    # Both citing papers cite Allmann and Baldwin 2010: one shared metadata-only node.
    assert "doi:10.1126/science.1191634" in [r["paper_id"] for r in citations[later]]
    pool = lines(out / "paper_pool/papers.jsonl")
    assert sorted(p["arxiv_id"] for p in pool) == sorted([insight, later, cited])
    assert not (out / "qa").exists()  # explore only


def test_tei_links_by_title_and_year_and_by_doi(tmp_path):
    _, summary, papers, citations = release_of("tei", tmp_path)
    specter = next(pid for pid, p in papers.items() if p["title"].startswith("SPECTER"))
    graph = next(
        pid for pid, p in papers.items() if p["title"] == "Construction of the Literature Graph in Semantic Scholar"
    )
    assert specter.startswith(SPECTER_TEI) and graph.startswith("paper:")
    refs = {r["paper_id"]: r["context"] for r in citations[specter]}
    assert "(Ammar et al., 2018)" in refs[graph]  # title + year (the 2018 header has no year: compatible)
    assert refs["doi:10.1186/s12984-016-0129-6"] is None  # by DOI, cited nowhere in the text
    assert summary["citations_in_set"] == 2


def test_s2orc_ids_fall_back_to_the_source_key(tmp_path):
    _, _, papers, citations = release_of("s2orc", tmp_path)
    assert {"s2orc:2020", "s2orc:N18-3011", "s2orc:s12984-016-0129-6"} <= set(papers)
    assert [r["paper_id"] for r in citations["s2orc:2020"] if r["paper_id"].startswith("s2orc:")] == [
        "s2orc:N18-3011",
        "s2orc:s12984-016-0129-6",
    ]


def test_paper_ids_prefer_doi_then_arxiv_then_pmc_then_acl():
    assert (
        paper_id({"acl": "2020.acl-main.1", "doi": "10.18653/v1/2020.acl-main.1"}, "7", "T", 2020)
        == "doi:10.18653/v1/2020.acl-main.1"
    )
    assert paper_id({"arxiv": "2106.09685", "pmcid": "PMC1"}, None, "T", None) == "arxiv:2106.09685"
    assert paper_id({"pmcid": "PMC1234567"}, None, "T", None) == "pmc:PMC1234567"
    assert paper_id({}, "s 1", "T", None) == "s2orc:s1"
    assert len(paper_id({"doi": "10.1/" + "x" * 300}, None, "T", None)) <= 200


def test_items_get_graphs_from_the_citation_graph_with_their_contexts(tmp_path):
    seed, gold = "doi:10.7554/elife.00240", "doi:10.7554/elife.00007"
    items = tmp_path / "qa.jsonl"
    items.write_text(
        json.dumps(
            {
                "id": "st_0001",
                "question_type": "single-target",
                "depth": 1,
                "reasoning_type": "RESULT",
                "question": "What did the field trial show?",
                "options": ["a", "b", "c", "d"],
                "correct_index": 0,
                "seed_paper_id": seed,
                "gold_paper_ids": [gold],
                "bridge_paper_ids": [],
            }
        )
        + "\n"
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps(
            {
                "sample_id": "st_0001",
                "analysis": {
                    "section_recall_labels": [{"paper_id": gold, "section": "Results", "relevance": "direct"}]
                },
            }
        )
        + "\n"
    )
    out, summary, _, _ = release_of("jats", tmp_path, items=items, labels=labels)
    [qa] = lines(out / "qa/full.jsonl")
    assert qa["seed_arxiv_id"] == seed and qa["gold_arxiv_ids"] == [gold] and qa["bridge_arxiv_ids"] == []
    assert qa["seed_title"] == "Indirect routes to reproductive success"
    [graph] = lines(out / "graphs/full.jsonl")
    assert list(graph["nodes"])[0] == seed and len(graph["edges"][seed]) == 7
    assert graph["nodes"][gold]["arxivId"] == gold
    assert len(graph["edges"][gold]) == 30  # the gold paper's first 30 of its 59 references
    assert graph["contexts"][seed][gold].endswith("(Schuman et al., 2012).")
    [label] = lines(out / "audit/recall_labels.jsonl")[0]["analysis"]["section_recall_labels"]
    assert (
        label["arxiv_id"] == gold and label["paper"].startswith("Herbivory-induced volatiles") and summary["items"] == 1
    )


def test_an_item_naming_an_unknown_seed_is_refused(tmp_path):
    items = tmp_path / "qa.jsonl"
    items.write_text('\n{"id": "st_0001", "seed_paper_id": "doi:10.1/none"}\n')
    with pytest.raises(
        ConvertError,
        match=r"qa.jsonl line 2: field 'seed_paper_id': expected a paper ID of the built corpus, found \"doi:10.1/none\"",
    ):
        release_of("jats", tmp_path, items=items)


def test_the_same_paper_twice_is_kept_once(tmp_path):
    (tmp_path / "in").mkdir()
    for name in ("a.xml", "b.xml"):
        (tmp_path / "in" / name).write_bytes((FIXTURES / "jats" / "elife00240.xml").read_bytes())
    summary = write_release([tmp_path / "in"], tmp_path / "out", echo=lambda m: None)
    assert summary["papers_in_set"] == 1 and summary["duplicates"] == 1
    example = summary["duplicate_examples"][0]
    assert "b.xml (same paper as doi:10.7554/elife.00240; kept " in example and example.endswith(
        "a.xml, the first in input order)"
    )


def test_a_source_id_shared_by_two_different_papers_is_not_a_duplicate(tmp_path):
    """doc2json names papers after their file up to the first dot: 2020.acl-main.207 and 2020.acl-main.1 are both "2020"."""
    (tmp_path / "in").mkdir()
    for name in ("2020.acl-main.207.json", "N18-3011.json"):
        record = json.loads((FIXTURES / "s2orc" / name).read_text())
        record["paper_id"] = "2020"
        (tmp_path / "in" / name).write_text(json.dumps(record))
    summary = write_release([tmp_path / "in"], tmp_path / "out", echo=lambda m: None)
    papers = {p["paper_id"]: p for p in lines(tmp_path / "out/corpus/papers.jsonl") if p["text_id"]}
    graph_id = paper_id({}, None, "Construction of the Literature Graph in Semantic Scholar", None)
    assert set(papers) == {"s2orc:2020", graph_id} and papers["s2orc:2020"]["title"].startswith("SPECTER")
    assert summary["papers_in_set"] == 2 and summary["duplicates"] == 0 and summary["source_id_clashes"] == 1
    assert summary["source_id_clash_examples"] == [
        f'{tmp_path / "in" / "N18-3011.json"} (source ID "2020", as s2orc:2020)'
    ]
    citations = {
        c["paper_id"]: [r["paper_id"] for r in c["references"]] for c in lines(tmp_path / "out/corpus/citations.jsonl")
    }
    assert graph_id in citations["s2orc:2020"]  # SPECTER still cites it, linked by title


def test_a_gold_paper_outside_the_seeds_neighbourhood_is_refused_in_the_users_terms(tmp_path):
    items = tmp_path / "qa.jsonl"
    item = {
        "id": "st_0001",
        "question_type": "single-target",
        "depth": 1,
        "reasoning_type": "RESULT",
        "question": "Q?",
        "options": ["a", "b", "c", "d"],
        "correct_index": 0,
        "seed_paper_id": "doi:10.7554/elife.00007",
        "gold_paper_ids": ["doi:10.7554/elife.04490"],
        "bridge_paper_ids": [],
    }  # e00007 (2012) cannot cite e04490 (2015)
    items.write_text("\n" + json.dumps(item) + "\n")
    with pytest.raises(ConvertError) as caught:
        release_of("jats", tmp_path, items=items)
    assert str(caught.value) == (
        f"{items} line 2: field 'gold_paper_ids[0]': doi:10.7554/elife.04490 is not in the neighbourhood built from the seed "
        "doi:10.7554/elife.00007 (the seed, its first 30 references and their first 30); choose a seed that cites it, "
        "directly or through one paper"
    )
