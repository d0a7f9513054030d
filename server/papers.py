"""Read-side access to the public part of a corpus, scoped to an item or to everything.

Each thread gets its own read-only connection (tool calls run in worker threads
so that a deadline can be kept); every connection denies reads of gold tables.

Item mode sees the item's graph: its nodes, its edges in its reference order,
and its own citation contexts. Explore mode sees every paper of the corpus and
the corpus-wide edges (``edges``), with their reference order and context.
"""

from __future__ import annotations

import difflib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from agenthop.server.corpus_schema import open_corpus, read_meta


@dataclass(frozen=True)
class Paper:
    paper_id: str
    arxiv_id: str | None
    title: str
    abstract: str
    year: int | None
    authors: list[str]
    venue: str | None
    has_text: bool
    ids: dict[str, str] = field(default_factory=dict)  # external IDs: doi, arxiv, pmcid, acl, ...


@dataclass(frozen=True)
class PaperHeading:
    """What a list of papers shows of each one: no abstract, authors or external IDs (neither read nor parsed)."""

    paper_id: str
    title: str
    year: int | None
    has_text: bool


@dataclass(frozen=True)
class Reference:
    paper: PaperHeading
    context: str | None


@dataclass(frozen=True)
class Item:
    """What an agent may know about an item: never the answer or the gold papers."""

    item_id: str
    question_type: str
    depth: int
    reasoning_type: str
    question: str
    options: list[str]
    seed_paper_id: str
    seed_title: str


_PAPER_COLUMNS = "p.paper_id, p.arxiv_id, p.title, p.abstract, p.year, p.authors, p.venue, p.has_text, p.ids"
_HEADING_COLUMNS = "p.paper_id, p.title, p.year, p.has_text"


def as_doi_id(paper_id: str) -> str | None:
    """``doi:<lower-cased DOI>`` for a DOI however typed (with or without ``doi:``, as a doi.org link); else None."""
    text = paper_id.strip()
    for prefix in (
        "doi:",
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi.org/",
    ):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :]
            break
    return f"doi:{text.lower()}" if text.startswith("10.") and "/" in text else None


def _references(rows) -> list[Reference]:
    """References from rows of ``_HEADING_COLUMNS`` followed by the citation context."""
    return [
        Reference(PaperHeading(pid, title, year, bool(has_text)), context)
        for pid, title, year, has_text, context in rows
    ]


def _paper(row) -> Paper:
    pid, arxiv, title, abstract, year, authors, venue, has_text, ids = row
    return Paper(
        pid,
        arxiv,
        title,
        abstract or "",
        year,
        json.loads(authors or "[]"),
        venue,
        bool(has_text),
        json.loads(ids or "{}"),
    )


def explore_texts(conn) -> Iterator[str]:
    """Title + abstract + author names of every paper, in ``papers`` order: the documents of the explore-mode search.

    A generator, so that the importer builds the stored explore index without holding every document.
    """
    for title, abstract, authors in conn.execute("SELECT title, abstract, authors FROM papers ORDER BY rowid"):
        yield f"{title}\n{abstract or ''}\n{' '.join(json.loads(authors or '[]'))}"


def explore_documents(conn) -> tuple[list[str], list[str]]:
    """(paper IDs, documents) of the explore-mode scope; the server rebuilds its index from this when needed."""
    ids = [pid for (pid,) in conn.execute("SELECT paper_id FROM papers ORDER BY rowid")]
    return ids, list(explore_texts(conn))


