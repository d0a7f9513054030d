"""The corpus file: its SQLite schema, version, and how to open it safely.

One file holds the public corpus (papers, sections, citation edges, items and
their neighbourhoods) and, in tables whose names start with ``gold_``, the
answers and labels. The server opens the file read-only and installs an SQLite
authorizer that refuses any read of a ``gold_`` table, so no tool can leak gold
data even by mistake.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

SCHEMA_VERSION = 1

GOLD_PREFIX = "gold_"

DDL = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL            -- JSON
);

-- One row per paper that appears in any item's graph (metadata may exist without text).
CREATE TABLE papers (
    paper_id  TEXT PRIMARY KEY,    -- 40-hex Semantic Scholar ID: the only ID agents see
    arxiv_id  TEXT,                -- links to sections; NULL when unknown
    title     TEXT NOT NULL,
    abstract  TEXT NOT NULL DEFAULT '',
    year      INTEGER,
    authors   TEXT NOT NULL DEFAULT '[]',   -- JSON list of names ([] when unknown)
    venue     TEXT,
    has_text  INTEGER NOT NULL DEFAULT 0    -- 1 iff the paper pool has sections for arxiv_id
);
CREATE INDEX papers_arxiv ON papers(arxiv_id);

-- Top-level sections of the paper pool, in document order.
CREATE TABLE sections (
    arxiv_id  TEXT NOT NULL,
    position  INTEGER NOT NULL,    -- 0-based; the alias is derived from it (0 -> A)
    header    TEXT NOT NULL,
    text      TEXT NOT NULL,
    PRIMARY KEY (arxiv_id, position)
) WITHOUT ROWID;

-- Titles of pool papers (the pool may hold papers no graph names).
CREATE TABLE pool (
    arxiv_id  TEXT PRIMARY KEY,
    title     TEXT NOT NULL,
    n_sections INTEGER NOT NULL
) WITHOUT ROWID;

-- The union of all items' citation edges; context is NULL when unknown.
CREATE TABLE edges (
    citing    TEXT NOT NULL,
    cited     TEXT NOT NULL,
    context   TEXT,
    PRIMARY KEY (citing, cited)
) WITHOUT ROWID;

-- Public part of each benchmark item.
CREATE TABLE items (
    item_id          TEXT PRIMARY KEY,
    question_type    TEXT NOT NULL,   -- single-target | multi-target
    depth            INTEGER NOT NULL,
    reasoning_type   TEXT NOT NULL,
    cognitive_skill  TEXT,
    venue            TEXT,
    consensus_tier   TEXT,
    question         TEXT NOT NULL,
    options          TEXT NOT NULL,   -- JSON list of 4 strings
    seed_paper_id    TEXT NOT NULL,
    seed_arxiv_id    TEXT,
    seed_title       TEXT NOT NULL,
    filter_agreement INTEGER,
    position         INTEGER NOT NULL -- order in qa/full.jsonl
);

-- The item's neighbourhood: exactly the nodes of its graph.
CREATE TABLE item_nodes (
    item_id   TEXT NOT NULL,
    paper_id  TEXT NOT NULL,
    position  INTEGER NOT NULL,      -- node order in the graph record (seed first)
    PRIMARY KEY (item_id, paper_id)
) WITHOUT ROWID;

-- The item's edges: only where its graph has them, in reference order.
CREATE TABLE item_edges (
    item_id   TEXT NOT NULL,
    citing    TEXT NOT NULL,
    cited     TEXT NOT NULL,
    position  INTEGER NOT NULL,      -- index in the citing paper's reference list
    PRIMARY KEY (item_id, citing, position)
) WITHOUT ROWID;
-- Explore mode lists a paper's references across all items' graphs.
CREATE INDEX item_edges_citing ON item_edges(citing);

-- Gold data: never readable from the server (see open_corpus).
CREATE TABLE gold_items (
    item_id           TEXT PRIMARY KEY,
    correct_index     INTEGER NOT NULL,
    distractor_types  TEXT,           -- JSON list per option, or NULL
    gold_paper_ids    TEXT NOT NULL,  -- JSON list
    gold_arxiv_ids    TEXT NOT NULL,  -- JSON list
    bridge_paper_ids  TEXT NOT NULL,  -- JSON list
    bridge_arxiv_ids  TEXT NOT NULL   -- JSON list
);

CREATE TABLE gold_recall_labels (
    item_id           TEXT NOT NULL,
    position          INTEGER NOT NULL,
    paper_title       TEXT,
    arxiv_id          TEXT NOT NULL,
    section           TEXT NOT NULL,
    relevance         TEXT NOT NULL,  -- direct | supporting
    what_it_contains  TEXT,
    PRIMARY KEY (item_id, position)
) WITHOUT ROWID;
"""


