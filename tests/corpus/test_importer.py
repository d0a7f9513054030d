"""The release importer and ``corpus info``: round trip, validation, determinism, CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.release_fixture import (
    ARXIV,
    GRAPHS_FILE,
    LABELS_FILE,
    POOL_FILE,
    QA_FILE,
    build_release,
    make_release,
    pid,
)

from agenthop.corpus.importer import ReleaseError, corpus_identity, import_release
from agenthop.corpus.info import describe, format_description
from agenthop.server.cli import main
from agenthop.server.corpus_schema import CorpusError, open_corpus
from agenthop.server.sections import normalise

PUBLIC_TABLES = ("meta", "papers", "sections", "pool", "edges", "items", "item_nodes", "item_edges")
GOLD_TABLES = ("gold_items", "gold_recall_labels")
ALL_TABLES = PUBLIC_TABLES + GOLD_TABLES


def quiet(_msg: str) -> None:
    pass


def build(tmp_path: Path, mutate=None, **kwargs) -> tuple[Path, dict]:
    release = make_release(tmp_path, mutate)
    out = tmp_path / "out" / "corpus.sqlite"
    summary = import_release(release, out, echo=quiet, **kwargs)
    return out, summary


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def table_dump(path: Path) -> dict[str, list]:
    conn = connect(path)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in ALL_TABLES}
    finally:
        conn.close()


# --- round trip -----------------------------------------------------------------


def test_round_trip_items_neighbourhoods_and_gold(tmp_path):
    out, summary = build(tmp_path)
    release = build_release()
    conn = connect(out)
    counts = summary["counts"]
    assert counts["items"] == 3
    assert counts["items_by_cell"] == {"ST-d1": 1, "ST-d2": 1, "MT-d1": 1, "MT-d2": 0}
    # L is in the pool but in no graph: explore mode still serves it, as arxiv:<its arXiv ID>.
    assert counts["papers"] == 12 and counts["papers_with_text"] == 8 and counts["pool_papers"] == 8
    assert counts["papers_in_no_item"] == 1
    assert counts["sections"] == 8 * 4
    assert summary["metadata_conflicts"] == 1  # paper E's abstract differs in st_0002
    assert summary["skipped_labels"] == 0 and summary["items_without_labels"] == []

    for position, item in enumerate(release.qa):
        item_id = item["id"]
        row = conn.execute(
            "SELECT question_type, depth, reasoning_type, question, options, seed_paper_id, seed_arxiv_id, seed_title, position "
            "FROM items WHERE item_id = ?",
            (item_id,),
        ).fetchone()
        assert row == (
            item["question_type"],
            item["depth"],
            item["reasoning_type"],
            item["question"],
            json.dumps(item["options"]),
            item["seed_paper_id"],
            item["seed_arxiv_id"],
            item["seed_title"],
            position,
        )
        graph = release.graph(item_id)
        nodes = [
            p
            for (p,) in conn.execute("SELECT paper_id FROM item_nodes WHERE item_id = ? ORDER BY position", (item_id,))
        ]
        assert nodes == list(graph["nodes"])
        assert nodes[0] == item["seed_paper_id"]
        edges = conn.execute(
            "SELECT citing, cited, position FROM item_edges WHERE item_id = ? ORDER BY citing, position", (item_id,)
        ).fetchall()
        expected = sorted(
            ((c, d, i) for c, cited in graph["edges"].items() for i, d in enumerate(cited)), key=lambda e: (e[0], e[2])
        )
        assert edges == expected
        for citing, cited, _ in edges:  # every item edge is in the union table
            assert conn.execute("SELECT 1 FROM edges WHERE citing = ? AND cited = ?", (citing, cited)).fetchone()

        gold = conn.execute(
            "SELECT correct_index, distractor_types, gold_paper_ids, gold_arxiv_ids, bridge_paper_ids, bridge_arxiv_ids "
            "FROM gold_items WHERE item_id = ?",
            (item_id,),
        ).fetchone()
        assert gold[0] == item["correct_index"]
        assert (json.loads(gold[1]) if gold[1] else None) == item["distractor_types"]
        assert [json.loads(g) for g in gold[2:]] == [
            item["gold_paper_ids"],
            item["gold_arxiv_ids"],
            item["bridge_paper_ids"],
            item["bridge_arxiv_ids"],
        ]
        for paper_id in item["gold_paper_ids"] + item["bridge_paper_ids"]:
            assert paper_id in nodes
            assert conn.execute("SELECT has_text FROM papers WHERE paper_id = ?", (paper_id,)).fetchone() == (1,)

        labels = conn.execute(
            "SELECT arxiv_id, section, relevance, what_it_contains FROM gold_recall_labels WHERE item_id = ? ORDER BY position",
            (item_id,),
        ).fetchall()
        assert labels == [
            (lab["arxiv_id"], lab["section"], lab["relevance"], lab["what_it_contains"])
            for lab in release.labels_of(item_id)
        ]
        for arxiv_id, section, _, _ in labels:
            headers = [h for (h,) in conn.execute("SELECT header FROM sections WHERE arxiv_id = ?", (arxiv_id,))]
            texts = [t for (t,) in conn.execute("SELECT text FROM sections WHERE arxiv_id = ?", (arxiv_id,))]
            assert any(normalise(h) == normalise(section) for h in headers) or any(section in t for t in texts)

    # Paper metadata: first record kept, extras stored, metadata-only papers have no text.
    a = conn.execute("SELECT arxiv_id, authors, venue, has_text FROM papers WHERE paper_id = ?", (pid("A"),)).fetchone()
    assert a == (ARXIV["A"], json.dumps(["Ada Lovelace", "Alan Turing"]), "ACL", 1)
    e = conn.execute("SELECT arxiv_id, abstract, has_text FROM papers WHERE paper_id = ?", (pid("E"),)).fetchone()
    assert e == (None, "Abstract of paper E.", 0)
    assert conn.execute("SELECT arxiv_id, has_text, year FROM papers WHERE paper_id = ?", (pid("D"),)).fetchone() == (
        ARXIV["D"],
        0,
        None,
    )
    assert conn.execute("SELECT arxiv_id FROM papers WHERE paper_id = ?", (pid("C"),)).fetchone() == (None,)
    assert conn.execute(
        "SELECT context FROM edges WHERE citing = ? AND cited = ?", (pid("A"), pid("B"))
    ).fetchone() == ("We build on the data of Paper B [3].",)
    headers = [
        h for (h,) in conn.execute("SELECT header FROM sections WHERE arxiv_id = ? ORDER BY position", (ARXIV["B"],))
    ]
    assert headers == ["Introduction", "Method", "Experiments", "Apdx_A: Proofs"]
    conn.close()


def test_gold_data_only_in_gold_tables(tmp_path):
    out, _ = build(tmp_path)
    conn = connect(out)
    gold_values = set()
    for row in conn.execute(
        "SELECT distractor_types, gold_paper_ids, gold_arxiv_ids, bridge_paper_ids, bridge_arxiv_ids FROM gold_items"
    ):
        gold_values.update(v for v in row if v not in (None, "[]"))
    for (what,) in conn.execute("SELECT what_it_contains FROM gold_recall_labels"):
        gold_values.add(what)
    assert len(gold_values) > 10
    for table in PUBLIC_TABLES:
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        assert not any(word in c for c in columns for word in ("correct", "gold", "bridge", "distractor", "relevance"))
        for row in conn.execute(f"SELECT * FROM {table}"):
            for value in row:
                assert value not in gold_values, (table, value)
                if isinstance(value, str) and table == "meta":
                    assert "correct_index" not in value and "gold_paper_ids" not in value
    conn.close()

    # The server's view: gold tables cannot be read at all.
    served = open_corpus(out)
    with pytest.raises(sqlite3.DatabaseError):
        served.execute("SELECT * FROM gold_items").fetchall()
    with pytest.raises(sqlite3.DatabaseError):
        served.execute("SELECT COUNT(*) FROM gold_recall_labels").fetchall()
    assert served.execute("SELECT COUNT(*) FROM items").fetchone() == (3,)
    served.close()


def test_provenance_and_meta(tmp_path):
    out, summary = build(tmp_path)
    conn = open_corpus(out)
    meta = {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM meta")}
    conn.close()
    assert meta["schema_version"] == 2
    prov = meta["provenance"]
    assert prov["source"] == "release"
    assert set(prov["inputs"]) == {QA_FILE, GRAPHS_FILE, POOL_FILE, LABELS_FILE}
    assert all(len(h) == 64 for h in prov["inputs"].values())
    assert prov["importer_version"] == 2 and prov["skipped_labels"] == 0 and prov["metadata_conflicts"] == 1
    assert meta["counts"] == summary["counts"]
    assert meta["corpus_id"] == summary["corpus_id"] == corpus_identity(prov["inputs"])
    assert str(tmp_path) not in json.dumps(meta)  # no absolute paths


def test_two_imports_have_the_same_content(tmp_path):
    release = make_release(tmp_path)
    one = import_release(release, tmp_path / "one.sqlite", echo=quiet)
    two = import_release(release, tmp_path / "two.sqlite", echo=quiet)
    assert one["corpus_id"] == two["corpus_id"]
    assert table_dump(tmp_path / "one.sqlite") == table_dump(tmp_path / "two.sqlite")
    # No timestamps or paths anywhere: even the bytes agree.
    assert (tmp_path / "one.sqlite").read_bytes() == (tmp_path / "two.sqlite").read_bytes()
    # A changed input changes the corpus id.
    other = make_release(tmp_path, lambda r: r.item("st_0001").update(question="Another question?"), name="release2")
    assert import_release(other, tmp_path / "three.sqlite", echo=quiet)["corpus_id"] != one["corpus_id"]


def test_overwrites_existing_out_on_success_and_reports_progress(tmp_path):
    release = make_release(tmp_path)
    out = tmp_path / "corpus.sqlite"
    out.write_bytes(b"old")
    messages: list[str] = []
    import_release(release, out, echo=messages.append)
    assert connect(out).execute("SELECT COUNT(*) FROM items").fetchone() == (3,)
    assert any(POOL_FILE in m for m in messages) and any(m.startswith("wrote") for m in messages)
    # The corpus and explore search's index beside it; no temporary file or folder is left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.sqlite", "corpus.sqlite.search", "release"]


def test_blank_lines_and_missing_optional_fields_are_accepted(tmp_path):
    def mutate(r):
        r.qa.insert(1, "")
        item = r.item("st_0002")
        for key in ("cognitive_skill", "venue", "consensus_tier", "distractor_types", "filter_agreement"):
            item.pop(key, None)
        node = r.graph("st_0001")["nodes"][pid("C")]
        del node["arxivId"], node["year"], node["abstract"]

    out, summary = build(tmp_path, mutate)
    conn = connect(out)
    assert conn.execute("SELECT item_id, position FROM items ORDER BY position").fetchall() == [
        ("st_0001", 0),
        ("st_0002", 1),
        ("mt_0001", 2),
    ]
    assert conn.execute("SELECT venue, consensus_tier FROM items WHERE item_id = 'st_0002'").fetchone() == (None, None)
    assert conn.execute("SELECT distractor_types FROM gold_items WHERE item_id = 'st_0002'").fetchone() == (None,)
    assert conn.execute("SELECT abstract, year FROM papers WHERE paper_id = ?", (pid("C"),)).fetchone() == ("", None)


# --- validation -----------------------------------------------------------------


def expect_error(tmp_path: Path, mutate, *fragments: str, skip_bad_labels: bool = False) -> str:
    """Import a mutated release over an existing out file: must fail, name the problem, leave nothing behind."""
    release = make_release(tmp_path, mutate)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "corpus.sqlite"
    out.write_bytes(b"previous corpus")
    with pytest.raises(ReleaseError) as info:
        import_release(release, out, skip_bad_labels=skip_bad_labels, echo=quiet)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert out.read_bytes() == b"previous corpus"
    assert [p.name for p in out_dir.iterdir()] == ["corpus.sqlite"]
    return message


def _set(getter, **fields):
    return lambda r: getter(r).update(fields)


def _item(item_id):
    return lambda r: r.item(item_id)


def _graph(sample_id):
    return lambda r: r.graph(sample_id)


@pytest.mark.parametrize("missing", [QA_FILE, GRAPHS_FILE, POOL_FILE, LABELS_FILE])
def test_missing_file_names_it_and_the_layout(tmp_path, missing):
    release = make_release(tmp_path)
    (release / missing).unlink()
    out = tmp_path / "corpus.sqlite"
    with pytest.raises(ReleaseError) as info:
        import_release(release, out, echo=quiet)
    message = str(info.value)
    assert f"has no {missing}" in message
    for rel in (QA_FILE, GRAPHS_FILE, POOL_FILE, LABELS_FILE):
        assert rel in message
    assert not out.exists()


def test_missing_release_directory(tmp_path):
    with pytest.raises(ReleaseError, match="release not found: .*nowhere; expected a release directory"):
        import_release(tmp_path / "nowhere", tmp_path / "c.sqlite", echo=quiet)


def test_options_message_is_exact(tmp_path):
    message = expect_error(tmp_path, _set(_item("st_0002"), options=["a", "b", "c"]))
    assert message == "qa/full.jsonl line 2: field 'options': expected a list of 4 strings, found a list of 3"


CASES = {
    # JSON and structure
    "bad json": (
        lambda r: r.qa.__setitem__(1, '{"id": "st_0002",'),
        ["qa/full.jsonl line 2: not valid JSON (Expecting property name enclosed in double quotes at column 18)"],
    ),
    "not an object": (
        lambda r: r.graphs.__setitem__(2, "[1, 2]"),
        ["graphs/full.jsonl line 3: expected a JSON object, found a list of 2"],
    ),
    "bad json in pool": (lambda r: r.pool.__setitem__(3, "{oops"), ["paper_pool/papers.jsonl line 4: not valid JSON"]),
    # missing fields
    "missing question": (
        lambda r: r.item("mt_0001").pop("question"),
        ["qa/full.jsonl line 3: missing field 'question'"],
    ),
    "missing nodes": (lambda r: r.graph("st_0002").pop("nodes"), ["graphs/full.jsonl line 2: missing field 'nodes'"]),
    "missing sections": (
        lambda r: r.paper("B").pop("sections"),
        ["paper_pool/papers.jsonl line 2: missing field 'sections'"],
    ),
    "missing label list": (
        lambda r: r.label_record("st_0001")["analysis"].pop("section_recall_labels"),
        ["audit/recall_labels.jsonl line 1: missing field 'analysis.section_recall_labels'"],
    ),
    "missing label section": (
        lambda r: r.labels_of("mt_0001")[1].pop("section"),
        ["audit/recall_labels.jsonl line 3: missing field 'analysis.section_recall_labels[1].section'"],
    ),
    # wrong types
    "depth as string": (
        _set(_item("st_0001"), depth="1"),
        ["qa/full.jsonl line 1: field 'depth': expected one of 1 or 2, found the string \"1\""],
    ),
    "correct_index as string": (
        _set(_item("st_0001"), correct_index="1"),
        ["field 'correct_index': expected an integer, found the string \"1\""],
    ),
    "node year as string": (
        lambda r: r.graph("st_0001")["nodes"][pid("B")].update(year="2016"),
        [f"graphs/full.jsonl line 1: field 'nodes.{pid('B')}.year': expected an integer, found the string \"2016\""],
    ),
    "edges as list": (
        _set(_graph("mt_0001"), edges=[]),
        ["graphs/full.jsonl line 3: field 'edges': expected an object"],
    ),
    "section text as number": (
        lambda r: r.paper("A")["sections"][1].update(text=7),
        ["paper_pool/papers.jsonl line 1: field 'sections[1].text': expected a string, found an integer (7)"],
    ),
    "authors not a list": (
        lambda r: r.graph("st_0001")["nodes"][pid("A")].update(authors="Ada"),
        [f"field 'nodes.{pid('A')}.authors': expected a list of strings"],
    ),
    # allowed values
    "options not strings": (
        _set(_item("st_0001"), options=["a", "b", 3, "d"]),
        ["field 'options[2]': expected a non-empty string, found an integer (3)"],
    ),
    "correct_index out of range": (
        _set(_item("mt_0001"), correct_index=4),
        ["qa/full.jsonl line 3: field 'correct_index': expected an integer from 0 to 3, found an integer (4)"],
    ),
    "question_type": (
        _set(_item("st_0001"), question_type="bfs"),
        ['field \'question_type\': expected one of "single-target" or "multi-target", found the string "bfs"'],
    ),
    "depth 3": (_set(_item("st_0001"), depth=3), ["field 'depth': expected one of 1 or 2, found an integer (3)"]),
    "reasoning_type": (
        _set(_item("st_0001"), reasoning_type="method"),
        ["field 'reasoning_type': expected one of \"GROUND\""],
    ),
    "consensus tier not a string": (
        _set(_item("st_0001"), consensus_tier=3),
        ["field 'consensus_tier': expected a string or null, found an integer (3)"],
    ),
    "distractor kind": (
        _set(_item("st_0001"), distractor_types=["seed_only", "correct", "typo", "no_context"]),
        ["field 'distractor_types[2]': expected one of \"correct\""],
    ),
    "distractor correct slot": (
        _set(_item("st_0001"), distractor_types=["correct", "seed_only", "wrong_paper", "no_context"]),
        [
            'field \'distractor_types[0]\': expected "correct" at index 1 (the correct_index) and nowhere else, found the string "correct"'
        ],
    ),
    "gold list empty": (
        _set(_item("st_0001"), gold_paper_ids=[], gold_arxiv_ids=[]),
        ["qa/full.jsonl line 1: field 'gold_paper_ids': expected a non-empty list of strings, found an empty list"],
    ),
    "gold arxiv length": (
        _set(_item("mt_0001"), gold_arxiv_ids=[ARXIV["B"]]),
        ["field 'gold_arxiv_ids': expected a list of 2 (one per gold paper), found a list of 1"],
    ),
    "bridge at depth 1": (
        _set(_item("st_0001"), bridge_paper_ids=[pid("D")], bridge_arxiv_ids=[ARXIV["D"]]),
        ["field 'bridge_paper_ids': expected an empty list at depth 1, found a list of 1"],
    ),
    "empty string in id list": (
        _set(_item("st_0001"), gold_arxiv_ids=[""]),
        ["field 'gold_arxiv_ids[0]': expected a non-empty string, found an empty string"],
    ),
    "no bridge at depth 2": (
        _set(_item("st_0002"), bridge_paper_ids=[], bridge_arxiv_ids=[]),
        ["field 'bridge_paper_ids': expected at least one bridge paper at depth 2"],
    ),
    "relevance": (
        lambda r: r.labels_of("st_0001")[0].update(relevance="partial"),
        ["field 'analysis.section_recall_labels[0].relevance'"],
    ),
    # dangling IDs
    "seed not a node": (
        _set(_item("st_0001"), seed_paper_id=pid("Z")),
        [
            f"qa/full.jsonl line 1: field 'seed_paper_id': expected a paper ID among the nodes of item st_0001's graph, found \"{pid('Z')}\", which is not a node"
        ],
    ),
    "gold not a node": (
        _set(_item("st_0002"), gold_paper_ids=[pid("K")], gold_arxiv_ids=[ARXIV["K"]]),
        ["qa/full.jsonl line 2: field 'gold_paper_ids[0]'", "which is not a node"],
    ),
    "bridge not a node": (
        _set(_item("st_0002"), bridge_paper_ids=[pid("J")], bridge_arxiv_ids=[ARXIV["J"]]),
        ["field 'bridge_paper_ids[0]'", "which is not a node"],
    ),
    "gold arxiv mismatch": (
        _set(_item("st_0001"), gold_arxiv_ids=[ARXIV["K"]]),
        ["field 'gold_arxiv_ids[0]': expected \"2101.00002\" (the node's arxivId)"],
    ),
    "gold without text": (
        _set(_item("st_0001"), gold_paper_ids=[pid("D")], gold_arxiv_ids=[ARXIV["D"]]),
        ["field 'gold_paper_ids[0]': expected a gold paper whose text is in paper_pool/papers.jsonl"],
    ),
    "edge to unknown node": (
        lambda r: r.graph("st_0002")["edges"][pid("F")].append(pid("Z")),
        [
            f"graphs/full.jsonl line 2: field 'edges.{pid('F')}[2]': expected a paper ID among this record's nodes, found \"{pid('Z')}\", which is not a node"
        ],
    ),
    "edge from unknown node": (
        lambda r: r.graph("st_0001")["edges"].update({pid("Z"): []}),
        [f"field 'edges.{pid('Z')}': expected a citing paper ID among this record's nodes"],
    ),
    "context for a non-edge": (
        lambda r: r.graph("st_0001").update(contexts={pid("B"): {pid("A"): "B cites A?"}}),
        [f"field 'contexts.{pid('B')}.{pid('A')}'"],
    ),
    "item without graph": (
        lambda r: r.graphs.pop(1),
        ['qa/full.jsonl line 2: item "st_0002" has no graph record in graphs/full.jsonl'],
    ),
    "graph for unknown item": (
        lambda r: r.graphs.append(dict(r.graph("st_0001"), sample_id="st_9999")),
        [
            "graphs/full.jsonl line 4: field 'sample_id': expected the id of an item in qa/full.jsonl, found \"st_9999\", which is not an item"
        ],
    ),
    "labels for unknown item": (
        lambda r: r.labels.append({"sample_id": "mt_9999", "analysis": {"section_recall_labels": []}}),
        [
            "audit/recall_labels.jsonl line 4: field 'sample_id': expected the id of an item in qa/full.jsonl, found \"mt_9999\""
        ],
    ),
    # duplicates
    "duplicate item id": (
        lambda r: r.qa.append(dict(r.item("st_0001"))),
        [
            "qa/full.jsonl line 4: field 'id': expected an item id not seen before in this file, found a duplicate \"st_0001\""
        ],
    ),
    "duplicate graph sample_id": (
        lambda r: r.graphs.append(dict(r.graph("mt_0001"))),
        [
            "graphs/full.jsonl line 4: field 'sample_id': expected a sample_id not seen before in this file, found a duplicate \"mt_0001\""
        ],
    ),
    "duplicate label sample_id": (
        lambda r: r.labels.append(dict(r.label_record("st_0002"))),
        ["audit/recall_labels.jsonl line 4: field 'sample_id': expected a sample_id not seen before"],
    ),
    "duplicate pool arxiv_id": (
        lambda r: r.pool.append(dict(r.paper("H"))),
        [
            "paper_pool/papers.jsonl line 9: field 'arxiv_id': expected an arXiv ID not seen before in this file, found a duplicate \"2101.00008\""
        ],
    ),
    # recall labels
    "label unknown section": (
        lambda r: r.labels_of("st_0002")[1].update(section="Related Work"),
        [
            "audit/recall_labels.jsonl line 2: field 'analysis.section_recall_labels[1].section': expected a section of 2101.00007",
            'found the string "Related Work"',
        ],
    ),
    "label arxiv not in pool": (
        lambda r: r.labels_of("mt_0001")[0].update(arxiv_id=ARXIV["D"]),
        [
            "audit/recall_labels.jsonl line 3: field 'analysis.section_recall_labels[0].arxiv_id': expected an arXiv ID in paper_pool/papers.jsonl, found the string \"2101.00004\""
        ],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_release_is_rejected(tmp_path, case):
    mutate, fragments = CASES[case]
    expect_error(tmp_path, mutate, *fragments)


def test_skip_bad_labels_drops_and_counts_them(tmp_path):
    def mutate(r):
        r.labels_of("st_0002")[1].update(section="Related Work")
        r.labels_of("mt_0001")[0].update(arxiv_id="2401.99999")

    out, summary = build(tmp_path, mutate, skip_bad_labels=True)
    assert summary["skipped_labels"] == 2
    assert {d["sample_id"] for d in summary["skipped_label_examples"]} == {"st_0002", "mt_0001"}
    assert summary["counts"]["recall_labels"] == 8 - 2
    conn = connect(out)
    assert conn.execute("SELECT position, section FROM gold_recall_labels WHERE item_id = 'st_0002'").fetchall() == [
        (0, "2 Method")
    ]
    prov = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'provenance'").fetchone()[0])
    assert prov["skipped_labels"] == 2


def test_item_without_labels_is_a_warning(tmp_path):
    messages: list[str] = []
    release = make_release(tmp_path, lambda r: r.labels.pop(0))
    summary = import_release(release, tmp_path / "c.sqlite", echo=messages.append)
    assert summary["items_without_labels"] == ["st_0001"]
    assert any("warning" in m and "st_0001" in m for m in messages)


# --- corpus info ------------------------------------------------------------------


def test_describe_and_format(tmp_path):
    out, summary = build(tmp_path)
    info = describe(out)
    assert info["schema_version"] == 2
    assert info["corpus_id"] == summary["corpus_id"]
    assert info["file_size"] == out.stat().st_size
    c = info["counts"]
    assert c["items_by_type"] == {"multi-target": 1, "single-target": 2}
    assert c["items_by_depth"] == {"1": 2, "2": 1}
    assert c["papers"] == 12 and c["papers_with_text"] == 8 and c["edges"] == summary["counts"]["edges"]
    assert c["nodes_per_item"] == {"min": 5, "mean": 5.3, "max": 6}
    text = format_description(info)
    assert "schema        version 2" in text and summary["corpus_id"] in text and "ST-d2 1" in text


# --- CLI --------------------------------------------------------------------------


def test_cli_import_and_info(tmp_path):
    release = make_release(tmp_path)
    out = tmp_path / "c.sqlite"
    runner = CliRunner()
    result = runner.invoke(main, ["corpus", "import", str(release), "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["counts"]["items"] == 3 and out.exists()
    assert "paper_pool/papers.jsonl" in result.stderr  # progress goes to stderr

    result = runner.invoke(main, ["corpus", "info", str(out)])
    assert result.exit_code == 0, result.output
    assert "items         3" in result.stdout and "release" in result.stdout
    result = runner.invoke(main, ["corpus", "info", str(out), "--json"])
    assert json.loads(result.stdout)["counts"]["items_by_cell"]["MT-d1"] == 1


def test_cli_import_error_and_skip_flag(tmp_path):
    release = make_release(tmp_path, lambda r: r.labels_of("st_0001")[0].update(section="Nowhere"))
    out = tmp_path / "c.sqlite"
    runner = CliRunner()
    result = runner.invoke(main, ["corpus", "import", str(release), "--out", str(out)])
    assert result.exit_code == 1
    assert "audit/recall_labels.jsonl line 1: field 'analysis.section_recall_labels[0].section'" in result.output
    assert not out.exists()
    result = runner.invoke(main, ["corpus", "import", str(release), "--out", str(out), "--skip-bad-labels"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["skipped_labels"] == 1


def test_cli_info_rejects_bad_files(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["corpus", "info", str(tmp_path / "absent.sqlite")])
    assert result.exit_code == 1 and "corpus file not found" in result.output

    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database, just some bytes" * 100)
    result = runner.invoke(main, ["corpus", "info", str(junk)])
    assert result.exit_code == 1 and "not a readable SQLite corpus" in result.output

    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    result = runner.invoke(main, ["corpus", "info", str(other)])
    assert result.exit_code == 1 and "not an AgentHop corpus" in result.output

    out, _ = build(tmp_path)
    conn = sqlite3.connect(out)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    result = runner.invoke(main, ["corpus", "info", str(out)])
    assert result.exit_code == 1 and "schema version 99" in result.output
    with pytest.raises(CorpusError):
        describe(out)


# --- the synthetic generator ------------------------------------------------------


@pytest.mark.slow
def test_synthetic_release_round_trip(tmp_path):
    from agenthop.corpus.synth import write_release

    release = tmp_path / "synth"
    write_release(release, papers=150, items=24, seed=7)
    out = tmp_path / "synth.sqlite"
    summary = import_release(release, out, echo=quiet)
    counts = summary["counts"]
    assert counts["items"] == 24
    assert counts["papers_with_text"] > 0 and counts["sections"] > 0 and counts["edges"] > 0
    assert all(counts["items_by_cell"][cell] > 0 for cell in ("ST-d1", "ST-d2", "MT-d1", "MT-d2"))
    conn = connect(out)
    for item_id, seed, depth in conn.execute("SELECT item_id, seed_paper_id, depth FROM items"):
        nodes = {p for (p,) in conn.execute("SELECT paper_id FROM item_nodes WHERE item_id = ?", (item_id,))}
        assert seed in nodes
        gold, bridge = (
            json.loads(v)
            for v in conn.execute(
                "SELECT gold_paper_ids, bridge_paper_ids FROM gold_items WHERE item_id = ?", (item_id,)
            ).fetchone()
        )
        assert set(gold) <= nodes and set(bridge) <= nodes
        assert (len(bridge) > 0) == (depth == 2)
        for paper_id in gold:
            assert conn.execute("SELECT has_text FROM papers WHERE paper_id = ?", (paper_id,)).fetchone() == (1,)
        cited = {c for (c,) in conn.execute("SELECT cited FROM item_edges WHERE item_id = ?", (item_id,))}
        assert cited <= nodes
    assert summary["skipped_labels"] == 0
    assert summary["metadata_conflicts"] == 0 and summary["items_without_labels"] == []
    # Every item has a direct label on each gold paper.
    for item_id, gold_arxiv in conn.execute("SELECT item_id, gold_arxiv_ids FROM gold_items"):
        direct = {
            a
            for (a,) in conn.execute(
                "SELECT arxiv_id FROM gold_recall_labels WHERE item_id = ? AND relevance = 'direct'", (item_id,)
            )
        }
        assert set(json.loads(gold_arxiv)) <= direct, item_id
    conn.close()


def test_a_line_that_is_not_utf8_is_named(tmp_path):
    release = make_release(tmp_path)
    qa = release / QA_FILE
    lines = qa.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"What window size", b"What wind\xff\xfe size")
    qa.write_bytes(b"\n".join(lines))
    with pytest.raises(ReleaseError) as info:
        import_release(release, tmp_path / "c.sqlite", echo=quiet)
    assert str(info.value).startswith("qa/full.jsonl line 2: not valid UTF-8 (invalid start byte at byte ")
    # Text that is UTF-8 but not ASCII is fine.
    ok = make_release(
        tmp_path,
        lambda r: r.item("st_0002").update(question="Quelle fenêtre l’encodeur utilise-t-il ?"),
        name="accents",
    )
    assert import_release(ok, tmp_path / "d.sqlite", echo=quiet)["counts"]["items"] == 3


def test_same_paper_distractors_are_accepted(tmp_path):
    """same_paper: the right paper, the wrong passage (corpora built from other sources)."""
    kinds = ["same_paper", "correct", "wrong_paper", "seed_only"]
    out, _ = build(tmp_path, _set(_item("st_0001"), distractor_types=kinds))
    stored = connect(out).execute("SELECT distractor_types FROM gold_items WHERE item_id = 'st_0001'").fetchone()[0]
    assert json.loads(stored) == kinds


def test_every_jsonl_line_reads_as_json_loads_reads_it(tmp_path):
    """The reader parses with msgspec and falls back to json: what json accepts and msgspec does not (NaN, an
    escaped lone surrogate) still reads, to the same value, and a broken line still gets json's wording."""
    from agenthop.corpus.inputs import JsonlFile

    lines = [
        '{"a": 1, "b": [0.1, -0, 1E5, "caf\\u00e9 \\ud83d\\ude00"], "c": null}',
        '{"score": NaN, "x": Infinity}',
        '{"title": "half a pair \\ud800"}',
        '{"big": 123456789012345678901234567890}',
        '{"id": "x",',
    ]
    path = tmp_path / "f.jsonl"
    path.write_text("\n".join(lines) + "\n")
    read = [record for _, record in JsonlFile(path, "qa/full.jsonl")]
    assert [repr(r) for r in read[:4]] == [repr(json.loads(line)) for line in lines[:4]]
    assert isinstance(read[4], ReleaseError)
    assert (
        str(read[4])
        == "qa/full.jsonl line 5: not valid JSON (Expecting property name enclosed in double quotes at column 12)"
    )
