"""Gold labels and item attributes, read from the corpus with gold access.

Section recall's label rule is ``agenthop.server.sections.label_matches_section``
(shared with the importer's label check); ``Gold.section_headers`` and
``Gold.section_text`` give it the paper's headers and a section's text.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from agenthop.server.corpus_schema import open_corpus, read_meta

LETTERS = "ABCD"
CELLS = ("ST-d1", "ST-d2", "MT-d1", "MT-d2")


@dataclass(frozen=True)
class Label:
    arxiv_id: str
    section: str
    relevance: str


@dataclass
class GoldItem:
    item_id: str
    qtype: str  # "ST" | "MT"
    depth: int
    reasoning_type: str
    venue: str | None
    consensus_tier: str | None
    cognitive_skill: str | None
    n_options: int
    correct_index: int
    distractor_types: list | None
    gold_paper_ids: list[str]
    gold_arxiv_ids: list[str | None]  # None: the corpus knows no arXiv ID (no text) for that gold paper
    bridge_paper_ids: list[str]
    seed_paper_id: str
    labels: list[Label] = field(default_factory=list)
    seed_year: int | None = None
    #: Gold paper ID -> its citation count recorded at construction (None: the release recorded none).
    gold_citations: dict[str, int] | None = None

    @property
    def cell(self) -> str:
        return f"{self.qtype}-d{self.depth}"

    @property
    def correct_letter(self) -> str:
        return LETTERS[self.correct_index]

    def gold_arxiv(self, paper_id: str) -> str | None:
        try:
            return self.gold_arxiv_ids[self.gold_paper_ids.index(paper_id)]
        except (ValueError, IndexError):
            return None

    def direct_labels(self, arxiv_id: str | None) -> list[Label]:
        return [lab for lab in self.labels if lab.relevance == "direct" and lab.arxiv_id == arxiv_id]


def qtype_of(question_type: str, item_id: str) -> str:
    q = (question_type or "").lower()
    if q in ("single-target", "st", "bfs"):
        return "ST"
    if q in ("multi-target", "mt", "dfs"):
        return "MT"
    return "MT" if item_id.startswith("mt_") else "ST"


class Gold:
    """Gold data of a corpus; section texts are fetched lazily and cached."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn: sqlite3.Connection = open_corpus(self.path, allow_gold=True)
        self.meta = read_meta(self.conn)
        self.items: dict[str, GoldItem] = {}
        self._texts: dict[tuple[str, int], str | None] = {}
        self._headers: dict[str, list[str]] = {}
        self._load()

    def _load(self) -> None:
        conn = self.conn
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        rows = conn.execute(
            "SELECT i.item_id, i.question_type, i.depth, i.reasoning_type, i.venue, i.consensus_tier, i.cognitive_skill,"
            " i.options,"
            " i.seed_paper_id, g.correct_index, g.distractor_types, g.gold_paper_ids, g.gold_arxiv_ids,"
            " g.bridge_paper_ids FROM items i JOIN gold_items g ON g.item_id = i.item_id ORDER BY i.position"
        )
        for item_id, qt, depth, rt, venue, tier, skill, options, seed, ci, dt, gp, ga, bp in rows:
            self.items[item_id] = GoldItem(
                item_id=item_id,
                qtype=qtype_of(qt, item_id),
                depth=int(depth),
                reasoning_type=rt or "unknown",
                venue=venue,
                consensus_tier=tier,
                cognitive_skill=skill,
                n_options=len(json.loads(options or "[]")),
                correct_index=int(ci),
                distractor_types=json.loads(dt) if dt else None,
                gold_paper_ids=list(json.loads(gp or "[]")),
                gold_arxiv_ids=list(json.loads(ga or "[]")),
                bridge_paper_ids=list(json.loads(bp or "[]")),
                seed_paper_id=seed,
            )
        # Fill gold arXiv IDs the gold row lacks from the papers table.
        for item in self.items.values():
            if len(item.gold_arxiv_ids) < len(item.gold_paper_ids):
                fixed = []
                for pid in item.gold_paper_ids:
                    row = conn.execute("SELECT arxiv_id FROM papers WHERE paper_id = ?", (pid,)).fetchone()
                    fixed.append(row[0] if row else None)
                item.gold_arxiv_ids = fixed
        for item_id, year in conn.execute(
            "SELECT i.item_id, p.year FROM items i JOIN papers p ON p.paper_id = i.seed_paper_id"
        ):
            if item_id in self.items:
                self.items[item_id].seed_year = year
        self.citations_taken: list[str] = []
        if "gold_citation_counts" in tables:  # releases written before construction recorded counts lack it
            taken: set[str | None] = set()
            for item_id, pid, n, when in conn.execute(
                "SELECT item_id, paper_id, citations, taken FROM gold_citation_counts ORDER BY item_id, position"
            ):
                counted = self.items.get(item_id)
                if counted is not None:
                    counted.gold_citations = {**(counted.gold_citations or {}), pid: int(n)}
                    taken.add(when)
            self.citations_taken = sorted(t for t in taken if t)
        if "gold_recall_labels" in tables:
            for item_id, arxiv_id, section, relevance in conn.execute(
                "SELECT item_id, arxiv_id, section, relevance FROM gold_recall_labels ORDER BY item_id, position"
            ):
                labelled = self.items.get(item_id)
                if labelled is not None:
                    labelled.labels.append(
                        Label(arxiv_id=arxiv_id, section=section, relevance=(relevance or "").lower())
                    )

    def section_text(self, arxiv_id: str | None, index: int | None) -> str | None:
        if arxiv_id is None or index is None:
            return None
        key = (arxiv_id, int(index))
        if key not in self._texts:
            row = self.conn.execute("SELECT text FROM sections WHERE arxiv_id = ? AND position = ?", key).fetchone()
            self._texts[key] = row[0] if row else None
        return self._texts[key]

    def section_headers(self, arxiv_id: str | None) -> list[str]:
        """The headers of every section of a paper, in order ([] when the corpus has none)."""
        if arxiv_id is None:
            return []
        if arxiv_id not in self._headers:
            self._headers[arxiv_id] = [
                h
                for (h,) in self.conn.execute(
                    "SELECT header FROM sections WHERE arxiv_id = ? ORDER BY position", (arxiv_id,)
                )
            ]
        return self._headers[arxiv_id]

    def provenance(self) -> dict:
        return {
            "path": str(self.path),
            "corpus_id": self.meta.get("corpus_id"),
            "schema_version": self.meta.get("schema_version"),
            "meta": self.meta,
            "n_items": len(self.items),
            "citations_taken": self.citations_taken,
        }

    def close(self) -> None:
        self.conn.close()
