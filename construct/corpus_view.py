"""Read-only view of a source corpus: papers, their sections and their reference lists.

Papers and edges are held in memory (the published scale is 450K edges); section
texts are read on demand and cached, since a stage touches a small share of them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agenthop.server.corpus_schema import open_corpus


@dataclass(frozen=True)
class Paper:
    paper_id: str
    text_key: str | None  # the pool key (papers.arxiv_id)
    title: str
    abstract: str
    year: int | None
    venue: str | None
    authors: tuple[str, ...]
    ids: str  # JSON object, kept as stored
    has_text: bool


@dataclass(frozen=True)
class Section:
    header: str
    text: str


class CorpusView:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn = open_corpus(self.path)  # the public tables only: construction never needs an old release's gold
        self.papers: dict[str, Paper] = {}
        for pid, key, title, abstract, year, venue, authors, ids, has_text in self.conn.execute(
            "SELECT paper_id, arxiv_id, title, abstract, year, venue, authors, ids, has_text FROM papers ORDER BY rowid"
        ):
            self.papers[pid] = Paper(
                pid, key, title, abstract or "", year, venue, tuple(json.loads(authors)), ids, bool(has_text)
            )
        self.refs: dict[str, list[tuple[str, str | None]]] = {}
        self.cited_by: dict[str, list[str]] = {}
        for citing, cited, context in self.conn.execute(
            "SELECT citing, cited, context FROM edges ORDER BY citing, position"
        ):
            self.refs.setdefault(citing, []).append((cited, context))
            self.cited_by.setdefault(cited, []).append(citing)
        self.pool = [
            (key, title) for key, title in self.conn.execute("SELECT arxiv_id, title FROM pool ORDER BY arxiv_id")
        ]
        self.sections = lru_cache(maxsize=4096)(self._sections)
        self.titles_naming = lru_cache(maxsize=8192)(self._titles_naming)

    def has_text(self, pid: str) -> bool:
        paper = self.papers.get(pid)
        return paper is not None and paper.has_text

    def references(self, pid: str) -> list[tuple[str, str | None]]:
        """(cited paper ID, citation context) in reference-list order."""
        return self.refs.get(pid, [])

    def citers(self, pid: str) -> list[str]:
        """The papers citing ``pid``, in the order of their IDs."""
        return self.cited_by.get(pid, [])

    def context(self, citing: str, cited: str) -> str | None:
        return next((c for p, c in self.references(citing) if p == cited), None)

    def _sections(self, pid: str) -> tuple[Section, ...]:
        paper = self.papers.get(pid)
        if paper is None or paper.text_key is None:
            return ()
        rows = self.conn.execute(
            "SELECT header, text FROM sections WHERE arxiv_id = ? ORDER BY position", (paper.text_key,)
        )
        return tuple(Section(h, t) for h, t in rows)

    def _titles_naming(self, name: str) -> int:
        """How many papers' titles hold ``name`` as a phrase, in any case: a coined name is in few, a field's term in many."""
        pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)
        return sum(1 for paper in self.papers.values() if paper.title and pattern.search(paper.title))

    def pool_sections(self, key: str) -> list[Section]:
        return [
            Section(h, t)
            for h, t in self.conn.execute(
                "SELECT header, text FROM sections WHERE arxiv_id = ? ORDER BY position", (key,)
            )
        ]

    def close(self) -> None:
        self.conn.close()
