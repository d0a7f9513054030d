"""Converters on inputs real collections contain beyond the fixtures: encodings, gzip, odd shapes, untitled
papers, items whose bridge has no text. Each names the file and the problem, or builds what it should."""

from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner
from support.paths import FIXTURES

from agenthop.corpus.convert.linking import CitationStore
from agenthop.corpus.convert.model import ConvertError, Paper, Section
from agenthop.corpus.convert.s2orc import iter_s2orc
from agenthop.corpus.convert.sources import detect, read_papers
from agenthop.server.cli import main

JATS = FIXTURES / "jats" / "elife00240.xml"


def test_xml_in_its_declared_encoding_with_a_byte_order_mark_and_gzipped(tmp_path):
    latin = tmp_path / "latin.xml"
    latin.write_bytes(
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<article><front><article-meta><title-group>'
        "<article-title>Caf\xe9 effects</article-title></title-group></article-meta></front></article>".encode(
            "latin-1"
        )
    )
    bom = tmp_path / "bom.xml"
    bom.write_bytes(b"\xef\xbb\xbf" + JATS.read_bytes())
    packed = tmp_path / "packed.XML.GZ"
    packed.write_bytes(gzip.compress(JATS.read_bytes()))
    assert [detect(p) for p in (latin, bom, packed)] == ["jats"] * 3
    titles = [p.title for p in read_papers([latin, bom, packed])]
    assert titles == ["Café effects"] + ["Indirect routes to reproductive success"] * 2


def test_a_corrupt_gzip_file_is_named_not_a_traceback(tmp_path):
    broken = tmp_path / "paper.xml.gz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(ConvertError, match=rf"{broken}: cannot be read"):
        list(read_papers([broken]))


def test_s2orc_fields_of_the_wrong_shape(tmp_path):
    (tmp_path / "body.json").write_text(json.dumps({"title": "x", "body_text": "plain string body"}))
    with pytest.raises(ConvertError, match=r"body\.json: field 'body_text': expected a list of paragraphs"):
        list(iter_s2orc(tmp_path / "body.json"))
    upper = tmp_path / "PAPERS.JSONL"  # a .jsonl file in capitals is still one paper per line
    record = {"title": "T", "body_text": [], "bib_entries": {"b0": {"title": "Cited work", "authors": "Jane Doe"}}}
    upper.write_text(json.dumps(record) + "\n" + json.dumps({**record, "title": "U"}) + "\n")
    papers = list(read_papers([upper]))
    assert [p.title for p in papers] == ["T", "U"]
    assert papers[0].references[0].authors == []  # a string is no author list: not one author per letter


def test_untitled_papers_without_identifiers_stay_apart(tmp_path):
    store = CitationStore(tmp_path / "scratch.sqlite")
    try:
        ids = [
            store.add(Paper(source=f"{n}.tei.xml", title="", sections=[Section("1 Introduction", text)]))
            for n, text in (("a", "One text."), ("b", "Another text."), ("c", "One text."))
        ]
    finally:
        store.conn.close()
    assert ids[0] and ids[1] and ids[0] != ids[1]
    assert ids[2] is None  # the same untitled text twice is one paper


def _s2orc(paper_id: str, title: str, body: str, cites: list[tuple[str, int]]) -> dict:
    spans = [{"start": 0, "end": 3, "ref_id": f"b{i}"} for i in range(len(cites))]
    return {
        "paper_id": paper_id,
        "title": title,
        "year": 2020,
        "abstract": [{"text": f"About {title}."}],
        "body_text": [{"text": body, "section": "Introduction", "sec_num": "1", "cite_spans": spans}] if body else [],
        "bib_entries": {f"b{i}": {"title": t, "year": y, "authors": []} for i, (t, y) in enumerate(cites)},
    }


def test_an_item_whose_bridge_has_no_text_builds(tmp_path):
    src = tmp_path / "papers"
    src.mkdir()
    gold_title, bridge_title = "A gold paper with its own results", "A bridge paper known only by its metadata"
    for name, record in (
        ("seed", _s2orc("seed", "The seed paper of this item", "See [1] for the method.", [(bridge_title, 2020)])),
        ("bridge", _s2orc("bridge", bridge_title, "", [(gold_title, 2020)])),
        ("gold", _s2orc("gold", gold_title, "We report 42 examples.", [])),
    ):
        (src / f"{name}.json").write_text(json.dumps(record))
    items = tmp_path / "qa.jsonl"
    items.write_text(
        json.dumps(
            {
                "id": "st_0001",
                "question_type": "single-target",
                "depth": 2,
                "reasoning_type": "RESULT",
                "question": "How many?",
                "options": ["42", "7", "9", "11"],
                "correct_index": 0,
                "seed_paper_id": "s2orc:seed",
                "gold_paper_ids": ["s2orc:gold"],
                "bridge_paper_ids": ["s2orc:bridge"],
            }
        )
        + "\n"
    )
    out = tmp_path / "c.sqlite"
    result = CliRunner().invoke(main, ["corpus", "build", str(src), "--out", str(out), "--items", str(items)])
    assert result.exit_code == 0, result.output
    assert out.exists()


def test_check_leaves_out_the_labels_of_an_item_line_that_is_not_json(tmp_path):
    items, labels = tmp_path / "qa.jsonl", tmp_path / "labels.jsonl"
    items.write_text('{"id": "st_0001", "question_type": \n')
    labels.write_text(json.dumps({"sample_id": "st_0001", "analysis": {"section_recall_labels": []}}) + "\n")
    result = CliRunner().invoke(
        main, ["corpus", "build", str(FIXTURES / "jats"), "--check", "--items", str(items), "--labels", str(labels)]
    )
    assert result.exit_code == 1
    assert f"{items} line 1: not valid JSON (Expecting value at column 36)" in result.stdout
    assert str(labels) not in result.stdout and result.stdout.rstrip().endswith("FAILED: 1 error")  # no cascade