class CorpusError(Exception):
    """The corpus file cannot be used; the message says why and what to do."""


def create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(DDL)
    conn.execute("INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (json.dumps(SCHEMA_VERSION),))


def read_meta(conn: sqlite3.Connection) -> dict:
    return {key: json.loads(value) for key, value in conn.execute("SELECT key, value FROM meta")}


def _deny_gold(action: int, arg1, arg2, dbname, source) -> int:
    if action == sqlite3.SQLITE_READ and arg1 and arg1.startswith(GOLD_PREFIX):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _truncated(path: Path) -> str | None:
    """Why an SQLite file is shorter than its header says, or None.

    SQLite trusts the in-header page count when the header's 'version-valid-for'
    matches its change counter; a file shorter than that lost its tail (a partial
    copy or download) and would fail later, on whichever query reaches the gap.
    """
    with open(path, "rb") as f:
        header = f.read(100)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        return None  # not SQLite at all: sqlite3 reports that itself
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if header[24:28] != header[92:96] or pages == 0:
        return None
    size = path.stat().st_size
    if size < pages * page_size:
        return f"{size} bytes, but its header says {pages} pages of {page_size} bytes"
    return None


def open_corpus(path: str | Path, *, allow_gold: bool = False) -> sqlite3.Connection:
    """Open a corpus read-only and check it is one this code understands.

    ``allow_gold`` is for the scorer and the runner's progress display; the
    MCP server always opens without it.
    """
    path = Path(path)
    if not path.exists():
        raise CorpusError(
            f"corpus file not found: {path}. Build one with 'agenthop-server corpus import RELEASE_DIR --out {path}' "
            "or use the committed corpus.sqlite."
        )
    truncated = _truncated(path)
    if truncated:
        raise CorpusError(f"{path} is truncated ({truncated}); rebuild it with 'agenthop-server corpus import' or copy it again.")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        conn.execute("PRAGMA query_only = ON")
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise CorpusError(f"{path} is not a readable SQLite corpus ({exc}); rebuild it with 'agenthop-server corpus import'.") from exc
    if "meta" not in tables:
        raise CorpusError(f"{path} is an SQLite file but not an AgentHop corpus (no meta table).")
    try:
        meta = read_meta(conn)
    except (ValueError, sqlite3.DatabaseError) as exc:
        raise CorpusError(f"{path} is not a readable SQLite corpus: its meta table is damaged ({exc}); "
                          "rebuild it with 'agenthop-server corpus import'.") from exc
    version = meta.get("schema_version")
    if version != SCHEMA_VERSION:
        raise CorpusError(
            f"{path} has corpus schema version {version!r}; this AgentHop reads version {SCHEMA_VERSION}. "
            "Rebuild it with 'agenthop-server corpus import'."
        )
    missing = {"papers", "sections", "edges", "items", "item_nodes", "item_edges", "gold_items"} - tables
    if missing:
        raise CorpusError(f"{path} lacks tables {sorted(missing)}; rebuild it with 'agenthop-server corpus import'.")
    if not allow_gold:
        conn.set_authorizer(_deny_gold)
    return conn