class Corpus:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._local = threading.local()
        conn = open_corpus(self.path)  # fails early with a clear message
        self.meta = read_meta(conn)
        self._items = {
            row[0]: row
            for row in conn.execute(
                "SELECT item_id, question_type, depth, reasoning_type, question, options, seed_paper_id, seed_title "
                "FROM items ORDER BY position"
            )
        }
        self._local.conn = conn
        # Section lengths are stored (a generated column) in corpora written since it was added; older ones
        # are still served, their lengths counted from the text on every listing.
        stored = any(row[1] == "chars" for row in conn.execute("PRAGMA table_xinfo(sections)"))
        self._section_headers_sql = (
            f"SELECT header, {'chars' if stored else 'length(text)'} FROM sections WHERE arxiv_id = ? ORDER BY position"
        )

    @property
    def conn(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = open_corpus(self.path)
        return conn

    def close(self) -> None:
        """Close this thread's connection (a server's worker threads keep theirs while it serves)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @cached_property
    def identity(self) -> dict:
        return {"corpus_id": self.meta.get("corpus_id"), "schema_version": self.meta.get("schema_version")}

    # --- items and scopes ---------------------------------------------------

    def item_ids(self) -> list[str]:
        return list(self._items)

    def item(self, item_id: str) -> Item | None:
        row = self._items.get(item_id)
        if row is None:
            return None
        iid, qtype, depth, rtype, question, options, seed, seed_title = row
        return Item(iid, qtype, depth, rtype, question, json.loads(options), seed, seed_title)

    def search_documents(self, item_id: str | None) -> tuple[list[str], list[str]]:
        """(paper IDs, documents) of the scope, for the search index: title + abstract, and author names in explore mode."""
        if item_id is None:
            return explore_documents(self.conn)
        rows = self.conn.execute(
            "SELECT p.paper_id, p.title, p.abstract FROM item_nodes n JOIN papers p USING (paper_id) "
            "WHERE n.item_id = ? ORDER BY n.position",
            (item_id,),
        )
        ids, texts = [], []
        for pid, title, abstract in rows:
            ids.append(pid)
            texts.append(f"{title}\n{abstract or ''}")
        return ids, texts

    def explore_has_text(self) -> list[bool]:
        """Whether each paper has text, in ``papers`` order (explore search puts papers with text first)."""
        return [bool(t) for (t,) in self.conn.execute("SELECT has_text FROM papers ORDER BY rowid")]

    def explore_paper_ids(self) -> list[str]:
        """Every paper ID in ``papers`` order (the documents of the stored explore index)."""
        return [pid for (pid,) in self.conn.execute("SELECT paper_id FROM papers ORDER BY rowid")]

    def stored_search_index(self) -> dict[str, bytes]:
        """The explore index the importer stored (name -> bytes); empty if there is none."""
        return {name: bytes(data) for name, data in self.conn.execute("SELECT name, data FROM search_index")}

    # --- papers ---------------------------------------------------------------

    def paper(self, paper_id: str, item_id: str | None) -> Paper | None:
        """The paper if it exists and is in scope; None otherwise (both look the same to an agent).

        A DOI is found however it is typed (``doi:10.7554/eLife.00240``, a bare ``10.7554/elife.00240``, a doi.org
        link): DOIs are case-insensitive and stored lower-cased.
        """
        found = self._paper(paper_id, item_id)
        doi = as_doi_id(paper_id)
        if found is None and doi is not None and doi != paper_id:
            found = self._paper(doi, item_id)
        return found

    def licence(self, paper_id: str) -> tuple[str, str | None] | None:
        """(licence, URL) the paper's source states, or None (also for corpora written before licences were kept)."""
        if not self._has_licences:
            return None
        return self.conn.execute("SELECT licence, url FROM paper_licences WHERE paper_id = ?", (paper_id,)).fetchone()

    @cached_property
    def _has_licences(self) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'paper_licences'").fetchone()
            is not None
        )

    def closest_id(self, paper_id: str, item_id: str | None) -> str | None:
        """The paper ID in scope most like ``paper_id`` (for a not-found message), if any is close."""
        wanted = as_doi_id(paper_id) or paper_id.strip().lower()
        if item_id is None:  # candidates of about the same length: an explore corpus may hold 100K+ IDs
            rows = self.conn.execute(
                "SELECT paper_id FROM papers WHERE length(paper_id) BETWEEN ? AND ?", (len(wanted) - 4, len(wanted) + 4)
            )
        else:
            rows = self.conn.execute("SELECT paper_id FROM item_nodes WHERE item_id = ?", (item_id,))
        by_lower = {pid.lower(): pid for (pid,) in rows}
        close = difflib.get_close_matches(wanted, by_lower, n=1, cutoff=0.6)
        return by_lower[close[0]] if close else None

    def _paper(self, paper_id: str, item_id: str | None) -> Paper | None:
        if item_id is None:
            row = self.conn.execute(
                f"SELECT {_PAPER_COLUMNS} FROM papers p WHERE p.paper_id = ?", (paper_id,)
            ).fetchone()
        else:
            row = self.conn.execute(
                f"SELECT {_PAPER_COLUMNS} FROM item_nodes n JOIN papers p USING (paper_id) "
                "WHERE n.item_id = ? AND n.paper_id = ?",
                (item_id, paper_id),
            ).fetchone()
        return _paper(row) if row else None

    def papers(self, paper_ids: list[str]) -> dict[str, Paper]:
        marks = ",".join("?" * len(paper_ids))
        rows = self.conn.execute(f"SELECT {_PAPER_COLUMNS} FROM papers p WHERE p.paper_id IN ({marks})", paper_ids)
        return {row[0]: _paper(row) for row in rows}

    def references(self, paper_id: str, item_id: str | None) -> list[Reference]:
        """Cited papers in reference order with their citation context.

        Item mode: the item graph's edges and the item's own contexts. Explore
        mode: the corpus-wide edges and contexts.
        """
        if item_id is None:
            rows = self.conn.execute(
                f"SELECT {_HEADING_COLUMNS}, e.context FROM edges e JOIN papers p ON p.paper_id = e.cited "
                "WHERE e.citing = ? ORDER BY e.position, e.cited",
                (paper_id,),
            )
        else:
            rows = self.conn.execute(
                f"SELECT {_HEADING_COLUMNS}, r.context FROM item_edges r JOIN papers p ON p.paper_id = r.cited "
                "WHERE r.item_id = ? AND r.citing = ? ORDER BY r.position",
                (item_id, paper_id),
            )
        return _references(rows)

    def citing(self, paper_id: str, limit: int) -> tuple[int, list[Reference]]:
        """Explore mode: how many papers of the corpus cite ``paper_id``, and the first ``limit`` of them with the
        sentence each cites it in (``Reference.paper`` is the citing paper).

        Citing papers whose sentence is known come first, then the most recent; ties by title and ID, so the
        order is the same on every call. Served from the ``edges(cited)`` index (see schema.INDEXES); a corpus
        built before that index existed is scanned instead, with the same answer.
        """
        (count,) = self.conn.execute("SELECT count(*) FROM edges WHERE cited = ?", (paper_id,)).fetchone()
        if count == 0:
            return 0, []
        rows = self.conn.execute(
            f"SELECT {_HEADING_COLUMNS}, e.context FROM edges e JOIN papers p ON p.paper_id = e.citing "
            "WHERE e.cited = ? ORDER BY e.context IS NULL, p.year IS NULL, p.year DESC, p.title, p.paper_id LIMIT ?",
            (paper_id, limit),
        )
        return count, _references(rows)

    # --- text -----------------------------------------------------------------

    def section_headers(self, arxiv_id: str) -> list[tuple[str, int]]:
        """(header, length in characters) of each section, in document order."""
        return list(self.conn.execute(self._section_headers_sql, (arxiv_id,)))

    def section_text(self, arxiv_id: str, position: int) -> str:
        row = self.conn.execute(
            "SELECT text FROM sections WHERE arxiv_id = ? AND position = ?", (arxiv_id, position)
        ).fetchone()
        return row[0]

    def public_description(self) -> dict:
        """Identity and counts of the public tables only (nothing about labels or answers)."""
        counts = self.meta.get("counts", {})
        public = ("papers", "papers_with_text", "sections", "edges", "items", "items_by_cell")
        return {
            **self.identity,
            "source": self.meta.get("provenance", {}).get("source"),
            "counts": {k: counts[k] for k in public if k in counts},
        }
