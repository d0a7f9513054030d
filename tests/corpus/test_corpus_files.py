"""The optional corpus-wide files (corpus/papers.jsonl, corpus/citations.jsonl), explore-only corpora, paper IDs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from support.release_fixture import ARXIV, make_release, pid

from agenthop.corpus.importer import ReleaseError, import_release
from agenthop.corpus.info import describe, format_description


def quiet(_msg: str) -> None:
    pass


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def with_corpus_files(r) -> None:
    """M (text: pool record L) and N (metadata only) are listed beside A; A and M have reference lists."""
    r.corpus_papers = [
        {
            "paper_id": "doi:10.1/m",
            "title": "Paper M",
            "abstract": "About M.",
            "authors": ["Grace Hopper"],
            "year": 2021,
            "venue": "EMNLP",
            "text_id": ARXIV["L"],
            "ids": {"DOI": "10.1/m", "arxiv": ARXIV["L"], "acl": ""},
        },
        {
            "paper_id": "doi:10.1/n",
            "title": "Paper N",
            "abstract": None,
            "authors": [],
            "year": None,
            "venue": None,
            "text_id": None,
            "ids": {"doi": "10.1/n"},
        },
        {
            "paper_id": pid("A"),
            "title": "Paper A",
            "abstract": "Abstract of paper A.",
            "authors": ["Ada Lovelace", "Alan Turing"],
            "year": 2015,
            "venue": "ACL",
            "text_id": ARXIV["A"],
            "ids": {"arxiv": ARXIV["A"], "doi": "10.1/a"},
        },
    ]
    r.citations = [
        {
            "paper_id": pid("A"),
            "references": [
                {"paper_id": "doi:10.1/n", "context": "N shows it [1]."},
                {"paper_id": pid("B"), "context": "Paper B's corpus-wide sentence [2]."},
                {"paper_id": "doi:10.1/m", "context": None},
            ],
        },
        {"paper_id": "doi:10.1/m", "references": [{"paper_id": pid("A"), "context": "As A did [4]."}]},
    ]


def build(tmp_path: Path, mutate) -> tuple[Path, dict]:
    release = make_release(tmp_path, mutate)
    out = tmp_path / "corpus.sqlite"
    return out, import_release(release, out, echo=quiet)


def test_corpus_papers_join_the_corpus_with_their_ids_and_text(tmp_path):
    out, summary = build(tmp_path, with_corpus_files)
    conn = connect(out)
    m = conn.execute(
        "SELECT arxiv_id, title, authors, year, venue, ids, has_text FROM papers WHERE paper_id = 'doi:10.1/m'"
    ).fetchone()
    assert m == (
        ARXIV["L"],
        "Paper M",
        '["Grace Hopper"]',
        2021,
        "EMNLP",
        json.dumps({"arxiv": ARXIV["L"], "doi": "10.1/m"}),
        1,
    )
    n = conn.execute("SELECT arxiv_id, abstract, ids, has_text FROM papers WHERE paper_id = 'doi:10.1/n'").fetchone()
    assert n == (None, "", '{"doi": "10.1/n"}', 0)
    # L's text now belongs to M: no arxiv:<id> stand-in for it.
    assert conn.execute("SELECT COUNT(*) FROM papers WHERE paper_id LIKE 'arxiv:%'").fetchone() == (0,)
    # A is listed and named by graphs: the listed record is kept (with its DOI); graph copies agree, so no conflict.
    assert conn.execute("SELECT ids FROM papers WHERE paper_id = ?", (pid("A"),)).fetchone() == (
        json.dumps({"arxiv": ARXIV["A"], "doi": "10.1/a"}),
    )
    assert summary["metadata_conflicts"] == 1  # only E's differing abstract, as without corpus/
    assert summary["counts"]["papers"] == 11 + 2 and summary["counts"]["papers_in_no_item"] == 2


def test_citations_replace_graph_edges_in_explore_mode_only(tmp_path):
    out, _ = build(tmp_path, with_corpus_files)
    conn = connect(out)
    explore = conn.execute(
        "SELECT cited, position, context FROM edges WHERE citing = ? ORDER BY position", (pid("A"),)
    ).fetchall()
    assert explore == [
        ("doi:10.1/n", 0, "N shows it [1]."),
        (pid("B"), 1, "Paper B's corpus-wide sentence [2]."),
        ("doi:10.1/m", 2, None),
    ]
    assert conn.execute("SELECT cited, context FROM edges WHERE citing = 'doi:10.1/m'").fetchall() == [
        (pid("A"), "As A did [4].")
    ]
    # Item st_0001 keeps its own graph: A cites B, C, D there, with the item's own sentence for B.
    item = conn.execute(
        "SELECT cited, context FROM item_edges WHERE item_id = 'st_0001' AND citing = ? ORDER BY position", (pid("A"),)
    ).fetchall()
    assert item == [(pid("B"), "We build on the data of Paper B [3]."), (pid("C"), None), (pid("D"), None)]
    # A citing paper the citations file does not list keeps the union of the graphs' edges.
    assert conn.execute("SELECT cited FROM edges WHERE citing = ? ORDER BY position", (pid("J"),)).fetchall() == [
        (pid("B"),),
        (pid("K"),),
        (pid("D"),),
    ]


def test_explore_only_corpus(tmp_path):
    def mutate(r):
        with_corpus_files(r)
        r.explore_only()
        r.citations[0]["references"] = r.citations[0]["references"][::2]  # B is no graph node any more: drop it

    out, summary = build(tmp_path, mutate)
    counts = summary["counts"]
    assert counts["items"] == 0 and counts["item_nodes"] == 0 and summary["items_without_labels"] == []
    # The three listed papers, plus every pool record no paper names (as arxiv:<id>).
    conn = connect(out)
    ids = {p for (p,) in conn.execute("SELECT paper_id FROM papers")}
    assert ids == {pid("A"), "doi:10.1/m", "doi:10.1/n"} | {f"arxiv:{ARXIV[x]}" for x in ("B", "F", "G", "H", "J", "K")}
    assert conn.execute(
        "SELECT title, has_text, ids FROM papers WHERE paper_id = ?", (f"arxiv:{ARXIV['B']}",)
    ).fetchone() == ("Paper B", 1, json.dumps({"arxiv": ARXIV["B"]}))
    assert conn.execute("SELECT COUNT(*) FROM search_index").fetchone()[0] >= 1
    assert set(summary["inputs"]) == {"paper_pool/papers.jsonl", "corpus/papers.jsonl", "corpus/citations.jsonl"}
    info = describe(out)
    assert info["counts"]["items"] == 0 and info["counts"]["papers_with_external_ids"] == 9
    text = format_description(info)
    assert "items         0 (explore mode only)" in text
    assert "by type" not in text and "nodes/item" not in text  # no empty breakdowns


def expect_error(tmp_path: Path, mutate, *fragments: str) -> str:
    release = make_release(tmp_path, mutate)
    out = tmp_path / "corpus.sqlite"
    with pytest.raises(ReleaseError) as info:
        import_release(release, out, echo=quiet)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert not out.exists()
    return message


def test_item_files_come_together(tmp_path):
    def mutate(r):
        r.labels = None

    expect_error(tmp_path, mutate, "has no audit/recall_labels.jsonl (it has qa/full.jsonl, graphs/full.jsonl)")


def test_explore_only_needs_corpus_papers(tmp_path):
    expect_error(
        tmp_path,
        lambda r: r.explore_only(),
        "has no qa/full.jsonl, graphs/full.jsonl or audit/recall_labels.jsonl, and no corpus/papers.jsonl",
    )


CASES = {
    "citation to an unknown paper": (
        lambda r: (
            with_corpus_files(r),
            r.citations[1]["references"].append({"paper_id": "doi:10.1/zzz", "context": None}),
        ),
        [
            "corpus/citations.jsonl line 2: field 'references[1].paper_id': expected a paper of corpus/papers.jsonl or a graph node, "
            'found "doi:10.1/zzz", which is neither'
        ],
    ),
    "citing paper listed twice": (
        lambda r: (with_corpus_files(r), r.citations.append({"paper_id": pid("A"), "references": []})),
        [
            "corpus/citations.jsonl line 3: field 'paper_id': expected a citing paper not listed before in this file, found a duplicate"
        ],
    ),
    "text_id not in the pool": (
        lambda r: (with_corpus_files(r), r.corpus_papers[1].update(text_id="2101.99999")),
        [
            "corpus/papers.jsonl line 2: field 'text_id': expected the arxiv_id of a record in paper_pool/papers.jsonl, or null, "
            'found "2101.99999", which is not in the pool'
        ],
    ),
    "text_id shared": (
        lambda r: (with_corpus_files(r), r.corpus_papers[1].update(text_id=ARXIV["L"])),
        [
            'corpus/papers.jsonl line 2: field \'text_id\': expected a text record no other paper names, found "2101.00012", already the text of "doi:10.1/m"'
        ],
    ),
    "duplicate paper_id": (
        lambda r: (with_corpus_files(r), r.corpus_papers.append(dict(r.corpus_papers[1]))),
        [
            "corpus/papers.jsonl line 4: field 'paper_id': expected a paper_id not seen before in this file, found a duplicate \"doi:10.1/n\""
        ],
    ),
    "paper ID with a space": (
        lambda r: (with_corpus_files(r), r.corpus_papers[1].update(paper_id="doi:10.1/ n")),
        [
            "corpus/papers.jsonl line 2: field 'paper_id': expected a paper ID: a non-empty string of at most 200 characters with no whitespace "
            "or control characters, found \"doi:10.1/ n\", which has whitespace (' ')"
        ],
    ),
    "paper ID too long": (
        lambda r: (with_corpus_files(r), r.corpus_papers[1].update(paper_id="x" * 201)),
        ["which has 201 characters (at most 200)"],
    ),
    "paper ID with a control character": (
        lambda r: (with_corpus_files(r), r.corpus_papers[1].update(paper_id="doi:10.1/\u0007n")),
        ["which has a control character (U+0007)"],
    ),
    "ids not an object": (
        lambda r: (with_corpus_files(r), r.corpus_papers[1].update(ids=["10.1/n"])),
        [
            "corpus/papers.jsonl line 2: field 'ids': expected an object of external IDs {doi, arxiv, pmcid, acl, ...}, found a list of 1"
        ],
    ),
    "graph node key with whitespace": (
        lambda r: r.graph("st_0002")["nodes"].update({"bad id": {"title": "Bad"}}),
        [
            "graphs/full.jsonl line 2: field 'nodes': expected paper IDs as keys: a non-empty string of at most 200 characters with no "
            "whitespace or control characters, found \"bad id\", which has whitespace (' ')"
        ],
    ),
    "pool key with whitespace": (
        lambda r: r.paper("L").update(arxiv_id="2101 00012"),
        ["paper_pool/papers.jsonl line 8: field 'arxiv_id': expected a pool key: a non-empty string"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_corpus_files_are_refused(tmp_path, case):
    mutate, fragments = CASES[case]
    expect_error(tmp_path, mutate, *fragments)


def test_orphan_id_may_not_take_another_papers_id(tmp_path):
    def mutate(r):
        with_corpus_files(r)
        r.corpus_papers[0]["text_id"] = None  # L's record is named by no paper again ...
        r.corpus_papers.append(
            {"paper_id": f"arxiv:{ARXIV['L']}", "title": "Not L"}
        )  # ... and its stand-in ID is taken

    expect_error(
        tmp_path,
        mutate,
        'the record "2101.00012", which no paper names, would be served as the paper "arxiv:2101.00012"',
    )
