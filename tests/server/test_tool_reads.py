"""What the tools read to answer: a listing reads no section text, references read no abstracts,
and a corpus written before section lengths were stored is still served the same.

The figures for why are in docs/benchmarks.md ("The anchor"); these tests pin the behaviour that
gives them, and that the answers are what they were."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from agenthop.server.corpus_schema import INDEXES
from agenthop.server.papers import Corpus
from agenthop.server.search import SearchEngine
from agenthop.server.tools import PaperArgs, ReadArgs, Scope, get_references, list_sections, read_section


def _scope(path: Path) -> Scope:
    corpus = Corpus(path)
    return Scope(corpus, SearchEngine(corpus), None)


def _statements(corpus: Corpus) -> list[str]:
    """Every SQL statement this thread's corpus connection runs from now on."""
    seen: list[str] = []
    corpus.conn.set_trace_callback(seen.append)
    return seen


def _texted_papers(path: Path, n: int = 12) -> list[str]:
    conn = sqlite3.connect(path)
    return [
        pid for (pid,) in conn.execute("SELECT paper_id FROM papers WHERE has_text = 1 ORDER BY paper_id LIMIT ?", (n,))
    ]


def _without_stored_lengths(source: Path, target: Path) -> Path:
    """A copy of ``source`` whose sections table is laid out as before lengths were stored."""
    shutil.copy(source, target)
    conn = sqlite3.connect(target)
    conn.executescript(
        "CREATE TABLE old_sections (arxiv_id TEXT NOT NULL, position INTEGER NOT NULL, header TEXT NOT NULL, text TEXT NOT NULL);"
        "INSERT INTO old_sections SELECT arxiv_id, position, header, text FROM sections;"
        "DROP TABLE sections; ALTER TABLE old_sections RENAME TO sections;"
    )
    conn.execute(INDEXES["sections"])
    conn.commit()
    conn.close()
    return target


def test_a_new_corpus_stores_each_sections_length(demo_corpus):
    conn = sqlite3.connect(demo_corpus)
    rows = conn.execute("SELECT chars, text FROM sections").fetchall()
    assert rows and all(chars == len(text) for chars, text in rows)


def test_listing_sections_reads_no_section_text(demo_corpus):
    scope = _scope(demo_corpus)
    paper = _texted_papers(demo_corpus, 1)[0]
    seen = _statements(scope.corpus)
    out = list_sections(scope, PaperArgs(paper_id=paper))
    assert out.outcome == "ok" and out.data["sections"]
    listing = [s for s in seen if "FROM sections" in s]
    assert listing and not any("text" in s for s in listing), listing


def test_references_read_no_abstracts_authors_or_ids(demo_corpus):
    scope = _scope(demo_corpus)
    seed = (
        sqlite3.connect(demo_corpus).execute("SELECT seed_paper_id FROM items ORDER BY position LIMIT 1").fetchone()[0]
    )
    seen = _statements(scope.corpus)
    out = get_references(scope, PaperArgs(paper_id=seed))
    assert out.outcome == "ok" and out.data["references"]
    query = [s for s in seen if "edges" in s]
    assert query and not any(col in s for s in query for col in ("abstract", "authors", "p.ids")), query


def test_a_corpus_without_stored_lengths_is_served_the_same(demo_corpus, tmp_path):
    old = _without_stored_lengths(demo_corpus, tmp_path / "old.sqlite")
    new_scope, old_scope = _scope(demo_corpus), _scope(old)
    for paper in _texted_papers(demo_corpus):
        args = PaperArgs(paper_id=paper)
        new, before = list_sections(new_scope, args), list_sections(old_scope, args)
        assert (new.text, new.data) == (before.text, before.data)
        read = ReadArgs(paper_id=paper, section="B")
        assert read_section(new_scope, read).data == read_section(old_scope, read).data


@pytest.mark.parametrize("explore", [False, True])
def test_reference_lines_keep_title_year_and_full_text_flag(demo_corpus, explore):
    scope = _scope(demo_corpus)
    conn = sqlite3.connect(demo_corpus)
    item, seed = conn.execute("SELECT item_id, seed_paper_id FROM items ORDER BY position LIMIT 1").fetchone()
    scope = Scope(scope.corpus, scope.search, None if explore else item)
    out = get_references(scope, PaperArgs(paper_id=seed))
    for ref in out.data["references"]:
        title, year, has_text = conn.execute(
            "SELECT title, year, has_text FROM papers WHERE paper_id = ?", (ref["paper_id"],)
        ).fetchone()
        assert (ref["title"], ref["year"], ref["has_text"]) == (title, year, bool(has_text))
        assert (
            f"{title} ({year if year is not None else 'n.d.'}) | full text: {'yes' if has_text else 'no'}" in out.text
        )
